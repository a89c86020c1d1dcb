//! DESCRIBE and SHOW, in Hive's grammar:
//!
//! ```sql
//! DESCRIBE|DESC [EXTENDED|FORMATTED] [db.]t [PARTITION (p='x')] [column];
//! DESCRIBE (DATABASE|SCHEMA) [EXTENDED] db;     DESCRIBE FUNCTION [EXTENDED] name;
//! SHOW (DATABASES|SCHEMAS) [[LIKE] 'pattern'];  SHOW FUNCTIONS [[LIKE] 'pattern'];
//! SHOW TABLES|VIEWS [(IN|FROM) db] [[LIKE] 'pattern'];
//! SHOW CREATE TABLE t;  SHOW TBLPROPERTIES t [('key')];  SHOW COLUMNS (IN|FROM) t [(IN|FROM) db];
//! SHOW PARTITIONS t [PARTITION (p='x')];
//! ```

use super::ast::*;
use super::cursor::P;
use super::lex::*;
use crate::error::SqlError;

pub(super) fn describe(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let extended = p.eat_kw("extended");
        let name = p.ident()?;
        return Ok(Some(HiveStatement::DescribeDatabase { extended, name }));
    }
    if p.eat_kw("function") {
        let extended = p.eat_kw("extended");
        // A name or an operator (`DESCRIBE FUNCTION <=>`), its tokens joined.
        let name: String = p.toks[p.pos..]
            .iter()
            .map(|t| match &t.tok {
                Tok::Word(s) | Tok::Quoted(s) | Tok::Str(s) | Tok::Num(s) => s.clone(),
                Tok::Punct(c) => c.to_string(),
            })
            .collect();
        if name.is_empty() {
            return Err(p.err("a function name"));
        }
        p.pos = p.toks.len();
        return Ok(Some(HiveStatement::DescribeFunction { extended, name }));
    }
    let extended = p.eat_kw("extended");
    let formatted = !extended && p.eat_kw("formatted");
    let name = p.table_name()?;
    let partition = if p.eat_kw("partition") {
        Some(p.partition_spec()?)
    } else {
        None
    };
    let column = if p.pos < p.toks.len() {
        Some(p.ident()?)
    } else {
        None
    };
    Ok(Some(HiveStatement::Describe {
        extended,
        formatted,
        name,
        column,
        partition,
    }))
}

pub(super) fn show(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("databases") || p.eat_kw("schemas") {
        return Ok(Some(HiveStatement::ShowDatabases(like_pattern(p)?)));
    }
    if p.eat_kw("functions") {
        return Ok(Some(HiveStatement::ShowFunctions(like_pattern(p)?)));
    }
    if p.eat_kws(&["create", "table"]) {
        return Ok(Some(HiveStatement::ShowCreateTable(p.table_name()?)));
    }
    if p.eat_kw("tblproperties") {
        let name = p.table_name()?;
        let key = if p.eat_punct('(') {
            let k = p.string()?;
            p.expect_punct(')')?;
            Some(k)
        } else {
            None
        };
        return Ok(Some(HiveStatement::ShowTblProperties(name, key)));
    }
    if p.eat_kw("columns") {
        if !(p.eat_kw("in") || p.eat_kw("from")) {
            return Err(p.err("IN or FROM"));
        }
        let mut name = p.table_name()?;
        if p.eat_kw("in") || p.eat_kw("from") {
            name.db = Some(p.ident()?);
        }
        return Ok(Some(HiveStatement::ShowColumns(name)));
    }
    if p.eat_kw("partitions") {
        let name = p.table_name()?;
        let spec = if p.eat_kw("partition") {
            Some(p.partition_spec()?)
        } else {
            None
        };
        return Ok(Some(HiveStatement::ShowPartitions(name, spec)));
    }
    let views = if p.eat_kw("tables") {
        false
    } else if p.eat_kw("views") {
        true
    } else {
        return Ok(None);
    };
    let db = if p.eat_kw("in") || p.eat_kw("from") {
        Some(p.ident()?)
    } else {
        None
    };
    p.eat_kw("like");
    let pattern = match p.peek() {
        Some(Tok::Str(_)) => Some(p.string()?),
        _ => None,
    };
    Ok(Some(HiveStatement::ShowTables { views, db, pattern }))
}

/// `[LIKE] 'pattern'` at the end of a SHOW statement (Hive takes the pattern with or without
/// LIKE), or nothing.
fn like_pattern(p: &mut P) -> Result<Option<String>, SqlError> {
    let like = p.eat_kw("like");
    match p.peek() {
        Some(Tok::Str(_)) => Ok(Some(p.string()?)),
        None if !like => Ok(None),
        _ => Err(p.err("a quoted pattern")),
    }
}
