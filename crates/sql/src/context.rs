//! The one builder of Hive's DataFusion context: how a session's context (and the context a
//! view's text is planned in) reads and plans HiveQL, so a view's text means what the same text
//! means in a query.

use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

/// A context that reads and plans HiveQL as Hive does: `config` with Hive's reading of text
/// ([`hive_reading`]), the state of `builder` (its catalogs, and for a session its runtime and
/// the storage handlers' optimizer rules) with Hive's planners and coercion
/// ([`hive_planning`]), and Hive's functions registered. Sessions and views are built here.
pub(crate) fn hive_context(config: SessionConfig, builder: SessionStateBuilder) -> SessionContext {
    let state = hive_planning(builder.with_config(hive_reading(config))).build();
    let ctx = SessionContext::new_with_state(state);
    apiary_hive_functions::register(&ctx);
    ctx
}

/// What every context that plans HiveQL has besides its catalogs and configuration: Hive's
/// 0-based array subscripts (before DataFusion's own planners, so they win), DataFusion's
/// defaults, and Hive's typing rule before DataFusion's coercion. A session's context and the
/// one a view's text is planned in are both built with it, so a view's text means what the
/// same text means in a query.
fn hive_planning(builder: SessionStateBuilder) -> SessionStateBuilder {
    apiary_hive_functions::with_hive_planning(builder)
}

/// How every context (a session's, a view's) reads HiveQL's text: strings as Utf8, NULL
/// ordered as the smallest value (first ascending, last descending), and a literal with a
/// decimal point a DECIMAL (`1.5` is `decimal(2,1)`, Hive 3's type for it; the rewrites keep
/// `1e3` a DOUBLE).
fn hive_reading(config: SessionConfig) -> SessionConfig {
    config
        .set_bool("datafusion.sql_parser.map_string_types_to_utf8view", false)
        .set_str("datafusion.sql_parser.default_null_ordering", "nulls_min")
        .set_bool("datafusion.sql_parser.parse_float_as_decimal", true)
}
