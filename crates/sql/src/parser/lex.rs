//! The tokens of the Hive statements this parser reads, with their offsets for errors.

use crate::error::SqlError;

/// A token with its byte offset in the statement text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
}

pub(super) fn lex(sql: &str) -> Result<Vec<Token>, SqlError> {
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
pub(super) fn line_column(sql: &str, at: usize) -> (u64, u64) {
    let before = sql.get(..at.min(sql.len())).unwrap_or(sql);
    let line = before.matches('\n').count() as u64 + 1;
    let column = before.rsplit('\n').next().map(|l| l.len()).unwrap_or(0) as u64;
    (line, column)
}

pub(super) fn parse_err(sql: &str, at: usize, detail: &str) -> SqlError {
    let (line, column) = line_column(sql, at);
    SqlError::Parse {
        line,
        column,
        detail: detail.to_string(),
    }
}
