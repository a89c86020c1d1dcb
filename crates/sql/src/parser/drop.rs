//! DROP DATABASE / TABLE / VIEW, in Hive's grammar:
//!
//! ```sql
//! DROP (DATABASE|SCHEMA) [IF EXISTS] db [RESTRICT|CASCADE];
//! DROP TABLE [IF EXISTS] [db.]t [PURGE];
//! DROP VIEW [IF EXISTS] [db.]v;
//! DROP MATERIALIZED VIEW [IF EXISTS] v;
//! ```

use super::ast::*;
use super::cursor::P;
use crate::error::SqlError;

pub(super) fn drop(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let if_exists = p.eat_kws(&["if", "exists"]);
        let name = p.ident()?;
        let cascade = p.eat_kw("cascade");
        if !cascade {
            p.eat_kw("restrict");
        }
        return Ok(Some(HiveStatement::DropDatabase {
            if_exists,
            name,
            cascade,
        }));
    }
    if p.eat_kws(&["materialized", "view"]) {
        let if_exists = p.eat_kws(&["if", "exists"]);
        let name = p.table_name()?;
        return Ok(Some(HiveStatement::DropMaterializedView {
            if_exists,
            name,
        }));
    }
    let view = if p.eat_kw("view") {
        true
    } else if p.eat_kw("table") {
        false
    } else {
        return Ok(None);
    };
    let if_exists = p.eat_kws(&["if", "exists"]);
    let name = p.table_name()?;
    let purge = p.eat_kw("purge");
    Ok(Some(HiveStatement::DropTable {
        view,
        if_exists,
        name,
        purge,
    }))
}
