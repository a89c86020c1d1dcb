//! HiveQL DDL and DML statements that sqlparser and DataFusion do not parse the way Hive does,
//! parsed here by a small recursive-descent parser over our own tokens. Clauses of CREATE TABLE
//! are accepted in any order, each at most once, as Hive's grammar allows.

mod alter;
mod ast;
mod authz;
mod create;
mod drop;
mod lex;
mod show;

use std::collections::BTreeMap;

use crate::error::SqlError;

pub use self::ast::*;
pub use self::authz::{is_authz, parse_authz};
use self::lex::*;
use self::{alter::*, create::*, drop::*, show::*};

struct P<'a> {
    sql: &'a str,
    toks: Vec<Token>,
    pos: usize,
}

impl<'a> P<'a> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn here(&self) -> usize {
        self.toks
            .get(self.pos)
            .map(|t| t.start)
            .unwrap_or(self.sql.len())
    }

    fn err(&self, what: &str) -> SqlError {
        let found = match self.peek() {
            None => "<EOF>".to_string(),
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) | Some(Tok::Num(w)) => format!("'{w}'"),
            Some(Tok::Str(s)) => format!("'{s}'"),
            Some(Tok::Punct(c)) => format!("'{c}'"),
        };
        parse_err(
            self.sql,
            self.here(),
            &format!("cannot recognize input near {found}: expected {what}"),
        )
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    fn is_kw_at(&self, off: usize, kw: &str) -> bool {
        matches!(self.toks.get(self.pos + off).map(|t| &t.tok), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_kws(&mut self, kws: &[&str]) -> bool {
        if kws.iter().enumerate().all(|(i, k)| self.is_kw_at(i, k)) {
            self.pos += kws.len();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<(), SqlError> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.err(kw))
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), SqlError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.err(&format!("'{c}'")))
        }
    }

    fn ident(&mut self) -> Result<String, SqlError> {
        match self.peek().cloned() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(w.to_lowercase())
            }
            Some(Tok::Quoted(w)) => {
                self.pos += 1;
                Ok(w.to_lowercase())
            }
            _ => Err(self.err("an identifier")),
        }
    }

    fn string(&mut self) -> Result<String, SqlError> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.err("a string literal")),
        }
    }

    fn number(&mut self) -> Result<i64, SqlError> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                n.parse().map_err(|_| self.err("an integer"))
            }
            _ => Err(self.err("a number")),
        }
    }

    /// One part of a table name: a back-quoted part may not hold a dot (Hive's rule, with its
    /// text).
    fn name_part(&mut self) -> Result<String, SqlError> {
        let at = self.here();
        let part = self.ident()?;
        if part.contains('.') {
            let (line, column) = line_column(self.sql, at);
            return Err(SqlError::semantic(format!(
                "Line {line}:{column} Table or database name may not contain dot(.) character '{part}'"
            )));
        }
        Ok(part)
    }

    fn table_name(&mut self) -> Result<TableName, SqlError> {
        let first = self.name_part()?;
        if self.eat_punct('.') {
            let name = self.name_part()?;
            Ok(TableName {
                db: Some(first),
                name,
            })
        } else {
            Ok(TableName {
                db: None,
                name: first,
            })
        }
    }

    fn done(&self) -> Result<(), SqlError> {
        if self.pos < self.toks.len() {
            Err(self.err("the end of the statement"))
        } else {
            Ok(())
        }
    }

    fn rest(&self) -> String {
        self.sql[self.here()..].trim().to_string()
    }

    /// ('k'='v', ...)
    fn properties(&mut self) -> Result<BTreeMap<String, String>, SqlError> {
        self.expect_punct('(')?;
        let mut out = BTreeMap::new();
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            let k = self.string()?;
            self.expect_punct('=')?;
            let v = self.string()?;
            out.insert(k, v);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    /// A type, as text: `decimal(10,2)`, `array<struct<a:int>>`.
    fn type_text(&mut self) -> Result<String, SqlError> {
        let start = self.here();
        let mut depth = 0i32;
        let mut first = true;
        loop {
            match self.peek() {
                None => break,
                Some(Tok::Punct('<')) | Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct('>')) | Some(Tok::Punct(')')) => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                Some(Tok::Punct(',')) if depth == 0 => break,
                // `timestamp with local time zone` continues; a COMMENT ends the type.
                Some(Tok::Word(w))
                    if depth == 0
                        && !first
                        && !matches!(
                            w.to_ascii_lowercase().as_str(),
                            "with" | "local" | "time" | "zone"
                        ) =>
                {
                    break
                }
                _ => {}
            }
            first = false;
            self.pos += 1;
        }
        let text = self.sql[start..self.here()].to_string();
        let norm = crate::types::HiveType::parse(&text)
            .map(|t| t.to_string())
            .ok_or_else(|| {
                parse_err(
                    self.sql,
                    start,
                    &format!(
                        "cannot recognize input near '{}': not a Hive type",
                        text.trim()
                    ),
                )
            })?;
        Ok(norm)
    }

    fn column_defs(&mut self) -> Result<Vec<ColumnDef>, SqlError> {
        self.column_defs_with(false)
    }

    /// `(name type [COMMENT '..'], ..)`; with `untyped`, also `(name, ..)` (a CTAS's
    /// PARTITIONED BY, Hive 4), a column without a type having an empty `type_name`.
    fn column_defs_with(&mut self, untyped: bool) -> Result<Vec<ColumnDef>, SqlError> {
        self.expect_punct('(')?;
        let mut out = Vec::new();
        loop {
            let at = self.here();
            let name = self.ident()?;
            if name.is_empty() || name.contains(['.', ':']) {
                let found = match self.peek() {
                    Some(Tok::Word(w)) | Some(Tok::Quoted(w)) | Some(Tok::Num(w)) => w.clone(),
                    Some(Tok::Str(w)) => w.clone(),
                    Some(Tok::Punct(c)) => c.to_string(),
                    None => "<EOF>".into(),
                };
                return Err(parse_err(
                    self.sql,
                    at,
                    &format!("Failed to recognize predicate '{found}'. Failed rule: '[., :] can not be used in column name in create table statement.' in column specification"),
                ));
            }
            let type_name = if untyped
                && matches!(self.peek(), Some(Tok::Punct(',')) | Some(Tok::Punct(')')))
            {
                String::new()
            } else {
                self.type_text()?
            };
            let comment = if self.eat_kw("comment") {
                Some(self.string()?)
            } else {
                None
            };
            out.push(ColumnDef {
                name,
                type_name,
                comment,
            });
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    fn ident_list(&mut self) -> Result<Vec<String>, SqlError> {
        self.expect_punct('(')?;
        let mut out = Vec::new();
        loop {
            out.push(self.ident()?);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    fn partition_spec(&mut self) -> Result<PartitionSpec, SqlError> {
        self.expect_punct('(')?;
        let mut out = Vec::new();
        loop {
            let k = self.ident()?;
            let v = if self.eat_punct('=') {
                Some(match self.peek().cloned() {
                    Some(Tok::Str(s)) => {
                        self.pos += 1;
                        s
                    }
                    Some(Tok::Num(n)) => {
                        self.pos += 1;
                        n
                    }
                    Some(Tok::Punct('-')) => {
                        self.pos += 1;
                        format!("-{}", self.number()?)
                    }
                    Some(Tok::Word(w)) => {
                        self.pos += 1;
                        w
                    }
                    _ => return Err(self.err("a partition value")),
                })
            } else {
                None
            };
            out.push((k, v));
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    fn delimiter(&mut self) -> Result<String, SqlError> {
        self.string()
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
