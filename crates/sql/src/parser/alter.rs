//! ALTER DATABASE / TABLE, in Hive's grammar:
//!
//! ```sql
//! ALTER (DATABASE|SCHEMA) db SET DBPROPERTIES ('k'='v') | SET OWNER USER u | SET LOCATION '..';
//! ALTER TABLE t RENAME TO t2;
//! ALTER TABLE t ADD|REPLACE COLUMNS (c INT COMMENT '..', ..);
//! ALTER TABLE t CHANGE [COLUMN] old new STRING [COMMENT '..'] [FIRST|AFTER c] [CASCADE];
//! ALTER TABLE t SET TBLPROPERTIES ('k'='v') | UNSET TBLPROPERTIES [IF EXISTS] ('k');
//! ALTER TABLE t SET SERDEPROPERTIES ('k'='v') | SET LOCATION '..';
//! ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (p='x') [LOCATION '..'] ..;
//! ALTER TABLE t DROP [IF EXISTS] PARTITION (p='x') [PURGE];
//! ```

use std::collections::BTreeMap;

use super::ast::*;
use super::cursor::P;
use crate::error::SqlError;

pub(super) fn alter(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let name = p.ident()?;
        p.expect_kw("set")?;
        let (mut properties, mut location, mut owner) = (BTreeMap::new(), None, None);
        if p.eat_kw("dbproperties") {
            properties = p.properties()?;
        } else if p.eat_kw("location") {
            location = Some(p.string()?);
        } else if p.eat_kw("owner") {
            if p.eat_kw("role") {
                // The catalog keeps a database's owner as a user: a role stored as a user
                // of the same name would hand the database to that user.
                return Err(SqlError::Unsupported(
                    "ALTER DATABASE .. SET OWNER ROLE: databases are owned by users here; use SET OWNER USER".into(),
                ));
            }
            if !p.eat_kw("user") {
                return Err(p.err("USER or ROLE"));
            }
            owner = Some(p.ident()?);
        } else {
            return Err(p.err("DBPROPERTIES, LOCATION or OWNER"));
        }
        return Ok(Some(HiveStatement::AlterDatabase {
            name,
            properties,
            location,
            owner,
        }));
    }
    if !(p.eat_kw("table") || p.eat_kw("view")) {
        return Ok(None);
    }
    let name = p.table_name()?;
    let action = if p.eat_kws(&["rename", "to"]) {
        AlterTable::Rename(p.table_name()?)
    } else if p.eat_kws(&["add", "columns"]) {
        AlterTable::AddColumns(p.column_defs()?)
    } else if p.eat_kws(&["replace", "columns"]) {
        AlterTable::ReplaceColumns(p.column_defs()?)
    } else if p.eat_kw("change") {
        p.eat_kw("column");
        let old = p.ident()?;
        let new_name = p.ident()?;
        let type_name = p.type_text()?;
        let constraints = p.column_constraints(&new_name)?;
        let comment = if p.eat_kw("comment") {
            Some(p.string()?)
        } else {
            None
        };
        if p.eat_kw("first") {
        } else if p.eat_kw("after") {
            p.ident()?;
        }
        p.eat_kw("cascade");
        AlterTable::ChangeColumn {
            old,
            new: ColumnDef {
                name: new_name,
                type_name,
                comment,
            },
            constraints,
        }
    } else if p.is_kw("add") && p.is_kw_at(1, "constraint") {
        p.eat_kw("add");
        AlterTable::AddConstraint(p.table_constraint()?)
    } else if p.eat_kws(&["drop", "constraint"]) {
        AlterTable::DropConstraint(p.ident()?)
    } else if p.eat_kws(&["set", "tblproperties"]) {
        AlterTable::SetProperties(p.properties()?)
    } else if p.eat_kws(&["unset", "tblproperties"]) {
        let if_exists = p.eat_kws(&["if", "exists"]);
        p.expect_punct('(')?;
        let mut keys = Vec::new();
        loop {
            keys.push(p.string()?);
            if p.eat_punct(')') {
                break;
            }
            p.expect_punct(',')?;
        }
        AlterTable::UnsetProperties(keys, if_exists)
    } else if p.eat_kws(&["set", "serdeproperties"]) {
        AlterTable::SetSerdeProperties(p.properties()?)
    } else if p.eat_kws(&["set", "location"]) {
        AlterTable::SetLocation(p.string()?)
    } else if p.eat_kw("add") {
        let ine = p.eat_kws(&["if", "not", "exists"]);
        let mut parts = Vec::new();
        while p.eat_kw("partition") {
            let spec = p.partition_spec()?;
            let loc = if p.eat_kw("location") {
                Some(p.string()?)
            } else {
                None
            };
            parts.push((spec, loc));
        }
        if parts.is_empty() {
            return Err(p.err("PARTITION"));
        }
        AlterTable::AddPartitions(ine, parts)
    } else if p.eat_kw("drop") {
        let ie = p.eat_kws(&["if", "exists"]);
        let mut parts = Vec::new();
        loop {
            p.expect_kw("partition")?;
            parts.push(p.partition_spec()?);
            if !p.eat_punct(',') {
                break;
            }
        }
        p.eat_kw("purge");
        AlterTable::DropPartitions(ie, parts)
    } else if p.eat_kw("partition") {
        let spec = p.partition_spec()?;
        p.expect_kw("set")?;
        p.expect_kw("location")?;
        AlterTable::PartitionLocation(spec, p.string()?)
    } else {
        return Err(p.err("an ALTER TABLE action"));
    };
    Ok(Some(HiveStatement::AlterTable { name, action }))
}
