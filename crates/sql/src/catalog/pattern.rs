//! Name patterns of Hive's SHOW ... LIKE and of JDBC's catalog calls, matched by one
//! iterative matcher (time bounded by pattern length x name length, whatever a client sends).

/// One element of a compiled pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// Any sequence of characters.
    Any,
    /// Exactly one character.
    One,
    /// This character (compared case-insensitively).
    Lit(char),
}

/// Hive's SHOW ... LIKE: `*` (or `%`) any sequence, `?` one character, `|` separates
/// alternatives; case-insensitive.
pub fn hive_like(pattern: &str, name: &str) -> bool {
    pattern.split('|').any(|alt| {
        let toks = alt
            .trim()
            .chars()
            .map(|c| match c {
                '*' | '%' => Tok::Any,
                '?' => Tok::One,
                c => Tok::Lit(c),
            })
            .collect::<Vec<_>>();
        matches(&toks, name)
    })
}

/// JDBC patterns: `%` any sequence, `_` one character, `\` escapes the next character;
/// case-insensitive. A missing or empty pattern (or `*`) matches everything. Hive turns these
/// patterns into regular expressions without quoting the rest, so clients (impyla) also send
/// `.*` for "anything": `.*` and `*` are any sequence and `.` one character here too.
pub fn jdbc_like(pattern: Option<&str>, name: &str) -> bool {
    let Some(p) = pattern.filter(|p| !p.is_empty() && *p != "*") else {
        return true;
    };
    let mut toks = Vec::with_capacity(p.len());
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        toks.push(match c {
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                Tok::Any
            }
            '.' => Tok::One,
            '%' | '*' => Tok::Any,
            '_' => Tok::One,
            '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
            c => Tok::Lit(c),
        });
    }
    matches(&toks, name)
}

/// The one name a JDBC pattern can match, if it has no wildcards (escapes removed, lower
/// case): lets catalog calls look a table up instead of listing all of them.
pub fn jdbc_literal(pattern: Option<&str>) -> Option<String> {
    let p = pattern.filter(|p| !p.is_empty())?;
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '%' | '_' | '*' | '.' => return None,
            c => out.push(c),
        }
    }
    Some(out.to_lowercase())
}

fn same(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// Greedy matching that backtracks only to the last `Any`: O(pattern x name).
fn matches(p: &[Tok], name: &str) -> bool {
    let s: Vec<char> = name.chars().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(Tok::Any) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(Tok::One) => {
                pi += 1;
                si += 1;
            }
            Some(Tok::Lit(c)) if same(*c, s[si]) => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|t| *t == Tok::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdbc_patterns() {
        assert!(jdbc_like(Some("def%"), "default"));
        assert!(jdbc_like(Some("d_fault"), "default"));
        assert!(!jdbc_like(Some("d\\_fault"), "default"));
        assert!(jdbc_like(Some("a\\_b"), "a_b"));
        assert!(jdbc_like(None, "x"));
        assert!(jdbc_like(Some(".*"), "t00000"));
        assert!(jdbc_like(Some("t.*"), "t00000"));
        assert!(!jdbc_like(Some("x.*"), "t00000"));
        assert_eq!(jdbc_literal(Some("Orders")).as_deref(), Some("orders"));
        assert_eq!(jdbc_literal(Some("o\\_x")).as_deref(), Some("o_x"));
        assert_eq!(jdbc_literal(Some("o_x")), None);
        assert_eq!(jdbc_literal(Some("%")), None);
        assert!(!jdbc_like(Some("x%"), "default"));
        assert!(jdbc_like(Some("DEF%"), "default"));
    }

    #[test]
    fn hive_like_matches_stars_and_alternatives() {
        assert!(hive_like("def*", "default"));
        assert!(hive_like("x|default", "default"));
        assert!(!hive_like("abc*", "default"));
        assert!(hive_like("*", "anything"));
        assert!(hive_like("d?fault", "default"));
    }

    #[test]
    fn hostile_patterns_stay_fast() {
        let pattern = format!("{}b", "%".repeat(200));
        let name = "a".repeat(5000);
        let t = std::time::Instant::now();
        assert!(!jdbc_like(Some(&pattern), &name));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
