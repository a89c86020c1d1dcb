//! Hive's predicates written as functions: `isnull(a)`, `isnotnull(a)`, `istrue(a)`,
//! `isfalse(a)`, `isnottrue(a)`, `isnotfalse(a)`, `is_not_distinct_from(a, b)` (`a <=> b`),
//! and `likeany(s, p1, ..)` / `likeall(s, p1, ..)` (`s LIKE ANY (..)` / `s LIKE ALL (..)`).

use arrow::datatypes::DataType;
use datafusion::common::plan_err;
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{BinaryExpr, Expr, Like, Operator};

use crate::forms::expr_fn::{take, ExprFn};

/// A predicate of one value.
fn unary(name: &'static str, form: fn(Box<Expr>) -> Expr, boolean: bool) -> ExprFn {
    let f = ExprFn::new(name, 1..=1, move |args, _| {
        let [a] = take(args)?;
        Ok(form(Box::new(a)))
    });
    if boolean {
        f.coerced(|_| Ok(vec![DataType::Boolean]))
    } else {
        f
    }
}

/// `likeany` / `likeall`: s LIKE some / every pattern, with SQL's three-valued OR / AND (NULL
/// when undecided because of a NULL).
fn like_some(name: &'static str, every: bool) -> ExprFn {
    ExprFn::new(name, 2..=usize::MAX, move |args, _| {
        let mut args = args.into_iter();
        let Some(s) = args.next() else {
            return plan_err!("{name} takes a text and patterns");
        };
        let likes = args.map(|p| {
            Expr::Like(Like::new(
                false,
                Box::new(s.clone()),
                Box::new(p),
                None,
                false,
            ))
        });
        let joined = likes.reduce(|a, b| if every { a.and(b) } else { a.or(b) });
        match joined {
            Some(e) => Ok(e),
            None => plan_err!("{name} takes a text and patterns"),
        }
    })
    .coerced(|types| Ok(vec![DataType::Utf8; types.len()]))
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    vec![
        unary("isnull", Expr::IsNull, false),
        unary("isnotnull", Expr::IsNotNull, false),
        unary("istrue", Expr::IsTrue, true),
        unary("isfalse", Expr::IsFalse, true),
        unary("isnottrue", Expr::IsNotTrue, true),
        unary("isnotfalse", Expr::IsNotFalse, true),
        ExprFn::new("is_not_distinct_from", 2..=2, |args, _| {
            let [a, b] = take(args)?;
            Ok(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(a),
                Operator::IsNotDistinctFrom,
                Box::new(b),
            )))
        })
        .coerced(|types| match comparison_coercion(&types[0], &types[1]) {
            Some(t) => Ok(vec![t.clone(), t]),
            None => plan_err!(
                "is_not_distinct_from cannot compare {} with {}",
                types[0],
                types[1]
            ),
        }),
        like_some("likeany", false),
        like_some("likeall", true),
    ]
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn predicates_answer_as_the_operators() {
        assert_eq!(
            answers(
                "SELECT isnull(NULL), isnotnull(1), istrue(true), isfalse(NULL), \
                 isnottrue(NULL), isnotfalse(true), is_not_distinct_from(NULL, NULL), \
                 is_not_distinct_from(1, 2.0)"
            )
            .await,
            ["true", "true", "true", "false", "true", "true", "true", "false"]
        );
    }

    #[tokio::test]
    async fn like_any_and_all_are_three_valued() {
        assert_eq!(
            answers(
                "SELECT likeany('apiary', 'a%', 'z%'), likeall('apiary', 'a%', 'z%'), \
                 likeany('apiary', 'z%', NULL), likeall('apiary', '%y', 'a%')"
            )
            .await,
            ["true", "false", "", "true"]
        );
    }
}
