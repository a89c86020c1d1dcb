//! The file source of TEXTFILE tables: each line a row, fields split at the table's field
//! delimiter (its escape character makes the next byte plain), every field read as text.
//! Only the table's NULL marker (`\N` by default) and a field the line lacks (a row written
//! before ADD COLUMNS) are NULL; an empty field is the empty string, as LazySimpleSerDe
//! reads it. (DataFusion's CSV source reads every empty field as NULL: its reader takes no
//! NULL pattern, and pads short rows with empty fields.) The fields are then decoded to the
//! columns' types by the scan (`native.rs`).

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::PhysicalExpr;
use futures::{FutureExt, StreamExt};
use object_store::{GetResultPayload, ObjectStore, ObjectStoreExt};

/// How a text file's lines split into fields.
#[derive(Debug, Clone)]
pub(crate) struct TextSplit {
    /// The field delimiter.
    pub(crate) delimiter: u8,
    /// The escape character, if the table has one.
    pub(crate) escape: Option<u8>,
    /// The NULL marker, as written in the file.
    pub(crate) null: String,
}

/// Reads a text table's files as text fields (see the module's text).
#[derive(Debug, Clone)]
pub(crate) struct TextSource {
    table_schema: TableSchema,
    split: TextSplit,
    batch_size: usize,
    metrics: ExecutionPlanMetricsSet,
}

impl TextSource {
    /// A source of `table_schema`'s files (its file columns all text), split by `split`.
    pub(crate) fn new(table_schema: TableSchema, split: TextSplit) -> Self {
        Self {
            table_schema,
            split,
            batch_size: 8192,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl FileSource for TextSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        _base_config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        // Every file column is read; the partition columns come from each file's values.
        let projection = SplitProjection::unprojected(&self.table_schema);
        let file_schema = Arc::clone(self.table_schema.file_schema());
        let opener = Arc::new(TextOpener {
            store: object_store,
            file_schema: Arc::clone(&file_schema),
            file_indices: projection.file_indices.clone(),
            split: self.split.clone(),
            batch_size: self.batch_size,
        });
        ProjectionOpener::try_new(projection, opener, &file_schema)
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.batch_size = batch_size;
        Arc::new(source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "text"
    }

    // No expressions: every file column is read as it is.
    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }
}

/// Opens one text file and splits its lines as they arrive.
struct TextOpener {
    store: Arc<dyn ObjectStore>,
    /// The file's columns, all text.
    file_schema: SchemaRef,
    /// The columns read.
    file_indices: Vec<usize>,
    split: TextSplit,
    batch_size: usize,
}

impl FileOpener for TextOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let schema = Arc::new(self.file_schema.project(&self.file_indices)?);
        let mut chunker = Chunker {
            lines: Lines {
                split: self.split.clone(),
                fields: self.file_schema.fields().len(),
                wanted: self.file_indices.clone(),
                schema,
            },
            pending: Vec::new(),
            held: 0,
            batch_size: self.batch_size.max(1),
            ended: false,
            offset: 0,
            skip_from: None,
            end: None,
        };
        // A range of the file (the file split between readers): its lines are those whose
        // first byte is in it.
        if let Some(range) = &file.range {
            let start = u64::try_from(range.start).unwrap_or(0);
            let end = u64::try_from(range.end).unwrap_or(u64::MAX);
            if start > 0 {
                chunker.offset = start - 1;
                chunker.skip_from = Some(start - 1);
            }
            chunker.end = Some(end);
        }
        let read_from = chunker.offset;
        let store = Arc::clone(&self.store);
        let location = file.object_meta.location;
        Ok(async move {
            let got = store.get(&location).await?;
            match got.payload {
                // A local file is read as the CSV source reads one, without a task per chunk.
                GetResultPayload::File(mut file, _) => {
                    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(read_from))?;
                    let mut buffer = vec![0u8; READ_SIZE];
                    let batches = std::iter::from_fn(move || loop {
                        if chunker.ended {
                            return None;
                        }
                        match std::io::Read::read(&mut file, &mut buffer) {
                            Ok(0) => return chunker.finish(),
                            Ok(n) => {
                                if let Some(batch) = chunker.push(&buffer[..n]) {
                                    return Some(batch);
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(e) => {
                                chunker.ended = true;
                                return Some(Err(DataFusionError::from(e)));
                            }
                        }
                    });
                    Ok(futures::stream::iter(batches).boxed())
                }
                GetResultPayload::Stream(input) => {
                    // (The stream starts at the object's first byte.)
                    chunker.offset = 0;
                    let batches = futures::stream::unfold(
                        (input, chunker),
                        |(mut input, mut chunker)| async move {
                            loop {
                                if chunker.ended {
                                    return None;
                                }
                                let batch = match input.next().await {
                                    None => chunker.finish(),
                                    Some(Ok(chunk)) => chunker.push(&chunk),
                                    Some(Err(e)) => {
                                        chunker.ended = true;
                                        Some(Err(DataFusionError::from(e)))
                                    }
                                };
                                if let Some(batch) = batch {
                                    return Some((batch, (input, chunker)));
                                }
                            }
                        },
                    );
                    Ok(batches.boxed())
                }
            }
        }
        .boxed())
    }
}

/// How much of a local file is read at a time.
const READ_SIZE: usize = 1 << 20;

/// Gathers a file's bytes into batches of whole lines.
struct Chunker {
    lines: Lines,
    /// Bytes read and not yet in a batch.
    pending: Vec<u8>,
    /// The line ends among them.
    held: usize,
    batch_size: usize,
    /// Whether the file's last batch has been given.
    ended: bool,
    /// The position in the file of the next byte pushed.
    offset: u64,
    /// Skip to just past the first line end at or after this position (a range's start).
    skip_from: Option<u64>,
    /// The last line is the one holding the byte before this position (a range's end).
    end: Option<u64>,
}

impl Chunker {
    /// Takes `chunk`; a batch of the whole lines held once they are a batch's worth.
    fn push(&mut self, chunk: &[u8]) -> Option<Result<arrow::array::RecordBatch>> {
        let mut chunk = chunk;
        let mut at = self.offset;
        self.offset += chunk.len() as u64;
        if let Some(from) = self.skip_from {
            let from = usize::try_from(from.saturating_sub(at)).unwrap_or(usize::MAX);
            let line_end = chunk
                .get(from..)
                .and_then(|c| c.iter().position(|b| *b == b'\n'));
            // (No line end yet: the whole chunk is before the range's first line.)
            let i = line_end?;
            chunk = &chunk[from + i + 1..];
            at += (from + i + 1) as u64;
            self.skip_from = None;
        }
        let mut last = false;
        if let Some(end) = self.end {
            // A line starting at or past the range's end is the next range's.
            let at_line_start = self.pending.last().is_none_or(|b| *b == b'\n');
            if at >= end && at_line_start {
                return self.finish();
            }
            let from =
                usize::try_from(end.saturating_sub(1).saturating_sub(at)).unwrap_or(usize::MAX);
            if let Some(i) = chunk
                .get(from..)
                .and_then(|c| c.iter().position(|b| *b == b'\n'))
            {
                chunk = &chunk[..from + i + 1];
                last = true;
            }
        }
        self.held += newlines(chunk);
        self.pending.extend_from_slice(chunk);
        if last {
            return self.finish();
        }
        if self.held < self.batch_size {
            return None;
        }
        let cut = self
            .pending
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let rest = self.pending.split_off(cut);
        let whole = std::mem::replace(&mut self.pending, rest);
        self.held = 0;
        Some(self.lines.batch(&whole))
    }

    /// At the end of the file: the batch of what is left (a last line without its line
    /// end included), if anything is.
    fn finish(&mut self) -> Option<Result<arrow::array::RecordBatch>> {
        self.ended = true;
        if self.pending.is_empty() {
            return None;
        }
        let whole = std::mem::take(&mut self.pending);
        Some(self.lines.batch(&whole))
    }
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// Splits lines into the wanted fields of a table's text files.
#[derive(Clone)]
struct Lines {
    split: TextSplit,
    /// How many fields a line has in the table.
    fields: usize,
    /// The fields read, in the order of `schema`.
    wanted: Vec<usize>,
    schema: SchemaRef,
}

impl Lines {
    /// The rows of `text` (whole lines; the last may lack its line end): a field the line
    /// lacks (written before ADD COLUMNS) and the NULL marker are NULL, an empty field is ''.
    fn batch(&self, text: &[u8]) -> Result<arrow::array::RecordBatch> {
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        let rows = if text.is_empty() {
            0
        } else {
            newlines(body) + 1
        };
        let width = self.wanted.len().max(1);
        let mut columns: Vec<arrow::array::StringBuilder> = self
            .wanted
            .iter()
            .map(|_| arrow::array::StringBuilder::with_capacity(rows, text.len() / width))
            .collect();
        // Where each of the table's fields goes among the columns read.
        let mut slot: Vec<Option<usize>> = vec![None; self.fields];
        for (column, field) in self.wanted.iter().enumerate() {
            if let Some(s) = slot.get_mut(*field) {
                *s = Some(column);
            }
        }
        let null = self.split.null.as_bytes();
        let mut unescaped = Vec::new();
        let mut filled = vec![false; self.wanted.len()];
        if rows > 0 {
            for line in body.split(|b| *b == b'\n') {
                filled.fill(false);
                let mut put = |field: usize, raw: &[u8]| {
                    let Some(column) = slot.get(field).copied().flatten() else {
                        return;
                    };
                    filled[column] = true;
                    if raw == null {
                        columns[column].append_null();
                    } else {
                        match std::str::from_utf8(raw) {
                            Ok(text) => columns[column].append_value(text),
                            Err(_) => columns[column].append_value(String::from_utf8_lossy(raw)),
                        }
                    }
                };
                match self.split.escape {
                    Some(escape) if line.contains(&escape) => {
                        for (field, raw) in
                            escaped_fields(line, self.split.delimiter, escape, &mut unescaped)
                                .into_iter()
                                .enumerate()
                        {
                            put(field, &raw);
                        }
                    }
                    _ => {
                        for (field, raw) in line.split(|b| *b == self.split.delimiter).enumerate() {
                            put(field, raw);
                        }
                    }
                }
                for (column, done) in filled.iter().enumerate() {
                    if !done {
                        columns[column].append_null();
                    }
                }
            }
        }
        let arrays: Vec<arrow::array::ArrayRef> = columns
            .into_iter()
            .map(|mut c| Arc::new(c.finish()) as arrow::array::ArrayRef)
            .collect();
        Ok(arrow::array::RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            arrays,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }
}

/// The fields of a line holding the escape character: it makes the next byte plain (an
/// escaped delimiter is part of the field).
fn escaped_fields(line: &[u8], delimiter: u8, escape: u8, buffer: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut fields = Vec::new();
    buffer.clear();
    let mut bytes = line.iter();
    while let Some(&b) = bytes.next() {
        if b == escape {
            if let Some(&next) = bytes.next() {
                buffer.push(next);
            }
        } else if b == delimiter {
            fields.push(std::mem::take(buffer));
        } else {
            buffer.push(b);
        }
    }
    fields.push(std::mem::take(buffer));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{DataType, Field, Schema};

    fn lines(fields: usize, wanted: Vec<usize>, escape: Option<u8>) -> Lines {
        let schema = Schema::new(
            wanted
                .iter()
                .map(|i| Field::new(format!("c{i}"), DataType::Utf8, true))
                .collect::<Vec<_>>(),
        );
        Lines {
            split: TextSplit {
                delimiter: 1,
                escape,
                null: "\\N".into(),
            },
            fields,
            wanted,
            schema: Arc::new(schema),
        }
    }

    fn cells(batch: &arrow::array::RecordBatch) -> Vec<Vec<Option<String>>> {
        (0..batch.num_rows())
            .map(|r| {
                batch
                    .columns()
                    .iter()
                    .map(|c| (!c.is_null(r)).then(|| c.as_string::<i32>().value(r).to_string()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn empty_fields_are_text_and_missing_fields_null() {
        let l = lines(3, vec![0, 1, 2], None);
        let batch = l.batch(b"\x01x\x01\\N\ny\n\n").unwrap();
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            cells(&batch),
            [
                vec![s(""), s("x"), None],
                vec![s("y"), None, None],
                vec![s(""), None, None],
            ]
        );
        // The last line may lack its line end; extra fields are ignored.
        let batch = l.batch(b"a\x01b\x01c\x01d").unwrap();
        assert_eq!(cells(&batch), [vec![s("a"), s("b"), s("c")]]);
        assert_eq!(l.batch(b"").unwrap().num_rows(), 0);
    }

    /// The rows a reader of `range` of `text` gives, fed in chunks of `chunk` bytes.
    fn rows_of_range(text: &[u8], range: (u64, u64), chunk: usize) -> Vec<String> {
        let mut chunker = Chunker {
            lines: lines(1, vec![0], None),
            pending: Vec::new(),
            held: 0,
            batch_size: 2,
            ended: false,
            offset: range.0.saturating_sub(1),
            skip_from: (range.0 > 0).then(|| range.0 - 1),
            end: Some(range.1),
        };
        let mut batches = vec![];
        let from = usize::try_from(chunker.offset).unwrap();
        for piece in text[from..].chunks(chunk) {
            if chunker.ended {
                break;
            }
            batches.extend(chunker.push(piece));
        }
        if !chunker.ended {
            batches.extend(chunker.finish());
        }
        batches
            .into_iter()
            .flat_map(|b| {
                let b = b.unwrap();
                let c = b.column(0).as_string::<i32>().clone();
                (0..c.len())
                    .map(move |i| c.value(i).to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn ranges_of_a_file_give_each_line_once() {
        let text = b"alpha\nbe\n\ngamma delta\nz\nlast";
        let all: Vec<String> = ["alpha", "be", "", "gamma delta", "z", "last"]
            .map(String::from)
            .to_vec();
        let len = text.len() as u64;
        for cut in 0..=len {
            for chunk in [1, 3, 64] {
                let mut got = rows_of_range(text, (0, cut), chunk);
                got.extend(rows_of_range(text, (cut, len), chunk));
                assert_eq!(got, all, "cut at {cut}, chunks of {chunk}");
            }
        }
    }

    #[test]
    fn escaped_delimiters_and_chosen_fields() {
        let l = lines(2, vec![1], Some(b'\\'));
        let batch = l.batch(b"a\\\x01b\x01c\\\\d\n").unwrap();
        assert_eq!(cells(&batch), [vec![Some("c\\d".to_string())]]);
    }
}
