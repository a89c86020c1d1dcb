//! The file formats Hive writes, as Hive names them in a storage descriptor.

use std::collections::BTreeMap;

use apiary_metastore::StorageDescriptor;

/// Hive's text input format class.
pub const TEXT_INPUT: &str = "org.apache.hadoop.mapred.TextInputFormat";
/// Hive's text output format class.
pub const TEXT_OUTPUT: &str = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat";
/// The default serde of TEXTFILE tables.
pub const LAZY_SIMPLE_SERDE: &str = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe";
/// The CSV serde.
pub const OPEN_CSV_SERDE: &str = "org.apache.hadoop.hive.serde2.OpenCSVSerde";
/// The JSON serde of STORED AS JSONFILE (Hive 4).
pub const JSON_SERDE: &str = "org.apache.hadoop.hive.serde2.JsonSerDe";
/// The JSON serde of hcatalog (older Hive, Spark).
pub const HCAT_JSON_SERDE: &str = "org.apache.hive.hcatalog.data.JsonSerDe";
/// Parquet classes.
pub const PARQUET_INPUT: &str = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat";
/// Parquet output format.
pub const PARQUET_OUTPUT: &str = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat";
/// Parquet serde.
pub const PARQUET_SERDE: &str = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe";
/// ORC input format.
pub const ORC_INPUT: &str = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat";
/// ORC output format.
pub const ORC_OUTPUT: &str = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat";
/// ORC serde.
pub const ORC_SERDE: &str = "org.apache.hadoop.hive.ql.io.orc.OrcSerde";
/// Avro input format.
pub const AVRO_INPUT: &str = "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat";
/// Avro output format.
pub const AVRO_OUTPUT: &str = "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat";
/// Avro serde.
pub const AVRO_SERDE: &str = "org.apache.hadoop.hive.serde2.avro.AvroSerDe";
/// SequenceFile input format.
pub const SEQUENCE_INPUT: &str = "org.apache.hadoop.mapred.SequenceFileInputFormat";
/// SequenceFile output format.
pub const SEQUENCE_OUTPUT: &str = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat";

/// A native format Apiary reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeFormat {
    /// Delimited text (LazySimpleSerDe).
    Text,
    /// OpenCSVSerde text.
    Csv,
    /// One JSON object per line.
    Json,
    /// Parquet.
    Parquet,
    /// ORC.
    Orc,
    /// Avro container files.
    Avro,
    /// SequenceFile (named, not readable).
    Sequence,
}

impl NativeFormat {
    /// The format of `STORED AS <name>`, if Hive knows the name.
    pub fn from_stored_as(name: &str) -> Option<NativeFormat> {
        Some(match name.to_ascii_uppercase().as_str() {
            "TEXTFILE" => NativeFormat::Text,
            "PARQUET" | "PARQUETFILE" => NativeFormat::Parquet,
            "ORC" | "ORCFILE" => NativeFormat::Orc,
            "AVRO" => NativeFormat::Avro,
            "JSONFILE" => NativeFormat::Json,
            "SEQUENCEFILE" => NativeFormat::Sequence,
            _ => return None,
        })
    }

    /// The format a storage descriptor describes (by serde, then by input format).
    pub fn of(sd: &StorageDescriptor) -> Option<NativeFormat> {
        match sd.serde.library.as_str() {
            PARQUET_SERDE => return Some(NativeFormat::Parquet),
            ORC_SERDE => return Some(NativeFormat::Orc),
            AVRO_SERDE => return Some(NativeFormat::Avro),
            JSON_SERDE | HCAT_JSON_SERDE => return Some(NativeFormat::Json),
            OPEN_CSV_SERDE => return Some(NativeFormat::Csv),
            _ => {}
        }
        match sd.input_format.as_deref() {
            Some(PARQUET_INPUT) => Some(NativeFormat::Parquet),
            Some(ORC_INPUT) => Some(NativeFormat::Orc),
            Some(AVRO_INPUT) => Some(NativeFormat::Avro),
            Some(SEQUENCE_INPUT) => Some(NativeFormat::Sequence),
            Some(TEXT_INPUT) | None => Some(NativeFormat::Text),
            Some(_) => None,
        }
    }

    /// Input format, output format and serde classes Hive records for this format.
    pub fn classes(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            NativeFormat::Text => (TEXT_INPUT, TEXT_OUTPUT, LAZY_SIMPLE_SERDE),
            NativeFormat::Csv => (TEXT_INPUT, TEXT_OUTPUT, OPEN_CSV_SERDE),
            NativeFormat::Json => (TEXT_INPUT, TEXT_OUTPUT, JSON_SERDE),
            NativeFormat::Parquet => (PARQUET_INPUT, PARQUET_OUTPUT, PARQUET_SERDE),
            NativeFormat::Orc => (ORC_INPUT, ORC_OUTPUT, ORC_SERDE),
            NativeFormat::Avro => (AVRO_INPUT, AVRO_OUTPUT, AVRO_SERDE),
            NativeFormat::Sequence => (SEQUENCE_INPUT, SEQUENCE_OUTPUT, LAZY_SIMPLE_SERDE),
        }
    }

    /// The `STORED AS` keyword SHOW CREATE TABLE prints for this format, if it has one.
    pub fn stored_as(&self) -> &'static str {
        match self {
            NativeFormat::Text | NativeFormat::Csv => "TEXTFILE",
            NativeFormat::Json => "JSONFILE",
            NativeFormat::Parquet => "PARQUET",
            NativeFormat::Orc => "ORC",
            NativeFormat::Avro => "AVRO",
            NativeFormat::Sequence => "SEQUENCEFILE",
        }
    }

    /// Extension of the data files Apiary writes in this format.
    pub fn extension(&self) -> &'static str {
        match self {
            NativeFormat::Parquet => ".parquet",
            NativeFormat::Orc => ".orc",
            NativeFormat::Avro => ".avro",
            NativeFormat::Json => ".json",
            NativeFormat::Csv => ".csv",
            NativeFormat::Text | NativeFormat::Sequence => "",
        }
    }
}

/// The key that turns off Base64 decoding of BINARY values read from text (Hive 4's; a table
/// or SerDe property, true by default).
pub const DECODE_BINARY_AS_BASE64: &str = "hive.serialization.decode.binary.as.base64";

/// Text layout of a LazySimpleSerDe table, from its serde parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextLayout {
    /// Field separator (`field.delim`, default `\u{1}`).
    pub field_delim: u8,
    /// Separator of array items and struct fields (`collection.delim`, default `\u{2}`).
    pub collection_delim: u8,
    /// Separator of a map key from its value (`mapkey.delim`, default `\u{3}`).
    pub map_key_delim: u8,
    /// Escape character (`escape.delim`), if any.
    pub escape: Option<u8>,
    /// Text of NULL (`serialization.null.format`, default `\N`).
    pub null: String,
    /// Whether BINARY text is read as Base64 when it is Base64
    /// (`hive.serialization.decode.binary.as.base64`, default true). BINARY is always written
    /// in Base64, as Hive writes it.
    pub binary_base64: bool,
}

impl TextLayout {
    /// The layout described by serde parameters (Hive's keys and defaults).
    pub fn from_params(params: &BTreeMap<String, String>) -> TextLayout {
        let delim = |key: &str, default: u8| {
            params
                .get(key)
                .and_then(|v| decode_delimiter(v))
                .unwrap_or(default)
        };
        let field = params
            .get("field.delim")
            .or_else(|| params.get("serialization.format"))
            .and_then(|v| decode_delimiter(v))
            .unwrap_or(1);
        TextLayout {
            field_delim: field,
            collection_delim: delim("collection.delim", 2),
            map_key_delim: delim("mapkey.delim", 3),
            escape: params.get("escape.delim").and_then(|v| decode_delimiter(v)),
            null: params
                .get("serialization.null.format")
                .cloned()
                .unwrap_or_else(|| "\\N".into()),
            binary_base64: params
                .get(DECODE_BINARY_AS_BASE64)
                .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")),
        }
    }

    /// The layout of a table: its SerDe parameters, and the table properties Hive's SerDe
    /// also reads (the table's wins where both are set, as in Hive's merged properties).
    pub fn of_table(table: &apiary_metastore::Table) -> TextLayout {
        let mut layout = Self::from_params(&table.sd.serde.parameters);
        if let Some(v) = table.parameters.get(DECODE_BINARY_AS_BASE64) {
            layout.binary_base64 = !v.trim().eq_ignore_ascii_case("false");
        }
        layout
    }
}

/// A delimiter as Hive reads it: a number is a byte value (`"1"` is `\u{1}`, `"44"` is `,`),
/// anything else stands for its first character.
pub fn decode_delimiter(v: &str) -> Option<u8> {
    if let Ok(n) = v.trim().parse::<i8>() {
        return Some(n as u8);
    }
    v.bytes().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_decode_as_hive_stores_them() {
        assert_eq!(decode_delimiter(","), Some(b','));
        assert_eq!(decode_delimiter("\t"), Some(b'\t'));
        assert_eq!(decode_delimiter("1"), Some(1));
        assert_eq!(decode_delimiter("44"), Some(b','));
        let l = TextLayout::from_params(&BTreeMap::new());
        assert_eq!((l.field_delim, l.null.as_str()), (1, "\\N"));
    }
}
