//! SASL framing on arbitrary bytes: handshake frames, PLAIN responses and data frames split
//! at arbitrary points never panic, never take more than the limit, and lose no byte.
#![no_main]

use apiary_protocol::sasl::{handshake_header, parse_plain, unframe};
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;

const MAX: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    if let Some(head) = data.get(..5) {
        let mut h = [0u8; 5];
        h.copy_from_slice(head);
        let (_, len) = handshake_header(h);
        if let Some(payload) = data.get(5..5 + len.min(data.len())) {
            let _ = parse_plain(payload);
        }
    }
    let Some((&step, bytes)) = data.split_first() else {
        return;
    };
    let step = usize::from(step).max(1);
    let (mut raw, mut buf) = (BytesMut::new(), BytesMut::new());
    let mut consumed = 0usize;
    for chunk in bytes.chunks(step) {
        raw.extend_from_slice(chunk);
        let before = raw.len();
        if unframe(&mut raw, &mut buf, MAX).is_err() {
            return;
        }
        consumed += before - raw.len();
        assert!(buf.len() <= MAX, "unframe took more than the limit");
    }
    // Every consumed byte is a 4-byte header or payload now in `buf`.
    assert!(consumed >= buf.len(), "payload bytes appeared from nowhere");
    assert_eq!((consumed - buf.len()) % 4, 0, "headers are 4 bytes each");
});
