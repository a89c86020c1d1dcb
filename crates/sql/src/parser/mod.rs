//! HiveQL DDL and DML statements that sqlparser and DataFusion do not parse the way Hive does,
//! parsed here by a small recursive-descent parser over our own tokens. Clauses of CREATE TABLE
//! are accepted in any order, each at most once, as Hive's grammar allows. [`classify`] decides,
//! for every statement a session compiles, which parser reads it. This file reads these forms
//! itself (the others are in `create.rs`, `drop.rs`, `alter.rs`, `show.rs` and `grant.rs`):
//!
//! ```sql
//! TRUNCATE [TABLE] t [PARTITION (ds='2026-12-07')];
//! MSCK REPAIR TABLE t;
//! LOAD DATA [LOCAL] INPATH '/data/f.csv' [OVERWRITE] INTO TABLE t [PARTITION (ds='2026-12-07')];
//! INSERT INTO|OVERWRITE [TABLE] t [PARTITION (ds='2026-12-07', h)] [(a, b)] SELECT .. | VALUES (..);
//! INSERT OVERWRITE [LOCAL] DIRECTORY '/out' SELECT ..;   -- refused, once its path is checked
//! ```
//!
//! Hive's FROM-first statements (`FROM src INSERT .. SELECT ..`) are made the statements they
//! mean in `from_first.rs`.

mod alter;
mod ast;
mod constraint;
mod create;
mod cursor;
mod drop;
mod from_first;
mod grant;
mod lex;
mod show;

use self::alter::alter;
pub use self::ast::*;
pub use self::constraint::values_with_defaults;
use self::create::create;
use self::cursor::P;
use self::drop::drop;
pub use self::from_first::{bodies as from_first_bodies, Body};
pub use self::grant::{is_authz, parse_authz};
use self::lex::*;
use self::show::{describe, show};
use crate::error::SqlError;

/// Which parser reads a statement: decided once, from its first words, for every statement
/// a session compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// GRANT, REVOKE, CREATE/DROP/SET ROLE, SHOW GRANT / ROLES / CURRENT ROLES / ROLE GRANT /
    /// PRINCIPALS: read by [`parse_authz`].
    Authorization,
    /// `SET`, `SET key`, `SET key=value` (`hivevar:` and `hiveconf:` prefixes too).
    Set,
    /// `RESET` and `RESET key`.
    Reset,
    /// `USE db`.
    Use,
    /// CREATE, DROP, ALTER, DESCRIBE, SHOW, TRUNCATE, MSCK, LOAD and INSERT: read by [`parse`],
    /// which answers `None` for the forms it leaves to sqlparser (`CREATE TEMPORARY FUNCTION`,
    /// a plain `INSERT .. SELECT` into a DataFusion table, ...).
    Hive,
    /// `FROM src INSERT .. SELECT .. [INSERT ..]` and `FROM src SELECT ..`: each body made
    /// the statement it means by [`from_first_bodies`], then read as its own family.
    FromFirst,
    /// Everything else (SELECT, WITH, VALUES, EXPLAIN, ...): sqlparser in Hive's dialect.
    Query,
}

/// The family of a statement's text (comments already stripped).
pub fn classify(text: &str) -> Family {
    if is_authz(text) {
        return Family::Authorization;
    }
    let first = text
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match first.as_str() {
        "set" => Family::Set,
        "reset" => Family::Reset,
        "use" => Family::Use,
        "create" | "drop" | "alter" | "describe" | "desc" | "show" | "truncate" | "msck"
        | "load" | "insert" => Family::Hive,
        "from" => Family::FromFirst,
        _ => Family::Query,
    }
}

/// Parses `sql` if it is one of the statements this module handles; `Ok(None)` hands it on.
pub fn parse(sql: &str) -> Result<Option<HiveStatement>, SqlError> {
    let toks = lex(sql)?;
    let mut p = P { sql, toks, pos: 0 };
    let stmt = if p.eat_kw("create") {
        create(&mut p)?
    } else if p.eat_kw("drop") {
        drop(&mut p)?
    } else if p.eat_kw("alter") {
        alter(&mut p)?
    } else if p.is_kw("describe") || p.is_kw("desc") {
        p.pos += 1;
        describe(&mut p)?
    } else if p.eat_kw("show") {
        show(&mut p)?
    } else if p.eat_kw("truncate") {
        p.eat_kw("table");
        let name = p.table_name()?;
        let partition = if p.eat_kw("partition") {
            Some(p.partition_spec()?)
        } else {
            None
        };
        Some(HiveStatement::Truncate { name, partition })
    } else if p.eat_kw("msck") {
        p.expect_kw("repair")?;
        p.expect_kw("table")?;
        Some(HiveStatement::MsckRepair(p.table_name()?))
    } else if p.eat_kw("load") {
        p.expect_kw("data")?;
        let local = p.eat_kw("local");
        p.expect_kw("inpath")?;
        let path = p.string()?;
        let overwrite = p.eat_kw("overwrite");
        p.expect_kw("into")?;
        p.expect_kw("table")?;
        let table = p.table_name()?;
        let partition = if p.eat_kw("partition") {
            Some(p.partition_spec()?)
        } else {
            None
        };
        Some(HiveStatement::LoadData {
            local,
            path,
            overwrite,
            table,
            partition,
        })
    } else if p.eat_kw("insert") {
        let overwrite = if p.eat_kw("overwrite") {
            true
        } else {
            p.expect_kw("into")?;
            false
        };
        let local = overwrite && p.is_kw("local") && p.is_kw_at(1, "directory");
        if overwrite && (local || p.is_kw_at(0, "directory")) {
            p.eat_kw("local");
            p.expect_kw("directory")?;
            let path = p.string()?;
            let query = p.rest();
            return Ok(Some(HiveStatement::InsertDirectory { local, path, query }));
        }
        p.eat_kw("table");
        let table = p.table_name()?;
        let partition = if p.eat_kw("partition") {
            Some(p.partition_spec()?)
        } else {
            None
        };
        let columns = if p.peek() == Some(&Tok::Punct('(')) && !p.is_kw_at(1, "select") {
            p.ident_list()?
        } else {
            vec![]
        };
        let query = p.rest();
        if query.is_empty() {
            return Err(p.err("a query or VALUES"));
        }
        return Ok(Some(HiveStatement::Insert {
            overwrite,
            table,
            partition,
            columns,
            query,
        }));
    } else {
        None
    };
    match stmt {
        Some(s) => {
            p.done()?;
            Ok(Some(s))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_table(sql: &str) -> CreateTable {
        match parse(sql) {
            Ok(Some(HiveStatement::CreateTable(ct))) => *ct,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn create_table_clauses_in_any_order() {
        let ct = create_table(
            "CREATE EXTERNAL TABLE IF NOT EXISTS db1.t (a INT COMMENT 'the a', m MAP<STRING, ARRAY<INT>>, d DECIMAL(10, 2))
             COMMENT 'a table' PARTITIONED BY (dt STRING) CLUSTERED BY (a) SORTED BY (a DESC) INTO 4 BUCKETS
             ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '|'
             MAP KEYS TERMINATED BY ':' NULL DEFINED AS ''
             STORED AS TEXTFILE LOCATION '/tmp/x' TBLPROPERTIES ('k'='v')",
        );
        assert!(ct.external && ct.if_not_exists);
        assert_eq!(ct.columns[1].type_name, "map<string,array<int>>");
        assert_eq!(ct.columns[2].type_name, "decimal(10,2)");
        assert_eq!(ct.columns[0].comment.as_deref(), Some("the a"));
        assert_eq!(ct.sorted_by, vec![("a".to_string(), false)]);
        assert_eq!(ct.buckets, Some(4));
        let Some(RowFormat::Delimited(rf)) = &ct.row_format else {
            panic!("row format")
        };
        assert_eq!(rf.get("field.delim").map(String::as_str), Some(","));
        assert_eq!(rf.get("escape.delim").map(String::as_str), Some("\\"));
        assert_eq!(
            rf.get("serialization.null.format").map(String::as_str),
            Some("")
        );
        let ct = create_table(
            "create table t (a int) tblproperties ('x'='1') location '/l' stored as parquet comment 'c'",
        );
        assert_eq!(ct.stored_as, Some(StoredAs::Format("PARQUET".into())));
        assert_eq!(ct.comment.as_deref(), Some("c"));
        let ct = create_table("create table t stored as orc as select 1 as x");
        assert_eq!(ct.as_select.as_deref(), Some("select 1 as x"));
        let ct =
            create_table("create table t (a int) stored by 'org.X' with serdeproperties ('a'='b')");
        assert_eq!(ct.stored_by.as_deref(), Some("org.X"));
    }

    #[test]
    fn errors_point_at_the_input() {
        let e = parse("create table t (a int) comment 'x' comment 'y'").expect_err("twice");
        assert!(e.to_string().contains("COMMENT only once"), "{e}");
        let e = parse("create table t (a nosuchtype)").expect_err("bad type");
        assert!(e.to_string().contains("not a Hive type"), "{e}");
        assert_eq!(parse("select 1").ok(), Some(None));
    }

    #[test]
    fn insert_and_partitions() {
        let s = parse("INSERT OVERWRITE TABLE t PARTITION (dt='2024-01-01', h) SELECT a, h FROM s");
        let Ok(Some(HiveStatement::Insert {
            overwrite,
            partition,
            query,
            ..
        })) = s
        else {
            panic!("{s:?}")
        };
        assert!(overwrite);
        assert_eq!(
            partition,
            Some(vec![
                ("dt".to_string(), Some("2024-01-01".to_string())),
                ("h".to_string(), None)
            ])
        );
        assert_eq!(query, "SELECT a, h FROM s");
        let s = parse("insert into t (a, b) values (1, 'x')");
        assert!(
            matches!(s, Ok(Some(HiveStatement::Insert { ref columns, .. })) if columns.len() == 2)
        );
    }
}
