//! Hive's date fields and truncations: `year(x)` .. `second(x)`, `weekofyear(x)`,
//! `dayofweek(x)` (1 for Sunday), `floor_year(x)` .. `floor_second(x)` and
//! `tumbling_window(ts, interval[, origin])`, of a date, a timestamp or a timestamp's text
//! (NULL when the value is none), as DataFusion's `date_part`, `date_trunc` and `date_bin`;
//! and Spark's date functions given their arguments as Hive reads them.

use std::sync::Arc;

use arrow::datatypes::{DataType, TimeUnit};
use datafusion::functions::datetime::{date_bin, date_part, date_trunc};
use datafusion::logical_expr::{cast, lit, try_cast, Expr, ScalarUDF};

use crate::forms::expr_fn::{call_coerced, take, ExprFn};

/// Hive's date field functions and the field `date_part` reads for each.
const FIELDS: &[(&str, &str)] = &[
    ("year", "year"),
    ("quarter", "quarter"),
    ("month", "month"),
    ("day", "day"),
    ("dayofmonth", "day"),
    ("hour", "hour"),
    ("minute", "minute"),
    ("second", "second"),
    ("weekofyear", "week"),
    ("dayofweek", "dow"),
];

/// Hive's truncations of a timestamp and the unit `date_trunc` takes for each.
const FLOORS: &[(&str, &str)] = &[
    ("floor_second", "second"),
    ("floor_minute", "minute"),
    ("floor_hour", "hour"),
    ("floor_day", "day"),
    ("floor_week", "week"),
    ("floor_month", "month"),
    ("floor_quarter", "quarter"),
    ("floor_year", "year"),
];

/// A value of type `t` as a timestamp in microseconds, NULL when it is none (nanoseconds
/// would lose dates before 1677 and after 2262); text is read as Hive reads it.
fn timestamp(x: Expr, t: Option<&DataType>) -> Expr {
    if t.is_some_and(crate::forms::expr_fn::is_text) {
        crate::scalar::text_timestamp::text_as_timestamp(x)
    } else {
        try_cast(x, MICROSECONDS)
    }
}

/// A text's time of day as Hive's `hour`, `minute` and `second` read it: a timestamp's text,
/// or a time alone (`'13:14:15'`, on the epoch's day); a date alone has none (NULL).
fn time_of_text(x: Expr) -> datafusion::common::Result<Expr> {
    use datafusion::functions::string::expr_fn::concat;
    use datafusion::logical_expr::when;
    when(
        x.clone().like(lit("%:%")).and(x.clone().like(lit("%-%"))),
        x.clone(),
    )
    .when(
        x.clone().like(lit("%:%")),
        concat(vec![lit("1970-01-01 "), x]),
    )
    .otherwise(lit(datafusion::common::ScalarValue::Utf8(None)))
}

/// Hive's TIMESTAMP: microseconds, no time zone.
const MICROSECONDS: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

/// Spark's functions whose first argument Hive reads as a date (a timestamp or a date's text
/// too, NULL when it is none) and, for `date_add` and `date_sub`, whose second is a number
/// of days as an INT (any integer Hive takes); `factorial(n)` and `space(n)`, whose argument
/// is an INT; `from_utc_timestamp` and `to_utc_timestamp`, whose first is a TIMESTAMP (a
/// DATE at its midnight, a text read as a timestamp).
const SPARKS_WITH_HIVE_ARGUMENTS: &[&str] = &[
    "from_utc_timestamp",
    "to_utc_timestamp",
    "date_add",
    "date_sub",
    "last_day",
    "next_day",
    "factorial",
    "space",
];

/// Spark's `function` (one of [`SPARKS_WITH_HIVE_ARGUMENTS`]) taking its arguments as Hive
/// gives them; None for another.
pub(crate) fn with_hive_arguments(function: Arc<ScalarUDF>) -> Option<ExprFn> {
    let name = *SPARKS_WITH_HIVE_ARGUMENTS
        .iter()
        .find(|n| **n == function.name())?;
    let timestamps = matches!(name, "from_utc_timestamp" | "to_utc_timestamp");
    let dates = !timestamps && !matches!(name, "factorial" | "space");
    Some(ExprFn::new(name, 1..=usize::MAX, move |args, types| {
        let (args, types): (Vec<Expr>, Vec<DataType>) = args
            .into_iter()
            .zip(types)
            .enumerate()
            .map(|(i, (a, t))| match (i, name) {
                (0, _) if timestamps => (timestamp(a, Some(t)), MICROSECONDS),
                (0, _) if dates => (try_cast(a, DataType::Date32), DataType::Date32),
                (0, _) | (1, "date_add" | "date_sub") => {
                    (try_cast(a, DataType::Int32), DataType::Int32)
                }
                _ => (a, t.clone()),
            })
            .unzip();
        call_coerced(&function, args, &types)
    }))
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    let fields = FIELDS.iter().map(|&(name, field)| {
        // An INT, as Hive's; `dow` counts from 0 for Sunday, Hive's dayofweek from 1.
        ExprFn::new(name, 1..=1, move |args, types| {
            let [x] = take(args)?;
            let text = matches!(
                types.first(),
                Some(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
            );
            let x = if text && matches!(field, "hour" | "minute" | "second") {
                time_of_text(x)?
            } else {
                x
            };
            let mut part = date_part().call(vec![lit(field), timestamp(x, types.first())]);
            if field == "dow" {
                part = cast(part, DataType::Int32) + lit(1i32);
            }
            Ok(cast(part, DataType::Int32))
        })
    });
    let floors = FLOORS.iter().map(|&(name, unit)| {
        ExprFn::new(name, 1..=1, move |args, types| {
            let [x] = take(args)?;
            Ok(date_trunc().call(vec![lit(unit), timestamp(x, types.first())]))
        })
    });
    // tumbling_window(ts, interval[, origin]): the start of ts's window, windows of the
    // interval's length from the origin (the epoch by default).
    let tumbling = ExprFn::new("tumbling_window", 2..=3, |args, types| {
        let mut args = args.into_iter();
        let (Some(ts), Some(width)) = (args.next(), args.next()) else {
            return datafusion::common::internal_err!("tumbling_window takes 2 or 3 arguments");
        };
        // A day-time interval (a length of time) as the interval date_bin takes.
        let (width, width_type) = match &types[1] {
            DataType::Duration(_) => {
                let interval = DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano);
                (cast(width, interval.clone()), interval)
            }
            other => (width, other.clone()),
        };
        let mut bin = vec![width, timestamp(ts, types.first())];
        bin.extend(args.map(|origin| timestamp(origin, types.get(2))));
        let mut bin_types = vec![width_type, MICROSECONDS];
        bin_types.extend(types.get(2).map(|_| MICROSECONDS));
        call_coerced(&date_bin(), bin, &bin_types)
    });
    fields
        .chain(floors)
        .chain(std::iter::once(tumbling))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn fields_of_dates_timestamps_and_text() {
        assert_eq!(
            answers(
                "SELECT year('2024-03-15 13:45:30'), quarter(DATE '2024-03-15'), \
                 month('2024-03-15'), day('2024-03-15'), dayofmonth('2024-03-15'), \
                 hour('2024-03-15 13:45:30'), minute('2024-03-15 13:45:30'), \
                 second('2024-03-15 13:45:30'), weekofyear('2024-03-15'), \
                 dayofweek('2024-03-17'), year('not a date')"
            )
            .await,
            ["2024", "1", "3", "15", "15", "13", "45", "30", "11", "1", ""]
        );
    }

    #[tokio::test]
    async fn floors_and_windows() {
        assert_eq!(
            answers(
                "SELECT floor_month('2024-03-15 13:45:30'), floor_hour('2024-03-15 13:45:30'), \
                 tumbling_window(TIMESTAMP '2024-03-15 13:47:30', INTERVAL '5' MINUTE)"
            )
            .await,
            [
                "2024-03-01T00:00:00",
                "2024-03-15T13:00:00",
                "2024-03-15T13:45:00"
            ]
        );
    }
}
