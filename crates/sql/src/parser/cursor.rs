//! The cursor the parser's files read statements with: the statement's tokens, a position,
//! and the small steps of Hive's grammar (keywords, identifiers, qualified table names,
//! properties, column definitions, partition specs), each failing with Hive's
//! "cannot recognize input near .." and the position.

use std::collections::BTreeMap;

use super::ast::*;
use super::lex::*;
use crate::error::SqlError;

/// A statement's tokens and the position reached.
pub(super) struct P<'a> {
    pub(super) sql: &'a str,
    pub(super) toks: Vec<Token>,
    pub(super) pos: usize,
}

impl<'a> P<'a> {
    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    pub(super) fn here(&self) -> usize {
        self.toks
            .get(self.pos)
            .map(|t| t.start)
            .unwrap_or(self.sql.len())
    }

    pub(super) fn err(&self, what: &str) -> SqlError {
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

    pub(super) fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    pub(super) fn is_kw_at(&self, off: usize, kw: &str) -> bool {
        matches!(self.toks.get(self.pos + off).map(|t| &t.tok), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    pub(super) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn eat_kws(&mut self, kws: &[&str]) -> bool {
        if kws.iter().enumerate().all(|(i, k)| self.is_kw_at(i, k)) {
            self.pos += kws.len();
            true
        } else {
            false
        }
    }

    pub(super) fn expect_kw(&mut self, kw: &str) -> Result<(), SqlError> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.err(kw))
        }
    }

    pub(super) fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect_punct(&mut self, c: char) -> Result<(), SqlError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.err(&format!("'{c}'")))
        }
    }

    pub(super) fn ident(&mut self) -> Result<String, SqlError> {
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

    pub(super) fn string(&mut self) -> Result<String, SqlError> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.err("a string literal")),
        }
    }

    pub(super) fn number(&mut self) -> Result<i64, SqlError> {
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
    pub(super) fn name_part(&mut self) -> Result<String, SqlError> {
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

    pub(super) fn table_name(&mut self) -> Result<TableName, SqlError> {
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

    pub(super) fn done(&self) -> Result<(), SqlError> {
        if self.pos < self.toks.len() {
            Err(self.err("the end of the statement"))
        } else {
            Ok(())
        }
    }

    pub(super) fn rest(&self) -> String {
        self.sql[self.here()..].trim().to_string()
    }

    /// ('k'='v', ...)
    pub(super) fn properties(&mut self) -> Result<BTreeMap<String, String>, SqlError> {
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
    pub(super) fn type_text(&mut self) -> Result<String, SqlError> {
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

    pub(super) fn column_defs(&mut self) -> Result<Vec<ColumnDef>, SqlError> {
        self.column_defs_with(false, None)
    }

    /// `(name type [COMMENT '..'], ..)`; with `untyped`, also `(name, ..)` (a CTAS's
    /// PARTITIONED BY, Hive 4), a column without a type having an empty `type_name`.
    /// `(name type [COMMENT '..'], ..)`; with `constraints`, also each column's constraints and
    /// constraints beside the columns (CREATE TABLE), which go there.
    pub(super) fn column_defs_with(
        &mut self,
        untyped: bool,
        mut constraints: Option<&mut Vec<ConstraintDef>>,
    ) -> Result<Vec<ColumnDef>, SqlError> {
        self.expect_punct('(')?;
        let mut out = Vec::new();
        loop {
            if let Some(found) = constraints.as_deref_mut() {
                if self.at_table_constraint() {
                    found.push(self.table_constraint()?);
                    if self.eat_punct(')') {
                        return Ok(out);
                    }
                    self.expect_punct(',')?;
                    continue;
                }
            }
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
            if let Some(found) = constraints.as_deref_mut() {
                found.extend(self.column_constraints(&name)?);
            }
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

    pub(super) fn ident_list(&mut self) -> Result<Vec<String>, SqlError> {
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

    pub(super) fn partition_spec(&mut self) -> Result<PartitionSpec, SqlError> {
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

    pub(super) fn delimiter(&mut self) -> Result<String, SqlError> {
        self.string()
    }
}
