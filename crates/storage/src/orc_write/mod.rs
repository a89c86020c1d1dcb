//! A self-contained ORC file writer for Arrow record batches, written for Hive, Spark and other
//! Java ORC readers to read: ORC file format 0.12, no compression, every column in the DIRECT
//! encoding (run-length encoding version 1).
//!
//! Hive types written, from Arrow types:
//!
//! | Arrow | ORC |
//! | --- | --- |
//! | Boolean | boolean |
//! | Int8, Int16, Int32, Int64 | tinyint, smallint, int, bigint |
//! | Float32, Float64 | float, double |
//! | Utf8, LargeUtf8, Utf8View | string |
//! | Binary, LargeBinary, BinaryView | binary |
//! | Date32 | date |
//! | Timestamp(any unit, no time zone) | timestamp (wall clock, writer time zone UTC) |
//! | Decimal32/64/128(p, s), 1 <= p <= 38, 0 <= s <= p | decimal(p, s) |
//! | List, LargeList | array |
//! | Map | map |
//! | Struct | struct |
//!
//! [`OrcWriter::try_new`] refuses any other type, naming the column. The file has no row index
//! (no `rowIndexStride`) and no bloom filters; it has column statistics per stripe and per file,
//! and says its dates and timestamps are in the proleptic Gregorian calendar (as Arrow's are).

mod column;
mod error;

pub use error::OrcWriteError;

mod encode;
mod stats;
#[cfg(test)]
mod tests;

use std::io::Write;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use orc_rust::proto;
use prost::Message;

use column::{ColumnWriter, StreamOut};

/// Buffered stream bytes past which a stripe is written out.
pub const DEFAULT_STRIPE_SIZE: usize = 64 * 1024 * 1024;

/// Rows written between two looks at the stripe size, within a batch.
const ROWS_PER_CHECK: usize = 4096;

/// The bytes at the start of every ORC file, and its PostScript's magic.
const MAGIC: &str = "ORC";

/// The ORC file format version written: 0.12 (Hive 0.12 and later read it).
const FILE_VERSION: [u32; 2] = [0, 12];

/// The footer's `writer` code. Writers register a code with the ORC project (0 is ORC Java,
/// 1 ORC C++, ...); Apiary has none, so it writes a code that no writer has, which readers treat
/// as an unknown writer with every known fix (Java's `WriterImplementation.UNKNOWN`).
const WRITER_CODE: u32 = u32::MAX;

/// The PostScript's `writerVersion`: 6, the first version a writer other than ORC Java may use.
const WRITER_VERSION: u32 = 6;

/// The compression block size recorded in the PostScript (unused without compression, but set as
/// ORC's writers set it).
const COMPRESSION_BLOCK_SIZE: u64 = 256 * 1024;

/// The time zone recorded in every stripe: timestamps are written as UTC wall clock.
const WRITER_TIMEZONE: &str = "UTC";

/// Writes Arrow record batches to an ORC file (see the [module](self) documentation).
///
/// The file is complete only once [`close`](Self::close) has written its tail; stripes are
/// written out as they fill.
pub struct OrcWriter<W: Write> {
    out: W,
    schema: SchemaRef,
    /// The ORC types, pre-order; type 0 is the root struct.
    types: Vec<proto::Type>,
    /// The writers of the schema's columns (the root struct's children).
    columns: Vec<ColumnWriter>,
    /// Bytes written to `out` so far.
    offset: u64,
    stripes: Vec<proto::StripeInformation>,
    stripe_stats: Vec<proto::StripeStatistics>,
    stripe_rows: u64,
    total_rows: u64,
    stripe_size: usize,
    /// Set when a call failed part-way.
    failed: bool,
}

impl<W: Write> OrcWriter<W> {
    /// Starts an ORC file with `schema` on `out`, writing its 3-byte header. Fails, naming the
    /// column, when a column's type cannot be written.
    pub fn try_new(mut out: W, schema: SchemaRef) -> Result<Self, OrcWriteError> {
        let mut types = vec![proto::Type {
            kind: Some(proto::r#type::Kind::Struct as i32),
            ..Default::default()
        }];
        let mut columns = Vec::with_capacity(schema.fields().len());
        for field in schema.fields() {
            columns.push(ColumnWriter::build(
                field.name().clone(),
                field.data_type(),
                &mut types,
            )?);
        }
        types[0].field_names = schema.fields().iter().map(|f| f.name().clone()).collect();
        types[0].subtypes = columns.iter().map(ColumnWriter::id).collect();
        out.write_all(MAGIC.as_bytes())?;
        Ok(OrcWriter {
            out,
            schema,
            types,
            columns,
            offset: MAGIC.len() as u64,
            stripes: Vec::new(),
            stripe_stats: Vec::new(),
            stripe_rows: 0,
            total_rows: 0,
            stripe_size: DEFAULT_STRIPE_SIZE,
            failed: false,
        })
    }

    /// Sets the buffered size past which a stripe is written out (default
    /// [`DEFAULT_STRIPE_SIZE`]).
    pub fn with_stripe_size(mut self, bytes: usize) -> Self {
        self.stripe_size = bytes.max(1);
        self
    }

    /// The schema the file is written with.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Appends the rows of `batch`, which must have the writer's schema (field names may
    /// differ; types may differ only in nested field names and nullability).
    ///
    /// A batch of another schema is refused and changes nothing. A value ORC cannot store (a
    /// decimal wider than its precision, a timestamp out of range or in ORC-763's second) or an
    /// I/O error fails the writer for good: later calls return [`OrcWriteError::Failed`].
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), OrcWriteError> {
        if self.failed {
            return Err(OrcWriteError::Failed);
        }
        if batch.num_columns() != self.columns.len() {
            return Err(OrcWriteError::SchemaMismatch(format!(
                "{} columns, expected {}",
                batch.num_columns(),
                self.columns.len()
            )));
        }
        for (column, field) in batch.columns().iter().zip(self.schema.fields()) {
            if !column.data_type().equals_datatype(field.data_type()) {
                return Err(OrcWriteError::SchemaMismatch(format!(
                    "column {} is {}, expected {}",
                    field.name(),
                    column.data_type(),
                    field.data_type()
                )));
            }
        }
        self.failed = true;
        self.write_rows(batch)?;
        self.failed = false;
        Ok(())
    }

    fn write_rows(&mut self, batch: &RecordBatch) -> Result<(), OrcWriteError> {
        let rows = batch.num_rows();
        let mut start = 0;
        while start < rows {
            let end = rows.min(start + ROWS_PER_CHECK);
            let range = start..end;
            for (writer, column) in self.columns.iter_mut().zip(batch.columns()) {
                writer.write(column.as_ref(), std::slice::from_ref(&range))?;
            }
            self.stripe_rows += (end - start) as u64;
            start = end;
            if self.buffered() >= self.stripe_size {
                self.flush_stripe()?;
            }
        }
        Ok(())
    }

    /// Bytes buffered for the stripe under way.
    fn buffered(&self) -> usize {
        self.columns.iter().map(|c| c.buffered()).sum()
    }

    /// Writes the stripe under way, if it has rows.
    fn flush_stripe(&mut self) -> Result<(), OrcWriteError> {
        if self.stripe_rows == 0 {
            return Ok(());
        }
        let mut streams: Vec<StreamOut> = Vec::new();
        let mut encodings = vec![proto::ColumnEncoding {
            kind: Some(proto::column_encoding::Kind::Direct as i32),
            ..Default::default()
        }];
        let mut stats = vec![root_stats(self.stripe_rows)];
        for column in &mut self.columns {
            column.finish_stripe(&mut streams, &mut encodings, &mut stats);
        }
        let mut data_length = 0u64;
        let mut directory = Vec::with_capacity(streams.len());
        // An empty stream (the values of a column whose values in this stripe are all NULL)
        // is left out: readers take a missing stream as empty, and DataFusion's ORC reader
        // cannot fetch a range of no bytes.
        for stream in streams.iter().filter(|s| !s.bytes.is_empty()) {
            self.out.write_all(&stream.bytes)?;
            data_length += stream.bytes.len() as u64;
            directory.push(proto::Stream {
                kind: Some(stream.kind as i32),
                column: Some(stream.column),
                length: Some(stream.bytes.len() as u64),
            });
        }
        drop(streams);
        let footer = proto::StripeFooter {
            streams: directory,
            columns: encodings,
            writer_timezone: Some(WRITER_TIMEZONE.to_string()),
            ..Default::default()
        }
        .encode_to_vec();
        self.out.write_all(&footer)?;
        self.stripes.push(proto::StripeInformation {
            offset: Some(self.offset),
            index_length: Some(0),
            data_length: Some(data_length),
            footer_length: Some(footer.len() as u64),
            number_of_rows: Some(self.stripe_rows),
            ..Default::default()
        });
        self.stripe_stats
            .push(proto::StripeStatistics { col_stats: stats });
        self.offset += data_length + footer.len() as u64;
        self.total_rows += self.stripe_rows;
        self.stripe_rows = 0;
        Ok(())
    }

    /// Writes the last stripe and the file's tail (stripe statistics, footer, PostScript), and
    /// returns the output.
    pub fn close(mut self) -> Result<W, OrcWriteError> {
        if self.failed {
            return Err(OrcWriteError::Failed);
        }
        self.flush_stripe()?;
        let metadata = proto::Metadata {
            stripe_stats: std::mem::take(&mut self.stripe_stats),
        }
        .encode_to_vec();
        self.out.write_all(&metadata)?;

        let mut statistics = vec![root_stats(self.total_rows)];
        for column in &self.columns {
            column.file_stats(&mut statistics);
        }
        let footer = proto::Footer {
            header_length: Some(MAGIC.len() as u64),
            content_length: Some(self.offset),
            stripes: std::mem::take(&mut self.stripes),
            types: std::mem::take(&mut self.types),
            number_of_rows: Some(self.total_rows),
            statistics,
            // No row index: left unset, which readers take as 0 (none).
            row_index_stride: None,
            writer: Some(WRITER_CODE),
            calendar: Some(proto::CalendarKind::ProlepticGregorian as i32),
            software_version: Some(concat!("Apiary ", env!("CARGO_PKG_VERSION")).to_string()),
            ..Default::default()
        }
        .encode_to_vec();
        self.out.write_all(&footer)?;

        let postscript = proto::PostScript {
            footer_length: Some(footer.len() as u64),
            compression: Some(proto::CompressionKind::None as i32),
            compression_block_size: Some(COMPRESSION_BLOCK_SIZE),
            version: FILE_VERSION.to_vec(),
            metadata_length: Some(metadata.len() as u64),
            writer_version: Some(WRITER_VERSION),
            magic: Some(MAGIC.to_string()),
            ..Default::default()
        }
        .encode_to_vec();
        // The PostScript is a few dozen bytes: its length always fits the last byte.
        let length = u8::try_from(postscript.len()).map_err(|_| {
            OrcWriteError::Io(std::io::Error::other("the ORC PostScript is too long"))
        })?;
        self.out.write_all(&postscript)?;
        self.out.write_all(&[length])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The root struct's statistics: one value per row, never null.
fn root_stats(rows: u64) -> proto::ColumnStatistics {
    proto::ColumnStatistics {
        number_of_values: Some(rows),
        has_null: Some(false),
        ..Default::default()
    }
}
