//! CREATE DATABASE / TABLE / VIEW: clauses in any order, each at most once, in Hive's grammar:
//!
//! ```sql
//! CREATE (DATABASE|SCHEMA) [IF NOT EXISTS] db [COMMENT '..'] [LOCATION '..']
//!   [WITH DBPROPERTIES ('k'='v')];
//! CREATE [TEMPORARY] [EXTERNAL] TABLE [IF NOT EXISTS] [db.]t (c INT COMMENT '..', ..)
//!   [COMMENT '..'] [PARTITIONED BY (p STRING, ..)] [CLUSTERED BY (c) [SORTED BY (c)] INTO 4 BUCKETS]
//!   [ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' .. | ROW FORMAT SERDE '..' [WITH SERDEPROPERTIES (..)]]
//!   [STORED AS PARQUET|ORC|TEXTFILE|AVRO|JSONFILE | STORED BY '<handler class>' [WITH SERDEPROPERTIES (..)]]
//!   [LOCATION '..'] [TBLPROPERTIES ('k'='v')] [AS SELECT ..];
//! CREATE [EXTERNAL] TABLE [IF NOT EXISTS] t LIKE other [LOCATION '..'];
//! CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(c COMMENT '..', ..)] [COMMENT '..']
//!   [TBLPROPERTIES (..)] AS SELECT ..;
//! ```

use std::collections::BTreeMap;

use super::ast::*;
use super::cursor::P;
use super::lex::*;
use crate::error::SqlError;

pub(super) fn create(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let if_not_exists = p.eat_kws(&["if", "not", "exists"]);
        let name = p.ident()?;
        let (mut comment, mut location, mut properties) = (None, None, BTreeMap::new());
        loop {
            if p.eat_kw("comment") {
                comment = Some(p.string()?);
            } else if p.eat_kw("location") {
                location = Some(p.string()?);
            } else if p.eat_kws(&["managedlocation"]) {
                p.string()?;
            } else if p.eat_kws(&["with", "dbproperties"]) {
                properties = p.properties()?;
            } else {
                break;
            }
        }
        return Ok(Some(HiveStatement::CreateDatabase {
            if_not_exists,
            name,
            comment,
            location,
            properties,
        }));
    }
    let or_replace = p.eat_kws(&["or", "replace"]);
    if p.eat_kw("view") {
        let if_not_exists = p.eat_kws(&["if", "not", "exists"]);
        let name = p.table_name()?;
        let columns = if p.peek() == Some(&Tok::Punct('(')) {
            // Column names, optionally with comments.
            p.expect_punct('(')?;
            let mut cols = Vec::new();
            loop {
                cols.push(p.ident()?);
                if p.eat_kw("comment") {
                    p.string()?;
                }
                if p.eat_punct(')') {
                    break;
                }
                p.expect_punct(',')?;
            }
            cols
        } else {
            vec![]
        };
        let mut comment = None;
        let mut properties = BTreeMap::new();
        loop {
            if p.eat_kw("comment") {
                comment = Some(p.string()?);
            } else if p.eat_kw("tblproperties") {
                properties = p.properties()?;
            } else {
                break;
            }
        }
        p.expect_kw("as")?;
        let query = p.rest();
        p.pos = p.toks.len();
        return Ok(Some(HiveStatement::CreateView {
            if_not_exists,
            or_replace,
            name,
            columns,
            comment,
            properties,
            query,
        }));
    }
    let mut ct = CreateTable::default();
    loop {
        if p.eat_kw("external") {
            ct.external = true;
        } else if p.eat_kw("temporary") {
            ct.temporary = true;
        } else if p.eat_kw("transactional") || p.eat_kw("managed") {
        } else {
            break;
        }
    }
    if !p.eat_kw("table") {
        return Ok(None);
    }
    ct.if_not_exists = p.eat_kws(&["if", "not", "exists"]);
    ct.name = Some(p.table_name()?);
    if p.eat_kw("like") {
        ct.like = Some(p.table_name()?);
    } else if p.peek() == Some(&Tok::Punct('(')) {
        ct.columns = p.column_defs_with(false, Some(&mut ct.constraints))?;
    }
    let mut seen: Vec<&'static str> = Vec::new();
    let mut once = |p: &P, clause: &'static str| -> Result<(), SqlError> {
        if seen.contains(&clause) {
            return Err(p.err(&format!("{clause} only once")));
        }
        seen.push(clause);
        Ok(())
    };
    loop {
        if p.eat_kw("comment") {
            once(p, "COMMENT")?;
            ct.comment = Some(p.string()?);
        } else if p.eat_kws(&["partitioned", "by"]) {
            once(p, "PARTITIONED BY")?;
            ct.partitioned_by = p.column_defs_with(true, Some(&mut ct.constraints))?;
        } else if p.eat_kws(&["clustered", "by"]) {
            once(p, "CLUSTERED BY")?;
            ct.clustered_by = p.ident_list()?;
            if p.eat_kws(&["sorted", "by"]) {
                p.expect_punct('(')?;
                loop {
                    let c = p.ident()?;
                    let asc = if p.eat_kw("desc") {
                        false
                    } else {
                        p.eat_kw("asc");
                        true
                    };
                    ct.sorted_by.push((c, asc));
                    if p.eat_punct(')') {
                        break;
                    }
                    p.expect_punct(',')?;
                }
            }
            p.expect_kw("into")?;
            let n = p.number()?;
            if !(1..=i32::MAX as i64).contains(&n) {
                return Err(p.err("a bucket count of at least 1"));
            }
            ct.buckets = Some(n as i32);
            p.expect_kw("buckets")?;
        } else if p.eat_kws(&["row", "format"]) {
            once(p, "ROW FORMAT")?;
            ct.row_format = Some(row_format(p)?);
        } else if p.eat_kws(&["stored", "as"]) {
            once(p, "STORED AS")?;
            if p.eat_kw("inputformat") {
                let i = p.string()?;
                p.expect_kw("outputformat")?;
                let o = p.string()?;
                ct.stored_as = Some(StoredAs::Classes(i, o));
            } else {
                let f = p.ident()?;
                ct.stored_as = Some(StoredAs::Format(f.to_uppercase()));
            }
        } else if p.eat_kws(&["stored", "by"]) {
            once(p, "STORED BY")?;
            ct.stored_by = Some(match p.peek().cloned() {
                Some(Tok::Str(s)) => {
                    p.pos += 1;
                    s
                }
                _ => p.ident()?.to_uppercase(),
            });
            if p.eat_kws(&["with", "serdeproperties"]) {
                ct.handler_serde_props = p.properties()?;
            }
        } else if p.eat_kw("location") {
            once(p, "LOCATION")?;
            ct.location = Some(p.string()?);
        } else if p.eat_kw("tblproperties") {
            once(p, "TBLPROPERTIES")?;
            ct.tblproperties = p.properties()?;
        } else if p.eat_kw("as") {
            let q = p.rest();
            p.pos = p.toks.len();
            ct.as_select = Some(q);
            break;
        } else {
            break;
        }
    }
    if ct.as_select.is_none() && ct.partitioned_by.iter().any(|c| c.type_name.is_empty()) {
        return Err(p.err(
            "a type for each PARTITIONED BY column (names alone are for CREATE TABLE .. AS SELECT)",
        ));
    }
    Ok(Some(HiveStatement::CreateTable(Box::new(ct))))
}

pub(super) fn row_format(p: &mut P) -> Result<RowFormat, SqlError> {
    if p.eat_kw("serde") {
        let class = p.string()?;
        let props = if p.eat_kws(&["with", "serdeproperties"]) {
            p.properties()?
        } else {
            BTreeMap::new()
        };
        return Ok(RowFormat::Serde(class, props));
    }
    p.expect_kw("delimited")?;
    let mut params = BTreeMap::new();
    loop {
        if p.eat_kws(&["fields", "terminated", "by"]) {
            let d = p.delimiter()?;
            params.insert("field.delim".to_string(), d.clone());
            params.insert("serialization.format".to_string(), d);
            if p.eat_kws(&["escaped", "by"]) {
                params.insert("escape.delim".to_string(), p.delimiter()?);
            }
        } else if p.eat_kws(&["collection", "items", "terminated", "by"]) {
            params.insert("collection.delim".to_string(), p.delimiter()?);
        } else if p.eat_kws(&["map", "keys", "terminated", "by"]) {
            params.insert("mapkey.delim".to_string(), p.delimiter()?);
        } else if p.eat_kws(&["lines", "terminated", "by"]) {
            let d = p.delimiter()?;
            if d != "\n" {
                return Err(p.err("'\\n': LINES TERMINATED BY only supports newline"));
            }
            params.insert("line.delim".to_string(), d);
        } else if p.eat_kws(&["null", "defined", "as"]) {
            params.insert("serialization.null.format".to_string(), p.string()?);
        } else {
            break;
        }
    }
    Ok(RowFormat::Delimited(params))
}
