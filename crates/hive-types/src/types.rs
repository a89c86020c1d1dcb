//! Hive's type system: parsing Hive type names (`map<string,array<int>>`), mapping them to the
//! Arrow types DataFusion computes in, and naming Arrow types as Hive reports them to clients.
//!
//! DataFusion computes in Arrow types; clients expect Hive's names and qualifiers. A field may
//! carry its declared Hive type in metadata under [`HIVE_TYPE_KEY`] (for `VARCHAR(n)` and
//! `CHAR(n)`, which Arrow cannot express); otherwise the type is derived from the Arrow type.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, IntervalUnit, TimeUnit, UnionFields, UnionMode};

/// Field metadata key holding a column's declared Hive type, e.g. `varchar(10)`.
pub const HIVE_TYPE_KEY: &str = "hive.type";

/// Whether values of `t` are text (a dictionary of text too).
pub fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

/// A Hive column type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// UNIONTYPE<t0, t1, ...>: one value of one of the types, with its tag (the type's index).
    Union(Vec<HiveType>),
    /// The type of an untyped NULL (`void`).
    Null,
}

impl HiveType {
    /// The Hive type of an Arrow field, honouring a declared type in its metadata. A declared
    /// CHAR or VARCHAR holds only for text: a CAST of such a value to a number or a date keeps
    /// the metadata in DataFusion, and its values are of the Arrow type.
    pub fn of_field(field: &Field) -> HiveType {
        if let Some(declared) = field.metadata().get(HIVE_TYPE_KEY) {
            if let Some(t) = HiveType::parse(declared) {
                let text_declared = matches!(t, HiveType::Char(_) | HiveType::Varchar(_));
                if !text_declared || is_text(field.data_type()) {
                    return t;
                }
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
            DataType::Union(fields, _) => {
                HiveType::Union(fields.iter().map(|(_, f)| HiveType::of_field(f)).collect())
            }
        }
    }

    /// Parses a Hive type name as Hive prints or a user writes it (`varchar(10)`,
    /// `decimal(9,2)`, `array<struct<a:int,b:string>>`), case-insensitive.
    pub fn parse(s: &str) -> Option<HiveType> {
        let text = s.to_ascii_lowercase();
        let mut p = TypeParser {
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        let t = p.parse_type()?;
        p.skip_ws();
        (p.pos == p.s.len()).then_some(t)
    }

    /// The Arrow type Apiary computes this Hive type in.
    pub fn to_arrow(&self) -> DataType {
        match self {
            HiveType::Boolean => DataType::Boolean,
            HiveType::TinyInt => DataType::Int8,
            HiveType::SmallInt => DataType::Int16,
            HiveType::Int => DataType::Int32,
            HiveType::BigInt => DataType::Int64,
            HiveType::Float => DataType::Float32,
            HiveType::Double => DataType::Float64,
            HiveType::Decimal(p, s) => DataType::Decimal128(*p, *s),
            HiveType::String | HiveType::Varchar(_) | HiveType::Char(_) => DataType::Utf8,
            HiveType::Date => DataType::Date32,
            HiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            HiveType::TimestampLocalTz => {
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            HiveType::Binary => DataType::Binary,
            HiveType::IntervalYearMonth => DataType::Interval(IntervalUnit::YearMonth),
            HiveType::IntervalDayTime => DataType::Duration(TimeUnit::Microsecond),
            HiveType::Array(e) => DataType::List(Arc::new(e.to_field("element"))),
            HiveType::Map(k, v) => {
                let mut key = k.to_field("key");
                key.set_nullable(false);
                DataType::Map(
                    Arc::new(Field::new(
                        "key_value",
                        DataType::Struct(Fields::from(vec![key, v.to_field("value")])),
                        false,
                    )),
                    false,
                )
            }
            HiveType::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|(n, t)| t.to_field(n))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            HiveType::Union(members) => DataType::Union(union_fields(members), UnionMode::Sparse),
            HiveType::Null => DataType::Null,
        }
    }

    /// A nullable Arrow field of this type; VARCHAR and CHAR keep their declared type in the
    /// field's metadata.
    pub fn to_field(&self, name: &str) -> Field {
        let field = Field::new(name, self.to_arrow(), true);
        match self {
            HiveType::Varchar(_) | HiveType::Char(_) => field.with_metadata(HashMap::from([(
                HIVE_TYPE_KEY.to_string(),
                self.to_string(),
            )])),
            _ => field,
        }
    }

    /// Whether the type is a UNIONTYPE or holds one.
    pub fn has_union(&self) -> bool {
        match self {
            HiveType::Union(_) => true,
            HiveType::Array(e) => e.has_union(),
            HiveType::Map(k, v) => k.has_union() || v.has_union(),
            HiveType::Struct(fields) => fields.iter().any(|(_, t)| t.has_union()),
            _ => false,
        }
    }

    /// Whether the type is ARRAY, MAP, STRUCT or UNIONTYPE.
    pub fn is_complex(&self) -> bool {
        matches!(
            self,
            HiveType::Array(_) | HiveType::Map(_, _) | HiveType::Struct(_) | HiveType::Union(_)
        )
    }
}

/// The Arrow members of a UNIONTYPE: member `i` has type id `i` (Hive's tag) and is named
/// `tag_i`, the field name Hive's `extract_union` gives it.
pub fn union_fields(members: &[HiveType]) -> UnionFields {
    tagged_members(members.iter().map(|t| t.to_field("")))
}

/// `fields` as a union's members in [`union_fields`]' form: ids from 0, named `tag_<id>`.
pub fn tagged_members(fields: impl IntoIterator<Item = Field>) -> UnionFields {
    fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            // A UNIONTYPE has at most i8::MAX members: the parser and create_union refuse more.
            let id = i8::try_from(i).unwrap_or(i8::MAX);
            (id, Arc::new(f.with_name(format!("tag_{i}"))))
        })
        .collect()
}

/// Members a UNIONTYPE may have: Arrow's type ids are `i8`.
const MAX_UNION_MEMBERS: usize = 127;

/// Nesting allowed in a type name, so a hostile one cannot exhaust the stack.
const MAX_TYPE_DEPTH: usize = 64;

struct TypeParser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl TypeParser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        if self.s.get(self.pos) == Some(&b'`') {
            let end = self.s[start + 1..].iter().position(|&b| b == b'`')? + start + 1;
            self.pos = end + 1;
            return Some(String::from_utf8_lossy(&self.s[start + 1..end]).into_owned());
        }
        while self.pos < self.s.len()
            && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
        {
            self.pos += 1;
        }
        (self.pos > start).then(|| String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    fn number(&mut self) -> Option<i64> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }

    fn args(&mut self) -> Option<Vec<i64>> {
        let mut out = Vec::new();
        if !self.eat(b'(') {
            return Some(out);
        }
        loop {
            out.push(self.number()?);
            if self.eat(b')') {
                return Some(out);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn parse_type(&mut self) -> Option<HiveType> {
        self.depth += 1;
        if self.depth > MAX_TYPE_DEPTH {
            return None;
        }
        let word = self.word()?;
        let t = match word.as_str() {
            "array" => {
                if !self.eat(b'<') {
                    return None;
                }
                let e = self.parse_type()?;
                if !self.eat(b'>') {
                    return None;
                }
                HiveType::Array(Box::new(e))
            }
            "map" => {
                if !self.eat(b'<') {
                    return None;
                }
                let k = self.parse_type()?;
                if !self.eat(b',') {
                    return None;
                }
                let v = self.parse_type()?;
                if !self.eat(b'>') {
                    return None;
                }
                HiveType::Map(Box::new(k), Box::new(v))
            }
            "struct" => {
                if !self.eat(b'<') {
                    return None;
                }
                let mut fields = Vec::new();
                loop {
                    let name = self.word()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    fields.push((name, self.parse_type()?));
                    if self.eat(b'>') {
                        break;
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
                HiveType::Struct(fields)
            }
            "uniontype" => {
                if !self.eat(b'<') {
                    return None;
                }
                let mut members = Vec::new();
                loop {
                    members.push(self.parse_type()?);
                    if self.eat(b'>') {
                        break;
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
                if members.len() > MAX_UNION_MEMBERS {
                    return None;
                }
                HiveType::Union(members)
            }
            "interval_year_month" => HiveType::IntervalYearMonth,
            "interval_day_time" => HiveType::IntervalDayTime,
            "timestamp" => {
                // TIMESTAMP WITH LOCAL TIME ZONE
                let save = self.pos;
                match self.word().as_deref() {
                    Some("with") => {
                        for w in ["local", "time", "zone"] {
                            if self.word().as_deref() != Some(w) {
                                return None;
                            }
                        }
                        HiveType::TimestampLocalTz
                    }
                    _ => {
                        self.pos = save;
                        HiveType::Timestamp
                    }
                }
            }
            base => {
                let nums = self.args()?;
                match (base, nums.as_slice()) {
                    ("boolean", []) => HiveType::Boolean,
                    ("tinyint", []) => HiveType::TinyInt,
                    ("smallint", []) => HiveType::SmallInt,
                    ("int" | "integer", []) => HiveType::Int,
                    ("bigint", []) => HiveType::BigInt,
                    ("float", []) => HiveType::Float,
                    ("double", []) => HiveType::Double,
                    ("decimal" | "numeric", []) => HiveType::Decimal(10, 0),
                    ("decimal" | "numeric", [p]) => HiveType::Decimal(precision(*p)?, 0),
                    ("decimal" | "numeric", [p, s]) if *s <= *p => {
                        HiveType::Decimal(precision(*p)?, i8::try_from(*s).ok()?)
                    }
                    ("string", []) => HiveType::String,
                    ("varchar", [n]) if (1..=65535).contains(n) => {
                        HiveType::Varchar(u32::try_from(*n).ok()?)
                    }
                    ("char", [n]) if (1..=255).contains(n) => {
                        HiveType::Char(u32::try_from(*n).ok()?)
                    }
                    ("date", []) => HiveType::Date,
                    ("binary", []) => HiveType::Binary,
                    ("void", []) => HiveType::Null,
                    _ => return None,
                }
            }
        };
        self.depth -= 1;
        Some(t)
    }
}

fn precision(p: i64) -> Option<u8> {
    u8::try_from(p).ok().filter(|p| (1..=38).contains(p))
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
            HiveType::Union(members) => {
                f.write_str("uniontype<")?;
                for (i, t) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
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
        let nested = "array<struct<a:int,b:map<string,decimal(9,2)>>>";
        let t = HiveType::parse("ARRAY< STRUCT<a: INT, b: MAP<STRING, DECIMAL(9, 2)>>>");
        assert_eq!(t.map(|t| t.to_string()).as_deref(), Some(nested));
        assert_eq!(HiveType::parse("array<int"), None);
        assert_eq!(HiveType::parse("decimal(50,2)"), None);
        assert_eq!(HiveType::parse(&"array<".repeat(10_000)), None);
        let u = HiveType::parse("UNIONTYPE<int, array<string>>");
        assert_eq!(
            u.as_ref().map(|t| t.to_string()).as_deref(),
            Some("uniontype<int,array<string>>")
        );
        let arrow = u.map(|t| t.to_arrow());
        assert_eq!(
            arrow
                .as_ref()
                .map(|dt| HiveType::of(dt).to_string())
                .as_deref(),
            Some("uniontype<int,array<string>>")
        );
        assert_eq!(HiveType::parse("uniontype<>"), None);
        let f = HiveType::Varchar(5).to_field("v");
        assert_eq!(HiveType::of_field(&f), HiveType::Varchar(5));
    }
}
