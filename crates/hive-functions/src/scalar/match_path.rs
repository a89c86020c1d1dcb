//! The row-matching step of Hive's `matchpath` table function: over one partition's rows in
//! their order, the matches of a pattern of symbols, each a condition on one row.
//!
//! `hive_matchpath(rows, truths, pattern)` takes a partition's `rows` (a list of structs, the
//! input rows in order), `truths` (for each row, a list with each symbol's condition on it)
//! and the `pattern` as the rewrite of `matchpath` writes it: the symbols' positions in
//! `truths` joined by `.`, each followed by `+` (one or more rows) or `*` (any number), or by
//! nothing (exactly one row). Every row a match may start at is tried; each match gives one
//! struct `{first, tpath}`: the row it starts at, and the rows it matched. As in Hive's
//! `MatchPath`, a symbol with `+` or `*` takes every row it can (no backtracking), and a
//! condition that is NULL is false.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, ListArray, StructArray, UInt32Array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::names::MATCH_PATH;

/// Registers `hive_matchpath`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::new_from_impl(MatchPath::new()));
}

/// How many rows a symbol of the pattern takes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Times {
    One,
    OneOrMore,
    AnyNumber,
}

/// The pattern `0.0+.1*` as (symbol, times) steps.
fn steps(pattern: &str) -> Result<Vec<(usize, Times)>> {
    pattern
        .split('.')
        .map(|step| {
            let (symbol, times) = match step.as_bytes().last() {
                Some(b'+') => (&step[..step.len() - 1], Times::OneOrMore),
                Some(b'*') => (&step[..step.len() - 1], Times::AnyNumber),
                _ => (step, Times::One),
            };
            match symbol.parse() {
                Ok(s) => Ok((s, times)),
                Err(_) => exec_err!("{MATCH_PATH}: a malformed pattern step {step:?}"),
            }
        })
        .collect()
}

/// Where a match of `steps` starting at row `start` of `len` rows ends (exclusive), if there
/// is one; `holds(row, symbol)` is whether a symbol's condition holds on a row.
fn match_at(
    steps: &[(usize, Times)],
    len: usize,
    start: usize,
    holds: impl Fn(usize, usize) -> bool,
) -> Option<usize> {
    let mut at = start;
    for &(symbol, times) in steps {
        if times != Times::AnyNumber {
            if at >= len || !holds(at, symbol) {
                return None;
            }
            at += 1;
        }
        if times != Times::One {
            while at < len && holds(at, symbol) {
                at += 1;
            }
        }
    }
    Some(at)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MatchPath {
    signature: Signature,
}

impl MatchPath {
    fn new() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

/// The result type for rows of type `row`: a list of `{first: row, tpath: list<row>}`.
fn result_type(row: &DataType) -> DataType {
    DataType::new_list(DataType::Struct(matched_fields(row)), true)
}

fn matched_fields(row: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("first", row.clone(), true),
        Field::new("tpath", DataType::new_list(row.clone(), true), true),
    ])
}

impl ScalarUDFImpl for MatchPath {
    fn name(&self) -> &str {
        MATCH_PATH
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args.first() {
            Some(DataType::List(row)) => Ok(result_type(row.data_type())),
            other => plan_err!("{MATCH_PATH}: expected a list of rows, got {other:?}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [rows, truths, pattern] = args.args.as_slice() else {
            return exec_err!("{MATCH_PATH} takes 3 arguments");
        };
        let pattern = match pattern {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(p))) => steps(p)?,
            _ => return exec_err!("{MATCH_PATH}: the pattern must be a constant"),
        };
        let rows = rows.to_array(args.number_rows)?;
        let truths = truths.to_array(args.number_rows)?;
        let (Some(rows), Some(truths)) = (rows.as_list_opt::<i32>(), truths.as_list_opt::<i32>())
        else {
            return exec_err!("{MATCH_PATH}: expected lists of rows and of their truths");
        };
        let row_type = match rows.data_type() {
            DataType::List(f) => f.data_type().clone(),
            other => return exec_err!("{MATCH_PATH}: expected a list of rows, got {other}"),
        };
        let Some(truth_lists) = truths.values().as_list_opt::<i32>() else {
            return exec_err!("{MATCH_PATH}: expected a list of truths per row");
        };
        let truth_values: &BooleanArray = truth_lists.values().as_boolean();
        let truth_offsets = truth_lists.value_offsets();

        if rows.values().len() > u32::MAX as usize {
            return exec_err!("{MATCH_PATH}: more than {} rows in one batch", u32::MAX);
        }
        // Overlapping matches repeat rows (a run of n rows matching `A+` gives n paths); their
        // total is bounded by a list's offsets.
        let too_many = || {
            exec_err!(
                "{MATCH_PATH}: the matched paths hold more than {} rows",
                i32::MAX
            )
        };
        let mut firsts: Vec<u32> = Vec::new();
        let mut path_rows: Vec<u32> = Vec::new();
        let mut path_offsets: Vec<i32> = vec![0];
        let mut match_offsets: Vec<i32> = vec![0];
        for partition in 0..rows.len() {
            if !rows.is_null(partition) && !truths.is_null(partition) {
                let rows_from = rows.value_offsets()[partition] as usize;
                let truths_from = truths.value_offsets()[partition] as usize;
                let len = rows.value_length(partition) as usize;
                let holds = |row: usize, symbol: usize| -> bool {
                    let list = truths_from + row;
                    if truth_lists.is_null(list) {
                        return false;
                    }
                    let at = truth_offsets[list] as usize + symbol;
                    at < truth_offsets[list + 1] as usize
                        && truth_values.is_valid(at)
                        && truth_values.value(at)
                };
                for start in 0..len {
                    if let Some(end) = match_at(&pattern, len, start, holds) {
                        if path_rows.len() + (end - start) > i32::MAX as usize {
                            return too_many();
                        }
                        firsts.push((rows_from + start) as u32);
                        path_rows.extend((rows_from + start..rows_from + end).map(|r| r as u32));
                        path_offsets.push(path_rows.len() as i32);
                    }
                }
            }
            match_offsets.push(firsts.len() as i32);
        }
        let values = rows.values();
        let first = arrow::compute::take(values.as_ref(), &UInt32Array::from(firsts), None)?;
        let path_values =
            arrow::compute::take(values.as_ref(), &UInt32Array::from(path_rows), None)?;
        let tpath: ArrayRef = Arc::new(ListArray::try_new(
            Arc::new(Field::new_list_field(row_type.clone(), true)),
            OffsetBuffer::new(path_offsets.into()),
            path_values,
            None,
        )?);
        let matched = StructArray::try_new(matched_fields(&row_type), vec![first, tpath], None)?;
        let result = ListArray::try_new(
            Arc::new(Field::new_list_field(
                DataType::Struct(matched_fields(&row_type)),
                true,
            )),
            OffsetBuffer::new(match_offsets.into()),
            Arc::new(matched),
            None,
        )?;
        Ok(ColumnarValue::Array(Arc::new(result)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(pattern: &str, late: &[bool]) -> Vec<Option<usize>> {
        let steps = steps(pattern).unwrap();
        (0..late.len())
            .map(|s| match_at(&steps, late.len(), s, |r, _| late[r]))
            .collect()
    }

    #[test]
    fn greedy_steps_without_backtracking() {
        let late = [true, true, false, true, true, true];
        assert_eq!(
            ends("0.0+", &late),
            vec![Some(2), None, None, Some(6), Some(6), None]
        );
        assert_eq!(ends("0", &late)[2], None);
        assert_eq!(ends("0*", &late)[2], Some(2));
        // A star takes every row it can, so a symbol after it finds none.
        assert_eq!(ends("0*.0", &late)[3], None);
        assert!(steps("0.x+").is_err());
    }
}
