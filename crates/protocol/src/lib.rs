//! The HiveServer2 wire contract (TCLIService) and the Thrift binary protocol codec.
//!
//! Nothing here does I/O: the endpoint crate reads bytes, hands them to [`codec::Decoder`] and
//! writes what [`codec::Encoder`] produces.

#![warn(missing_docs)]

pub mod codec;
pub mod error;
pub mod message;
pub mod sasl;
pub mod scan;
#[allow(missing_docs)] // fields and variants carry the IDL's names; see the module docs
pub mod tcli;

pub use codec::{Binary, Decoder, Encoder, ThriftValue};
pub use error::ProtocolError;
pub use scan::MessageScanner;
