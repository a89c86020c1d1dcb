//! Thrift binary protocol: an encoder into a byte buffer and a decoder over a byte slice.
//!
//! The decoder never trusts a length it reads: every string, binary and container length is
//! checked against the bytes that remain before anything is allocated, and nesting is bounded,
//! so a hostile message costs at most its own size.

use std::collections::BTreeMap;

use crate::error::ProtocolError;

/// Thrift wire type codes.
pub mod ttype {
    /// End of a struct's fields.
    pub const STOP: u8 = 0;
    /// Boolean, one byte.
    pub const BOOL: u8 = 2;
    /// Signed byte.
    pub const BYTE: u8 = 3;
    /// IEEE-754 double, big-endian.
    pub const DOUBLE: u8 = 4;
    /// 16-bit integer.
    pub const I16: u8 = 6;
    /// 32-bit integer.
    pub const I32: u8 = 8;
    /// 64-bit integer.
    pub const I64: u8 = 10;
    /// Length-prefixed bytes (string or binary).
    pub const STRING: u8 = 11;
    /// Nested struct.
    pub const STRUCT: u8 = 12;
    /// Map: key type, value type, count.
    pub const MAP: u8 = 13;
    /// Set: element type, count.
    pub const SET: u8 = 14;
    /// List: element type, count.
    pub const LIST: u8 = 15;
}

/// Thrift message types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// A request expecting a reply.
    Call,
    /// A normal reply.
    Reply,
    /// A `TApplicationException` reply.
    Exception,
    /// A request without a reply.
    Oneway,
}

impl MessageType {
    fn code(self) -> u8 {
        match self {
            MessageType::Call => 1,
            MessageType::Reply => 2,
            MessageType::Exception => 3,
            MessageType::Oneway => 4,
        }
    }

    fn from_code(code: u8) -> Result<Self, ProtocolError> {
        Ok(match code {
            1 => MessageType::Call,
            2 => MessageType::Reply,
            3 => MessageType::Exception,
            4 => MessageType::Oneway,
            other => return Err(ProtocolError::invalid(format!("bad message type {other}"))),
        })
    }
}

/// The header that starts every Thrift message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageHeader {
    /// RPC method name.
    pub name: String,
    /// Call, reply, exception or oneway.
    pub kind: MessageType,
    /// Sequence id echoed in the reply.
    pub seq_id: i32,
}

const VERSION_1: u32 = 0x8001_0000;
const VERSION_MASK: u32 = 0xffff_0000;
/// Deepest nesting of structs and containers accepted from a peer.
pub(crate) const MAX_DEPTH: usize = 64;

/// Writes Thrift binary protocol values into a growable buffer.
#[derive(Debug, Default)]
pub struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// A new, empty encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An encoder that appends to `buf` (reusing its allocation).
    pub fn with_buffer(buf: Vec<u8>) -> Self {
        Self { buf }
    }

    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Writes a strict (versioned) message header.
    pub fn message_begin(&mut self, header: &MessageHeader) {
        self.i32((VERSION_1 | u32::from(header.kind.code())) as i32);
        self.string(&header.name);
        self.i32(header.seq_id);
    }

    /// Writes a field header.
    pub fn field_begin(&mut self, ttype: u8, id: i16) {
        self.buf.push(ttype);
        self.i16(id);
    }

    /// Ends a struct.
    pub fn field_stop(&mut self) {
        self.buf.push(ttype::STOP);
    }

    /// Writes a list or set header.
    pub fn list_begin(&mut self, elem: u8, len: usize) {
        self.buf.push(elem);
        self.i32(len_i32(len));
    }

    /// Writes a map header.
    pub fn map_begin(&mut self, key: u8, value: u8, len: usize) {
        self.buf.push(key);
        self.buf.push(value);
        self.i32(len_i32(len));
    }

    /// Writes a bool.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Writes a byte.
    pub fn byte(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// Writes an i16.
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Writes an i32.
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Writes an i64.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Writes a double.
    pub fn double(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_bits().to_be_bytes());
    }

    /// Writes a UTF-8 string.
    pub fn string(&mut self, v: &str) {
        self.binary(v.as_bytes());
    }

    /// Writes length-prefixed bytes.
    pub fn binary(&mut self, v: &[u8]) {
        self.i32(len_i32(v.len()));
        self.buf.extend_from_slice(v);
    }
}

fn len_i32(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// Reads Thrift binary protocol values from a byte slice.
///
/// [`ProtocolError::Incomplete`] means the slice ended before the value did: a streaming caller
/// reads more bytes and decodes again from the start.
#[derive(Debug)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            depth: 0,
        }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if self.remaining() < n {
            return Err(ProtocolError::Incomplete);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ProtocolError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a message header, strict or old-style.
    pub fn message_begin(&mut self) -> Result<MessageHeader, ProtocolError> {
        let first = self.i32()?;
        if first < 0 {
            let word = first as u32;
            if word & VERSION_MASK != VERSION_1 {
                return Err(ProtocolError::invalid(format!(
                    "bad Thrift protocol version 0x{word:08x}"
                )));
            }
            let kind = MessageType::from_code((word & 0xff) as u8)?;
            let name = self.string()?;
            let seq_id = self.i32()?;
            Ok(MessageHeader { name, kind, seq_id })
        } else {
            // Old-style header: the first word is the name's length.
            let len = self.checked_len(first, 1)?;
            let name = std::str::from_utf8(self.take(len)?)
                .map_err(|_| ProtocolError::invalid("method name is not UTF-8"))?
                .to_string();
            let kind = MessageType::from_code(self.array::<1>()?[0])?;
            let seq_id = self.i32()?;
            Ok(MessageHeader { name, kind, seq_id })
        }
    }

    /// Enters a struct (bounded nesting).
    pub fn struct_begin(&mut self) -> Result<(), ProtocolError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ProtocolError::invalid("structure nested too deeply"));
        }
        Ok(())
    }

    /// Leaves a struct.
    pub fn struct_end(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reads a field header: `None` at the end of the struct.
    pub fn field_begin(&mut self) -> Result<Option<(u8, i16)>, ProtocolError> {
        let t = self.array::<1>()?[0];
        if t == ttype::STOP {
            return Ok(None);
        }
        let id = self.i16()?;
        Ok(Some((t, id)))
    }

    /// Reads a list or set header, checking the count against the bytes left.
    pub fn list_begin(&mut self) -> Result<(u8, usize), ProtocolError> {
        let elem = self.array::<1>()?[0];
        let n = self.i32()?;
        let len = self.checked_len(n, min_size(elem))?;
        Ok((elem, len))
    }

    /// Reads a map header, checking the count against the bytes left.
    pub fn map_begin(&mut self) -> Result<(u8, u8, usize), ProtocolError> {
        let k = self.array::<1>()?[0];
        let v = self.array::<1>()?[0];
        let n = self.i32()?;
        let len = self.checked_len(n, min_size(k) + min_size(v))?;
        Ok((k, v, len))
    }

    /// Validates a length read from the wire: non-negative and backed by enough bytes.
    fn checked_len(&self, n: i32, elem_size: usize) -> Result<usize, ProtocolError> {
        let n = usize::try_from(n).map_err(|_| ProtocolError::invalid("negative length"))?;
        match n.checked_mul(elem_size.max(1)) {
            Some(bytes) if bytes <= self.remaining() => Ok(n),
            // More elements than bytes left: either truncated or lying. Both are fatal for a
            // framed message; a streaming caller treats it as "need more" up to its limit.
            _ => Err(ProtocolError::Incomplete),
        }
    }

    /// Reads a bool.
    pub fn bool(&mut self) -> Result<bool, ProtocolError> {
        Ok(self.array::<1>()?[0] != 0)
    }

    /// Reads a byte.
    pub fn byte(&mut self) -> Result<i8, ProtocolError> {
        Ok(self.array::<1>()?[0] as i8)
    }

    /// Reads an i16.
    pub fn i16(&mut self) -> Result<i16, ProtocolError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    /// Reads an i32.
    pub fn i32(&mut self) -> Result<i32, ProtocolError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// Reads an i64.
    pub fn i64(&mut self) -> Result<i64, ProtocolError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Reads a double.
    pub fn double(&mut self) -> Result<f64, ProtocolError> {
        Ok(f64::from_bits(u64::from_be_bytes(self.array()?)))
    }

    /// Reads length-prefixed bytes.
    pub fn binary(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let n = self.i32()?;
        let len = self.checked_len(n, 1)?;
        Ok(self.take(len)?.to_vec())
    }

    /// Reads a UTF-8 string.
    pub fn string(&mut self) -> Result<String, ProtocolError> {
        String::from_utf8(self.binary()?).map_err(|_| ProtocolError::invalid("string is not UTF-8"))
    }

    /// Skips a value of wire type `t`.
    pub fn skip(&mut self, t: u8) -> Result<(), ProtocolError> {
        match t {
            ttype::BOOL | ttype::BYTE => {
                self.take(1)?;
            }
            ttype::I16 => {
                self.take(2)?;
            }
            ttype::I32 => {
                self.take(4)?;
            }
            ttype::I64 | ttype::DOUBLE => {
                self.take(8)?;
            }
            ttype::STRING => {
                let n = self.i32()?;
                let len = self.checked_len(n, 1)?;
                self.take(len)?;
            }
            ttype::STRUCT => {
                self.struct_begin()?;
                while let Some((ft, _)) = self.field_begin()? {
                    self.skip(ft)?;
                }
                self.struct_end();
            }
            ttype::MAP => {
                self.struct_begin()?;
                let (k, v, n) = self.map_begin()?;
                for _ in 0..n {
                    self.skip(k)?;
                    self.skip(v)?;
                }
                self.struct_end();
            }
            ttype::SET | ttype::LIST => {
                self.struct_begin()?;
                let (e, n) = self.list_begin()?;
                for _ in 0..n {
                    self.skip(e)?;
                }
                self.struct_end();
            }
            other => return Err(ProtocolError::invalid(format!("bad Thrift type {other}"))),
        }
        Ok(())
    }
}

/// One field of a struct or union as it travels: id, name (the IDL's, in snake case for
/// structs), wire type, and whether the IDL marks it required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Field id.
    pub id: i16,
    /// Field name.
    pub name: &'static str,
    /// Wire type code ([`ttype`]).
    pub ttype: u8,
    /// Required in the IDL.
    pub required: bool,
}

/// The least number of bytes one value of wire type `t` occupies.
fn min_size(t: u8) -> usize {
    match t {
        ttype::BOOL | ttype::BYTE | ttype::STRUCT => 1,
        ttype::I16 => 2,
        ttype::I32 | ttype::STRING => 4,
        ttype::I64 | ttype::DOUBLE => 8,
        ttype::MAP => 6,
        ttype::SET | ttype::LIST => 5,
        _ => 1,
    }
}

/// A value that can be a Thrift field, list element or map entry.
pub trait ThriftValue: Sized {
    /// Its wire type code.
    const TTYPE: u8;
    /// Encodes the value (without a field header).
    fn write(&self, e: &mut Encoder);
    /// Decodes the value (without a field header).
    fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError>;
}

macro_rules! primitive {
    ($t:ty, $tt:expr, $w:ident, $r:ident) => {
        impl ThriftValue for $t {
            const TTYPE: u8 = $tt;
            fn write(&self, e: &mut Encoder) {
                e.$w(*self)
            }
            fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError> {
                d.$r()
            }
        }
    };
}

primitive!(bool, ttype::BOOL, bool, bool);
primitive!(i8, ttype::BYTE, byte, byte);
primitive!(i16, ttype::I16, i16, i16);
primitive!(i32, ttype::I32, i32, i32);
primitive!(i64, ttype::I64, i64, i64);
primitive!(f64, ttype::DOUBLE, double, double);

impl ThriftValue for String {
    const TTYPE: u8 = ttype::STRING;
    fn write(&self, e: &mut Encoder) {
        e.string(self)
    }
    fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError> {
        d.string()
    }
}

/// Thrift `binary`: bytes that need not be UTF-8.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Binary(pub Vec<u8>);

impl ThriftValue for Binary {
    const TTYPE: u8 = ttype::STRING;
    fn write(&self, e: &mut Encoder) {
        e.binary(&self.0)
    }
    fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError> {
        d.binary().map(Binary)
    }
}

impl<T: ThriftValue> ThriftValue for Vec<T> {
    const TTYPE: u8 = ttype::LIST;
    fn write(&self, e: &mut Encoder) {
        e.list_begin(T::TTYPE, self.len());
        for v in self {
            v.write(e);
        }
    }
    fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError> {
        d.struct_begin()?;
        let (elem, n) = d.list_begin()?;
        if elem != T::TTYPE && n > 0 {
            return Err(ProtocolError::invalid(format!(
                "list element type {elem}, expected {}",
                T::TTYPE
            )));
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(T::read(d)?);
        }
        d.struct_end();
        Ok(out)
    }
}

impl<K: ThriftValue + Ord, V: ThriftValue> ThriftValue for BTreeMap<K, V> {
    const TTYPE: u8 = ttype::MAP;
    fn write(&self, e: &mut Encoder) {
        e.map_begin(K::TTYPE, V::TTYPE, self.len());
        for (k, v) in self {
            k.write(e);
            v.write(e);
        }
    }
    fn read(d: &mut Decoder<'_>) -> Result<Self, ProtocolError> {
        d.struct_begin()?;
        let (kt, vt, n) = d.map_begin()?;
        if n > 0 && (kt != K::TTYPE || vt != V::TTYPE) {
            return Err(ProtocolError::invalid("map key or value of the wrong type"));
        }
        let mut out = BTreeMap::new();
        for _ in 0..n {
            let k = K::read(d)?;
            let v = V::read(d)?;
            out.insert(k, v);
        }
        d.struct_end();
        Ok(out)
    }
}

/// Reads a field value of type `T` after checking that the wire type matches; a field of
/// another type is skipped and reported as absent, as Thrift's generated code does.
pub fn read_field<T: ThriftValue>(
    d: &mut Decoder<'_>,
    wire: u8,
) -> Result<Option<T>, ProtocolError> {
    if wire == T::TTYPE {
        T::read(d).map(Some)
    } else {
        d.skip(wire)?;
        Ok(None)
    }
}

/// Defines an i32-valued Thrift enum as a transparent newtype with named constants, so values a
/// newer peer sends still decode.
#[macro_export]
macro_rules! thrift_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $value:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub i32);

        #[allow(missing_docs)]
        impl $name {
            $($(#[$vm])* pub const $variant: $name = $name($value);)*

            /// Every constant's name and value, for conformance tests against other
            /// implementations of the contract.
            pub const WIRE_VALUES: &'static [(&'static str, i32)] = &[$((stringify!($variant), $value),)*];

            /// The constant's name, or `None` for a value this build does not know.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($variant)),)*
                    _ => None,
                }
            }
        }

        impl $crate::codec::ThriftValue for $name {
            const TTYPE: u8 = $crate::codec::ttype::I32;
            fn write(&self, e: &mut $crate::codec::Encoder) {
                e.i32(self.0)
            }
            fn read(d: &mut $crate::codec::Decoder<'_>) -> Result<Self, $crate::error::ProtocolError> {
                d.i32().map($name)
            }
        }
    };
}

/// Defines a Thrift struct: `required` fields are plain values (missing ones are a decode error
/// naming the field), `optional` fields are `Option`s.
#[macro_export]
macro_rules! thrift_struct {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $id:literal : $req:ident $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            $($(#[$fm])* pub $field: $crate::thrift_struct!(@ty $req $ty),)*
        }

        impl $name {
            /// The struct's fields on the wire, for conformance tests.
            pub const WIRE_FIELDS: &'static [$crate::codec::FieldSpec] = &[$($crate::codec::FieldSpec {
                id: $id,
                name: stringify!($field),
                ttype: <$ty as $crate::codec::ThriftValue>::TTYPE,
                required: $crate::thrift_struct!(@required $req),
            },)*];
        }

        impl $crate::codec::ThriftValue for $name {
            const TTYPE: u8 = $crate::codec::ttype::STRUCT;

            #[allow(unused_variables)]
            fn write(&self, e: &mut $crate::codec::Encoder) {
                $($crate::thrift_struct!(@write $req self.$field, $ty, $id, e);)*
                e.field_stop();
            }

            #[allow(unused_mut, unused_variables)]
            fn read(d: &mut $crate::codec::Decoder<'_>) -> Result<Self, $crate::error::ProtocolError> {
                d.struct_begin()?;
                $(let mut $field: Option<$ty> = None;)*
                while let Some((wire, id)) = d.field_begin()? {
                    match id {
                        $($id => { let v = $crate::codec::read_field::<$ty>(d, wire)?; if v.is_some() { $field = v; } })*
                        _ => d.skip(wire)?,
                    }
                }
                d.struct_end();
                Ok($name {
                    $($field: $crate::thrift_struct!(@finish $req $field, stringify!($name), stringify!($field)),)*
                })
            }
        }
    };
    (@required required) => { true };
    (@required optional) => { false };
    (@ty required $ty:ty) => { $ty };
    (@ty optional $ty:ty) => { Option<$ty> };
    (@write required $v:expr, $ty:ty, $id:literal, $e:ident) => {{
        $e.field_begin(<$ty as $crate::codec::ThriftValue>::TTYPE, $id);
        $crate::codec::ThriftValue::write(&$v, $e);
    }};
    (@write optional $v:expr, $ty:ty, $id:literal, $e:ident) => {{
        if let Some(v) = &$v {
            $e.field_begin(<$ty as $crate::codec::ThriftValue>::TTYPE, $id);
            $crate::codec::ThriftValue::write(v, $e);
        }
    }};
    (@finish required $field:ident, $sname:expr, $fname:expr) => {
        $field.ok_or_else(|| $crate::error::ProtocolError::MissingField { structure: $sname, field: $fname })?
    };
    (@finish optional $field:ident, $sname:expr, $fname:expr) => { $field };
}

/// Defines a Thrift union as a Rust enum with one variant per field.
#[macro_export]
macro_rules! thrift_union {
    ($(#[$m:meta])* $name:ident {
        $(#[$ffm:meta])* $fid:literal : $fvariant:ident ($fty:ty)
        $(, $(#[$fm:meta])* $id:literal : $variant:ident ($ty:ty))* $(,)?
    }) => {
        $crate::thrift_union!(@def $(#[$m])* $name { $(#[$ffm])* $fid : $fvariant ($fty) $(, $(#[$fm])* $id : $variant ($ty))* });

        impl Default for $name {
            fn default() -> Self {
                $name::$fvariant(Default::default())
            }
        }
    };
    (@def $(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $id:literal : $variant:ident ($ty:ty)),* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $($(#[$fm])* $variant($ty),)*
        }

        impl $name {
            /// The union's fields on the wire, for conformance tests.
            pub const WIRE_FIELDS: &'static [$crate::codec::FieldSpec] = &[$($crate::codec::FieldSpec {
                id: $id,
                name: stringify!($variant),
                ttype: <$ty as $crate::codec::ThriftValue>::TTYPE,
                required: false,
            },)*];
        }

        impl $crate::codec::ThriftValue for $name {
            const TTYPE: u8 = $crate::codec::ttype::STRUCT;

            fn write(&self, e: &mut $crate::codec::Encoder) {
                match self {
                    $($name::$variant(v) => {
                        e.field_begin(<$ty as $crate::codec::ThriftValue>::TTYPE, $id);
                        $crate::codec::ThriftValue::write(v, e);
                    })*
                }
                e.field_stop();
            }

            fn read(d: &mut $crate::codec::Decoder<'_>) -> Result<Self, $crate::error::ProtocolError> {
                d.struct_begin()?;
                let mut out: Option<$name> = None;
                while let Some((wire, id)) = d.field_begin()? {
                    match id {
                        $($id => {
                            if let Some(v) = $crate::codec::read_field::<$ty>(d, wire)? {
                                out = Some($name::$variant(v));
                            }
                        })*
                        _ => d.skip(wire)?,
                    }
                }
                d.struct_end();
                out.ok_or_else(|| $crate::error::ProtocolError::invalid(
                    concat!("union ", stringify!($name), " has no field set")))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_header_round_trips_strict_and_old_style() {
        let h = MessageHeader {
            name: "OpenSession".into(),
            kind: MessageType::Call,
            seq_id: 7,
        };
        let mut e = Encoder::new();
        e.message_begin(&h);
        let bytes = e.into_bytes();
        assert_eq!(Decoder::new(&bytes).message_begin().ok(), Some(h.clone()));

        let mut old = Vec::new();
        old.extend_from_slice(&11i32.to_be_bytes());
        old.extend_from_slice(b"OpenSession");
        old.push(1);
        old.extend_from_slice(&7i32.to_be_bytes());
        assert_eq!(Decoder::new(&old).message_begin().ok(), Some(h));
    }

    #[test]
    fn hostile_lengths_are_refused_without_allocating() {
        // A string claiming 2 GiB inside a 10-byte buffer.
        let mut b = vec![0x7f, 0xff, 0xff, 0xff];
        b.extend_from_slice(b"abcdef");
        assert!(matches!(
            Decoder::new(&b).string(),
            Err(ProtocolError::Incomplete)
        ));
        // A list of a billion i64s.
        let b = [ttype::I64, 0x40, 0, 0, 0, 1, 2, 3];
        assert!(Vec::<i64>::read(&mut Decoder::new(&b)).is_err());
        // Negative length.
        let b = [0xff, 0xff, 0xff, 0xfe];
        assert!(matches!(
            Decoder::new(&b).binary(),
            Err(ProtocolError::Invalid(_))
        ));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut b = Vec::new();
        for _ in 0..100 {
            b.push(ttype::STRUCT);
            b.extend_from_slice(&1i16.to_be_bytes());
        }
        b.extend(std::iter::repeat_n(0u8, 101));
        assert!(matches!(
            Decoder::new(&b).skip(ttype::STRUCT),
            Err(ProtocolError::Invalid(_))
        ));
    }
}
