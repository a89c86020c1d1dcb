//! Column statistics, per stripe (the file's Metadata section) and per file (the Footer).
//!
//! Every column records its number of non-null values and whether it had a null. Type-specific
//! statistics are kept only where their meaning is plain (ORC v1 specification, "Column
//! Statistics"): integers (minimum, maximum, and the sum unless it overflowed), floating point
//! (minimum, maximum and sum, left out entirely when a NaN was seen, so that no reader prunes on
//! them), strings (byte-wise minimum and maximum, left out past 1024 bytes, and the total length),
//! binary (total length), booleans (the count of true values) and dates (minimum and maximum
//! days). Decimal, timestamp and compound columns carry the common part only, which readers treat
//! as "unknown range".

use orc_rust::proto;

/// Longest string minimum or maximum written; a longer one drops the column's string range.
const MAX_STRING_STAT: usize = 1024;

/// The statistics of one column over a stripe or a file.
#[derive(Debug, Clone)]
pub(crate) struct ColStats {
    values: u64,
    has_null: bool,
    typed: Typed,
}

/// The type-specific part.
#[derive(Debug, Clone)]
pub(crate) enum Typed {
    /// Only the common part.
    Generic,
    /// Byte, short, int and long columns.
    Int {
        range: Option<(i64, i64)>,
        /// `None` once the sum overflowed.
        sum: Option<i64>,
    },
    /// Float and double columns.
    Double {
        range: Option<(f64, f64)>,
        sum: f64,
        nan: bool,
    },
    /// String columns.
    Str {
        range: Option<(Vec<u8>, Vec<u8>)>,
        sum: i64,
    },
    /// Binary columns.
    Binary { sum: i64 },
    /// Boolean columns.
    Bool { trues: u64 },
    /// Date columns.
    Date { range: Option<(i32, i32)> },
}

impl ColStats {
    /// Empty statistics of the given kind.
    pub(crate) fn new(typed: Typed) -> Self {
        ColStats {
            values: 0,
            has_null: false,
            typed,
        }
    }

    /// Empty statistics of the same kind.
    pub(crate) fn empty_like(&self) -> Self {
        let typed = match self.typed {
            Typed::Generic => Typed::Generic,
            Typed::Int { .. } => Typed::Int {
                range: None,
                sum: Some(0),
            },
            Typed::Double { .. } => Typed::Double {
                range: None,
                sum: 0.0,
                nan: false,
            },
            Typed::Str { .. } => Typed::Str {
                range: None,
                sum: 0,
            },
            Typed::Binary { .. } => Typed::Binary { sum: 0 },
            Typed::Bool { .. } => Typed::Bool { trues: 0 },
            Typed::Date { .. } => Typed::Date { range: None },
        };
        ColStats::new(typed)
    }

    /// Records a null.
    pub(crate) fn null(&mut self) {
        self.has_null = true;
    }

    /// Records a non-null value of a compound, decimal or timestamp column.
    pub(crate) fn value(&mut self) {
        self.values += 1;
    }

    /// Records an integer.
    pub(crate) fn int(&mut self, v: i64) {
        self.values += 1;
        if let Typed::Int { range, sum } = &mut self.typed {
            *range = Some(match *range {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
            *sum = sum.and_then(|s| s.checked_add(v));
        }
    }

    /// Records a floating point value.
    pub(crate) fn double(&mut self, v: f64) {
        self.values += 1;
        if let Typed::Double { range, sum, nan } = &mut self.typed {
            if v.is_nan() {
                *nan = true;
            } else {
                *range = Some(match *range {
                    None => (v, v),
                    Some((lo, hi)) => (lo.min(v), hi.max(v)),
                });
                *sum += v;
            }
        }
    }

    /// Records a string (its UTF-8 bytes).
    pub(crate) fn string(&mut self, v: &[u8]) {
        self.values += 1;
        if let Typed::Str { range, sum } = &mut self.typed {
            match range {
                None => *range = Some((v.to_vec(), v.to_vec())),
                Some((lo, hi)) => {
                    if v < lo.as_slice() {
                        *lo = v.to_vec();
                    } else if v > hi.as_slice() {
                        *hi = v.to_vec();
                    }
                }
            }
            *sum = sum.saturating_add(v.len() as i64);
        }
    }

    /// Records a binary value.
    pub(crate) fn binary(&mut self, v: &[u8]) {
        self.values += 1;
        if let Typed::Binary { sum } = &mut self.typed {
            *sum = sum.saturating_add(v.len() as i64);
        }
    }

    /// Records a boolean.
    pub(crate) fn boolean(&mut self, v: bool) {
        self.values += 1;
        if let Typed::Bool { trues } = &mut self.typed {
            *trues += u64::from(v);
        }
    }

    /// Records a date (days since the epoch).
    pub(crate) fn date(&mut self, v: i32) {
        self.values += 1;
        if let Typed::Date { range } = &mut self.typed {
            *range = Some(match *range {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
        }
    }

    /// Adds `other` (of the same kind) into `self`.
    pub(crate) fn merge(&mut self, other: &ColStats) {
        self.values += other.values;
        self.has_null |= other.has_null;
        match (&mut self.typed, &other.typed) {
            (Typed::Int { range, sum }, Typed::Int { range: r2, sum: s2 }) => {
                *range = merge_range(range.take(), *r2);
                *sum = match (*sum, *s2) {
                    (Some(a), Some(b)) => a.checked_add(b),
                    _ => None,
                };
            }
            (
                Typed::Double { range, sum, nan },
                Typed::Double {
                    range: r2,
                    sum: s2,
                    nan: n2,
                },
            ) => {
                *range = match (range.take(), *r2) {
                    (None, r) | (r, None) => r,
                    (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                };
                *sum += s2;
                *nan |= n2;
            }
            (Typed::Str { range, sum }, Typed::Str { range: r2, sum: s2 }) => {
                *range = match (range.take(), r2) {
                    (None, r) => r.clone(),
                    (r, None) => r,
                    (Some((a, b)), Some((c, d))) => Some((
                        if c < &a { c.clone() } else { a },
                        if d > &b { d.clone() } else { b },
                    )),
                };
                *sum = sum.saturating_add(*s2);
            }
            (Typed::Binary { sum }, Typed::Binary { sum: s2 }) => {
                *sum = sum.saturating_add(*s2);
            }
            (Typed::Bool { trues }, Typed::Bool { trues: t2 }) => *trues += t2,
            (Typed::Date { range }, Typed::Date { range: r2 }) => {
                *range = merge_range(range.take(), *r2);
            }
            _ => {}
        }
    }

    /// The protobuf message.
    pub(crate) fn to_proto(&self) -> proto::ColumnStatistics {
        let mut out = proto::ColumnStatistics {
            number_of_values: Some(self.values),
            has_null: Some(self.has_null),
            ..Default::default()
        };
        match &self.typed {
            Typed::Generic => {}
            Typed::Int { range, sum } => {
                out.int_statistics = Some(proto::IntegerStatistics {
                    minimum: range.map(|r| r.0),
                    maximum: range.map(|r| r.1),
                    sum: *sum,
                });
            }
            Typed::Double { range, sum, nan } => {
                if !*nan {
                    out.double_statistics = Some(proto::DoubleStatistics {
                        minimum: range.map(|r| r.0),
                        maximum: range.map(|r| r.1),
                        sum: Some(*sum).filter(|s| s.is_finite()),
                    });
                }
            }
            Typed::Str { range, sum } => match range {
                Some((lo, hi)) if lo.len() > MAX_STRING_STAT || hi.len() > MAX_STRING_STAT => {}
                _ => {
                    let text = |b: &Vec<u8>| String::from_utf8_lossy(b).into_owned();
                    out.string_statistics = Some(proto::StringStatistics {
                        minimum: range.as_ref().map(|r| text(&r.0)),
                        maximum: range.as_ref().map(|r| text(&r.1)),
                        sum: Some(*sum),
                        ..Default::default()
                    });
                }
            },
            Typed::Binary { sum } => {
                out.binary_statistics = Some(proto::BinaryStatistics { sum: Some(*sum) });
            }
            Typed::Bool { trues } => {
                out.bucket_statistics = Some(proto::BucketStatistics {
                    count: vec![*trues],
                });
            }
            Typed::Date { range } => {
                out.date_statistics = Some(proto::DateStatistics {
                    minimum: range.map(|r| r.0),
                    maximum: range.map(|r| r.1),
                });
            }
        }
        out
    }
}

fn merge_range<T: Ord + Copy>(a: Option<(T, T)>, b: Option<(T, T)>) -> Option<(T, T)> {
    match (a, b) {
        (None, r) | (r, None) => r,
        (Some((lo, hi)), Some((lo2, hi2))) => Some((lo.min(lo2), hi.max(hi2))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_stats_merge_and_overflow() {
        let mut a = ColStats::new(Typed::Int {
            range: None,
            sum: Some(0),
        });
        a.int(5);
        a.int(-3);
        a.null();
        let mut b = a.empty_like();
        b.int(i64::MAX);
        let mut file = a.empty_like();
        file.merge(&a);
        let p = file.to_proto();
        assert_eq!(p.number_of_values, Some(2));
        assert_eq!(p.has_null, Some(true));
        let i = p.int_statistics.clone().unwrap_or_default();
        assert_eq!((i.minimum, i.maximum, i.sum), (Some(-3), Some(5), Some(2)));
        file.merge(&b);
        let i = file.to_proto().int_statistics.unwrap_or_default();
        assert_eq!(
            (i.minimum, i.maximum, i.sum),
            (Some(-3), Some(i64::MAX), None)
        );
    }

    #[test]
    fn double_stats_drop_with_nan_and_strings_drop_when_long() {
        let mut d = ColStats::new(Typed::Double {
            range: None,
            sum: 0.0,
            nan: false,
        });
        d.double(1.5);
        assert!(d.to_proto().double_statistics.is_some());
        d.double(f64::NAN);
        let p = d.to_proto();
        assert!(p.double_statistics.is_none());
        assert_eq!(p.number_of_values, Some(2));

        let mut s = ColStats::new(Typed::Str {
            range: None,
            sum: 0,
        });
        s.string(b"b");
        s.string(b"a");
        s.string("é".as_bytes());
        let st = s.to_proto().string_statistics.unwrap_or_default();
        assert_eq!(st.minimum.as_deref(), Some("a"));
        assert_eq!(st.maximum.as_deref(), Some("é"));
        assert_eq!(st.sum, Some(4));
        // A long value that is not the minimum or maximum changes nothing.
        s.string(&[b'c'; 2000]);
        assert!(s.to_proto().string_statistics.is_some());
        // A long maximum drops the string statistics.
        s.string("é".repeat(600).as_bytes());
        assert!(s.to_proto().string_statistics.is_none());
        assert_eq!(s.to_proto().number_of_values, Some(5));
    }
}
