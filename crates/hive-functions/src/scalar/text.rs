//! Hive's text functions over characters and words: `encode`/`decode` with Java's charset
//! names, `sentences` (Java's sentence and word breaks), `aes_encrypt`/`aes_decrypt` (Java's
//! AES/ECB/PKCS5Padding), `chr`, `assert_true` and `enforce_constraint`.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{arg, text, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("encode", 2..=2, |_| Ok(DataType::Binary), encode),
        RowFn::new("decode", 2..=2, crate::args::string, decode),
        RowFn::new("sentences", 1..=3, sentences_type, sentences),
        RowFn::new("quote", 1..=1, crate::args::string, quote),
        RowFn::new("typeof", 1..=1, crate::args::string, type_of),
        RowFn::new("chr", 1..=1, crate::args::string, chr),
        RowFn::new("aes_encrypt", 2..=2, |_| Ok(DataType::Binary), aes_encrypt),
        RowFn::new("aes_decrypt", 2..=2, |_| Ok(DataType::Binary), aes_decrypt),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
    // Volatile: evaluated per row at run time, never folded away at planning.
    ctx.register_udf(ScalarUDF::from(
        RowFn::new("assert_true", 1..=1, |_| Ok(DataType::Null), assert_true).volatile(),
    ));
    ctx.register_udf(ScalarUDF::from(
        RowFn::new(
            crate::names::ENFORCE_CONSTRAINT,
            1..=1,
            |_| Ok(DataType::Boolean),
            enforce_constraint,
        )
        .volatile(),
    ));
}

/// The charsets Java always has, by the names and aliases `Charset.forName` reads.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Charset {
    Ascii,
    Latin1,
    Utf8,
    Utf16Be,
    Utf16Le,
    /// UTF-16 with a byte-order mark (written big-endian).
    Utf16,
}

fn charset(name: &str) -> Result<Charset> {
    Ok(match name.trim().to_ascii_uppercase().as_str() {
        "US-ASCII" | "ASCII" | "US_ASCII" | "ISO646-US" | "646" | "CP367" | "DEFAULT" => {
            Charset::Ascii
        }
        "ISO-8859-1" | "ISO8859-1" | "ISO8859_1" | "ISO_8859_1" | "ISO_8859-1" | "LATIN1"
        | "L1" | "8859_1" | "CP819" | "IBM819" => Charset::Latin1,
        "UTF-8" | "UTF8" | "UNICODE-1-1-UTF-8" => Charset::Utf8,
        "UTF-16BE" | "UTF_16BE" | "X-UTF-16BE" | "ISO-10646-UCS-2" => Charset::Utf16Be,
        "UTF-16LE" | "UTF_16LE" | "X-UTF-16LE" => Charset::Utf16Le,
        "UTF-16" | "UTF_16" | "UTF16" => Charset::Utf16,
        _ => return exec_err!("java.nio.charset.UnsupportedCharsetException: {name}"),
    })
}

/// `encode(str, charset)`: the text's bytes in the charset, a character it cannot write as `?`.
fn encode(args: &[ScalarValue]) -> Result<ScalarValue> {
    let (Some(s), Some(cs)) = (text(arg(args, 0)), text(arg(args, 1))) else {
        return Ok(ScalarValue::Binary(None));
    };
    let bytes: Vec<u8> = match charset(&cs)? {
        Charset::Utf8 => s.into_bytes(),
        Charset::Ascii => s
            .chars()
            .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
            .collect(),
        Charset::Latin1 => s
            .chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect(),
        Charset::Utf16Be => s.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        Charset::Utf16Le => s.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        Charset::Utf16 => [0xFE, 0xFF]
            .into_iter()
            .chain(s.encode_utf16().flat_map(u16::to_be_bytes))
            .collect(),
    };
    Ok(ScalarValue::Binary(Some(bytes)))
}

/// `decode(bin, charset)`: the bytes read in the charset, what does not read as U+FFFD.
fn decode(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some(bytes) = crate::args::bytes(arg(args, 0)) else {
        return Ok(ScalarValue::Utf8(None));
    };
    let Some(cs) = text(arg(args, 1)) else {
        return Ok(ScalarValue::Utf8(None));
    };
    let units = |b: &[u8], big: bool| -> Vec<u16> {
        b.chunks(2)
            .map(|p| match p {
                [a, b] if big => u16::from_be_bytes([*a, *b]),
                [a, b] => u16::from_le_bytes([*a, *b]),
                _ => 0xFFFD,
            })
            .collect()
    };
    let out = match charset(&cs)? {
        Charset::Utf8 => String::from_utf8_lossy(&bytes).into_owned(),
        Charset::Ascii => bytes
            .iter()
            .map(|&b| {
                if b.is_ascii() {
                    char::from(b)
                } else {
                    '\u{FFFD}'
                }
            })
            .collect(),
        Charset::Latin1 => bytes.iter().map(|&b| char::from(b)).collect(),
        Charset::Utf16Be => String::from_utf16_lossy(&units(&bytes, true)),
        Charset::Utf16Le => String::from_utf16_lossy(&units(&bytes, false)),
        Charset::Utf16 => match bytes.as_slice() {
            [0xFF, 0xFE, rest @ ..] => String::from_utf16_lossy(&units(rest, false)),
            [0xFE, 0xFF, rest @ ..] => String::from_utf16_lossy(&units(rest, true)),
            rest => String::from_utf16_lossy(&units(rest, true)),
        },
    };
    Ok(ScalarValue::Utf8(Some(out)))
}

fn words_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))
}

fn sentences_type(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::List(Arc::new(Field::new_list_field(
        words_type(),
        true,
    ))))
}

/// `sentences(str [, lang [, country]])`: the text's sentences, each an array of its words
/// (punctuation dropped), as Java's sentence and word breaks read English.
fn sentences(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some(s) = text(arg(args, 0)) else {
        return Ok(ScalarValue::Null);
    };
    let lists: Vec<ScalarValue> = split_sentences(&s)
        .into_iter()
        .map(|words| {
            let words: Vec<ScalarValue> = words
                .into_iter()
                .map(|w| ScalarValue::Utf8(Some(w)))
                .collect();
            ScalarValue::List(ScalarValue::new_list_nullable(&words, &DataType::Utf8))
        })
        .collect();
    Ok(ScalarValue::List(ScalarValue::new_list_nullable(
        &lists,
        &words_type(),
    )))
}

/// A sentence ends after `.`, `!` or `?` (and closing quotes or brackets) before white space;
/// a word is letters and digits, joined across an apostrophe between letters and a `.` or
/// `,` between digits. Sentences without words are left out.
fn split_sentences(s: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = s.chars().collect();
    let mut sentences = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        // Inside a word: an apostrophe between letters, a `.` or `,` between digits.
        let joins = !word.is_empty()
            && match (prev, c, next) {
                (Some(p), '\'' | '\u{2019}', Some(n)) => p.is_alphabetic() && n.is_alphabetic(),
                (Some(p), '.' | ',', Some(n)) => p.is_ascii_digit() && n.is_ascii_digit(),
                _ => false,
            };
        if c.is_alphanumeric() || joins {
            word.push(c);
        } else {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if matches!(c, '.' | '!' | '?') {
                // The terminators, then closing punctuation, then white space or the end.
                let mut j = i + 1;
                while j < chars.len() && matches!(chars[j], '.' | '!' | '?') {
                    j += 1;
                }
                while j < chars.len() && matches!(chars[j], '"' | '\'' | ')' | ']' | '\u{201D}') {
                    j += 1;
                }
                if j >= chars.len() || chars[j].is_whitespace() {
                    if !words.is_empty() {
                        sentences.push(std::mem::take(&mut words));
                    }
                    i = j;
                    continue;
                }
            }
        }
        i += 1;
    }
    if !word.is_empty() {
        words.push(word);
    }
    if !words.is_empty() {
        sentences.push(words);
    }
    sentences
}

/// `quote(str)`: the text in single quotes, its own single quotes escaped with a backslash.
fn quote(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Utf8(
        text(arg(args, 0)).map(|s| format!("'{}'", s.replace('\'', "\\'"))),
    ))
}

/// `typeof(x)`: the Hive type name of the argument (`void` for an untyped NULL).
fn type_of(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Utf8(Some(
        apiary_hive_types::types::HiveType::of(&arg(args, 0).data_type()).to_string(),
    )))
}

/// A block cipher of AES for a key of 16, 24 or 32 bytes (Hive's AES key lengths).
enum Aes {
    A128(aes::Aes128),
    A192(aes::Aes192),
    A256(aes::Aes256),
}

impl Aes {
    fn new(key: &[u8]) -> Option<Aes> {
        use aes::cipher::KeyInit;
        match key.len() {
            16 => aes::Aes128::new_from_slice(key).ok().map(Aes::A128),
            24 => aes::Aes192::new_from_slice(key).ok().map(Aes::A192),
            32 => aes::Aes256::new_from_slice(key).ok().map(Aes::A256),
            _ => None,
        }
    }

    fn block(&self, block: &mut [u8], encrypt: bool) {
        use aes::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt};
        let Ok(b) = <&mut Array<u8, _>>::try_from(block) else {
            return;
        };
        match (self, encrypt) {
            (Aes::A128(c), true) => c.encrypt_block(b),
            (Aes::A128(c), false) => c.decrypt_block(b),
            (Aes::A192(c), true) => c.encrypt_block(b),
            (Aes::A192(c), false) => c.decrypt_block(b),
            (Aes::A256(c), true) => c.encrypt_block(b),
            (Aes::A256(c), false) => c.decrypt_block(b),
        }
    }
}

const AES_BLOCK: usize = 16;

/// The two arguments of the AES functions as bytes, and the cipher of the key; None when
/// either is NULL or the key is not 16, 24 or 32 bytes long.
fn aes_args(args: &[ScalarValue]) -> Option<(Vec<u8>, Aes)> {
    let input = crate::args::bytes(arg(args, 0))?;
    let key = crate::args::bytes(arg(args, 1))?;
    Some((input, Aes::new(&key)?))
}

/// `aes_encrypt(input, key)`: AES in ECB mode with PKCS#5 padding (Java's
/// "AES/ECB/PKCS5Padding", as Hive); NULL for a NULL argument or a key of another length.
fn aes_encrypt(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some((mut data, cipher)) = aes_args(args) else {
        return Ok(ScalarValue::Binary(None));
    };
    let pad = AES_BLOCK - data.len() % AES_BLOCK;
    data.extend(std::iter::repeat_n(pad as u8, pad));
    for block in data.chunks_exact_mut(AES_BLOCK) {
        cipher.block(block, true);
    }
    Ok(ScalarValue::Binary(Some(data)))
}

/// `aes_decrypt(input, key)`: the inverse of `aes_encrypt`; NULL also when the input is not
/// whole blocks or its padding is wrong (Hive logs the cipher's error and returns NULL).
fn aes_decrypt(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some((mut data, cipher)) = aes_args(args) else {
        return Ok(ScalarValue::Binary(None));
    };
    if data.is_empty() || data.len() % AES_BLOCK != 0 {
        return Ok(ScalarValue::Binary(None));
    }
    for block in data.chunks_exact_mut(AES_BLOCK) {
        cipher.block(block, false);
    }
    let pad = usize::from(data.last().copied().unwrap_or(0));
    let valid = (1..=AES_BLOCK).contains(&pad)
        && data[data.len() - pad..]
            .iter()
            .all(|b| usize::from(*b) == pad);
    if !valid {
        return Ok(ScalarValue::Binary(None));
    }
    data.truncate(data.len() - pad);
    Ok(ScalarValue::Binary(Some(data)))
}

/// `chr(n)`: the character of code `n % 256` (a fraction dropped), the empty string for a
/// negative `n`, NULL for NULL (Hive's `chr`).
fn chr(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some(n) = crate::args::float(arg(args, 0)).filter(|n| n.is_finite()) else {
        return Ok(ScalarValue::Utf8(None));
    };
    let n = n.trunc();
    if n < 0.0 {
        return Ok(ScalarValue::Utf8(Some(String::new())));
    }
    let code = (n % 256.0) as u32;
    Ok(ScalarValue::Utf8(char::from_u32(code).map(String::from)))
}

/// `assert_true(cond)`: NULL when `cond` holds; Hive's error otherwise (NULL fails too).
fn assert_true(args: &[ScalarValue]) -> Result<ScalarValue> {
    match arg(args, 0) {
        ScalarValue::Boolean(Some(true)) => Ok(ScalarValue::Null),
        _ => exec_err!("ASSERT_TRUE(): assertion failed."),
    }
}

/// `enforce_constraint(cond)`: TRUE when `cond` holds; Hive's constraint error otherwise.
/// INSERT puts it over the rows of a table with enabled NOT NULL or CHECK constraints.
fn enforce_constraint(args: &[ScalarValue]) -> Result<ScalarValue> {
    match arg(args, 0) {
        ScalarValue::Boolean(Some(true)) => Ok(ScalarValue::Boolean(Some(true))),
        _ => exec_err!("{}", crate::names::CONSTRAINT_VIOLATED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chr_as_hive() {
        let text = |s: &str| ScalarValue::Utf8(Some(s.into()));
        for (n, want) in [
            (ScalarValue::Int64(Some(65)), text("A")),
            (ScalarValue::Int64(Some(321)), text("A")),
            (ScalarValue::Int64(Some(32457964)), text("\u{ec}")),
            (ScalarValue::Float64(Some(68.12)), text("D")),
            (ScalarValue::Int64(Some(-1)), text("")),
            (ScalarValue::Int64(None), ScalarValue::Utf8(None)),
        ] {
            assert_eq!(chr(std::slice::from_ref(&n)).ok(), Some(want), "chr({n})");
        }
    }

    #[test]
    fn sentences_split_as_java() {
        assert_eq!(
            split_sentences("Hello there! How are you?"),
            vec![vec!["Hello", "there"], vec!["How", "are", "you"]]
        );
        assert_eq!(
            split_sentences("It's 3.14, isn't it... yes."),
            vec![vec!["It's", "3.14", "isn't", "it"], vec!["yes"]]
        );
        assert!(split_sentences("?!").is_empty());
    }

    #[test]
    fn charsets_round_trip() {
        let s = |v: &str| ScalarValue::Utf8(Some(v.into()));
        let e = encode(&[s("héllo"), s("UTF-16LE")]).unwrap();
        assert_eq!(decode(&[e, s("utf-16le")]).unwrap(), s("héllo"));
        assert_eq!(
            encode(&[s("é"), s("US-ASCII")]).unwrap(),
            ScalarValue::Binary(Some(b"?".to_vec()))
        );
        assert!(encode(&[s("x"), s("nope")]).is_err());
    }
}
