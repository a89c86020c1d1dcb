//! Finding where a Thrift message ends in a byte stream that arrives in pieces.
//!
//! A [`MessageScanner`] walks a message's structure without decoding it and remembers where it
//! stopped, so each byte is looked at a bounded number of times however finely the client
//! splits its writes: a message trickled in one byte at a time costs time linear in its size,
//! not quadratic. Once the scanner reports the message's end, the caller decodes that slice,
//! which is then known to be whole.

use crate::codec::{ttype, Decoder, MAX_DEPTH};
use crate::error::ProtocolError;

/// Longest method name accepted in a message header (TCLIService's are under 40 bytes).
const MAX_NAME: usize = 256;

#[derive(Debug, Clone, Copy)]
enum Open {
    /// Inside a struct: a field header (or STOP) comes next.
    Struct,
    /// Inside a list or set: `left` elements of type `elem` remain.
    Items { elem: u8, left: usize },
    /// Inside a map: `left` entries remain; `key_next` when the next value is a key.
    Entries {
        key: u8,
        value: u8,
        left: usize,
        key_next: bool,
    },
}

#[derive(Debug, Clone, Copy, Default)]
enum Next {
    /// The message header.
    #[default]
    Header,
    /// A value of this wire type.
    Value(u8),
    /// Whatever the innermost open container holds next.
    Continue,
}

/// Resumable scanner over one message at the front of a growing buffer.
#[derive(Debug, Default)]
pub struct MessageScanner {
    /// Bytes of the message already walked.
    pos: usize,
    next: Next,
    open: Vec<Open>,
}

impl MessageScanner {
    /// A scanner at the start of a message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts over for the next message (call after consuming the one found).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Walks `buf` (the same buffer as before, possibly longer) from where the last call
    /// stopped. Returns the message's length once it is whole, `None` while more bytes are
    /// needed, or an error when the bytes cannot be a Thrift message.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
        loop {
            let rest = buf.get(self.pos..).unwrap_or_default();
            match self.next {
                Next::Header => {
                    if let Some(n) = header_name_len(rest)? {
                        if n > MAX_NAME {
                            return Err(ProtocolError::invalid(format!(
                                "method name of {n} bytes is longer than {MAX_NAME}"
                            )));
                        }
                    }
                    let mut d = Decoder::new(rest);
                    match d.message_begin() {
                        Ok(_) => {}
                        Err(ProtocolError::Incomplete) => return Ok(None),
                        Err(e) => return Err(e),
                    }
                    self.pos += d.position();
                    self.next = Next::Value(ttype::STRUCT);
                }
                Next::Value(t) => {
                    let Some(used) = self.value(t, rest)? else {
                        return Ok(None);
                    };
                    self.pos += used;
                    self.next = Next::Continue;
                }
                Next::Continue => {
                    let Some(top) = self.open.last_mut() else {
                        return Ok(Some(self.pos));
                    };
                    match top {
                        Open::Struct => {
                            let Some(&t) = rest.first() else {
                                return Ok(None);
                            };
                            if t == ttype::STOP {
                                self.pos += 1;
                                self.open.pop();
                            } else if rest.len() < 3 {
                                return Ok(None);
                            } else {
                                self.pos += 3;
                                self.next = Next::Value(t);
                            }
                        }
                        Open::Items { elem, left } => {
                            if *left == 0 {
                                self.open.pop();
                            } else {
                                *left -= 1;
                                self.next = Next::Value(*elem);
                            }
                        }
                        Open::Entries {
                            key,
                            value,
                            left,
                            key_next,
                        } => {
                            if *left == 0 {
                                self.open.pop();
                            } else if *key_next {
                                *key_next = false;
                                self.next = Next::Value(*key);
                            } else {
                                *key_next = true;
                                *left -= 1;
                                self.next = Next::Value(*value);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Steps over one value of type `t` at the front of `rest`: the bytes it took, or `None`
    /// when `rest` ends first. Containers are opened here and walked by [`Self::feed`].
    fn value(&mut self, t: u8, rest: &[u8]) -> Result<Option<usize>, ProtocolError> {
        let fixed = match t {
            ttype::BOOL | ttype::BYTE => Some(1),
            ttype::I16 => Some(2),
            ttype::I32 => Some(4),
            ttype::I64 | ttype::DOUBLE => Some(8),
            _ => None,
        };
        if let Some(n) = fixed {
            return Ok((rest.len() >= n).then_some(n));
        }
        match t {
            ttype::STRING => {
                let Some(n) = be_i32(rest, 0) else {
                    return Ok(None);
                };
                let len = length(n)?;
                Ok((rest.len() - 4 >= len).then_some(4 + len))
            }
            ttype::STRUCT => {
                self.push(Open::Struct)?;
                Ok(Some(0))
            }
            ttype::LIST | ttype::SET => {
                let (Some(&elem), Some(n)) = (rest.first(), be_i32(rest, 1)) else {
                    return Ok(None);
                };
                check_type(elem)?;
                let left = length(n)?;
                self.push(Open::Items { elem, left })?;
                Ok(Some(5))
            }
            ttype::MAP => {
                let (Some(&key), Some(&value), Some(n)) =
                    (rest.first(), rest.get(1), be_i32(rest, 2))
                else {
                    return Ok(None);
                };
                check_type(key)?;
                check_type(value)?;
                let left = length(n)?;
                self.push(Open::Entries {
                    key,
                    value,
                    left,
                    key_next: true,
                })?;
                Ok(Some(6))
            }
            other => Err(ProtocolError::invalid(format!("bad Thrift type {other}"))),
        }
    }

    fn push(&mut self, open: Open) -> Result<(), ProtocolError> {
        if self.open.len() >= MAX_DEPTH {
            return Err(ProtocolError::invalid("structure nested too deeply"));
        }
        self.open.push(open);
        Ok(())
    }
}

/// The declared length of the method name, where the header's first words have arrived.
fn header_name_len(rest: &[u8]) -> Result<Option<usize>, ProtocolError> {
    let Some(first) = be_i32(rest, 0) else {
        return Ok(None);
    };
    if first >= 0 {
        return length(first).map(Some);
    }
    match be_i32(rest, 4) {
        Some(n) => length(n).map(Some),
        None => Ok(None),
    }
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    let w: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(i32::from_be_bytes(w))
}

fn length(n: i32) -> Result<usize, ProtocolError> {
    usize::try_from(n).map_err(|_| ProtocolError::invalid("negative length"))
}

fn check_type(t: u8) -> Result<(), ProtocolError> {
    match t {
        ttype::BOOL
        | ttype::BYTE
        | ttype::DOUBLE
        | ttype::I16
        | ttype::I32
        | ttype::I64
        | ttype::STRING
        | ttype::STRUCT
        | ttype::MAP
        | ttype::SET
        | ttype::LIST => Ok(()),
        other => Err(ProtocolError::invalid(format!("bad Thrift type {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Encoder, MessageHeader, MessageType};

    fn header(name: &str) -> Vec<u8> {
        let mut e = Encoder::new();
        e.message_begin(&MessageHeader {
            name: name.into(),
            kind: MessageType::Call,
            seq_id: 1,
        });
        e.into_bytes()
    }

    fn message() -> Vec<u8> {
        let mut e = Encoder::new();
        e.message_begin(&MessageHeader {
            name: "ExecuteStatement".into(),
            kind: MessageType::Call,
            seq_id: 7,
        });
        e.field_begin(ttype::STRUCT, 1);
        e.field_begin(ttype::STRING, 2);
        e.string("select 1");
        e.field_begin(ttype::MAP, 3);
        e.map_begin(ttype::STRING, ttype::STRING, 2);
        for s in ["a", "1", "b", "2"] {
            e.string(s);
        }
        e.field_begin(ttype::LIST, 4);
        e.list_begin(ttype::I64, 3);
        for v in [1, 2, 3] {
            e.i64(v);
        }
        e.field_begin(ttype::BOOL, 5);
        e.bool(true);
        e.field_stop();
        e.field_stop();
        e.into_bytes()
    }

    #[test]
    fn finds_the_end_whole_or_byte_by_byte() {
        let m = message();
        let mut whole = m.clone();
        whole.extend_from_slice(b"next message");
        let mut s = MessageScanner::new();
        assert_eq!(s.feed(&whole).expect("valid"), Some(m.len()));
        let mut s = MessageScanner::new();
        for n in 0..m.len() {
            assert_eq!(s.feed(&m[..n]).expect("valid prefix"), None, "at {n}");
        }
        assert_eq!(s.feed(&m).expect("valid"), Some(m.len()));
    }

    #[test]
    fn trickled_input_is_walked_once() {
        // A 1 MiB string sent one byte at a time: the scanner re-reads only the length prefix.
        let mut e = Encoder::new();
        e.message_begin(&MessageHeader {
            name: "ExecuteStatement".into(),
            kind: MessageType::Call,
            seq_id: 1,
        });
        e.field_begin(ttype::STRING, 1);
        e.string(&"x".repeat(1 << 20));
        e.field_stop();
        let m = e.into_bytes();
        let mut s = MessageScanner::new();
        for n in (0..m.len()).step_by(97) {
            assert_eq!(s.feed(&m[..n]).expect("valid prefix"), None);
        }
        assert_eq!(s.feed(&m).expect("valid"), Some(m.len()));
    }

    #[test]
    fn refuses_what_cannot_be_a_message() {
        let mut s = MessageScanner::new();
        let mut bad = (0x8001_0001u32).to_be_bytes().to_vec();
        bad.extend_from_slice(&(1_000_000i32).to_be_bytes());
        assert!(s.feed(&bad).is_err(), "huge method name");
        let mut s = MessageScanner::new();
        let mut m = header("X");
        m.extend(std::iter::repeat_n([ttype::STRUCT, 0, 1], 100).flatten());
        assert!(s.feed(&m).is_err(), "nesting too deep");
        let mut s = MessageScanner::new();
        let mut m = header("X");
        m.extend_from_slice(&[ttype::LIST, 0, 1, 99, 0, 0, 0, 1]);
        assert!(s.feed(&m).is_err(), "bad element type");
    }
}
