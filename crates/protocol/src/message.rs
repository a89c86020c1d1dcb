//! Framing of RPC calls and replies: the message header, the `args` struct around a request
//! (field 1) and the `result` struct around a reply (field 0).

use crate::codec::{ttype, Decoder, Encoder, MessageHeader, MessageType, ThriftValue};
use crate::error::ProtocolError;

/// `TApplicationException` type for a method the server does not know.
pub const UNKNOWN_METHOD: i32 = 1;
/// `TApplicationException` type for a malformed request.
pub const PROTOCOL_ERROR: i32 = 7;
/// `TApplicationException` type for a failure inside the server.
pub const INTERNAL_ERROR: i32 = 6;

/// Reads the header of a call; the arguments follow in `d`.
pub fn read_call_header(d: &mut Decoder<'_>) -> Result<MessageHeader, ProtocolError> {
    let h = d.message_begin()?;
    if !matches!(h.kind, MessageType::Call | MessageType::Oneway) {
        return Err(ProtocolError::invalid(format!(
            "expected a call, got {:?} for {}",
            h.kind, h.name
        )));
    }
    Ok(h)
}

/// Reads a call's `args` struct whose field 1 is the request.
pub fn read_args<T: ThriftValue>(
    d: &mut Decoder<'_>,
    what: &'static str,
) -> Result<T, ProtocolError> {
    d.struct_begin()?;
    let mut req = None;
    while let Some((wire, id)) = d.field_begin()? {
        if id == 1 && wire == T::TTYPE {
            req = Some(T::read(d)?);
        } else {
            d.skip(wire)?;
        }
    }
    d.struct_end();
    req.ok_or(ProtocolError::MissingField {
        structure: what,
        field: "req",
    })
}

/// Skips a call's arguments (for a method that is not served).
pub fn skip_args(d: &mut Decoder<'_>) -> Result<(), ProtocolError> {
    d.skip(ttype::STRUCT)
}

/// Encodes a reply message carrying `value` as the result's field 0.
pub fn encode_reply<T: ThriftValue>(name: &str, seq_id: i32, value: &T) -> Vec<u8> {
    let mut e = Encoder::new();
    e.message_begin(&MessageHeader {
        name: name.to_string(),
        kind: MessageType::Reply,
        seq_id,
    });
    e.field_begin(T::TTYPE, 0);
    value.write(&mut e);
    e.field_stop();
    e.into_bytes()
}

/// Encodes a `TApplicationException` reply.
pub fn encode_exception(name: &str, seq_id: i32, kind: i32, message: &str) -> Vec<u8> {
    let mut e = Encoder::new();
    e.message_begin(&MessageHeader {
        name: name.to_string(),
        kind: MessageType::Exception,
        seq_id,
    });
    e.field_begin(ttype::STRING, 1);
    e.string(message);
    e.field_begin(ttype::I32, 2);
    e.i32(kind);
    e.field_stop();
    e.into_bytes()
}

/// Encodes a call (used by tests and tools that act as a client).
pub fn encode_call<T: ThriftValue>(name: &str, seq_id: i32, req: &T) -> Vec<u8> {
    let mut e = Encoder::new();
    e.message_begin(&MessageHeader {
        name: name.to_string(),
        kind: MessageType::Call,
        seq_id,
    });
    e.field_begin(T::TTYPE, 1);
    req.write(&mut e);
    e.field_stop();
    e.into_bytes()
}

/// A decoded reply: the value or the server's exception text.
#[derive(Debug)]
pub enum Reply<T> {
    /// Field 0 of the result struct.
    Value(T),
    /// A `TApplicationException` with its type and message.
    Exception(i32, String),
}

/// Decodes a reply message (used by tests and tools that act as a client).
pub fn decode_reply<T: ThriftValue>(bytes: &[u8]) -> Result<Reply<T>, ProtocolError> {
    let mut d = Decoder::new(bytes);
    let h = d.message_begin()?;
    d.struct_begin()?;
    let mut value = None;
    let mut message = String::new();
    let mut kind = 0;
    while let Some((wire, id)) = d.field_begin()? {
        match (h.kind, id) {
            (MessageType::Reply, 0) if wire == T::TTYPE => value = Some(T::read(&mut d)?),
            (MessageType::Exception, 1) if wire == ttype::STRING => message = d.string()?,
            (MessageType::Exception, 2) if wire == ttype::I32 => kind = d.i32()?,
            _ => d.skip(wire)?,
        }
    }
    if h.kind == MessageType::Exception {
        return Ok(Reply::Exception(kind, message));
    }
    value.map(Reply::Value).ok_or(ProtocolError::MissingField {
        structure: "result",
        field: "success",
    })
}
