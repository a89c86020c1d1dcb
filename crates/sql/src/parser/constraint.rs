//! Hive's constraints in CREATE TABLE, on a column and beside the columns:
//!
//! ```sql
//! CREATE TABLE t (
//!   id INT CONSTRAINT pk PRIMARY KEY DISABLE NOVALIDATE RELY,
//!   name STRING NOT NULL,
//!   qty INT DEFAULT 1 CHECK (qty > 0) ENABLE,
//!   parent INT REFERENCES p(id) DISABLE,
//!   UNIQUE (name) DISABLE,
//!   CONSTRAINT fk FOREIGN KEY (parent, name) REFERENCES db.p(id, name) DISABLE NOVALIDATE,
//!   CHECK (id <> parent)
//! );
//! ```

use apiary_metastore::ConstraintKind;

use super::ast::*;
use super::cursor::P;
use super::lex::*;
use crate::error::SqlError;

/// Words that end a DEFAULT value: the options and the next constraint of the same column.
const AFTER_DEFAULT: &[&str] = &[
    "enable",
    "disable",
    "enforced",
    "not",
    "validate",
    "novalidate",
    "rely",
    "norely",
    "comment",
    "constraint",
    "check",
    "primary",
    "unique",
    "references",
    "default",
];

impl P<'_> {
    /// Whether a constraint beside the columns starts here (rather than a column named
    /// `primary`, `unique`, ..: those take a type next, not `KEY` or `(`).
    pub(super) fn at_table_constraint(&self) -> bool {
        self.is_kw("constraint")
            || (self.is_kw("primary") && self.is_kw_at(1, "key"))
            || (self.is_kw("foreign") && self.is_kw_at(1, "key"))
            || ((self.is_kw("unique") || self.is_kw("check"))
                && matches!(
                    self.toks.get(self.pos + 1).map(|t| &t.tok),
                    Some(Tok::Punct('('))
                ))
    }

    /// A constraint beside the columns: `[CONSTRAINT name] PRIMARY KEY (..) | UNIQUE (..) |
    /// FOREIGN KEY (..) REFERENCES t (..) | CHECK (expr)`, then its options.
    pub(super) fn table_constraint(&mut self) -> Result<ConstraintDef, SqlError> {
        let at = self.here();
        let name = self.constraint_name()?;
        let (kind, columns) = if self.eat_kws(&["primary", "key"]) {
            (ConstraintKind::PrimaryKey, self.ident_list()?)
        } else if self.eat_kw("unique") {
            (ConstraintKind::Unique, self.ident_list()?)
        } else if self.eat_kws(&["foreign", "key"]) {
            let columns = self.ident_list()?;
            (self.references()?, columns)
        } else if self.eat_kw("check") {
            (ConstraintKind::Check(self.parenthesized_text()?), vec![])
        } else {
            return Err(self.err("PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK"));
        };
        self.with_options(ConstraintDef {
            name,
            kind,
            columns,
            enable: None,
            validate: None,
            rely: None,
            at,
        })
    }

    /// The constraints written after a column's type (none when the next word starts none).
    pub(super) fn column_constraints(
        &mut self,
        column: &str,
    ) -> Result<Vec<ConstraintDef>, SqlError> {
        let mut out = Vec::new();
        loop {
            let at = self.here();
            let named = self.is_kw("constraint");
            let name = self.constraint_name()?;
            let kind = if self.eat_kws(&["not", "null"]) {
                ConstraintKind::NotNull
            } else if self.eat_kw("default") {
                ConstraintKind::Default(self.default_text()?)
            } else if self.eat_kw("check") {
                ConstraintKind::Check(self.parenthesized_text()?)
            } else if self.eat_kws(&["primary", "key"]) {
                ConstraintKind::PrimaryKey
            } else if self.eat_kw("unique") {
                ConstraintKind::Unique
            } else if self.is_kw("references") {
                self.references()?
            } else if named {
                return Err(self.err("NOT NULL, DEFAULT, CHECK, PRIMARY KEY, UNIQUE or REFERENCES"));
            } else {
                return Ok(out);
            };
            out.push(self.with_options(ConstraintDef {
                name,
                kind,
                columns: vec![column.to_string()],
                enable: None,
                validate: None,
                rely: None,
                at,
            })?);
        }
    }

    fn constraint_name(&mut self) -> Result<Option<String>, SqlError> {
        if self.eat_kw("constraint") {
            Ok(Some(self.ident()?))
        } else {
            Ok(None)
        }
    }

    /// `REFERENCES [db.]t (c, ..)`.
    fn references(&mut self) -> Result<ConstraintKind, SqlError> {
        self.expect_kw("references")?;
        let parent = self.table_name()?;
        let parent_columns = self.ident_list()?;
        Ok(ConstraintKind::ForeignKey {
            parent_database: parent.db.unwrap_or_default(),
            parent_table: parent.name,
            parent_columns,
        })
    }

    /// `[ENABLE | DISABLE] [VALIDATE | NOVALIDATE] | [ENFORCED | NOT ENFORCED]`, then
    /// `[RELY | NORELY]`.
    fn with_options(&mut self, mut c: ConstraintDef) -> Result<ConstraintDef, SqlError> {
        if self.eat_kw("enable") || self.eat_kw("enforced") {
            c.enable = Some(true);
        } else if self.eat_kw("disable") || self.eat_kws(&["not", "enforced"]) {
            c.enable = Some(false);
        }
        if self.eat_kw("validate") {
            c.validate = Some(true);
        } else if self.eat_kw("novalidate") {
            c.validate = Some(false);
        }
        if self.eat_kw("rely") {
            c.rely = Some(true);
        } else if self.eat_kw("norely") {
            c.rely = Some(false);
        }
        Ok(c)
    }

    /// `( expr )`: the expression's text as written.
    fn parenthesized_text(&mut self) -> Result<String, SqlError> {
        self.expect_punct('(')?;
        let start = self.here();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.err("')'")),
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) if depth == 0 => break,
                Some(Tok::Punct(')')) => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        let text = self.sql[start..self.here()].trim().to_string();
        self.pos += 1;
        if text.is_empty() {
            return Err(self.err("an expression"));
        }
        Ok(text)
    }

    /// A DEFAULT value: a literal, a function call or a CAST, as written.
    fn default_text(&mut self) -> Result<String, SqlError> {
        let start = self.here();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => break,
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) if depth == 0 => break,
                Some(Tok::Punct(')')) => depth -= 1,
                Some(Tok::Punct(',')) if depth == 0 => break,
                Some(Tok::Word(w))
                    if depth == 0
                        && self.here() > start
                        && AFTER_DEFAULT.contains(&w.to_ascii_lowercase().as_str()) =>
                {
                    break
                }
                _ => {}
            }
            self.pos += 1;
        }
        let text = self.sql[start..self.here()].trim().to_string();
        if text.is_empty() {
            return Err(self.err("a default value"));
        }
        Ok(text)
    }
}

/// An INSERT's `VALUES (..), ..` with each `DEFAULT` written alone as a value replaced by
/// `texts[i]` for its position `i` in the row (NULL past the end); `None` when the query is
/// not VALUES or writes no DEFAULT.
pub fn values_with_defaults(query: &str, texts: &[String]) -> Result<Option<String>, SqlError> {
    // Most INSERTs write no DEFAULT: their text (a large VALUES too) is not lexed again.
    let mentions = query
        .as_bytes()
        .windows(7)
        .any(|w| w.eq_ignore_ascii_case(b"default"));
    if !mentions {
        return Ok(None);
    }
    let toks = lex(query)?;
    let is_values = matches!(toks.first().map(|t| &t.tok), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("values"));
    if !is_values {
        return Ok(None);
    }
    let punct = |i: Option<usize>, cs: &[char]| matches!(i.and_then(|i| toks.get(i)).map(|t| &t.tok), Some(Tok::Punct(c)) if cs.contains(c));
    let mut out = String::with_capacity(query.len());
    let (mut copied, mut depth, mut index) = (0usize, 0usize, 0usize);
    for (i, t) in toks.iter().enumerate() {
        match &t.tok {
            Tok::Punct('(') => {
                depth += 1;
                if depth == 1 {
                    index = 0;
                }
            }
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            Tok::Punct(',') if depth == 1 => index += 1,
            Tok::Word(w)
                if depth == 1
                    && w.eq_ignore_ascii_case("default")
                    && punct(i.checked_sub(1), &['(', ','])
                    && punct(Some(i + 1), &[',', ')']) =>
            {
                out.push_str(&query[copied..t.start]);
                out.push_str(texts.get(index).map(String::as_str).unwrap_or("NULL"));
                copied = t.start + w.len();
            }
            _ => {}
        }
    }
    if copied == 0 {
        return Ok(None);
    }
    out.push_str(&query[copied..]);
    Ok(Some(out))
}
