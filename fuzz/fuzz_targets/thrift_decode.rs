//! The Thrift decoder on arbitrary bytes: the resumable scanner agrees with itself whole and
//! fed in pieces, and decoding what it calls a whole message never panics.
#![no_main]

use apiary_protocol::codec::Decoder;
use apiary_protocol::message::{read_args, read_call_header, skip_args};
use apiary_protocol::tcli::{
    TExecuteStatementReq, TFetchResultsReq, TGetTablesReq, TOpenSessionReq,
};
use apiary_protocol::MessageScanner;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&step, bytes)) = data.split_first() else {
        return;
    };
    let whole = MessageScanner::new().feed(bytes);
    let mut pieces = MessageScanner::new();
    let step = usize::from(step).max(1);
    let mut seen = None;
    for end in (0..bytes.len())
        .step_by(step)
        .chain(std::iter::once(bytes.len()))
    {
        match pieces.feed(&bytes[..end]) {
            Ok(Some(n)) => {
                seen = Some(Ok(n));
                break;
            }
            Ok(None) => {}
            Err(e) => {
                seen = Some(Err(e));
                break;
            }
        }
    }
    match (&whole, &seen) {
        (Ok(Some(a)), Some(Ok(b))) => assert_eq!(a, b, "whole and piecewise scans disagree"),
        (Ok(Some(_)), _) | (_, Some(Ok(_))) => {
            panic!("whole {whole:?} and piecewise {seen:?} scans disagree")
        }
        _ => {}
    }
    if let Ok(Some(n)) = whole {
        let msg = &bytes[..n];
        let mut d = Decoder::new(msg);
        if read_call_header(&mut d).is_ok() {
            let mut skip = Decoder::new(&msg[d.position()..]);
            let _ = skip_args(&mut skip);
            let at = d.position();
            let _ = read_args::<TOpenSessionReq>(&mut Decoder::new(&msg[at..]), "args");
            let _ = read_args::<TExecuteStatementReq>(&mut Decoder::new(&msg[at..]), "args");
            let _ = read_args::<TFetchResultsReq>(&mut Decoder::new(&msg[at..]), "args");
            let _ = read_args::<TGetTablesReq>(&mut Decoder::new(&msg[at..]), "args");
        }
    }
});
