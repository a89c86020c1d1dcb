//! The stream encoders of ORC v0.12 with RLE version 1: base-128 varints (with zigzag for signed
//! values), byte run-length encoding, boolean run-length encoding (bits most significant first,
//! over byte RLE) and integer run-length encoding version 1, plus the timestamp nanosecond
//! packing. Written from the ORC v1 specification ("Run Length Encoding" and "Timestamp
//! Columns").
//!
//! Every encoder appends to an in-memory buffer; `finish` flushes the pending run or literal group
//! and hands the stream's bytes over, leaving the encoder empty for the next stripe (runs never
//! cross a stripe boundary).

/// Shortest run that byte RLE and integer RLE v1 encode as a run.
const MIN_RUN: usize = 3;
/// Longest run: the control byte holds `length - 3` in 0..=127.
const MAX_RUN: usize = 127 + MIN_RUN;
/// Longest literal group: the control byte holds `-length` in -128..=-1.
const MAX_LITERALS: usize = 128;

/// Appends `value` as a base-128 varint: seven bits a byte, least significant group first, the
/// high bit set on every byte but the last.
pub(crate) fn put_uvarint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// [`put_uvarint`] for 128-bit values (the unbounded varints of decimal columns).
pub(crate) fn put_uvarint128(out: &mut Vec<u8>, mut value: u128) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Zigzag: 0, -1, 1, -2, 2 ... become 0, 1, 2, 3, 4 ...
pub(crate) fn zigzag(value: i64) -> u64 {
    ((value as u64) << 1) ^ ((value >> 63) as u64)
}

/// [`zigzag`] for 128-bit values.
pub(crate) fn zigzag128(value: i128) -> u128 {
    ((value as u128) << 1) ^ ((value >> 127) as u128)
}

/// A timestamp's nanoseconds as ORC stores them: when the value ends in at least two decimal
/// zeros, they are dropped and the low three bits say how many were dropped, minus one (1 means
/// two zeros, 7 means eight); otherwise the value is shifted left by three with zero low bits.
pub(crate) fn encode_nanos(nanos: u32) -> u64 {
    if nanos == 0 {
        return 0;
    }
    if !nanos.is_multiple_of(100) {
        return u64::from(nanos) << 3;
    }
    let mut rest = nanos / 100;
    let mut code = 1u64;
    while rest.is_multiple_of(10) && code < 7 {
        rest /= 10;
        code += 1;
    }
    (u64::from(rest) << 3) | code
}

/// Byte run-length encoding: runs of 3 to 130 equal bytes as `[length - 3, value]`, other bytes
/// in literal groups of up to 128 as `[-count, bytes...]`.
#[derive(Debug, Default)]
pub(crate) struct ByteRle {
    out: Vec<u8>,
    literals: Vec<u8>,
    run_value: u8,
    /// 0 when no run is open, else the open run's length (at least [`MIN_RUN`]).
    run_length: usize,
}

impl ByteRle {
    /// Appends one byte.
    pub(crate) fn write(&mut self, value: u8) {
        if self.run_length > 0 {
            if value == self.run_value && self.run_length < MAX_RUN {
                self.run_length += 1;
                return;
            }
            self.flush_run();
        }
        self.literals.push(value);
        let n = self.literals.len();
        if n >= MIN_RUN && self.literals[n - MIN_RUN..].iter().all(|&b| b == value) {
            // The last three literals start a run.
            self.literals.truncate(n - MIN_RUN);
            self.flush_literals();
            self.run_value = value;
            self.run_length = MIN_RUN;
        } else if n == MAX_LITERALS {
            self.flush_literals();
        }
    }

    fn flush_run(&mut self) {
        if self.run_length > 0 {
            self.out.push((self.run_length - MIN_RUN) as u8);
            self.out.push(self.run_value);
            self.run_length = 0;
        }
    }

    fn flush_literals(&mut self) {
        if !self.literals.is_empty() {
            self.out.push((256 - self.literals.len()) as u8);
            self.out.extend_from_slice(&self.literals);
            self.literals.clear();
        }
    }

    /// Bytes buffered so far (an upper bound of the encoded size).
    pub(crate) fn buffered(&self) -> usize {
        self.out.len() + self.literals.len() + 2
    }

    /// Flushes and returns the encoded stream, leaving the encoder empty.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.flush_run();
        self.flush_literals();
        std::mem::take(&mut self.out)
    }
}

/// Boolean run-length encoding: eight values a byte, the first in the most significant bit (1 is
/// true), the bytes then byte-RLE encoded. A last partial byte is padded with zero bits.
#[derive(Debug, Default)]
pub(crate) struct BoolRle {
    bytes: ByteRle,
    current: u8,
    bits: u8,
}

impl BoolRle {
    /// Appends one value.
    pub(crate) fn write(&mut self, value: bool) {
        if value {
            self.current |= 0x80 >> self.bits;
        }
        self.bits += 1;
        if self.bits == 8 {
            self.bytes.write(self.current);
            self.current = 0;
            self.bits = 0;
        }
    }

    /// Bytes buffered so far (an upper bound of the encoded size).
    pub(crate) fn buffered(&self) -> usize {
        self.bytes.buffered() + 1
    }

    /// Flushes and returns the encoded stream, leaving the encoder empty.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        if self.bits > 0 {
            self.bytes.write(self.current);
            self.current = 0;
            self.bits = 0;
        }
        self.bytes.finish()
    }
}

/// Integer run-length encoding version 1, signed (zigzag varints) or unsigned (plain varints):
/// runs of 3 to 130 values with a constant delta in -128..=127 as `[length - 3, delta, first]`,
/// other values in literal groups of up to 128 as `[-count, varints...]`.
#[derive(Debug)]
pub(crate) struct IntRleV1 {
    signed: bool,
    out: Vec<u8>,
    literals: Vec<i64>,
    run_first: i64,
    run_last: i64,
    run_delta: i8,
    /// 0 when no run is open, else the open run's length (at least [`MIN_RUN`]).
    run_length: usize,
}

impl IntRleV1 {
    /// An encoder of signed values (zigzag varints).
    pub(crate) fn signed() -> Self {
        Self::new(true)
    }

    /// An encoder of unsigned values (plain varints); every value written must be non-negative.
    pub(crate) fn unsigned() -> Self {
        Self::new(false)
    }

    fn new(signed: bool) -> Self {
        IntRleV1 {
            signed,
            out: Vec::new(),
            literals: Vec::with_capacity(MAX_LITERALS),
            run_first: 0,
            run_last: 0,
            run_delta: 0,
            run_length: 0,
        }
    }

    /// Appends one value.
    pub(crate) fn write(&mut self, value: i64) {
        if self.run_length > 0 {
            if self.run_length < MAX_RUN
                && i128::from(value) - i128::from(self.run_last) == i128::from(self.run_delta)
            {
                self.run_length += 1;
                self.run_last = value;
                return;
            }
            self.flush_run();
        }
        self.literals.push(value);
        let n = self.literals.len();
        if n >= MIN_RUN {
            let a = i128::from(self.literals[n - 3]);
            let b = i128::from(self.literals[n - 2]);
            let c = i128::from(self.literals[n - 1]);
            let delta = b - a;
            if c - b == delta {
                if let Ok(delta) = i8::try_from(delta) {
                    // The last three literals start a run.
                    self.run_first = self.literals[n - 3];
                    self.run_last = value;
                    self.run_delta = delta;
                    self.run_length = MIN_RUN;
                    self.literals.truncate(n - MIN_RUN);
                    self.flush_literals();
                    return;
                }
            }
        }
        if n == MAX_LITERALS {
            self.flush_literals();
        }
    }

    fn put(&mut self, value: i64) {
        if self.signed {
            put_uvarint(&mut self.out, zigzag(value));
        } else {
            put_uvarint(&mut self.out, value as u64);
        }
    }

    fn flush_run(&mut self) {
        if self.run_length > 0 {
            self.out.push((self.run_length - MIN_RUN) as u8);
            self.out.push(self.run_delta as u8);
            self.put(self.run_first);
            self.run_length = 0;
        }
    }

    fn flush_literals(&mut self) {
        if !self.literals.is_empty() {
            self.out.push((256 - self.literals.len()) as u8);
            let literals = std::mem::take(&mut self.literals);
            for &value in &literals {
                self.put(value);
            }
            self.literals = literals;
            self.literals.clear();
        }
    }

    /// Bytes buffered so far (an upper bound of the encoded size).
    pub(crate) fn buffered(&self) -> usize {
        self.out.len() + self.literals.len() * 10 + 12
    }

    /// Flushes and returns the encoded stream, leaving the encoder empty.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.flush_run();
        self.flush_literals();
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uvarint(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_uvarint(&mut out, v);
        out
    }

    #[test]
    fn varints_from_the_spec() {
        assert_eq!(uvarint(0), [0x00]);
        assert_eq!(uvarint(1), [0x01]);
        assert_eq!(uvarint(127), [0x7f]);
        assert_eq!(uvarint(128), [0x80, 0x01]);
        assert_eq!(uvarint(129), [0x81, 0x01]);
        assert_eq!(uvarint(16_383), [0xff, 0x7f]);
        assert_eq!(uvarint(16_384), [0x80, 0x80, 0x01]);
        assert_eq!(uvarint(16_385), [0x81, 0x80, 0x01]);
        assert_eq!(uvarint(u64::MAX).len(), 10);
        let mut wide = Vec::new();
        put_uvarint128(&mut wide, 16_385);
        assert_eq!(wide, [0x81, 0x80, 0x01]);
    }

    #[test]
    fn zigzag_from_the_spec() {
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(-2), 3);
        assert_eq!(zigzag(2), 4);
        assert_eq!(zigzag(i64::MAX), u64::MAX - 1);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        assert_eq!(zigzag128(0), 0);
        assert_eq!(zigzag128(-1), 1);
        assert_eq!(zigzag128(1), 2);
        assert_eq!(zigzag128(-2), 3);
        assert_eq!(zigzag128(i128::MIN), u128::MAX);
    }

    #[test]
    fn byte_rle_from_the_spec() {
        let mut rle = ByteRle::default();
        for _ in 0..100 {
            rle.write(0);
        }
        assert_eq!(rle.finish(), [0x61, 0x00]);
        rle.write(0x44);
        rle.write(0x45);
        assert_eq!(rle.finish(), [0xfe, 0x44, 0x45]);
        // The encoder is reusable after finish, and empty gives nothing.
        assert!(rle.finish().is_empty());
    }

    #[test]
    fn byte_rle_mixes_literals_and_runs() {
        let mut rle = ByteRle::default();
        for b in [1, 2, 7, 7, 7, 7, 3] {
            rle.write(b);
        }
        assert_eq!(rle.finish(), [0xfe, 1, 2, 0x01, 7, 0xff, 3]);
        // A run longer than 130 splits; 131 equal bytes: a run of 130 and a literal.
        for _ in 0..131 {
            rle.write(9);
        }
        assert_eq!(rle.finish(), [127, 9, 0xff, 9]);
        // 129 distinct bytes: a literal group of 128 and one of 1.
        for i in 0..129u32 {
            rle.write((i % 2 + i) as u8);
        }
        let out = rle.finish();
        assert_eq!(out[0], 0x80);
        assert_eq!(out[129], 0xff);
        assert_eq!(out.len(), 131);
    }

    #[test]
    fn bool_rle_from_the_spec() {
        let mut rle = BoolRle::default();
        rle.write(true);
        for _ in 0..7 {
            rle.write(false);
        }
        assert_eq!(rle.finish(), [0xff, 0x80]);
        // A partial byte is padded with zero bits.
        rle.write(true);
        rle.write(false);
        rle.write(true);
        assert_eq!(rle.finish(), [0xff, 0xa0]);
        // 80 trues: ten 0xff bytes, a run.
        for _ in 0..80 {
            rle.write(true);
        }
        assert_eq!(rle.finish(), [10 - 3, 0xff]);
    }

    #[test]
    fn int_rle_v1_from_the_spec() {
        let mut rle = IntRleV1::unsigned();
        for _ in 0..100 {
            rle.write(7);
        }
        assert_eq!(rle.finish(), [0x61, 0x00, 0x07]);
        for v in (1..=100).rev() {
            rle.write(v);
        }
        assert_eq!(rle.finish(), [0x61, 0xff, 0x64]);
        for v in [2, 3, 6, 7, 11] {
            rle.write(v);
        }
        assert_eq!(rle.finish(), [0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b]);
    }

    #[test]
    fn int_rle_v1_signed_and_edges() {
        let mut rle = IntRleV1::signed();
        for v in [-1, 1, 5, 10, 15, 20] {
            rle.write(v);
        }
        // Literals -1 and 1 (zigzag 1 and 2), then a run of 4 from 5 by 5 (zigzag 10).
        assert_eq!(rle.finish(), [0xfe, 0x01, 0x02, 0x01, 0x05, 0x0a]);
        // Deltas outside -128..=127 never make runs.
        for v in [0, 200, 400] {
            rle.write(v);
        }
        assert_eq!(rle.finish(), [0xfd, 0x00, 0x90, 0x03, 0xa0, 0x06]);
        // Extremes do not overflow the delta arithmetic.
        for v in [i64::MIN, i64::MAX, i64::MIN] {
            rle.write(v);
        }
        let out = rle.finish();
        assert_eq!(out[0], 0xfd);
        assert_eq!(out.len(), 31);
        // A run of 131 splits into a run of 130 and a literal.
        for _ in 0..131 {
            rle.write(-3);
        }
        assert_eq!(rle.finish(), [127, 0x00, 0x05, 0xff, 0x05]);
    }

    #[test]
    fn nanos_from_the_spec() {
        assert_eq!(encode_nanos(0), 0);
        assert_eq!(encode_nanos(1000), 0x0a);
        assert_eq!(encode_nanos(100_000), 0x0c);
        assert_eq!(encode_nanos(123), 123 << 3);
        assert_eq!(encode_nanos(1_230), 1_230 << 3);
        assert_eq!(encode_nanos(12_300), (123 << 3) | 1);
        assert_eq!(encode_nanos(100_000_000), (1 << 3) | 7);
        assert_eq!(encode_nanos(500_000_000), (5 << 3) | 7);
        assert_eq!(encode_nanos(999_999_999), 999_999_999 << 3);
    }
}
