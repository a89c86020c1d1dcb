//! HiveQL DDL and DML statements that sqlparser and DataFusion do not parse the way Hive does,
//! parsed here by a small recursive-descent parser over our own tokens. Clauses of CREATE TABLE
//! are accepted in any order, each at most once, as Hive's grammar allows.

use std::collections::BTreeMap;

use crate::error::SqlError;

/// A token with its byte offset in the statement text.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word (keyword or identifier), as written.
    Word(String),
    /// A `back-quoted` identifier.
    Quoted(String),
    /// A 'string' or "string" literal, unescaped.
    Str(String),
    /// A number.
    Num(String),
    /// Punctuation: ( ) , . = ; < > :
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    start: usize,
}

fn lex(sql: &str) -> Result<Vec<Token>, SqlError> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'\'' || c == b'"' {
            let start = i;
            i += 1;
            let mut s = Vec::new();
            loop {
                match b.get(i) {
                    None => return Err(parse_err(sql, start, "unterminated string literal")),
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let e = b.get(i + 1).copied().unwrap_or(b'\\');
                        s.push(match e {
                            b'n' => b'\n',
                            b't' => b'\t',
                            b'r' => b'\r',
                            b'0' => 0,
                            other => other,
                        });
                        i += 2;
                    }
                    Some(&x) => {
                        s.push(x);
                        i += 1;
                    }
                }
            }
            out.push(Token {
                tok: Tok::Str(String::from_utf8_lossy(&s).into_owned()),
                start,
            });
        } else if c == b'`' {
            let start = i;
            let end = sql[i + 1..]
                .find('`')
                .ok_or_else(|| parse_err(sql, start, "unterminated quoted identifier"))?;
            out.push(Token {
                tok: Tok::Quoted(sql[i + 1..i + 1 + end].to_string()),
                start,
            });
            i += end + 2;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Num(sql[start..i].to_string()),
                start,
            });
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Word(sql[start..i].to_string()),
                start,
            });
        } else {
            out.push(Token {
                tok: Tok::Punct(c as char),
                start: i,
            });
            i += 1;
        }
    }
    Ok(out)
}

/// Hive's position of byte `at`: 1-based line, 0-based column.
fn line_column(sql: &str, at: usize) -> (u64, u64) {
    let before = sql.get(..at.min(sql.len())).unwrap_or(sql);
    let line = before.matches('\n').count() as u64 + 1;
    let column = before.rsplit('\n').next().map(|l| l.len()).unwrap_or(0) as u64;
    (line, column)
}

fn parse_err(sql: &str, at: usize, detail: &str) -> SqlError {
    let (line, column) = line_column(sql, at);
    SqlError::Parse {
        line,
        column,
        detail: detail.to_string(),
    }
}

/// A table name, optionally qualified by its database.
#[derive(Debug, Clone, PartialEq)]
pub struct TableName {
    /// The database, if written.
    pub db: Option<String>,
    /// The table.
    pub name: String,
}

/// A column definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Name, lower case.
    pub name: String,
    /// Hive type as written, lower case.
    pub type_name: String,
    /// COMMENT.
    pub comment: Option<String>,
}

/// ROW FORMAT.
#[derive(Debug, Clone, PartialEq)]
pub enum RowFormat {
    /// ROW FORMAT DELIMITED ...: the serde parameters it sets.
    Delimited(BTreeMap<String, String>),
    /// ROW FORMAT SERDE 'class' [WITH SERDEPROPERTIES (...)].
    Serde(String, BTreeMap<String, String>),
}

/// STORED AS.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredAs {
    /// A format keyword (TEXTFILE, PARQUET, ...).
    Format(String),
    /// INPUTFORMAT 'a' OUTPUTFORMAT 'b'.
    Classes(String, String),
}

/// CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTable {
    /// EXTERNAL.
    pub external: bool,
    /// TEMPORARY (accepted, treated as a session-independent table).
    pub temporary: bool,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// The name.
    pub name: Option<TableName>,
    /// Columns.
    pub columns: Vec<ColumnDef>,
    /// COMMENT.
    pub comment: Option<String>,
    /// PARTITIONED BY.
    pub partitioned_by: Vec<ColumnDef>,
    /// CLUSTERED BY columns.
    pub clustered_by: Vec<String>,
    /// SORTED BY (column, ascending).
    pub sorted_by: Vec<(String, bool)>,
    /// INTO n BUCKETS.
    pub buckets: Option<i32>,
    /// ROW FORMAT.
    pub row_format: Option<RowFormat>,
    /// STORED AS.
    pub stored_as: Option<StoredAs>,
    /// STORED BY 'class' or STORED BY NAME.
    pub stored_by: Option<String>,
    /// WITH SERDEPROPERTIES after STORED BY.
    pub handler_serde_props: BTreeMap<String, String>,
    /// LOCATION.
    pub location: Option<String>,
    /// TBLPROPERTIES.
    pub tblproperties: BTreeMap<String, String>,
    /// AS <query>: the query text.
    pub as_select: Option<String>,
    /// LIKE <table>.
    pub like: Option<TableName>,
}

/// A partition spec: key with value, or key alone (dynamic).
pub type PartitionSpec = Vec<(String, Option<String>)>;

/// ALTER TABLE actions.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTable {
    /// RENAME TO.
    Rename(TableName),
    /// ADD COLUMNS (...).
    AddColumns(Vec<ColumnDef>),
    /// REPLACE COLUMNS (...).
    ReplaceColumns(Vec<ColumnDef>),
    /// CHANGE [COLUMN] old new type [COMMENT c] [FIRST | AFTER col].
    ChangeColumn {
        /// The column changed.
        old: String,
        /// Its new definition.
        new: ColumnDef,
    },
    /// SET TBLPROPERTIES.
    SetProperties(BTreeMap<String, String>),
    /// UNSET TBLPROPERTIES [IF EXISTS].
    UnsetProperties(Vec<String>, bool),
    /// SET SERDEPROPERTIES.
    SetSerdeProperties(BTreeMap<String, String>),
    /// SET LOCATION.
    SetLocation(String),
    /// ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] ...
    AddPartitions(bool, Vec<(PartitionSpec, Option<String>)>),
    /// DROP [IF EXISTS] PARTITION (...), ...
    DropPartitions(bool, Vec<PartitionSpec>),
    /// PARTITION (...) SET LOCATION '...'.
    PartitionLocation(PartitionSpec, String),
}

/// A statement this module parses.
#[derive(Debug, Clone, PartialEq)]
pub enum HiveStatement {
    /// CREATE DATABASE.
    CreateDatabase {
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// Name.
        name: String,
        /// COMMENT.
        comment: Option<String>,
        /// LOCATION.
        location: Option<String>,
        /// WITH DBPROPERTIES.
        properties: BTreeMap<String, String>,
    },
    /// DROP DATABASE.
    DropDatabase {
        /// IF EXISTS.
        if_exists: bool,
        /// Name.
        name: String,
        /// CASCADE.
        cascade: bool,
    },
    /// ALTER DATABASE .. SET DBPROPERTIES / LOCATION / OWNER.
    AlterDatabase {
        /// Name.
        name: String,
        /// Properties to set.
        properties: BTreeMap<String, String>,
        /// New location.
        location: Option<String>,
        /// New owner.
        owner: Option<String>,
    },
    /// DESCRIBE DATABASE [EXTENDED].
    DescribeDatabase {
        /// EXTENDED.
        extended: bool,
        /// Name.
        name: String,
    },
    /// CREATE TABLE.
    CreateTable(Box<CreateTable>),
    /// CREATE VIEW.
    CreateView {
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// OR REPLACE.
        or_replace: bool,
        /// Name.
        name: TableName,
        /// Column names given.
        columns: Vec<String>,
        /// COMMENT.
        comment: Option<String>,
        /// TBLPROPERTIES.
        properties: BTreeMap<String, String>,
        /// The query text.
        query: String,
    },
    /// DROP TABLE / DROP VIEW.
    DropTable {
        /// DROP VIEW.
        view: bool,
        /// IF EXISTS.
        if_exists: bool,
        /// Name.
        name: TableName,
        /// PURGE.
        purge: bool,
    },
    /// TRUNCATE TABLE.
    Truncate {
        /// Name.
        name: TableName,
        /// PARTITION.
        partition: Option<PartitionSpec>,
    },
    /// ALTER TABLE.
    AlterTable {
        /// Name.
        name: TableName,
        /// Action.
        action: AlterTable,
    },
    /// DESCRIBE [EXTENDED|FORMATTED] table [column].
    Describe {
        /// EXTENDED.
        extended: bool,
        /// FORMATTED.
        formatted: bool,
        /// Table.
        name: TableName,
        /// Column.
        column: Option<String>,
        /// PARTITION spec.
        partition: Option<PartitionSpec>,
    },
    /// SHOW CREATE TABLE.
    ShowCreateTable(TableName),
    /// SHOW TBLPROPERTIES t [('key')].
    ShowTblProperties(TableName, Option<String>),
    /// SHOW COLUMNS IN t [IN db].
    ShowColumns(TableName),
    /// SHOW PARTITIONS t [PARTITION (...)].
    ShowPartitions(TableName, Option<PartitionSpec>),
    /// SHOW TABLES / SHOW VIEWS [IN db] [LIKE 'p'].
    ShowTables {
        /// SHOW VIEWS.
        views: bool,
        /// IN/FROM database.
        db: Option<String>,
        /// Pattern.
        pattern: Option<String>,
    },
    /// MSCK REPAIR TABLE.
    MsckRepair(TableName),
    /// LOAD DATA [LOCAL] INPATH .. [OVERWRITE] INTO TABLE .. [PARTITION].
    LoadData {
        /// LOCAL.
        local: bool,
        /// The path.
        path: String,
        /// OVERWRITE.
        overwrite: bool,
        /// Target table.
        table: TableName,
        /// Partition.
        partition: Option<PartitionSpec>,
    },
    /// INSERT INTO / OVERWRITE.
    Insert {
        /// OVERWRITE.
        overwrite: bool,
        /// Target table.
        table: TableName,
        /// PARTITION spec.
        partition: Option<PartitionSpec>,
        /// Column list.
        columns: Vec<String>,
        /// The query (SELECT ... or VALUES ...).
        query: String,
    },
}

impl HiveStatement {
    /// Whether the statement only reads the catalog (DESCRIBE, SHOW): it runs while being
    /// compiled; every other statement runs as its operation's task.
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            HiveStatement::DescribeDatabase { .. }
                | HiveStatement::Describe { .. }
                | HiveStatement::ShowCreateTable(_)
                | HiveStatement::ShowTblProperties(..)
                | HiveStatement::ShowColumns(_)
                | HiveStatement::ShowPartitions(..)
                | HiveStatement::ShowTables { .. }
        )
    }
}

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
            let type_name = self.type_text()?;
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

fn create(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
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
        ct.columns = p.column_defs()?;
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
            ct.partitioned_by = p.column_defs()?;
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
    Ok(Some(HiveStatement::CreateTable(Box::new(ct))))
}

fn row_format(p: &mut P) -> Result<RowFormat, SqlError> {
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

fn drop(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
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

fn alter(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let name = p.ident()?;
        p.expect_kw("set")?;
        let (mut properties, mut location, mut owner) = (BTreeMap::new(), None, None);
        if p.eat_kw("dbproperties") {
            properties = p.properties()?;
        } else if p.eat_kw("location") {
            location = Some(p.string()?);
        } else if p.eat_kw("owner") {
            if !(p.eat_kw("user") || p.eat_kw("role")) {
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
        }
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

fn describe(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
    if p.eat_kw("database") || p.eat_kw("schema") {
        let extended = p.eat_kw("extended");
        let name = p.ident()?;
        return Ok(Some(HiveStatement::DescribeDatabase { extended, name }));
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

fn show(p: &mut P) -> Result<Option<HiveStatement>, SqlError> {
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
