//! Functions whose answer comes from the session or the build rather than their arguments:
//! `version()`, `current_catalog()`, `current_user()` and `current_database()`.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::names::HIVE_VERSION;

/// Registers `version()`.
pub(crate) fn register(ctx: &SessionContext) {
    // Hive 4's `buildversion()` is the same text.
    ctx.register_udf(ScalarUDF::from(Version::new()).with_aliases(["buildversion"]));
    // Hive's one catalog.
    ctx.register_udf(ScalarUDF::from(crate::forms::expr_fn::ExprFn::new(
        "current_catalog",
        0..=0,
        |_, _| Ok(datafusion::logical_expr::lit("hive")),
    )));
}

/// Hive's `version()`: `3.1.3 r<revision>`, the revision naming this Apiary build.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Version {
    signature: Signature,
}

impl Version {
    fn new() -> Self {
        Self {
            signature: Signature::exact(vec![], Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for Version {
    fn name(&self) -> &str {
        "version"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(format!(
            // Hive's form, `<version> r<revision>` with a revision of word characters.
            "{HIVE_VERSION} rapiary{}",
            env!("CARGO_PKG_VERSION").replace('.', "_")
        )))))
    }
}

/// Registers the functions that answer for a session's user. Not in the contexts views are
/// planned in: `current_user()` in a view would otherwise answer with a user fixed there
/// instead of the querying one, so it is refused in views for now.
pub fn register_session(
    ctx: &SessionContext,
    user: &str,
    database: Arc<parking_lot::Mutex<String>>,
) {
    // Hive's `current_user()` (and `logged_in_user()`): the session's user, the authenticated
    // one when a password mode is on; `current_database()` (and `current_schema()`): the
    // session's current database (what USE chose).
    let user = Arc::new(parking_lot::Mutex::new(user.to_string()));
    for (name, alias, value) in [
        ("current_user", "logged_in_user", user),
        ("current_database", "current_schema", database),
    ] {
        let f = ScalarUDF::from(SessionText {
            name,
            value,
            signature: Signature::exact(vec![], Volatility::Stable),
        });
        ctx.register_udf(f.with_aliases([alias]));
    }
}

/// A function of no arguments answering a text the session holds.
#[derive(Debug)]
struct SessionText {
    name: &'static str,
    value: Arc<parking_lot::Mutex<String>>,
    signature: Signature,
}

impl PartialEq for SessionText {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.value, &other.value)
    }
}

impl Eq for SessionText {}

impl std::hash::Hash for SessionText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ScalarUDFImpl for SessionText {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
            self.value.lock().clone(),
        ))))
    }
}
