//! Row-key sets: what conditions on the row key column leave of the key space, as sorted,
//! disjoint ranges of byte strings (a single key is a range from it to itself). Bigtable reads
//! only these; the conditions are still applied to the rows read, so a set only has to hold
//! every key the conditions accept.

use std::cmp::Ordering;
use std::fmt;

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};

/// One end of a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Bound {
    Unbounded,
    Included(Vec<u8>),
    Excluded(Vec<u8>),
}

/// Keys from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub(crate) start: Bound,
    pub(crate) end: Bound,
}

/// Orders starts: for the same key, Included starts first.
fn cmp_start(a: &Bound, b: &Bound) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            x.cmp(y).then_with(|| {
                let rank = |b: &Bound| u8::from(matches!(b, Bound::Excluded(_)));
                rank(a).cmp(&rank(b))
            })
        }
    }
}

/// Orders ends: for the same key, Excluded ends first.
fn cmp_end(a: &Bound, b: &Bound) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            x.cmp(y).then_with(|| {
                let rank = |b: &Bound| u8::from(matches!(b, Bound::Included(_)));
                rank(a).cmp(&rank(b))
            })
        }
    }
}

impl KeyRange {
    fn all() -> Self {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    fn point(key: Vec<u8>) -> Self {
        KeyRange {
            start: Bound::Included(key.clone()),
            end: Bound::Included(key),
        }
    }

    /// Whether it holds no key.
    fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => {
                s >= e
            }
        }
    }

    /// The single key it holds, if it is one.
    pub(crate) fn as_point(&self) -> Option<&[u8]> {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) if s == e => Some(s),
            _ => None,
        }
    }

    /// Whether `self` (which starts no later than `next`) overlaps or touches `next`.
    fn reaches(&self, next: &KeyRange) -> bool {
        match (&self.end, &next.start) {
            (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
            (Bound::Excluded(e), Bound::Excluded(s)) => e > s,
            (Bound::Included(e) | Bound::Excluded(e), Bound::Included(s) | Bound::Excluded(s)) => {
                e >= s
            }
        }
    }
}

/// A set of row keys: sorted, disjoint ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeySet(pub(crate) Vec<KeyRange>);

impl KeySet {
    /// Every key.
    pub(crate) fn all() -> Self {
        KeySet(vec![KeyRange::all()])
    }

    /// Whether it is every key (no condition narrowed it).
    pub(crate) fn is_all(&self) -> bool {
        self.0 == [KeyRange::all()]
    }

    fn of(mut ranges: Vec<KeyRange>) -> Self {
        ranges.retain(|r| !r.is_empty());
        ranges.sort_by(|a, b| cmp_start(&a.start, &b.start));
        let mut out: Vec<KeyRange> = Vec::new();
        for r in ranges {
            match out.last_mut() {
                Some(last) if last.reaches(&r) => {
                    if cmp_end(&r.end, &last.end) == Ordering::Greater {
                        last.end = r.end;
                    }
                }
                _ => out.push(r),
            }
        }
        KeySet(out)
    }

    pub(crate) fn union(self, other: KeySet) -> KeySet {
        KeySet::of(self.0.into_iter().chain(other.0).collect())
    }

    pub(crate) fn intersect(&self, other: &KeySet) -> KeySet {
        let mut out = Vec::new();
        for a in &self.0 {
            for b in &other.0 {
                let start = if cmp_start(&a.start, &b.start) == Ordering::Less {
                    b.start.clone()
                } else {
                    a.start.clone()
                };
                let end = if cmp_end(&a.end, &b.end) == Ordering::Greater {
                    b.end.clone()
                } else {
                    a.end.clone()
                };
                out.push(KeyRange { start, end });
            }
        }
        KeySet::of(out)
    }

    /// The keys `condition` (on the key column `key`) can accept, or None when it says
    /// nothing about the key that a key range can hold. Only for keys stored as text, whose
    /// byte order is the order of the strings.
    pub(crate) fn of_condition(condition: &Expr, key: &str) -> Option<KeySet> {
        let text = |e: &Expr| match e {
            Expr::Literal(ScalarValue::Utf8(Some(s)), _)
            | Expr::Literal(ScalarValue::LargeUtf8(Some(s)), _)
            | Expr::Literal(ScalarValue::Utf8View(Some(s)), _) => Some(s.as_bytes().to_vec()),
            _ => None,
        };
        let is_key = |e: &Expr| matches!(e, Expr::Column(c) if c.name == key);
        match condition {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => {
                    let l = KeySet::of_condition(left, key);
                    let r = KeySet::of_condition(right, key);
                    match (l, r) {
                        (Some(l), Some(r)) => Some(l.intersect(&r)),
                        (one, None) | (None, one) => one,
                    }
                }
                Operator::Or => {
                    Some(KeySet::of_condition(left, key)?.union(KeySet::of_condition(right, key)?))
                }
                _ => {
                    let (op, v) = if is_key(left) {
                        (*op, text(right)?)
                    } else if is_key(right) {
                        (op.swap()?, text(left)?)
                    } else {
                        return None;
                    };
                    let r = match op {
                        Operator::Eq => KeyRange::point(v),
                        Operator::Lt => KeyRange {
                            start: Bound::Unbounded,
                            end: Bound::Excluded(v),
                        },
                        Operator::LtEq => KeyRange {
                            start: Bound::Unbounded,
                            end: Bound::Included(v),
                        },
                        Operator::Gt => KeyRange {
                            start: Bound::Excluded(v),
                            end: Bound::Unbounded,
                        },
                        Operator::GtEq => KeyRange {
                            start: Bound::Included(v),
                            end: Bound::Unbounded,
                        },
                        _ => return None,
                    };
                    Some(KeySet::of(vec![r]))
                }
            },
            Expr::Between(Between {
                expr,
                negated: false,
                low,
                high,
            }) if is_key(expr) => Some(KeySet::of(vec![KeyRange {
                start: Bound::Included(text(low)?),
                end: Bound::Included(text(high)?),
            }])),
            Expr::InList(list) if !list.negated && is_key(&list.expr) => {
                let keys = list
                    .list
                    .iter()
                    .map(|e| text(e).map(KeyRange::point))
                    .collect::<Option<Vec<_>>>()?;
                Some(KeySet::of(keys))
            }
            Expr::Like(Like {
                negated: false,
                expr,
                pattern,
                escape_char: None,
                case_insensitive: false,
            }) if is_key(expr) => {
                // 'abc%': the keys from "abc" up to the next prefix.
                let p = text(pattern)?;
                let prefix = p.strip_suffix(b"%")?;
                if prefix.iter().any(|b| matches!(b, b'%' | b'_' | b'\\')) {
                    return None;
                }
                Some(KeySet::of(vec![prefix_range(prefix)]))
            }
            _ => None,
        }
    }
}

/// The keys starting with `prefix`.
pub(crate) fn prefix_range(prefix: &[u8]) -> KeyRange {
    KeyRange {
        start: Bound::Included(prefix.to_vec()),
        end: match successor(prefix) {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        },
    }
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
pub(crate) fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// A key as EXPLAIN shows it: text, with other bytes as `\xNN`.
pub(crate) fn show_key(k: &[u8]) -> String {
    let mut s = String::new();
    for chunk in k.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() || c == '\\' {
                s.push_str(&c.escape_default().to_string());
            } else {
                s.push(c);
            }
        }
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02X}"));
        }
    }
    s
}

impl fmt::Display for KeyRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.start {
            Bound::Unbounded => write!(f, "(-inf")?,
            Bound::Included(k) => write!(f, "[{}", show_key(k))?,
            Bound::Excluded(k) => write!(f, "({}", show_key(k))?,
        }
        f.write_str(", ")?;
        match &self.end {
            Bound::Unbounded => write!(f, "+inf)"),
            Bound::Included(k) => write!(f, "{}]", show_key(k)),
            Bound::Excluded(k) => write!(f, "{})", show_key(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn set(e: Expr) -> Option<String> {
        KeySet::of_condition(&e, "k").map(|s| {
            s.0.iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    #[test]
    fn comparisons_become_ranges() {
        assert_eq!(set(col("k").eq(lit("a"))).unwrap(), "[a, a]");
        assert_eq!(set(lit("m").gt(col("k"))).unwrap(), "(-inf, m)");
        assert_eq!(
            set(col("k").gt_eq(lit("b")).and(col("k").lt(lit("d")))).unwrap(),
            "[b, d)"
        );
        assert_eq!(set(col("k").between(lit("b"), lit("c"))).unwrap(), "[b, c]");
        assert_eq!(
            set(col("k").in_list(vec![lit("z"), lit("a"), lit("z")], false)).unwrap(),
            "[a, a] [z, z]"
        );
        assert_eq!(set(col("k").like(lit("ab%"))).unwrap(), "[ab, ac)");
        assert_eq!(set(col("k").like(lit("a_b%"))), None);
        assert_eq!(set(col("v").eq(lit("a"))), None);
        // AND keeps what the key part says; OR needs both sides to say something.
        assert_eq!(
            set(col("k").eq(lit("a")).and(col("v").eq(lit(1)))).unwrap(),
            "[a, a]"
        );
        assert_eq!(set(col("k").eq(lit("a")).or(col("v").eq(lit(1)))), None);
        assert_eq!(
            set(col("k").lt(lit("c")).or(col("k").gt(lit("b")))).unwrap(),
            "(-inf, +inf)"
        );
        // Contradictions leave nothing.
        assert_eq!(
            set(col("k").lt(lit("a")).and(col("k").gt(lit("b")))).unwrap(),
            ""
        );
        assert_eq!(
            set(col("k").lt_eq(lit("a")).and(col("k").gt_eq(lit("a")))).unwrap(),
            "[a, a]"
        );
    }

    #[test]
    fn prefixes_end_at_their_successor() {
        assert_eq!(successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(successor(b"\xff\xff"), None);
    }
}
