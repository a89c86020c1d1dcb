//! Parameters of prepared statements: each `?` outside quotes and comments takes one bound
//! value as a HiveQL literal, as Hive's own JDBC driver substitutes them (HiveServer2 has no
//! server-side parameters).

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Calls `visit` with each byte offset of `sql` that is outside quoted text, backquoted names
/// and comments.
fn scan(sql: &str, mut visit: impl FnMut(usize)) {
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    // Backslash escapes inside string literals (not in backquoted names).
                    if bytes[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => visit(i),
        }
        i += 1;
    }
}

/// Where the `?` placeholders of `sql` are (byte offsets), skipping quoted text, backquoted
/// names and comments.
pub(crate) fn placeholders(sql: &str) -> Vec<usize> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    scan(sql, |i| {
        if bytes[i] == b'?' {
            out.push(i);
        }
    });
    out
}

/// For `INSERT .. VALUES (..)` whose placeholders are all in its one VALUES tuple: the text
/// before the tuple, the tuple, and the text after it (blanks and `;` only).
fn values_tuple(sql: &str) -> Option<(&str, &str, &str)> {
    let bytes = sql.as_bytes();
    if !sql.trim_start().get(..6)?.eq_ignore_ascii_case("insert") {
        return None;
    }
    let word = |i: usize| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    // Top-level positions: the last VALUES keyword, and every parenthesis.
    let mut keyword = None;
    let mut parens = Vec::new();
    scan(sql, |i| {
        if bytes[i] == b'(' || bytes[i] == b')' {
            parens.push(i);
        } else if word(i)
            && sql
                .get(i..i + 6)
                .is_some_and(|w| w.eq_ignore_ascii_case("values"))
        {
            keyword = Some(i);
        }
    });
    let after = keyword? + 6;
    let open = after + sql[after..].len() - sql[after..].trim_start().len();
    if bytes.get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    let mut close = None;
    for &p in parens.iter().filter(|p| **p >= open) {
        if bytes[p] == b'(' {
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                close = Some(p);
                break;
            }
        }
    }
    let close = close?;
    let rest = &sql[close + 1..];
    if !rest.chars().all(|c| c.is_whitespace() || c == ';') {
        return None;
    }
    if placeholders(sql).iter().any(|p| *p < open || *p > close) {
        return None;
    }
    Some((&sql[..open], &sql[open..=close], rest))
}

/// The statements that run `sql` for every row of `params`: one `INSERT .. VALUES` holding
/// every row's tuple when the statement is one (so the rows land together or not at all, as
/// one INSERT), otherwise the statement once per row.
pub(crate) fn bind_all(sql: &str, params: &RecordBatch) -> Result<Vec<String>, String> {
    if params.num_rows() > 1 {
        if let Some((head, tuple, tail)) = values_tuple(sql) {
            let tuples = (0..params.num_rows())
                .map(|row| bind(tuple, params, row))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(vec![format!("{head}{}{tail}", tuples.join(", "))]);
        }
    }
    (0..params.num_rows())
        .map(|row| bind(sql, params, row))
        .collect()
}

/// `sql` with its placeholders replaced by row `row` of `params`.
pub(crate) fn bind(sql: &str, params: &RecordBatch, row: usize) -> Result<String, String> {
    let at = placeholders(sql);
    if at.len() != params.num_columns() {
        return Err(format!(
            "the statement has {} parameter markers but {} parameter values were bound",
            at.len(),
            params.num_columns()
        ));
    }
    let mut out = String::with_capacity(sql.len() + 16 * at.len());
    let mut last = 0;
    for (pos, column) in at.iter().zip(params.columns()) {
        out.push_str(&sql[last..*pos]);
        out.push_str(&literal(column, row)?);
        last = pos + 1;
    }
    out.push_str(&sql[last..]);
    Ok(out)
}

/// One value as a HiveQL literal of its type.
fn literal(array: &ArrayRef, row: usize) -> Result<String, String> {
    if array.is_null(row) {
        return Ok("NULL".into());
    }
    let options = FormatOptions::default().with_display_error(true);
    let formatter = ArrayFormatter::try_new(array.as_ref(), &options).map_err(|e| e.to_string())?;
    let text = formatter.value(row).to_string();
    Ok(match array.data_type() {
        DataType::Boolean => text.to_uppercase(),
        DataType::Int8 => format!("CAST({text} AS TINYINT)"),
        DataType::Int16 => format!("CAST({text} AS SMALLINT)"),
        // Parenthesised, so `1-?` with -1 cannot become a `--` comment.
        DataType::Int32 | DataType::UInt8 | DataType::UInt16 => format!("({text})"),
        DataType::Int64 | DataType::UInt32 | DataType::UInt64 => format!("CAST({text} AS BIGINT)"),
        DataType::Float32 => match text.as_str() {
            "NaN" | "inf" | "-inf" => format!("CAST('{text}' AS FLOAT)"),
            _ => format!("CAST({text} AS FLOAT)"),
        },
        DataType::Float64 => match text.as_str() {
            "NaN" | "inf" | "-inf" => format!("CAST('{text}' AS DOUBLE)"),
            _ if text.contains(['.', 'e', 'E']) => format!("({text})"),
            _ => format!("({text}.0)"),
        },
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => {
            format!("CAST('{text}' AS DECIMAL({p},{s}))")
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => quote(&text),
        DataType::Date32 | DataType::Date64 => format!("DATE {}", quote(&text)),
        DataType::Timestamp(_, _) => format!("TIMESTAMP {}", quote(&text.replace('T', " "))),
        other => {
            return Err(format!(
                "a parameter of type {other} cannot be bound (use strings, numbers, booleans, dates or timestamps)"
            ))
        }
    })
}

/// A string as a HiveQL expression of that exact text. Quotes and backslashes are the two
/// characters whose reading inside a literal differs between dialects (doubled quotes,
/// backslash escapes, adjacent literals), so a text holding them is spelled with `chr`:
/// `concat('it', chr(39), 's')` means the same to every reader.
fn quote(s: &str) -> String {
    if !s.contains(['\'', '\\']) {
        return format!("'{s}'");
    }
    let mut parts = Vec::new();
    let mut plain = String::new();
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            if !plain.is_empty() {
                parts.push(format!("'{}'", std::mem::take(&mut plain)));
            }
            parts.push(format!("chr({})", u32::from(c)));
        } else {
            plain.push(c);
        }
    }
    if !plain.is_empty() {
        parts.push(format!("'{plain}'"));
    }
    if parts.len() == 1 {
        // concat of one argument is still a function call every reader knows.
        parts.push("''".into());
    }
    format!("concat({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow::array::{BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    #[test]
    fn markers_in_quotes_and_comments_are_not_parameters() {
        let sql = "select '?', `a?b`, \"x\\\"?\" -- ?\n, ? /* ? */ , ?";
        let at = placeholders(sql);
        assert_eq!(at.len(), 2);
        assert!(at.iter().all(|i| &sql[*i..*i + 1] == "?"));
    }

    #[test]
    fn values_become_typed_literals() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
            Field::new("c", DataType::Float64, true),
            Field::new("d", DataType::Boolean, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![Some(7), None])),
                Arc::new(StringArray::from(vec![Some("it's a\\b"), Some("x")])),
                Arc::new(Float64Array::from(vec![Some(2.0), Some(0.5)])),
                Arc::new(BooleanArray::from(vec![Some(true), None])),
            ],
        )
        .unwrap();
        let sql = "insert into t values (?, ?, ?, ?)";
        assert_eq!(
            bind(sql, &batch, 0).unwrap(),
            "insert into t values (CAST(7 AS BIGINT), concat('it', chr(39), 's a', chr(92), 'b'), (2.0), TRUE)"
        );
        assert_eq!(
            bind(sql, &batch, 1).unwrap(),
            "insert into t values (NULL, 'x', (0.5), NULL)"
        );
        assert!(bind("select ?", &batch, 0).is_err());
    }

    #[test]
    fn many_rows_of_an_insert_become_one_statement() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![Some(1), None])),
                Arc::new(StringArray::from(vec![Some("x)"), Some("y")])),
            ],
        )
        .map_err(|e| e.to_string());
        let Ok(batch) = batch else {
            panic!("batch");
        };
        let one = bind_all("INSERT INTO t VALUES (?, ?);", &batch);
        assert_eq!(one.as_ref().map(Vec::len), Ok(1), "{one:?}");
        let text = one.unwrap_or_default().concat();
        assert!(text.starts_with("INSERT INTO t VALUES ("), "{text}");
        assert_eq!(text.matches("), (").count(), 1, "{text}");
        // A marker outside the tuple, or a statement that is not an INSERT: once per row.
        let per_row = bind_all("INSERT INTO t SELECT ?, ? FROM x", &batch);
        assert_eq!(per_row.map(|v| v.len()), Ok(2));
        let per_row = bind_all("select 'values (?)', ?, ?", &batch);
        assert_eq!(per_row.map(|v| v.len()), Ok(2));
    }
}
