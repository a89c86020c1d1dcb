//! Hive's type system as Apiary reports it to clients, derived from Arrow types.
//!
//! DataFusion computes in Arrow types; clients expect Hive's names and qualifiers. A field may
//! carry its declared Hive type in metadata under [`HIVE_TYPE_KEY`] (for `VARCHAR(n)` and
//! `CHAR(n)`, which Arrow cannot express); otherwise the type is derived from the Arrow type.

use std::fmt;

use arrow::datatypes::{DataType, Field, IntervalUnit};

/// Field metadata key holding a column's declared Hive type, e.g. `varchar(10)`.
pub const HIVE_TYPE_KEY: &str = "hive.type";

/// A Hive column type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HiveType {
    /// BOOLEAN
    Boolean,
    /// TINYINT
    TinyInt,
    /// SMALLINT
    SmallInt,
    /// INT
    Int,
    /// BIGINT
    BigInt,
    /// FLOAT
    Float,
    /// DOUBLE
    Double,
    /// DECIMAL(precision, scale)
    Decimal(u8, i8),
    /// STRING
    String,
    /// VARCHAR(n)
    Varchar(u32),
    /// CHAR(n)
    Char(u32),
    /// DATE
    Date,
    /// TIMESTAMP (no time zone)
    Timestamp,
    /// TIMESTAMP WITH LOCAL TIME ZONE
    TimestampLocalTz,
    /// BINARY
    Binary,
    /// INTERVAL YEAR TO MONTH
    IntervalYearMonth,
    /// INTERVAL DAY TO SECOND
    IntervalDayTime,
    /// ARRAY<element>
    Array(Box<HiveType>),
    /// MAP<key, value>
    Map(Box<HiveType>, Box<HiveType>),
    /// STRUCT<name:type, ...>
    Struct(Vec<(String, HiveType)>),
    /// The type of an untyped NULL (`void`).
    Null,
}

impl HiveType {
    /// The Hive type of an Arrow field, honouring a declared type in its metadata.
    pub fn of_field(field: &Field) -> HiveType {
        if let Some(declared) = field.metadata().get(HIVE_TYPE_KEY) {
            if let Some(t) = HiveType::parse(declared) {
                return t;
            }
        }
        HiveType::of(field.data_type())
    }

    /// The Hive type that an Arrow type is reported as.
    pub fn of(dt: &DataType) -> HiveType {
        match dt {
            DataType::Null => HiveType::Null,
            DataType::Boolean => HiveType::Boolean,
            DataType::Int8 => HiveType::TinyInt,
            DataType::Int16 | DataType::UInt8 => HiveType::SmallInt,
            DataType::Int32 | DataType::UInt16 => HiveType::Int,
            DataType::Int64 | DataType::UInt32 => HiveType::BigInt,
            DataType::UInt64 => HiveType::Decimal(20, 0),
            DataType::Float16 | DataType::Float32 => HiveType::Float,
            DataType::Float64 => HiveType::Double,
            DataType::Decimal32(p, s)
            | DataType::Decimal64(p, s)
            | DataType::Decimal128(p, s)
            | DataType::Decimal256(p, s) => HiveType::Decimal((*p).min(38), *s),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => HiveType::String,
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_) => HiveType::Binary,
            DataType::Date32 | DataType::Date64 => HiveType::Date,
            DataType::Timestamp(_, None) => HiveType::Timestamp,
            DataType::Timestamp(_, Some(_)) => HiveType::TimestampLocalTz,
            DataType::Time32(_) | DataType::Time64(_) => HiveType::String,
            DataType::Interval(IntervalUnit::YearMonth) => HiveType::IntervalYearMonth,
            DataType::Interval(_) | DataType::Duration(_) => HiveType::IntervalDayTime,
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _) => HiveType::Array(Box::new(HiveType::of_field(f))),
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => HiveType::Map(
                    Box::new(HiveType::of_field(&kv[0])),
                    Box::new(HiveType::of_field(&kv[1])),
                ),
                _ => HiveType::String,
            },
            DataType::Struct(fields) => HiveType::Struct(
                fields
                    .iter()
                    .map(|f| (f.name().clone(), HiveType::of_field(f)))
                    .collect(),
            ),
            DataType::Dictionary(_, v) => HiveType::of(v),
            DataType::RunEndEncoded(_, v) => HiveType::of(v.data_type()),
            DataType::Union(_, _) => HiveType::String,
        }
    }

    /// Parses a primitive Hive type name as Hive prints it (`varchar(10)`, `decimal(9,2)`).
    pub fn parse(s: &str) -> Option<HiveType> {
        let s = s.trim().to_ascii_lowercase();
        let (base, args) = match s.find('(') {
            Some(i) if s.ends_with(')') => {
                (s[..i].trim().to_string(), Some(&s[i + 1..s.len() - 1]))
            }
            _ => (s.clone(), None),
        };
        let nums: Vec<i64> = args
            .map(|a| a.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_default();
        Some(match (base.as_str(), nums.as_slice()) {
            ("boolean", []) => HiveType::Boolean,
            ("tinyint", []) => HiveType::TinyInt,
            ("smallint", []) => HiveType::SmallInt,
            ("int" | "integer", []) => HiveType::Int,
            ("bigint", []) => HiveType::BigInt,
            ("float", []) => HiveType::Float,
            ("double", []) => HiveType::Double,
            ("decimal", []) => HiveType::Decimal(10, 0),
            ("decimal", [p]) => HiveType::Decimal(u8::try_from(*p).ok()?, 0),
            ("decimal", [p, s]) => {
                HiveType::Decimal(u8::try_from(*p).ok()?, i8::try_from(*s).ok()?)
            }
            ("string", []) => HiveType::String,
            ("varchar", [n]) => HiveType::Varchar(u32::try_from(*n).ok()?),
            ("char", [n]) => HiveType::Char(u32::try_from(*n).ok()?),
            ("date", []) => HiveType::Date,
            ("timestamp", []) => HiveType::Timestamp,
            ("binary", []) => HiveType::Binary,
            _ => return None,
        })
    }

    /// Whether the type is ARRAY, MAP or STRUCT.
    pub fn is_complex(&self) -> bool {
        matches!(
            self,
            HiveType::Array(_) | HiveType::Map(_, _) | HiveType::Struct(_)
        )
    }
}

impl fmt::Display for HiveType {
    /// Hive's lower-case spelling, as DESCRIBE prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HiveType::Boolean => f.write_str("boolean"),
            HiveType::TinyInt => f.write_str("tinyint"),
            HiveType::SmallInt => f.write_str("smallint"),
            HiveType::Int => f.write_str("int"),
            HiveType::BigInt => f.write_str("bigint"),
            HiveType::Float => f.write_str("float"),
            HiveType::Double => f.write_str("double"),
            HiveType::Decimal(p, s) => write!(f, "decimal({p},{s})"),
            HiveType::String => f.write_str("string"),
            HiveType::Varchar(n) => write!(f, "varchar({n})"),
            HiveType::Char(n) => write!(f, "char({n})"),
            HiveType::Date => f.write_str("date"),
            HiveType::Timestamp => f.write_str("timestamp"),
            HiveType::TimestampLocalTz => f.write_str("timestamp with local time zone"),
            HiveType::Binary => f.write_str("binary"),
            HiveType::IntervalYearMonth => f.write_str("interval_year_month"),
            HiveType::IntervalDayTime => f.write_str("interval_day_time"),
            HiveType::Array(e) => write!(f, "array<{e}>"),
            HiveType::Map(k, v) => write!(f, "map<{k},{v}>"),
            HiveType::Struct(fields) => {
                f.write_str("struct<")?;
                for (i, (n, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}:{t}")?;
                }
                f.write_str(">")
            }
            HiveType::Null => f.write_str("void"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn names_follow_hive() {
        let t = HiveType::of(&DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(
                    vec![
                        Field::new("key", DataType::Utf8, false),
                        Field::new("value", DataType::Decimal128(9, 2), true),
                    ]
                    .into(),
                ),
                false,
            )),
            false,
        ));
        assert_eq!(t.to_string(), "map<string,decimal(9,2)>");
        assert_eq!(HiveType::parse("VARCHAR(12)"), Some(HiveType::Varchar(12)));
        assert_eq!(
            HiveType::parse("decimal(38, 10)"),
            Some(HiveType::Decimal(38, 10))
        );
        assert_eq!(HiveType::parse("nonsense"), None);
    }
}
