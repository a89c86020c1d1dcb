//! Hive's `min` and `max` of a STRUCT or an ARRAY. Hive compares such values field by field
//! (element by element), and its `min` counts a NULL field as greater than any value while its
//! `max` counts it as smaller (`GenericUDAFMin` compares with `NullValueOption.MAXVALUE`):
//! `min` over `{"f":1}`, `{"f":2}`, `{"f":NULL}` is `{"f":1}`, where DataFusion's `min` ranks
//! the NULL field first and answers `{"f":NULL}`. A NULL value itself is skipped, as for any
//! aggregate. The values are compared in Arrow's row format, whose order for nested types is
//! this one once NULLs are placed.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Field, FieldRef};
use arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

/// Hive's `min` or `max` (named by `name`) for a value of type `t`, where it differs from
/// DataFusion's: a STRUCT or an ARRAY that Arrow's row format can order.
pub(crate) fn for_nested(name: &str, t: &DataType) -> Option<Arc<AggregateUDF>> {
    let max = match name {
        "min" => false,
        "max" => true,
        _ => return None,
    };
    let nested = matches!(
        t,
        DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_)
    );
    if !nested || !RowConverter::supports_fields(&[sort_field(t, max)]) {
        return None;
    }
    Some(Arc::new(AggregateUDF::from(NestedMinMax::new(max))))
}

/// Whether `f` is already the nested `min` or `max`.
pub(crate) fn is_nested(f: &AggregateUDF) -> bool {
    let inner: &dyn std::any::Any = f.inner().as_ref();
    inner.is::<NestedMinMax>()
}

/// The order of a nested value: ascending, NULL fields last for `min` and first for `max`,
/// so the least row is `min`'s answer and the greatest `max`'s.
fn sort_field(t: &DataType, max: bool) -> SortField {
    SortField::new_with_options(
        t.clone(),
        SortOptions {
            descending: false,
            nulls_first: max,
        },
    )
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct NestedMinMax {
    max: bool,
    signature: Signature,
}

impl NestedMinMax {
    fn new(max: bool) -> Self {
        Self {
            max,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for NestedMinMax {
    fn name(&self) -> &str {
        if self.max {
            "max"
        } else {
            "min"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        crate::args::check_arity(self.name(), &(1..=1), args.len())?;
        Ok(args[0].clone())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, self.name()),
            args.return_field.data_type().clone(),
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let t = args.return_field.data_type().clone();
        Ok(Box::new(NestedAccumulator {
            converter: RowConverter::new(vec![sort_field(&t, self.max)])?,
            max: self.max,
            best: None,
            null: ScalarValue::try_from(&t)?,
        }))
    }
}

#[derive(Debug)]
struct NestedAccumulator {
    converter: RowConverter,
    max: bool,
    /// The best value so far, with its row to compare.
    best: Option<(OwnedRow, ScalarValue)>,
    /// The answer when no value was seen.
    null: ScalarValue,
}

impl Accumulator for NestedAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(column) = values.first() else {
            return Ok(());
        };
        let rows = self
            .converter
            .convert_columns(std::slice::from_ref(column))?;
        let mut chosen = None;
        for i in 0..column.len() {
            if column.is_null(i) {
                continue;
            }
            let row = rows.row(i);
            let better = match (&chosen, &self.best) {
                (Some(c), _) => self.beats(row, rows.row(*c)),
                (None, Some((best, _))) => self.beats(row, best.row()),
                (None, None) => true,
            };
            if better {
                chosen = Some(i);
            }
        }
        if let Some(i) = chosen {
            self.best = Some((rows.row(i).owned(), ScalarValue::try_from_array(column, i)?));
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.update_batch(states)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(match &self.best {
            Some((_, value)) => value.clone(),
            None => self.null.clone(),
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.converter.size()
            + self.best.as_ref().map_or(0, |(row, value)| {
                row.as_ref().len() + value.size() - std::mem::size_of_val(value)
            })
    }
}

impl NestedAccumulator {
    /// Whether `row` comes before `than` in this aggregate's order: strictly less for `min`,
    /// strictly greater for `max`, so the first of equal values stays.
    fn beats(&self, row: arrow::row::Row<'_>, than: arrow::row::Row<'_>) -> bool {
        if self.max {
            row > than
        } else {
            row < than
        }
    }
}
