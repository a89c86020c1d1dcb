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
use object_store::{ObjectStore, ObjectStoreExt};

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

    // Whole files: a line is never split between two readers.
    fn supports_repartitioning(&self) -> bool {
        false
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
        let lines = Lines {
            split: self.split.clone(),
            fields: self.file_schema.fields().len(),
            wanted: self.file_indices.clone(),
            schema,
        };
        let batch_size = self.batch_size.max(1);
        let store = Arc::clone(&self.store);
        let location = file.object_meta.location;
        Ok(async move {
            let input = store.get(&location).await?.into_stream();
            // (bytes of a line not yet ended, whether the file has ended)
            let state = (input, Vec::<u8>::new(), false);
            let batches = futures::stream::unfold(state, move |(mut input, mut pending, done)| {
                let lines = lines.clone();
                async move {
                    if done {
                        return None;
                    }
                    // Read until a batch's worth of whole lines is held, or the file ends.
                    let mut ended = false;
                    let mut held = newlines(&pending);
                    while held < batch_size {
                        match input.next().await {
                            Some(Ok(chunk)) => {
                                held += newlines(&chunk);
                                pending.extend_from_slice(&chunk);
                            }
                            Some(Err(e)) => {
                                return Some((
                                    Err(DataFusionError::from(e)),
                                    (input, pending, true),
                                ))
                            }
                            None => {
                                ended = true;
                                break;
                            }
                        }
                    }
                    let cut = if ended {
                        pending.len()
                    } else {
                        pending
                            .iter()
                            .rposition(|b| *b == b'\n')
                            .map_or(0, |i| i + 1)
                    };
                    let rest = pending.split_off(cut);
                    let batch = lines.batch(&pending);
                    Some((batch, (input, rest, ended)))
                }
            });
            Ok(batches.boxed())
        }
        .boxed())
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
        let mut columns: Vec<arrow::array::StringBuilder> = self
            .wanted
            .iter()
            .map(|_| arrow::array::StringBuilder::new())
            .collect();
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        if !text.is_empty() {
            for line in body.split(|b| *b == b'\n') {
                let fields = self.fields_of(line);
                for (column, i) in columns.iter_mut().zip(&self.wanted) {
                    match fields.get(*i) {
                        Some(f) if f.as_slice() != self.split.null.as_bytes() => {
                            column.append_value(String::from_utf8_lossy(f))
                        }
                        _ => column.append_null(),
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
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(if text.is_empty() {
                0
            } else {
                body.split(|b| *b == b'\n').count()
            })),
        )?)
    }

    /// The fields of one line, unescaped (the escape character makes the next byte plain);
    /// fields past the table's columns are left unread by the caller, as Hive ignores them.
    fn fields_of(&self, line: &[u8]) -> Vec<Vec<u8>> {
        let mut fields = Vec::with_capacity(self.fields);
        let mut field = Vec::new();
        let mut bytes = line.iter();
        while let Some(&b) = bytes.next() {
            if Some(b) == self.split.escape {
                if let Some(&next) = bytes.next() {
                    field.push(next);
                }
            } else if b == self.split.delimiter {
                fields.push(std::mem::take(&mut field));
            } else {
                field.push(b);
            }
        }
        fields.push(field);
        fields
    }
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

    #[test]
    fn escaped_delimiters_and_chosen_fields() {
        let l = lines(2, vec![1], Some(b'\\'));
        let batch = l.batch(b"a\\\x01b\x01c\\\\d\n").unwrap();
        assert_eq!(cells(&batch), [vec![Some("c\\d".to_string())]]);
    }
}
