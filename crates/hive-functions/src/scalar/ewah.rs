//! Hive's EWAH bitmap functions (its compact indexes' row bitmaps): `ewah_bitmap_and(a, b)`,
//! `ewah_bitmap_or(a, b)` and `ewah_bitmap_empty(a)`. A bitmap is an `array<bigint>`: the
//! fields of JavaEWAH 0.3's serialized form, each a number: the size in bits, the number of
//! words used, the length of the word buffer, those words, and the position of the last
//! running-length word.
//!
//! A running-length word holds, from its lowest bit: the bit a run repeats, the run's length
//! in words (32 bits) and the number of literal words after it (31 bits). The result of AND
//! and OR covers as many words as the longer bitmap and is encoded as JavaEWAH adds words
//! one at a time (a word of zeros or ones joins a run), in a buffer reserved as JavaEWAH's
//! `and` (the larger word count) and `or` (the sum) reserve it, doubling when full, so the
//! numbers are Hive's.

use arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{arg, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("ewah_bitmap_and", 2..=2, bitmap_type, |a| {
            combined(a, Op::And)
        }),
        RowFn::new("ewah_bitmap_or", 2..=2, bitmap_type, |a| {
            combined(a, Op::Or)
        }),
        RowFn::new(
            "ewah_bitmap_empty",
            1..=1,
            |_| Ok(DataType::Boolean),
            is_empty,
        ),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

fn bitmap_type(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::new_list(DataType::Int64, true))
}

/// Bits 1..=32 of a running-length word: the run's length.
const RUN_MASK: u64 = (1 << 32) - 1;
/// The longest run and the most literal words one running-length word holds.
const LONGEST_RUN: u64 = RUN_MASK;
const MOST_LITERALS: u64 = (1 << 31) - 1;
/// JavaEWAH's initial buffer.
const DEFAULT_BUFFER: usize = 4;
/// The most words a bitmap here may stand for (a run may claim 2^32 words of 8 bytes).
const MOST_WORDS: u64 = 1 << 24;

#[derive(Clone, Copy)]
enum Op {
    And,
    Or,
}

/// A bitmap read: its size in bits, the running-length and literal words it used, and every
/// word it stands for.
struct Bitmap {
    size_in_bits: i64,
    used_words: usize,
    words: Vec<u64>,
}

/// The numbers of an `array<bigint>` argument; None for NULL.
fn numbers(name: &str, v: &ScalarValue) -> Result<Option<Vec<Option<i64>>>> {
    let list = match v {
        ScalarValue::List(l) => l.value(0),
        ScalarValue::LargeList(l) => l.value(0),
        ScalarValue::Null => return Ok(None),
        v if v.is_null() => return Ok(None),
        other => {
            return exec_err!(
                "{name}: a bitmap is an array of bigint, got {}",
                other.data_type()
            )
        }
    };
    if v.is_null() {
        return Ok(None);
    }
    let list = arrow::compute::cast(&list, &DataType::Int64)?;
    let list = list.as_any().downcast_ref::<arrow::array::Int64Array>();
    Ok(list.map(|l| l.iter().collect()))
}

fn read(name: &str, v: &ScalarValue) -> Result<Option<Bitmap>> {
    let Some(numbers) = numbers(name, v)? else {
        return Ok(None);
    };
    let malformed = || exec_err!("{name}: the bitmap {numbers:?} is malformed");
    let field = |i: usize| numbers.get(i).copied().flatten();
    let (Some(size_in_bits), Some(used)) = (field(0), field(1)) else {
        return malformed();
    };
    let Ok(used_words) = usize::try_from(used) else {
        return malformed();
    };
    if numbers.len() < 3 + used_words {
        return malformed();
    }
    let mut stored = Vec::with_capacity(used_words);
    for i in 0..used_words {
        match field(3 + i) {
            Some(w) => stored.push(w as u64),
            None => return malformed(),
        }
    }
    let mut words = Vec::new();
    let mut at = 0;
    while at < stored.len() {
        let rlw = stored[at];
        let run = (rlw >> 1) & RUN_MASK;
        let literals = (rlw >> 33) as usize;
        if words.len() as u64 + run + literals as u64 > MOST_WORDS {
            return exec_err!("{name}: the bitmap stands for more than {MOST_WORDS} words");
        }
        let fill = if rlw & 1 == 1 { u64::MAX } else { 0 };
        words.extend(std::iter::repeat_n(fill, run as usize));
        let Some(literal) = stored.get(at + 1..at + 1 + literals) else {
            return malformed();
        };
        words.extend_from_slice(literal);
        at += 1 + literals;
    }
    Ok(Some(Bitmap {
        size_in_bits,
        used_words,
        words,
    }))
}

/// A bitmap being written as JavaEWAH writes one, a word at a time.
struct Writer {
    buffer: Vec<u64>,
    capacity: usize,
    rlw: usize,
}

impl Writer {
    fn new(reserve: usize) -> Self {
        Self {
            buffer: vec![0],
            capacity: DEFAULT_BUFFER.max(reserve),
            rlw: 0,
        }
    }

    fn push(&mut self, w: u64) {
        if self.buffer.len() == self.capacity {
            self.capacity *= 2;
        }
        self.buffer.push(w);
    }

    fn run(&self) -> u64 {
        (self.buffer[self.rlw] >> 1) & RUN_MASK
    }

    fn literals(&self) -> u64 {
        self.buffer[self.rlw] >> 33
    }

    fn bit(&self) -> bool {
        self.buffer[self.rlw] & 1 == 1
    }

    fn set_bit(&mut self, v: bool) {
        let w = &mut self.buffer[self.rlw];
        *w = (*w & !1) | u64::from(v);
    }

    fn set_run(&mut self, n: u64) {
        let w = &mut self.buffer[self.rlw];
        *w = (*w & !(RUN_MASK << 1)) | (n << 1);
    }

    fn set_literals(&mut self, n: u64) {
        let w = &mut self.buffer[self.rlw];
        *w = (*w & ((1 << 33) - 1)) | (n << 33);
    }

    fn new_rlw(&mut self) {
        self.push(0);
        self.rlw = self.buffer.len() - 1;
    }

    fn add(&mut self, w: u64) {
        match w {
            0 => self.add_empty(false),
            u64::MAX => self.add_empty(true),
            _ => self.add_literal(w),
        }
    }

    fn add_empty(&mut self, v: bool) {
        let no_literals = self.literals() == 0;
        let run = self.run();
        if no_literals && run == 0 {
            self.set_bit(v);
        }
        if no_literals && self.bit() == v && run < LONGEST_RUN {
            self.set_run(run + 1);
            return;
        }
        self.new_rlw();
        self.set_bit(v);
        self.set_run(1);
    }

    fn add_literal(&mut self, w: u64) {
        let n = self.literals();
        if n >= MOST_LITERALS {
            self.new_rlw();
            self.set_literals(1);
        } else {
            self.set_literals(n + 1);
        }
        self.push(w);
    }

    fn numbers(self, size_in_bits: i64) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.buffer.len() + 4);
        out.push(size_in_bits);
        out.push(self.buffer.len() as i64);
        out.push(self.capacity as i64);
        out.extend(self.buffer.iter().map(|w| *w as i64));
        out.push(self.rlw as i64);
        out
    }
}

fn combined(args: &[ScalarValue], op: Op) -> Result<ScalarValue> {
    let name = match op {
        Op::And => "ewah_bitmap_and",
        Op::Or => "ewah_bitmap_or",
    };
    let (Some(a), Some(b)) = (read(name, arg(args, 0))?, read(name, arg(args, 1))?) else {
        return ScalarValue::try_from(&DataType::new_list(DataType::Int64, true));
    };
    let reserve = match op {
        Op::And => a.used_words.max(b.used_words),
        Op::Or => a.used_words + b.used_words,
    };
    let mut out = Writer::new(reserve);
    for i in 0..a.words.len().max(b.words.len()) {
        let (x, y) = (
            a.words.get(i).copied().unwrap_or(0),
            b.words.get(i).copied().unwrap_or(0),
        );
        out.add(match op {
            Op::And => x & y,
            Op::Or => x | y,
        });
    }
    let numbers: Vec<ScalarValue> = out
        .numbers(a.size_in_bits.max(b.size_in_bits))
        .into_iter()
        .map(|n| ScalarValue::Int64(Some(n)))
        .collect();
    Ok(ScalarValue::List(ScalarValue::new_list_nullable(
        &numbers,
        &DataType::Int64,
    )))
}

fn is_empty(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Boolean(
        read("ewah_bitmap_empty", arg(args, 0))?.map(|b| b.words.iter().all(|w| *w == 0)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitmap(numbers: &[i64]) -> ScalarValue {
        let values: Vec<ScalarValue> = numbers
            .iter()
            .map(|n| ScalarValue::Int64(Some(*n)))
            .collect();
        ScalarValue::List(ScalarValue::new_list_nullable(&values, &DataType::Int64))
    }

    #[test]
    fn hives_answers() {
        let a = bitmap(&[13, 2, 4, 8589934592, 4096, 0]);
        let b = bitmap(&[8, 2, 4, 8589934592, 128, 0]);
        assert_eq!(combined(&[a.clone(), a.clone()], Op::And).unwrap(), a);
        assert_eq!(
            combined(&[a.clone(), b.clone()], Op::And).unwrap(),
            bitmap(&[13, 1, 4, 2, 0])
        );
        assert_eq!(
            combined(&[a.clone(), b.clone()], Op::Or).unwrap(),
            bitmap(&[13, 2, 4, 8589934592, 4224, 0])
        );
        assert_eq!(
            is_empty(&[bitmap(&[13, 1, 4, 2, 0])]).unwrap(),
            ScalarValue::Boolean(Some(true))
        );
        assert_eq!(is_empty(&[a]).unwrap(), ScalarValue::Boolean(Some(false)));
        assert!(combined(&[bitmap(&[13, 5, 4]), b], Op::And).is_err());
    }
}
