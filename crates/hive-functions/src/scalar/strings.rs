//! Hive's string functions that neither DataFusion nor datafusion-spark has with Hive's
//! semantics, written here: `get_json_object` (Hive's JSON path), `regexp_extract`, `split`
//! (a regular expression, trailing empty strings kept), and the helpers the table-generating
//! functions use (`json_tuple`'s field, `inline`'s struct field by position).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListBuilder, StringArray, StringBuilder};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::prelude::SessionContext;
use regex::Regex;
use serde_json::Value as Json;

use crate::names::{JSON_FIELD, STRUCT_FIELD};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for (name, arity, f) in [
        (
            "get_json_object",
            2,
            get_json_object as fn(&[Option<&str>]) -> Result<Option<String>>,
        ),
        (JSON_FIELD, 2, json_field),
        ("regexp_extract", 3, regexp_extract),
    ] {
        ctx.register_udf(ScalarUDF::from(StringFn::new(name, arity, f)));
    }
    ctx.register_udf(ScalarUDF::from(Split::new()));
    ctx.register_udf(ScalarUDF::from(StructField::new()));
    ctx.register_udf(ScalarUDF::from(HiveLength::new(false)));
    ctx.register_udf(ScalarUDF::from(HiveLength::new(true)));
}

/// Hive's `length` (also `char_length`, `character_length`): a string's characters, a
/// BINARY's bytes, anything else its text's characters (`length(123)` is 3); and
/// `octet_length`: the bytes of a string's UTF-8 or of a BINARY. An INT, NULL for NULL.
#[derive(Debug, PartialEq, Eq, Hash)]
struct HiveLength {
    octets: bool,
    signature: Signature,
    aliases: Vec<String>,
}

impl HiveLength {
    fn new(octets: bool) -> Self {
        Self {
            octets,
            signature: Signature::any(1, Volatility::Immutable),
            aliases: if octets {
                vec![]
            } else {
                vec!["char_length".into(), "character_length".into()]
            },
        }
    }
}

impl ScalarUDFImpl for HiveLength {
    fn name(&self) -> &str {
        if self.octets {
            "octet_length"
        } else {
            "length"
        }
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let Some(value) = args.args.into_iter().next() else {
            return exec_err!("{} requires 1 argument(s), got 0", self.name());
        };
        let count = |s: &str| {
            let n = if self.octets {
                s.len()
            } else {
                s.chars().count()
            };
            i32::try_from(n).unwrap_or(i32::MAX)
        };
        crate::args::per_array(value, n, |array| {
            let lengths: arrow::array::Int32Array = match array.data_type() {
                DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                    let bytes = arrow::compute::cast(&array, &DataType::LargeBinary)?;
                    bytes
                        .as_binary::<i64>()
                        .iter()
                        .map(|b| b.map(|b| i32::try_from(b.len()).unwrap_or(i32::MAX)))
                        .collect()
                }
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
                    let texts = arrow::compute::cast(&array, &DataType::LargeUtf8)?;
                    texts
                        .as_string::<i64>()
                        .iter()
                        .map(|s| s.map(count))
                        .collect()
                }
                // Anything else: its text as Hive writes it (`length(1e10)` counts `1.0E10`).
                _ => (0..array.len())
                    .map(|i| {
                        apiary_hive_types::render::cell_text(array.as_ref(), i).map(|s| count(&s))
                    })
                    .collect(),
            };
            Ok(Arc::new(lengths))
        })
    }
}

/// A function of strings to a string, row by row (NULL in, NULL out unless `f` says else).
#[derive(Debug)]
struct StringFn {
    name: &'static str,
    signature: Signature,
    f: fn(&[Option<&str>]) -> Result<Option<String>>,
}

impl PartialEq for StringFn {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for StringFn {}

impl std::hash::Hash for StringFn {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl StringFn {
    fn new(
        name: &'static str,
        max_args: usize,
        f: fn(&[Option<&str>]) -> Result<Option<String>>,
    ) -> Self {
        // Every argument is read as text (Hive converts the primitive ones).
        let arities = (2..=max_args)
            .map(datafusion::logical_expr::TypeSignature::Any)
            .collect();
        Self {
            name,
            signature: Signature::one_of(arities, Volatility::Immutable),
            f,
        }
    }
}

impl ScalarUDFImpl for StringFn {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let arrays = args
            .args
            .into_iter()
            .map(|a| {
                let a = a.into_array(n)?;
                Ok(arrow::compute::cast(&a, &DataType::Utf8)?)
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        let strings: Vec<&StringArray> = arrays.iter().map(|a| a.as_string::<i32>()).collect();
        let mut out = StringBuilder::with_capacity(n, n * 8);
        let mut row = Vec::with_capacity(strings.len());
        for i in 0..n {
            row.clear();
            row.extend(strings.iter().map(|a| (!a.is_null(i)).then(|| a.value(i))));
            out.append_option((self.f)(&row)?);
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

/// A JSON value as Hive's JSON functions give it: strings without quotes, the rest as JSON.
fn json_text(v: &Json) -> Option<String> {
    match v {
        Json::Null => None,
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// `get_json_object(json, path)`: Hive's path is `$` then `.name`, `[n]` or `[*]` steps
/// (`['name']` is not Hive's: NULL); NULL for a path that matches nothing, JSON that does not parse, or a bad
/// path. A `[*]` gathers its matches into an array (one match: the match itself).
fn get_json_object(args: &[Option<&str>]) -> Result<Option<String>> {
    let [Some(json), Some(path)] = args else {
        return Ok(None);
    };
    let Ok(root) = serde_json::from_str::<Json>(json) else {
        return Ok(None);
    };
    let Some(steps) = json_path(path) else {
        return Ok(None);
    };
    // After `[*]` or a name over an array the values are a list: arrays found in it are
    // flattened into it, and a name over an array always answers an array (Hive's reading).
    let mut current = vec![root];
    let mut listed = false;
    let mut wrap = false;
    let push = |next: &mut Vec<Json>, v: Json, listed: bool| match v {
        Json::Array(a) if listed => next.extend(a),
        v => next.push(v),
    };
    for step in steps {
        let mut next = vec![];
        for v in current {
            match (&step, v) {
                (Step::Key(k), Json::Object(mut m)) => {
                    if let Some(v) = m.remove(k) {
                        push(&mut next, v, listed);
                    }
                }
                (Step::Key(k), Json::Array(a)) => {
                    wrap = true;
                    for e in a {
                        if let Json::Object(mut m) = e {
                            if let Some(v) = m.remove(k) {
                                push(&mut next, v, true);
                            }
                        }
                    }
                }
                (Step::Index(i), Json::Array(mut a)) if *i < a.len() => {
                    next.push(a.swap_remove(*i))
                }
                (Step::All, Json::Array(a)) => next.extend(a),
                _ => {}
            }
        }
        listed = listed || wrap || matches!(step, Step::All);
        current = next;
    }
    Ok(match current.len() {
        0 => None,
        1 if !wrap => json_text(&current[0]),
        _ => Some(Json::Array(current).to_string()),
    })
}

enum Step {
    Key(String),
    Index(usize),
    All,
}

fn json_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.trim().strip_prefix('$')?;
    let mut steps = vec![];
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = &r[..end];
            if name.is_empty() {
                return None;
            }
            steps.push(if name == "*" {
                Step::All
            } else {
                Step::Key(name.to_string())
            });
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inside = r[..end].trim();
            steps.push(if inside == "*" {
                Step::All
            } else {
                Step::Index(inside.parse().ok()?)
            });
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// `json_tuple`'s field: the top-level `key` of a JSON object, NULL when the text is not
/// an object or has no such key.
fn json_field(args: &[Option<&str>]) -> Result<Option<String>> {
    let [Some(json), Some(key)] = args else {
        return Ok(None);
    };
    Ok(match serde_json::from_str::<Json>(json) {
        Ok(Json::Object(m)) => m.get(*key).and_then(json_text),
        _ => None,
    })
}

/// `regexp_extract(subject, pattern[, index])`: group `index` (default 1) of the first match,
/// `''` when nothing matches, NULL when the group took no part; an index past the pattern's groups
/// is an error, as Hive's.
fn regexp_extract(args: &[Option<&str>]) -> Result<Option<String>> {
    let (Some(Some(subject)), Some(Some(pattern))) = (args.first(), args.get(1)) else {
        return Ok(None);
    };
    let index = match args.get(2) {
        None => 1,
        Some(None) => return Ok(None),
        Some(Some(i)) => match i.trim().parse::<usize>() {
            Ok(i) => i,
            Err(_) => return exec_err!("regexp_extract: the group index {i} is not a number"),
        },
    };
    let re = compile(pattern)?;
    // No match: ''; an index past the groups (of a match): an error; a group that took no
    // part: NULL.
    let Some(c) = re.captures(subject) else {
        return Ok(Some(String::new()));
    };
    if index >= re.captures_len() {
        return exec_err!("Index is out of bounds for regexp_extract: {index}");
    }
    Ok(c.get(index).map(|m| m.as_str().to_string()))
}

/// The regular expression of `pattern`, compiled once per pattern and thread in a row: the
/// pattern is nearly always the same constant for every row, and compiling it is far dearer
/// than matching (a `Regex` clone shares the compiled program).
fn compile(pattern: &str) -> Result<Regex> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, Regex)>> =
            const { std::cell::RefCell::new(None) };
    }
    if let Some(re) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(p, _)| p == pattern)
            .map(|(_, re)| re.clone())
    }) {
        return Ok(re);
    }
    match Regex::new(pattern) {
        Ok(re) => {
            LAST.set(Some((pattern.to_string(), re.clone())));
            Ok(re)
        }
        Err(e) => exec_err!("Invalid regular expression {pattern}: {e}"),
    }
}

/// `split(subject, pattern)`: the pieces of `subject` around the matches of the regular
/// expression `pattern`, trailing empty pieces kept (Hive splits with a limit of -1).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Split {
    signature: Signature,
}

impl Split {
    fn new() -> Self {
        Self {
            signature: Signature::string(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for Split {
    fn name(&self) -> &str {
        "split"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(Arc::new(Field::new_list_field(
            DataType::Utf8,
            true,
        ))))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let arrays = args
            .args
            .into_iter()
            .map(|a| Ok(arrow::compute::cast(&a.into_array(n)?, &DataType::Utf8)?))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let [subjects, patterns] = arrays.as_slice() else {
            return exec_err!("split takes two arguments");
        };
        let (subjects, patterns) = (subjects.as_string::<i32>(), patterns.as_string::<i32>());
        let mut out = ListBuilder::new(StringBuilder::new());
        let mut last: Option<(String, Regex)> = None;
        for i in 0..n {
            if subjects.is_null(i) || patterns.is_null(i) {
                out.append_null();
                continue;
            }
            let pattern = patterns.value(i);
            let re = match &last {
                Some((p, re)) if p == pattern => re,
                _ => &last.insert((pattern.to_string(), compile(pattern)?)).1,
            };
            let subject = subjects.value(i);
            // Java's split with limit -1: a zero-width match at the start yields no leading
            // empty piece; trailing empty pieces stay.
            let mut start = 0;
            for m in re.find_iter(subject) {
                if m.end() == 0 {
                    continue;
                }
                out.values().append_value(&subject[start..m.start()]);
                start = m.end();
            }
            out.values().append_value(&subject[start..]);
            out.append(true);
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

/// `hive_struct_field(s, i, n)`: field `i` (from 0) of the struct `s`, which `inline` names
/// with `n` aliases (a struct with another number of fields is Hive's alias-count error).
#[derive(Debug, PartialEq, Eq, Hash)]
struct StructField {
    signature: Signature,
}

impl StructField {
    fn new() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

/// The constant at argument `i` as a count (the rewrite passes them as text, so no literal
/// typing touches them).
fn constant(args: &[Option<&ScalarValue>], i: usize) -> Result<usize> {
    match args.get(i) {
        Some(Some(v)) => match v.cast_to(&DataType::Int64) {
            Ok(ScalarValue::Int64(Some(n))) if n >= 0 => Ok(n as usize),
            _ => plan_err!("{STRUCT_FIELD}: argument {i} must be a constant count"),
        },
        _ => plan_err!("{STRUCT_FIELD}: argument {i} must be a constant count"),
    }
}

fn position(args: &[Option<&ScalarValue>]) -> Result<usize> {
    constant(args, 1)
}

impl ScalarUDFImpl for StructField {
    fn name(&self) -> &str {
        STRUCT_FIELD
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{STRUCT_FIELD}: typed from its arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let i = position(args.scalar_arguments)?;
        let aliases = constant(args.scalar_arguments, 2)?;
        match args.arg_fields.first().map(|f| f.data_type()) {
            Some(DataType::Struct(fields)) if fields.len() != aliases => plan_err!(
                "{} expected {} aliases but got {aliases}",
                crate::names::UDTF_ALIAS_MISMATCH,
                fields.len()
            ),
            Some(DataType::Struct(fields)) => match fields.get(i) {
                Some(f) => Ok(Arc::new(Field::new(
                    self.name(),
                    f.data_type().clone(),
                    true,
                ))),
                None => plan_err!(
                    "inline: the struct has {} fields, not {}",
                    fields.len(),
                    i + 1
                ),
            },
            Some(DataType::Null) => Ok(Arc::new(Field::new(self.name(), DataType::Null, true))),
            Some(other) => plan_err!("inline takes an array of structs, not of {other}"),
            None => plan_err!("{STRUCT_FIELD} takes two arguments"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let i = match args.args.get(1) {
            Some(ColumnarValue::Scalar(v)) => position(&[None, Some(v)])?,
            _ => return exec_err!("{STRUCT_FIELD}: the position must be a constant"),
        };
        let Some(value) = args.args.first() else {
            return exec_err!("{STRUCT_FIELD} takes two arguments");
        };
        let array = value.to_array(args.number_rows)?;
        match array.data_type() {
            DataType::Struct(_) => {
                let s = array.as_struct();
                let column = s.column(i).clone();
                // A NULL struct gives NULL fields.
                let out = match s.nulls() {
                    Some(nulls) => {
                        let merged = arrow::buffer::NullBuffer::union(Some(nulls), column.nulls());
                        arrow::array::make_array(
                            column.to_data().into_builder().nulls(merged).build()?,
                        )
                    }
                    None => column,
                };
                Ok(ColumnarValue::Array(out))
            }
            DataType::Null => Ok(ColumnarValue::Array(array)),
            other => exec_err!("inline takes an array of structs, not of {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(json: &str, p: &str) -> Option<String> {
        get_json_object(&[Some(json), Some(p)]).unwrap()
    }

    #[test]
    fn json_paths_read_as_hive_reads_them() {
        let j = r#"{"store":{"fruit":[{"weight":8,"type":"apple"},{"weight":9,"type":"pear"}],"bicycle":{"price":19.95,"color":"red"}},"owner":"amy"}"#;
        assert_eq!(path(j, "$.owner").as_deref(), Some("amy"));
        assert_eq!(path(j, "$.store.bicycle.price").as_deref(), Some("19.95"));
        assert_eq!(path(j, "$.store.fruit[0].type").as_deref(), Some("apple"));
        assert_eq!(path(j, "$.store.fruit[*].weight").as_deref(), Some("[8,9]"));
        assert_eq!(
            path(j, "$.store.bicycle").as_deref(),
            Some(r#"{"price":19.95,"color":"red"}"#)
        );
        assert_eq!(path(j, "$.nothing"), None);
        assert_eq!(path("not json", "$.a"), None);
        assert_eq!(path(r#"{"a":[{"b":1}]}"#, "$.a.b").as_deref(), Some("[1]"));
        assert_eq!(
            path(r#"{"a":[{"b":[1,2]},{"b":[3]}]}"#, "$.a.b").as_deref(),
            Some("[1,2,3]")
        );
        assert_eq!(
            path(r#"{"a":[{"b":[1,2]},{"b":[3]}]}"#, "$.a[*].b").as_deref(),
            Some("[1,2,3]")
        );
        assert_eq!(path(j, "owner"), None);
    }

    #[test]
    fn regexp_extract_and_its_bounds() {
        let r = |s: &str, p: &str, i: &str| regexp_extract(&[Some(s), Some(p), Some(i)]);
        assert_eq!(
            r("foo123bar", "([a-z]+)([0-9]+)", "2").unwrap().as_deref(),
            Some("123")
        );
        assert_eq!(r("foo", "([0-9]+)", "1").unwrap().as_deref(), Some(""));
        assert_eq!(r("foo", "([0-9]+)", "2").unwrap().as_deref(), Some(""));
        assert!(r("foo", "(o)", "2").is_err());
    }
}
