//! Hive's XPath functions, `xpath_*(xml, path)`: XPath 1.0 over XML text, as Hive's
//! wrappers of Java's `javax.xml.xpath` answer. Parsing and evaluation are `sxd-document` and
//! `sxd-xpath` (XPath 1.0); what is Hive's here is which XPath conversion each function takes
//! and how its result becomes a Hive value:
//!
//! - `xpath` evaluates to a node set and gives the values of its nodes in document order as
//!   `array<string>`; a node with no value of its own (an element) adds nothing, so
//!   `xpath('<a><b>1</b></a>', 'a/b')` is `[]` and `'a/b/text()'` is `["1"]`;
//! - `xpath_string` is XPath's `string()` of the result (a node set's first node's text, `''`
//!   when it is empty), `xpath_boolean` its `boolean()`;
//! - `xpath_double` (and `xpath_number`) its `number()` (NaN when nothing matches),
//!   `xpath_float` that as a FLOAT, and `xpath_long`/`xpath_int`/`xpath_short` that as Java
//!   casts a double to them (NaN is 0, out of range values are clamped, SHORT wraps from INT).
//!
//! A NULL argument gives NULL. Text that is not XML, and a path that is not XPath, fail the
//! query with Hive's message.

use std::cell::RefCell;
use std::rc::Rc;

use arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use sxd_xpath::nodeset::Node;
use sxd_xpath::{Context, Factory, Value, XPath};

use crate::args::{arg, text, RowFn};

/// Registers the XPath functions.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("xpath", 2..=2, |_| Ok(list_of_strings()), xpath),
        RowFn::new("xpath_string", 2..=2, crate::args::string, xpath_string),
        RowFn::new(
            "xpath_boolean",
            2..=2,
            |_| Ok(DataType::Boolean),
            xpath_boolean,
        ),
        RowFn::new("xpath_double", 2..=2, crate::args::double, xpath_double),
        RowFn::new("xpath_number", 2..=2, crate::args::double, xpath_double),
        RowFn::new("xpath_float", 2..=2, |_| Ok(DataType::Float32), xpath_float),
        RowFn::new("xpath_long", 2..=2, |_| Ok(DataType::Int64), xpath_long),
        RowFn::new("xpath_int", 2..=2, crate::args::integer, xpath_int),
        RowFn::new("xpath_short", 2..=2, |_| Ok(DataType::Int16), xpath_short),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

fn list_of_strings() -> DataType {
    DataType::new_list(DataType::Utf8, true)
}

/// How deep a document's elements, or a path's brackets, may nest: the XML and XPath readers
/// recurse once per level, and a deeper input must fail the query, not overflow the stack.
const MAX_NESTING: usize = 1_000;

/// Whether `text` nests its elements (XML) deeper than [`MAX_NESTING`], counted from its
/// tags: `<a>` opens, `</a>` and `<a/>` close, `<?..>` and `<!..>` neither.
fn xml_too_deep(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut depth: usize = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'<' {
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(b'?' | b'!') | None => {}
            Some(_) => {
                depth += 1;
                if depth > MAX_NESTING {
                    return true;
                }
            }
        }
        if bytes.get(i + 1) != Some(&b'/') {
            // `<a/>` closes itself: its tag ends in `/>`.
            if let Some(end) = bytes[i..].iter().position(|c| *c == b'>') {
                if end > 0 && bytes[i + end - 1] == b'/' {
                    depth = depth.saturating_sub(1);
                }
            }
        }
    }
    false
}

/// Whether an XPath nests brackets or parentheses deeper than [`MAX_NESTING`].
fn path_too_deep(path: &str) -> bool {
    let mut depth: usize = 0;
    for c in path.chars() {
        match c {
            '(' | '[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return true;
                }
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The compiled form of the path this thread saw last (Hive keeps one, too: a column of
/// rows with the same path compiles it once).
fn compiled(path: &str) -> Result<Rc<XPath>> {
    thread_local! {
        static LAST: RefCell<Option<(String, Rc<XPath>)>> = const { RefCell::new(None) };
    }
    if let Some(x) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(p, _)| p == path)
            .map(|(_, x)| Rc::clone(x))
    }) {
        return Ok(x);
    }
    if path_too_deep(path) {
        return exec_err!("Invalid XPath '{path}': nested deeper than {MAX_NESTING} levels");
    }
    let built = match Factory::new().build(path) {
        Ok(Some(x)) => Rc::new(x),
        Ok(None) | Err(_) => return exec_err!("Invalid XPath '{path}'"),
    };
    LAST.with_borrow_mut(|last| *last = Some((path.to_string(), Rc::clone(&built))));
    Ok(built)
}

/// What the path gives over the document, converted by `convert` while the document lives;
/// `None` when an argument is NULL.
fn evaluate<T>(args: &[ScalarValue], convert: impl FnOnce(Value<'_>) -> T) -> Result<Option<T>> {
    let (Some(xml), Some(path)) = (text(arg(args, 0)), text(arg(args, 1))) else {
        return Ok(None);
    };
    let xpath = compiled(&path)?;
    if xml_too_deep(&xml) {
        return exec_err!("Invalid XML document: elements nested deeper than {MAX_NESTING} levels");
    }
    let package = match sxd_document::parser::parse(&xml) {
        Ok(p) => p,
        Err(e) => return exec_err!("Invalid XML document: {e:?}{xml}"),
    };
    let document = package.as_document();
    let context = Context::new();
    match xpath.evaluate(&context, document.root()) {
        Ok(value) => Ok(Some(convert(value))),
        Err(e) => exec_err!("Error loading expression '{path}': {e:?}"),
    }
}

/// A node's own value as the DOM gives it (`Node.getNodeValue`): an attribute's value, a
/// text's or comment's text, a processing instruction's data; an element has none.
fn node_value(node: Node<'_>) -> Option<String> {
    match node {
        Node::Attribute(a) => Some(a.value().to_string()),
        Node::Text(t) => Some(t.text().to_string()),
        Node::Comment(c) => Some(c.text().to_string()),
        Node::ProcessingInstruction(p) => Some(p.value().unwrap_or("").to_string()),
        Node::Namespace(n) => Some(n.uri().to_string()),
        Node::Root(_) | Node::Element(_) => None,
    }
}

fn xpath(args: &[ScalarValue]) -> Result<ScalarValue> {
    let path = text(arg(args, 1)).unwrap_or_default();
    let values = evaluate(args, |v| match v {
        Value::Nodeset(nodes) => Some(
            nodes
                .document_order()
                .into_iter()
                .filter_map(node_value)
                .map(|s| ScalarValue::Utf8(Some(s)))
                .collect::<Vec<_>>(),
        ),
        _ => None,
    })?;
    match values {
        None => ScalarValue::try_from(&list_of_strings()),
        Some(None) => exec_err!("Error loading expression '{path}': the result is not a node set"),
        Some(Some(values)) => Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &values,
            &DataType::Utf8,
        ))),
    }
}

fn xpath_string(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Utf8(evaluate(args, |v| v.string())?))
}

fn xpath_boolean(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Boolean(evaluate(args, |v| v.boolean())?))
}

fn number(args: &[ScalarValue]) -> Result<Option<f64>> {
    evaluate(args, |v| v.number())
}

fn xpath_double(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Float64(number(args)?))
}

fn xpath_float(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Float32(number(args)?.map(|d| d as f32)))
}

// Rust's `as` from a double is Java's narrowing: NaN is 0, out of range values clamp.
fn xpath_long(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Int64(number(args)?.map(|d| d as i64)))
}

fn xpath_int(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Int32(number(args)?.map(|d| d as i32)))
}

/// Java's `Double.shortValue()`: to INT first, then the low 16 bits.
fn xpath_short(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Int16(number(args)?.map(|d| d as i32 as i16)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: fn(&[ScalarValue]) -> Result<ScalarValue>, xml: &str, path: &str) -> ScalarValue {
        f(&[
            ScalarValue::Utf8(Some(xml.into())),
            ScalarValue::Utf8(Some(path.into())),
        ])
        .unwrap()
    }

    #[test]
    fn the_language_manuals_examples() {
        // xpath: values of text and attribute nodes, nothing for elements.
        let list = |v: ScalarValue| v.to_string();
        assert_eq!(list(call(xpath, "<a><b>b1</b><b>b2</b></a>", "a/*")), "[]");
        assert_eq!(
            list(call(xpath, "<a><b>b1</b><b>b2</b></a>", "a/*/text()")),
            "[b1, b2]"
        );
        assert_eq!(
            list(call(
                xpath,
                "<a><b id=\"1\"><c/></b><b id=\"2\"><c/></b></a>",
                "/descendant::c/ancestor::b/@id"
            )),
            "[1, 2]"
        );
        assert_eq!(
            call(xpath_string, "<a><b>bb</b><c>cc</c></a>", "a"),
            ScalarValue::Utf8(Some("bbcc".into()))
        );
        assert_eq!(
            call(xpath_string, "<a><b>b</b><c>cc</c></a>", "a/d"),
            ScalarValue::Utf8(Some(String::new()))
        );
        assert_eq!(
            call(xpath_boolean, "<a><b>b</b></a>", "a/b"),
            ScalarValue::Boolean(Some(true))
        );
        assert_eq!(
            call(xpath_boolean, "<a><b>10</b></a>", "a/b < 10"),
            ScalarValue::Boolean(Some(false))
        );
        assert_eq!(
            call(xpath_int, "<a><b>1</b><b>2</b></a>", "sum(a/b)"),
            ScalarValue::Int32(Some(3))
        );
        assert_eq!(
            call(xpath_int, "<a>b</a>", "a = 10"),
            ScalarValue::Int32(Some(0))
        );
        assert!(matches!(
            call(xpath_double, "<a>b</a>", "a"),
            ScalarValue::Float64(Some(d)) if d.is_nan()
        ));
        assert_eq!(
            call(xpath_short, "<a>70000</a>", "a"),
            ScalarValue::Int16(Some(70000_i32 as i16))
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}{}", "<a>".repeat(200_000), "</a>".repeat(200_000));
        assert!(xpath_string(&[
            ScalarValue::Utf8(Some(deep)),
            ScalarValue::Utf8(Some("a".into()))
        ])
        .is_err());
        let wide = "<a><b/></a>".repeat(10_000);
        assert!(!xml_too_deep(&format!("<r>{wide}</r>")));
        assert!(xpath_int(&[
            ScalarValue::Utf8(Some("<a/>".into())),
            ScalarValue::Utf8(Some("(".repeat(100_000)))
        ])
        .is_err());
    }

    #[test]
    fn null_gives_null_and_bad_input_an_error() {
        assert_eq!(
            xpath_int(&[ScalarValue::Utf8(None), ScalarValue::Utf8(Some("a".into()))]).unwrap(),
            ScalarValue::Int32(None)
        );
        assert!(xpath_int(&[
            ScalarValue::Utf8(Some("<a>".into())),
            ScalarValue::Utf8(Some("a".into()))
        ])
        .is_err());
        assert!(xpath_int(&[
            ScalarValue::Utf8(Some("<a/>".into())),
            ScalarValue::Utf8(Some("a[".into()))
        ])
        .is_err());
    }
}
