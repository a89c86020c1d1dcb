//! SASL framing of the binary transport, without I/O: the handshake's frames (status byte,
//! 4-byte big-endian length, payload), the PLAIN mechanism's response, and the 4-byte length
//! frames that carry Thrift messages after the handshake.

use bytes::BytesMut;

/// Handshake status: the client starts, naming a mechanism.
pub const START: u8 = 1;
/// Handshake status: a step succeeded.
pub const OK: u8 = 2;
/// Handshake status: the peer refuses (bad credentials, unknown mechanism).
pub const BAD: u8 = 3;
/// Handshake status: a protocol error.
pub const ERROR: u8 = 4;
/// Handshake status: authentication is complete.
pub const COMPLETE: u8 = 5;

/// The parts of a PLAIN response: `authzid NUL user NUL password`.
#[derive(Debug, PartialEq, Eq)]
pub struct Plain<'a> {
    /// The identity to act as (often empty).
    pub authzid: &'a [u8],
    /// The user name.
    pub user: &'a [u8],
    /// The password.
    pub password: &'a [u8],
}

/// Splits a PLAIN response; `None` unless it has exactly three NUL-separated parts.
pub fn parse_plain(response: &[u8]) -> Option<Plain<'_>> {
    let mut parts = response.split(|b| *b == 0);
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(authzid), Some(user), Some(password), None) => Some(Plain {
            authzid,
            user,
            password,
        }),
        _ => None,
    }
}

/// A handshake frame's header: its status and payload length.
pub fn handshake_header(head: [u8; 5]) -> (u8, usize) {
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    (head[0], len)
}

/// Encodes a handshake frame.
pub fn handshake_frame(status: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 5);
    out.push(status);
    out.extend_from_slice(
        &u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    out.extend_from_slice(payload);
    out
}

/// Moves the payloads of the whole data frames at the front of `raw` into `buf`. A frame
/// longer than `max` (or one that would take `buf` past it) is refused from its length prefix,
/// before anything is allocated for it.
pub fn unframe(raw: &mut BytesMut, buf: &mut BytesMut, max: usize) -> Result<(), String> {
    while raw.len() >= 4 {
        let len = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize;
        if len > max || buf.len() + len > max {
            return Err(format!(
                "frame length {len} exceeds the maximum message size of {max} bytes"
            ));
        }
        if raw.len() < 4 + len {
            break;
        }
        let _ = raw.split_to(4);
        buf.extend_from_slice(&raw.split_to(len));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn unframe_takes_whole_frames_and_keeps_the_rest() {
        let mut raw = BytesMut::new();
        raw.extend_from_slice(&frame(b"abc"));
        raw.extend_from_slice(&frame(b"defg"));
        raw.extend_from_slice(&frame(b"hij")[..5]);
        let mut buf = BytesMut::new();
        unframe(&mut raw, &mut buf, 1024).expect("frames fit");
        assert_eq!(&buf[..], b"abcdefg");
        assert_eq!(&raw[..], &frame(b"hij")[..5]);
        raw.extend_from_slice(&frame(b"hij")[5..]);
        unframe(&mut raw, &mut buf, 1024).expect("frames fit");
        assert_eq!(&buf[..], b"abcdefghij");
        assert!(raw.is_empty());
    }

    #[test]
    fn unframe_refuses_a_hostile_length_before_reading_it() {
        let mut raw = BytesMut::from(&[0xff, 0xff, 0xff, 0xff, 1][..]);
        let mut buf = BytesMut::new();
        let err = unframe(&mut raw, &mut buf, 1 << 20).expect_err("4 GiB frame");
        assert!(err.contains("exceeds the maximum message size"), "{err}");
        assert!(buf.is_empty());
    }

    #[test]
    fn plain_needs_exactly_three_parts() {
        let p = parse_plain(b"\0alice\0secret").expect("three parts");
        assert_eq!(
            (p.authzid, p.user, p.password),
            (&b""[..], &b"alice"[..], &b"secret"[..])
        );
        assert!(parse_plain(b"alice\0secret").is_none());
        assert!(parse_plain(b"a\0b\0c\0d").is_none());
    }
}
