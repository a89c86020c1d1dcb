//! Writing native tables atomically: rows go to files in a hidden staging directory under the
//! table's location (readers skip hidden names). When every file is complete, a commit
//! manifest naming each move is written there durably: that is the point of no return. The
//! caller registers new partitions, then the files are moved into their partition
//! directories. After a crash, a staging directory without a manifest is discarded and one
//! with a manifest is rolled forward ([`pending_commit`], [`CommitManifest::apply`]), so an
//! INSERT is either wholly visible or not at all.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apiary_metastore::{escape_path_value, Table};
use arrow::array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;

use crate::format::{NativeFormat, TextLayout};
use crate::native::{column_field, is_data_file};
use crate::types::HiveType;
use crate::StorageError;

/// Hive's name for a NULL or empty partition value.
pub const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// What an INSERT writes: each partition key with its static value, or `None` for a dynamic
/// one taken from the trailing columns of the rows.
#[derive(Debug, Clone, Default)]
pub struct InsertSpec {
    /// One entry per partition key, in the table's order.
    pub partition: Vec<Option<String>>,
    /// INSERT OVERWRITE: replace the data of every partition written (or the whole table).
    pub overwrite: bool,
    /// The table folder Apiary owns (see [`crate::ownership`]): an OVERWRITE clears only
    /// target folders inside it, and is refused for any other target.
    pub owned_root: Option<PathBuf>,
    /// The writing server's tag, part of the staging folder's name.
    pub server_tag: String,
}

/// The file holding a staging directory's commit decision.
const MANIFEST: &str = "_commit.json";

/// One partition directory an INSERT writes to.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CommitTarget {
    /// The partition's values (empty for an unpartitioned table).
    pub values: Vec<String>,
    /// Whether the partition is new to the metastore.
    pub new: bool,
    /// The directory the file goes to.
    pub dir: PathBuf,
    /// The staged file moved there, if any rows went to this partition.
    pub file: Option<PathBuf>,
}

/// What an INSERT commits, written before the first move so a crash can be rolled forward.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CommitManifest {
    /// The table's database.
    pub database: String,
    /// The table's name.
    pub table: String,
    /// INSERT OVERWRITE: each target directory keeps only the file moved there.
    pub overwrite: bool,
    /// Rows written.
    pub rows: u64,
    /// Each partition directory written.
    pub targets: Vec<CommitTarget>,
}

impl CommitManifest {
    /// Partitions the metastore must learn before the files move.
    pub fn new_partitions(&self) -> Vec<Vec<String>> {
        self.targets
            .iter()
            .filter(|t| t.new)
            .map(|t| t.values.clone())
            .collect()
    }

    /// Moves the staged files into place. Idempotent, so recovery can repeat it after a
    /// crash part way: an OVERWRITE removes every data file of a target directory but the
    /// one this commit puts there, and a file already moved is not moved again.
    pub fn apply(&self) -> Result<usize, StorageError> {
        let mut files = 0;
        for t in &self.targets {
            std::fs::create_dir_all(&t.dir).map_err(|e| StorageError::io(&t.dir, e))?;
            let name = t
                .file
                .as_ref()
                .and_then(|f| f.file_name())
                .map(|n| n.to_owned());
            if self.overwrite {
                clear_data_files_except(&t.dir, name.as_deref())?;
            }
            if let (Some(from), Some(name)) = (&t.file, &name) {
                let target = t.dir.join(name);
                if from.exists() {
                    std::fs::rename(from, &target).map_err(|e| StorageError::io(&target, e))?;
                }
                files += 1;
            }
            apiary_failpoints::reach_blocking("insert.between_moves")
                .map_err(|e| StorageError::Write(e.to_string()))?;
        }
        Ok(files)
    }
}

/// The commit manifest of a staging directory left by a crash: `Some` means the INSERT had
/// decided to commit and must be rolled forward; `None` means it is to be discarded.
pub fn pending_commit(staging: &Path) -> Option<CommitManifest> {
    let text = std::fs::read(staging.join(MANIFEST)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// A staging directory's name prefix; such directories are hidden from readers. The full
/// name is `<prefix><server tag>-<id>`, so each server recovers only its own.
pub const STAGING_PREFIX: &str = ".apiary-staging-";

/// Whether a folder called `name` is a staging folder of the server tagged `tag`. A folder
/// left by a version before tags (`<prefix><uuid>`) counts as every server's.
pub fn is_own_staging(name: &str, tag: &str) -> bool {
    let Some(rest) = name.strip_prefix(STAGING_PREFIX) else {
        return false;
    };
    rest.strip_prefix(tag).is_some_and(|r| r.starts_with('-'))
        || uuid::Uuid::try_parse(rest).is_ok_and(|_| rest.len() == 36)
}

/// Rows written and staged, with the decision to commit recorded; dropping it without
/// [`StagedInsert::commit`] discards the staging directory.
pub struct StagedInsert {
    /// What will be committed.
    pub manifest: CommitManifest,
    _cleanup: StagingCleanup,
}

impl StagedInsert {
    /// Moves the files into place; returns how many.
    pub fn commit(self) -> Result<usize, StorageError> {
        self.manifest.apply()
    }
}

enum FileWriter {
    Parquet(Box<ArrowWriter<File>>),
    Text(Box<arrow::csv::Writer<File>>, TextLayout),
    Json(arrow::json::LineDelimitedWriter<File>),
    /// ORC, through the storage crate's own writer (every Hive type, DECIMAL and complex ones
    /// included; see [`crate::orc_write`]).
    Orc(Box<crate::orc_write::OrcWriter<File>>),
    Avro(Box<arrow_avro::writer::AvroWriter<File>>),
}

impl FileWriter {
    fn open(
        format: NativeFormat,
        table: &Table,
        path: &Path,
        schema: &SchemaRef,
    ) -> Result<Self, StorageError> {
        let file = File::create(path).map_err(|e| StorageError::io(path, e))?;
        Ok(match format {
            NativeFormat::Parquet => FileWriter::Parquet(Box::new(
                ArrowWriter::try_new(file, schema.clone(), None)
                    .map_err(|e| StorageError::Write(e.to_string()))?,
            )),
            NativeFormat::Text | NativeFormat::Csv => {
                let layout = TextLayout::from_params(&table.sd.serde.parameters);
                let csv = format == NativeFormat::Csv;
                let builder = arrow::csv::WriterBuilder::new()
                    .with_header(false)
                    .with_delimiter(if csv { b',' } else { layout.field_delim })
                    .with_null(if csv { String::new() } else { layout.null })
                    .with_quote_style(if csv {
                        arrow::csv::QuoteStyle::Necessary
                    } else {
                        arrow::csv::QuoteStyle::Never
                    })
                    .with_timestamp_format("%Y-%m-%d %H:%M:%S%.f".into())
                    .with_datetime_format("%Y-%m-%d %H:%M:%S%.f".into());
                let layout = TextLayout::of_table(table);
                // Hive writes BINARY as Base64; a table that reads its text as it is
                // (hive.serialization.decode.binary.as.base64=false) would read back other
                // bytes than were written.
                if let Some(f) = schema.fields().iter().find(|f| {
                    !csv && !layout.binary_base64
                        && matches!(
                            f.data_type(),
                            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                        )
                }) {
                    return Err(StorageError::Unsupported(format!(
                        "writing BINARY column {} to a table with {}=false (its text is read as it is, and BINARY is written in Base64)",
                        f.name(),
                        crate::text::DECODE_BINARY_AS_BASE64
                    )));
                }
                FileWriter::Text(Box::new(builder.build(file)), layout)
            }
            NativeFormat::Json => FileWriter::Json(arrow::json::LineDelimitedWriter::new(file)),
            NativeFormat::Orc => FileWriter::Orc(Box::new(
                crate::orc_write::OrcWriter::try_new(file, schema.clone())
                    .map_err(|e| StorageError::Write(e.to_string()))?,
            )),
            NativeFormat::Avro => FileWriter::Avro(Box::new(
                arrow_avro::writer::AvroWriter::new(file, avro_schema(schema).as_ref().clone())
                    .map_err(|e| StorageError::Write(e.to_string()))?,
            )),
            other => {
                return Err(StorageError::Unsupported(format!(
                    "writing {} tables",
                    other.stored_as()
                )))
            }
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), StorageError> {
        let r = match self {
            FileWriter::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
            FileWriter::Text(w, layout) => {
                let batch = hive_text_columns(batch, layout)?;
                w.write(&batch).map_err(|e| e.to_string())
            }
            FileWriter::Json(w) => w.write(batch).map_err(|e| e.to_string()),
            FileWriter::Orc(w) => w.write(batch).map_err(|e| e.to_string()),
            FileWriter::Avro(w) => {
                let batch = avro_batch(batch)?;
                w.write(&batch).map_err(|e| e.to_string())
            }
        };
        r.map_err(StorageError::Write)
    }

    fn finish(self) -> Result<(), StorageError> {
        let r = match self {
            FileWriter::Parquet(w) => w.close().map(|_| ()).map_err(|e| e.to_string()),
            FileWriter::Text(w, _) => w.into_inner().sync_all().map_err(|e| e.to_string()),
            FileWriter::Json(mut w) => w.finish().map_err(|e| e.to_string()),
            FileWriter::Orc(w) => w
                .close()
                .map_err(|e| e.to_string())
                .and_then(|f| f.sync_all().map_err(|e| e.to_string())),
            FileWriter::Avro(mut w) => w
                .finish()
                .and_then(|_| w.into_inner().sync_all().map_err(Into::into))
                .map_err(|e| e.to_string()),
        };
        r.map_err(StorageError::Write)
    }
}

/// Avro as Hive's AvroSerDe writes it: TINYINT and SMALLINT as `int` (Avro has nothing
/// smaller), TIMESTAMP as `long` with logical type `timestamp-millis`.
fn avro_type(t: &DataType) -> DataType {
    match t {
        DataType::Int8 | DataType::Int16 => DataType::Int32,
        DataType::Timestamp(_, _) => {
            DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, Some("UTC".into()))
        }
        other => other.clone(),
    }
}

fn avro_schema(schema: &SchemaRef) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_data_type(avro_type(f.data_type())))
            .collect::<Vec<_>>(),
    ))
}

fn avro_batch(batch: &RecordBatch) -> Result<RecordBatch, StorageError> {
    let schema = avro_schema(&batch.schema());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| cast_to(c, f.data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema, columns).map_err(|e| StorageError::Write(e.to_string()))
}

/// ARRAY, MAP and STRUCT columns turned into their Hive text, and BINARY into Base64 as
/// LazySimpleSerDe writes it, for the text writer.
fn hive_text_columns(
    batch: &RecordBatch,
    layout: &TextLayout,
) -> Result<RecordBatch, StorageError> {
    let complex = |t: &DataType| {
        matches!(
            t,
            DataType::List(_) | DataType::Map(_, _) | DataType::Struct(_) | DataType::Union(_, _)
        )
    };
    let binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| complex(f.data_type()) || binary(f.data_type()))
    {
        return Ok(batch.clone());
    }
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        if complex(f.data_type()) {
            fields.push(arrow::datatypes::Field::new(f.name(), DataType::Utf8, true));
            columns.push(Arc::new(crate::text::encode_column(c.as_ref(), layout)));
        } else if binary(f.data_type()) {
            fields.push(arrow::datatypes::Field::new(f.name(), DataType::Utf8, true));
            columns.push(Arc::new(crate::text::encode_binary_column(c.as_ref())));
        } else {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| StorageError::Write(e.to_string()))
}

pub use crate::native::local_dir;

/// Removes the data files (not hidden files, not subdirectories) directly in `dir`.
pub fn clear_data_files(dir: &Path) -> Result<usize, StorageError> {
    clear_data_files_except(dir, None)
}

/// Removes the data files directly in `dir` but the one named `keep`.
fn clear_data_files_except(
    dir: &Path,
    keep: Option<&std::ffi::OsStr>,
) -> Result<usize, StorageError> {
    let mut n = 0;
    // A partition folder replaced by a link must not make Apiary delete what it points at.
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(StorageError::Location(format!(
                "{} is a symbolic link; Apiary does not delete files through links",
                dir.display()
            )))
        }
        _ => {}
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && is_data_file(&name) && Some(entry.file_name().as_os_str()) != keep {
            std::fs::remove_file(entry.path()).map_err(|e| StorageError::io(&entry.path(), e))?;
            n += 1;
        }
    }
    Ok(n)
}

/// The directory of a partition (`<table>/<k1=v1>/<k2=v2>`) or of an unpartitioned table.
pub fn partition_dir(table: &Table, values: &[String]) -> Result<PathBuf, StorageError> {
    let loc = table.sd.location.clone().ok_or_else(|| {
        StorageError::Location(format!("table {} has no location", table.qualified_name()))
    })?;
    let mut dir = local_dir(&loc)?;
    for (k, v) in table.partition_keys.iter().zip(values) {
        dir.push(format!(
            "{}={}",
            escape_path_value(&k.name),
            escape_path_value(v)
        ));
    }
    Ok(dir)
}

/// Writes `rows` into staged files for `table` and records the decision to commit. The
/// stream's columns are the table's data columns followed by its dynamic partition keys, in
/// order; values are cast to the declared types. `partition_dirs` holds the partitions the
/// metastore knows, with their locations.
pub async fn insert(
    table: &Table,
    spec: &InsertSpec,
    mut rows: SendableRecordBatchStream,
    partition_dirs: &BTreeMap<Vec<String>, Option<String>>,
) -> Result<StagedInsert, StorageError> {
    let format = NativeFormat::of(&table.sd)
        .ok_or_else(|| StorageError::Unsupported("this table's input format".into()))?;
    let root = local_dir(table.sd.location.as_deref().unwrap_or(""))?;
    let data_fields = table
        .sd
        .columns
        .iter()
        .map(column_field)
        .collect::<Result<Vec<_>, _>>()?;
    let data_schema: SchemaRef = Arc::new(Schema::new(data_fields));
    let dynamic: Vec<usize> = (0..table.partition_keys.len())
        .filter(|i| spec.partition.get(*i).is_none_or(Option::is_none))
        .collect();
    let staging = root.join(format!(
        "{STAGING_PREFIX}{}-{}",
        spec.server_tag,
        uuid::Uuid::new_v4().simple()
    ));
    // The files are written, finished and synced on blocking threads, one short job per
    // batch, so no async worker waits on the disk and no blocking thread waits on the query.
    // The writer owns the staging folder's cleanup: if the INSERT is dropped (cancel,
    // timeout) while a job runs, the job finishes and the folder goes with the writer.
    let mut writer = {
        let (table, spec, staging) = (table.clone(), spec.clone(), staging.clone());
        on_blocking(move || {
            StagedWriter::create(table, spec, staging, format, data_schema, dynamic)
        })
        .await?
    };
    while let Some(batch) = rows.next().await {
        let batch = batch.map_err(|e| StorageError::Write(e.to_string()))?;
        writer = on_blocking(move || writer.write(&batch).map(|()| writer)).await?;
    }
    let (result, cleanup) = on_blocking(move || Ok(writer.finish())).await?;
    let (rows, staged) = result?;
    let mut targets = Vec::new();
    for (values, file) in staged {
        let dir = match partition_dirs.get(&values).cloned().flatten() {
            Some(loc) => local_dir(&loc)?,
            None => partition_dir(table, &values)?,
        };
        let new = !table.partition_keys.is_empty() && !partition_dirs.contains_key(&values);
        if spec.overwrite
            && !spec
                .owned_root
                .as_deref()
                .is_some_and(|root| crate::ownership::inside(root, &dir))
        {
            return Err(StorageError::Write(format!(
                "cannot overwrite {}: it is not inside a folder Apiary created for table {}, so Apiary does not delete the files in it",
                dir.display(),
                table.qualified_name()
            )));
        }
        targets.push(CommitTarget {
            values,
            new,
            dir,
            file,
        });
    }
    let manifest = CommitManifest {
        database: table.database.clone(),
        table: table.name.clone(),
        overwrite: spec.overwrite,
        rows,
        targets,
    };
    let (manifest, cleanup) = {
        let staging = staging.clone();
        on_blocking(move || {
            // A failure here drops the cleanup guard with the closure: the folder goes.
            write_durably(&staging, MANIFEST, &manifest).map(|()| (manifest, cleanup))
        })
        .await?
    };
    Ok(StagedInsert {
        manifest,
        _cleanup: cleanup,
    })
}

/// Runs file work on a blocking thread.
async fn on_blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StorageError::Write(format!("a file task failed: {e}")))?
}

/// Rows written, and the staged file of each partition (by its values).
type Staged = (u64, Vec<(Vec<String>, Option<PathBuf>)>);

/// The blocking half of [`insert`]: one file per partition under the staging folder, which it
/// removes when dropped unless [`StagedWriter::finish`] hands the removal on.
struct StagedWriter {
    table: Table,
    spec: InsertSpec,
    staging: PathBuf,
    format: NativeFormat,
    data_schema: SchemaRef,
    dynamic: Vec<usize>,
    writers: BTreeMap<Vec<String>, (PathBuf, FileWriter)>,
    total: u64,
    cleanup: StagingCleanup,
}

impl StagedWriter {
    fn create(
        table: Table,
        spec: InsertSpec,
        staging: PathBuf,
        format: NativeFormat,
        data_schema: SchemaRef,
        dynamic: Vec<usize>,
    ) -> Result<Self, StorageError> {
        let cleanup = StagingCleanup(staging.clone());
        std::fs::create_dir_all(&staging).map_err(|e| StorageError::io(&staging, e))?;
        Ok(Self {
            table,
            spec,
            staging,
            format,
            data_schema,
            dynamic,
            writers: BTreeMap::new(),
            total: 0,
            cleanup,
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), StorageError> {
        let n_data = self.table.sd.columns.len();
        if batch.num_columns() != n_data + self.dynamic.len() {
            return Err(StorageError::Write(format!(
                "expected {} columns, got {}",
                n_data + self.dynamic.len(),
                batch.num_columns()
            )));
        }
        self.total += batch.num_rows() as u64;
        let data = cast_columns(batch, &self.data_schema)?;
        for (values, indices) in group_rows(batch, &self.table, &self.spec, &self.dynamic, n_data)?
        {
            let part = if indices.len() == batch.num_rows() {
                data.clone()
            } else {
                take_rows(&data, &indices)?
            };
            if !self.writers.contains_key(&values) {
                let name = format!(
                    "part-{}-00000{}",
                    uuid::Uuid::new_v4().simple(),
                    self.format.extension()
                );
                let dir = self.staging.join(self.writers.len().to_string());
                std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
                let path = dir.join(name);
                let w = FileWriter::open(self.format, &self.table, &path, &self.data_schema)?;
                self.writers.insert(values.clone(), (path, w));
            }
            if let Some((_, w)) = self.writers.get_mut(&values) {
                w.write(&part)?;
            }
        }
        Ok(())
    }

    /// Finishes every file; returns what was staged and the folder's cleanup guard.
    fn finish(self) -> (Result<Staged, StorageError>, StagingCleanup) {
        let Self {
            spec,
            dynamic,
            writers,
            total,
            cleanup,
            ..
        } = self;
        // Static partitions (or an unpartitioned table) are written even with no rows, so
        // INSERT OVERWRITE of nothing empties them.
        if dynamic.is_empty() && writers.is_empty() && spec.overwrite {
            let values: Vec<String> = spec.partition.iter().flatten().cloned().collect();
            return (Ok((total, vec![(values, None)])), cleanup);
        }
        let mut staged = Vec::new();
        for (values, (path, w)) in writers {
            if let Err(e) = w.finish() {
                return (Err(e), cleanup);
            }
            staged.push((values, Some(path)));
        }
        (Ok((total, staged)), cleanup)
    }
}

/// Writes `value` as JSON to `dir/name` so that, once this returns, a crash leaves either no
/// file or the whole of it: a temporary file, synced, renamed, and the directory synced.
fn write_durably<T: serde::Serialize>(
    dir: &Path,
    name: &str,
    value: &T,
) -> Result<(), StorageError> {
    use std::io::Write;
    let text = serde_json::to_vec(value).map_err(|e| StorageError::Write(e.to_string()))?;
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = File::create(&tmp).map_err(|e| StorageError::io(&tmp, e))?;
    f.write_all(&text).map_err(|e| StorageError::io(&tmp, e))?;
    f.sync_all().map_err(|e| StorageError::io(&tmp, e))?;
    let path = dir.join(name);
    std::fs::rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}

struct StagingCleanup(PathBuf);

impl Drop for StagingCleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The rows of an INSERT in a table's declared types (`schema`, its columns in order), as a
/// native table stores them: VARCHAR(n) cut to n characters, CHAR(n) padded.
pub fn cast_columns(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, StorageError> {
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let a = cast_to(batch.column(i), f.data_type())?;
            Ok(match HiveType::of_field(f) {
                HiveType::Varchar(n) => fit_strings(&a, n as usize, false),
                HiveType::Char(n) => fit_strings(&a, n as usize, true),
                _ => a,
            })
        })
        .collect::<Result<Vec<_>, StorageError>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| StorageError::Write(e.to_string()))
}

/// VARCHAR(n) keeps the first n characters; CHAR(n) is also padded with blanks to n.
fn fit_strings(a: &ArrayRef, n: usize, pad: bool) -> ArrayRef {
    let Some(strings) = a.as_any().downcast_ref::<arrow::array::StringArray>() else {
        return a.clone();
    };
    let out: arrow::array::StringArray = strings
        .iter()
        .map(|v| {
            v.map(|s| {
                let mut t: String = s.chars().take(n).collect();
                if pad {
                    let len = t.chars().count();
                    t.extend(std::iter::repeat_n(' ', n - len));
                }
                t
            })
        })
        .collect();
    Arc::new(out)
}

fn cast_to(a: &ArrayRef, t: &DataType) -> Result<ArrayRef, StorageError> {
    if a.data_type() == t {
        return Ok(a.clone());
    }
    if let (DataType::Union(from, _), DataType::Union(to, mode)) = (a.data_type(), t) {
        return cast_union(a, from, to, *mode);
    }
    arrow::compute::cast(a, t)
        .map_err(|e| StorageError::Write(format!("cannot convert {} to {t}: {e}", a.data_type())))
}

/// A union as a union of other member types: each member's values converted, member by
/// member (as Hive converts a union by its tag).
fn cast_union(
    a: &ArrayRef,
    from: &arrow::datatypes::UnionFields,
    to: &arrow::datatypes::UnionFields,
    mode: arrow::datatypes::UnionMode,
) -> Result<ArrayRef, StorageError> {
    use arrow::array::AsArray;
    let union = a.as_union();
    let mismatch = || {
        StorageError::Write(format!(
            "cannot convert {} to {}",
            a.data_type(),
            DataType::Union(to.clone(), mode)
        ))
    };
    if from.len() != to.len() || union.is_dense() || mode != arrow::datatypes::UnionMode::Sparse {
        return Err(mismatch());
    }
    let mut children = Vec::with_capacity(to.len());
    for ((from_id, _), (to_id, field)) in from.iter().zip(to.iter()) {
        if from_id != to_id {
            return Err(mismatch());
        }
        children.push(cast_to(union.child(from_id), field.data_type())?);
    }
    let ids = union.type_ids().clone();
    let out = arrow::array::UnionArray::try_new(to.clone(), ids, None, children)
        .map_err(|e| StorageError::Write(e.to_string()))?;
    Ok(Arc::new(out))
}

fn take_rows(batch: &RecordBatch, indices: &[u32]) -> Result<RecordBatch, StorageError> {
    let idx = UInt32Array::from(indices.to_vec());
    let columns = batch
        .columns()
        .iter()
        .map(|c| arrow::compute::take(c.as_ref(), &idx, None))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StorageError::Write(e.to_string()))?;
    RecordBatch::try_new(batch.schema(), columns).map_err(|e| StorageError::Write(e.to_string()))
}

/// Partition values and the indices of the rows that belong to that partition.
type RowGroup = (Vec<String>, Vec<u32>);

/// Rows of `batch` grouped by the partition they belong to.
fn group_rows(
    batch: &RecordBatch,
    table: &Table,
    spec: &InsertSpec,
    dynamic: &[usize],
    n_data: usize,
) -> Result<Vec<RowGroup>, StorageError> {
    let keys = table.partition_keys.len();
    if dynamic.is_empty() {
        let values = spec.partition.iter().flatten().cloned().collect();
        return Ok(vec![(values, (0..batch.num_rows() as u32).collect())]);
    }
    let texts = dynamic
        .iter()
        .enumerate()
        .map(|(j, _)| {
            // As Hive writes a partition value: a TIMESTAMP with a blank before its time and
            // its fraction only when it has one.
            let col = batch.column(n_data + j);
            let options = arrow::compute::CastOptions {
                safe: true,
                format_options: arrow::util::display::FormatOptions::default()
                    .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f")),
            };
            let s = arrow::compute::cast_with_options(col, &DataType::Utf8, &options)
                .map_err(|e| StorageError::Write(e.to_string()))?;
            Ok(s)
        })
        .collect::<Result<Vec<ArrayRef>, StorageError>>()?;
    let mut groups: BTreeMap<Vec<String>, Vec<u32>> = BTreeMap::new();
    for row in 0..batch.num_rows() {
        let mut values = Vec::with_capacity(keys);
        let mut d = 0;
        for k in 0..keys {
            match spec.partition.get(k).cloned().flatten() {
                Some(v) => values.push(v),
                None => {
                    let a = texts[d]
                        .as_any()
                        .downcast_ref::<arrow::array::StringArray>()
                        .ok_or_else(|| StorageError::Write("partition value".into()))?;
                    let v = if a.is_null(row) || a.value(row).is_empty() {
                        DEFAULT_PARTITION.to_string()
                    } else {
                        a.value(row).to_string()
                    };
                    values.push(v);
                    d += 1;
                }
            }
        }
        groups.entry(values).or_default().push(row as u32);
    }
    Ok(groups.into_iter().collect())
}
