//! Native tables: files in the formats Hive writes, under a table's (or each partition's)
//! location. Reading lists the files itself (Hive's rules: hidden `_`/`.` files and
//! subdirectories of a data directory are not data) and prunes partitions with the query's
//! filters; writing stages files out of sight and moves them into place at the end.

use std::fmt;
use std::sync::Arc;

use apiary_metastore::{unescape_path_value, Column, Partition, Table};
use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow::datatypes::{Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue, ToDFSchema};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::json::JsonFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::lit;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use url::Url;

use crate::constants::{ConstantColumnsExec, Slot};
use crate::format::{NativeFormat, TextLayout};
use crate::text_source::{TextSource, TextSplit};
use crate::types::HiveType;
use crate::StorageError;

/// The Arrow field of a metastore column.
pub fn column_field(c: &Column) -> Result<Field, StorageError> {
    let t = HiveType::parse(&c.type_name)
        .ok_or_else(|| StorageError::Type(c.name.clone(), c.type_name.clone()))?;
    Ok(t.to_field(&c.name))
}

/// The schema of a table as queries see it: data columns, then partition keys.
pub fn table_schema(t: &Table) -> Result<SchemaRef, StorageError> {
    let fields =
        t.sd.columns
            .iter()
            .chain(&t.partition_keys)
            .map(column_field)
            .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

/// A location as a URL: absolute paths become `file://` URLs; a directory URL ends in `/`.
pub fn location_url(location: &str) -> Result<Url, StorageError> {
    let mut url = if location.starts_with('/') {
        Url::from_directory_path(location)
            .map_err(|_| StorageError::Location(location.to_string()))?
    } else {
        Url::parse(location).map_err(|e| StorageError::Location(format!("{location}: {e}")))?
    };
    if !url.path().ends_with('/') {
        let p = format!("{}/", url.path());
        url.set_path(&p);
    }
    Ok(url)
}

/// One directory of data files and the partition values its rows carry.
#[derive(Debug, Clone)]
struct DataDir {
    url: Url,
    values: Vec<String>,
}

/// A native table, ready to scan: its definition, schema, format and data directories
/// (one per partition, or the table's location).
pub struct NativeTable {
    table: Table,
    schema: SchemaRef,
    format: NativeFormat,
    dirs: Vec<DataDir>,
}

impl fmt::Debug for NativeTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeTable")
            .field("table", &self.table.qualified_name())
            .field("format", &self.format)
            .finish()
    }
}

impl NativeTable {
    /// A scannable table over `table`'s location (or its `partitions`' locations).
    pub fn new(table: Table, partitions: &[Partition]) -> Result<Self, StorageError> {
        let schema = table_schema(&table)?;
        let format = NativeFormat::of(&table.sd).ok_or_else(|| {
            StorageError::Unsupported(format!(
                "input format {} of table {}",
                table.sd.input_format.clone().unwrap_or_default(),
                table.qualified_name()
            ))
        })?;
        let location = table.sd.location.clone().ok_or_else(|| {
            StorageError::Location(format!("table {} has no location", table.qualified_name()))
        })?;
        let dirs = if table.partition_keys.is_empty() {
            vec![DataDir {
                url: location_url(&location)?,
                values: vec![],
            }]
        } else {
            partitions
                .iter()
                .map(|p| {
                    let loc = match &p.sd.location {
                        Some(l) => l.clone(),
                        None => format!(
                            "{}/{}",
                            location.trim_end_matches('/'),
                            p.name(&table.partition_keys)
                        ),
                    };
                    Ok(DataDir {
                        url: location_url(&loc)?,
                        values: p.values.clone(),
                    })
                })
                .collect::<Result<_, StorageError>>()?
        };
        Ok(Self {
            table,
            schema,
            format,
            dirs,
        })
    }

    /// The table's definition.
    pub fn definition(&self) -> &Table {
        &self.table
    }

    /// DataFusion's reader of the table's files (TEXTFILE tables are read by
    /// [`TextSource`] instead).
    fn file_format(&self) -> DfResult<Arc<dyn FileFormat>> {
        Ok(match self.format {
            NativeFormat::Parquet => Arc::new(ParquetFormat::default()),
            NativeFormat::Csv => {
                let p = &self.table.sd.serde.parameters;
                let ch = |k: &str, d: u8| p.get(k).and_then(|v| v.bytes().next()).unwrap_or(d);
                Arc::new(
                    CsvFormat::default()
                        .with_has_header(false)
                        .with_truncated_rows(true)
                        .with_delimiter(ch("separatorChar", b','))
                        .with_quote(ch("quoteChar", b'"'))
                        .with_escape(Some(ch("escapeChar", b'\\'))),
                )
            }
            NativeFormat::Json => Arc::new(JsonFormat::default()),
            NativeFormat::Orc => Arc::new(datafusion_orc::OrcFormat),
            NativeFormat::Avro => Arc::new(datafusion::datasource::file_format::avro::AvroFormat),
            other => {
                return Err(DataFusionError::NotImplemented(format!(
                    "reading {} tables is not supported yet (table {})",
                    other.stored_as(),
                    self.table.qualified_name()
                )))
            }
        })
    }

    /// The data directories whose partition values pass `filters`.
    fn prune(&self, state: &dyn Session, filters: &[Expr]) -> DfResult<Vec<DataDir>> {
        let keys = &self.table.partition_keys;
        if keys.is_empty() || self.dirs.is_empty() {
            return Ok(self.dirs.clone());
        }
        let key_names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
        let only_keys: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                f.column_refs()
                    .iter()
                    .all(|c| key_names.contains(&c.name.as_str()))
            })
            .cloned()
            .collect();
        let Some(predicate) = conjunction(only_keys) else {
            return Ok(self.dirs.clone());
        };
        // One row per partition, typed as the table declares its keys.
        let fields: Vec<Field> = keys
            .iter()
            .map(column_field)
            .collect::<Result<_, _>>()
            .map_err(|e| DataFusionError::Plan(e.to_string()))?;
        let schema = Arc::new(Schema::new(fields));
        let mut columns: Vec<ArrayRef> = Vec::new();
        for (i, f) in schema.fields().iter().enumerate() {
            let strings: StringArray = self
                .dirs
                .iter()
                .map(|d| partition_text(&d.values[i]))
                .collect();
            columns.push(arrow::compute::cast(&strings, f.data_type())?);
        }
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        let df_schema: DFSchema = schema.to_dfschema()?;
        let physical = state.create_physical_expr(predicate, &df_schema)?;
        let mask = physical.evaluate(&batch)?.into_array(batch.num_rows())?;
        let mask = mask
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| DataFusionError::Internal("partition filter is not boolean".into()))?;
        let kept: Vec<DataDir> = self
            .dirs
            .iter()
            .enumerate()
            .filter(|(i, _)| mask.is_valid(*i) && mask.value(*i))
            .map(|(_, d)| d.clone())
            .collect();
        tracing::info!(
            table = %self.table.qualified_name(),
            partitions = self.dirs.len(),
            scanned = kept.len(),
            "partition pruning"
        );
        Ok(kept)
    }
}

impl NativeTable {
    /// Readers that do not fill partition columns (ORC, Avro): one scan of the data columns
    /// per partition directory, with the directory's values appended as constants and the
    /// reader's batches cast to the declared types.
    async fn scan_per_partition(
        &self,
        state: &dyn Session,
        format: &Arc<dyn FileFormat>,
        store_url: ObjectStoreUrl,
        per_dir: Vec<(Vec<ScalarValue>, Vec<PartitionedFile>)>,
        projection: Option<&Vec<usize>>,
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let n_data = self.table.sd.columns.len();
        let wanted: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        // The data columns to read; at least one, so that batches carry their row count.
        let mut data: Vec<usize> = wanted.iter().copied().filter(|i| *i < n_data).collect();
        if data.is_empty() {
            data.push(0);
        }
        let output = Arc::new(self.schema.project(&wanted)?);
        let file_schema = Arc::new(Schema::new(self.schema.fields()[..n_data].to_vec()));
        let per_group = (state.config().target_partitions() / per_dir.len()).max(1);
        let mut inputs: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
        for (values, files) in per_dir {
            let files = files
                .into_iter()
                .map(|mut f| {
                    f.partition_values.clear();
                    f
                })
                .collect::<Vec<_>>();
            let source = format.file_source(TableSchema::builder(file_schema.clone()).build());
            let config = FileScanConfigBuilder::new(store_url.clone(), source)
                .with_file_groups(split_groups(files, per_group))
                .with_projection_indices(Some(data.clone()))?
                .with_limit(limit)
                .build();
            let scan = format.create_physical_plan(state, config).await?;
            let slots = wanted
                .iter()
                .map(|&i| match data.iter().position(|d| *d == i) {
                    Some(pos) if i < n_data => Slot::Input(pos),
                    _ => Slot::Constant(values[i - n_data].clone()),
                })
                .collect();
            inputs.push(Arc::new(ConstantColumnsExec::try_new(
                scan,
                slots,
                output.clone(),
            )?));
        }
        UnionExec::try_new(inputs)
    }
}

/// A partition value as text, or NULL for Hive's default partition.
fn partition_text(v: &str) -> Option<String> {
    (v != "__HIVE_DEFAULT_PARTITION__").then(|| v.to_string())
}

/// Whether a file name is data by Hive's rules (not hidden, not a marker).
pub fn is_data_file(name: &str) -> bool {
    !(name.starts_with('_') || name.starts_with('.'))
}

#[async_trait]
impl TableProvider for NativeTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let dirs = self.prune(state, filters)?;
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let Some(first) = dirs.first() else {
            return Ok(Arc::new(EmptyExec::new(projected)));
        };
        let store_url = ObjectStoreUrl::parse(&first.url[..url::Position::BeforePath])?;
        let store = state.runtime_env().object_store(&store_url)?;
        let n_data = self.table.sd.columns.len();
        let key_fields: Vec<Field> = self.schema.fields()[n_data..]
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut per_dir: Vec<(Vec<ScalarValue>, Vec<PartitionedFile>)> = Vec::new();
        for dir in &dirs {
            let prefix = object_store::path::Path::from_url_path(dir.url.path())?;
            let listed: Vec<_> = match store.list_with_delimiter(Some(&prefix)).await {
                Ok(l) => l.objects,
                Err(object_store::Error::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let values = key_fields
                .iter()
                .zip(&dir.values)
                .map(|(f, v)| {
                    let text = ScalarValue::Utf8(partition_text(&unescape_path_value(v)));
                    text.cast_to(f.data_type())
                })
                .collect::<DfResult<Vec<_>>>()?;
            let files: Vec<PartitionedFile> = listed
                .into_iter()
                .filter(|m| m.size > 0 && is_data_file(m.location.filename().unwrap_or("")))
                .map(|m| PartitionedFile::new_from_meta(m).with_partition_values(values.clone()))
                .collect();
            if !files.is_empty() {
                per_dir.push((values, files));
            }
        }
        if per_dir.is_empty() {
            return Ok(Arc::new(EmptyExec::new(projected)));
        }
        if matches!(self.format, NativeFormat::Orc | NativeFormat::Avro) {
            let format = self.file_format()?;
            return self
                .scan_per_partition(state, &format, store_url, per_dir, projection, limit)
                .await;
        }
        let files: Vec<PartitionedFile> = per_dir.into_iter().flat_map(|(_, f)| f).collect();
        // Text is read as strings and decoded here, the way LazySimpleSerDe reads it: the
        // NULL marker is NULL, and a value that does not parse as its type is NULL too.
        let text = self.format == NativeFormat::Text;
        let file_fields: Vec<Field> = self.schema.fields()[..n_data]
            .iter()
            .map(|f| {
                if text {
                    Field::new(f.name(), arrow::datatypes::DataType::Utf8, true)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect();
        let file_schema = Arc::new(Schema::new(file_fields));
        let table_schema = TableSchema::builder(file_schema)
            .with_table_partition_cols(key_fields.iter().cloned().map(Arc::new).collect::<Vec<_>>())
            .build();
        let groups = split_groups(files, state.config().target_partitions());
        if !text {
            let format = self.file_format()?;
            let source = format.file_source(table_schema);
            let config = FileScanConfigBuilder::new(store_url, source)
                .with_file_groups(groups)
                .with_projection_indices(projection.cloned())?
                .with_limit(limit)
                .build();
            return format.create_physical_plan(state, config).await;
        }
        let layout = TextLayout::of_table(&self.table);
        let source = Arc::new(TextSource::new(
            table_schema,
            TextSplit {
                delimiter: layout.field_delim,
                escape: layout.escape,
                null: layout.null.clone(),
            },
        ));
        let config = FileScanConfigBuilder::new(store_url, source)
            .with_file_groups(groups)
            .with_limit(limit)
            .build();
        let scan: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
        let raw = scan.schema();
        let df_schema = raw.clone().to_dfschema()?;
        let null = layout.null.clone();
        let wanted: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let mut exprs = Vec::new();
        for i in wanted {
            let field = self.schema.field(i);
            let column = Expr::Column(datafusion::common::Column::from_name(raw.field(i).name()));
            let hive = HiveType::of_field(field);
            let union = matches!(hive, HiveType::Union(_));
            let expr = if i < n_data {
                let decoded = if field.data_type() == &arrow::datatypes::DataType::Utf8 {
                    column.clone()
                } else if hive.is_complex()
                    || hive == HiveType::Binary
                    || matches!(hive, HiveType::Decimal(_, _))
                {
                    let udf = datafusion::logical_expr::ScalarUDF::new_from_impl(
                        crate::text::DecodeComplex::new(field.clone(), hive, layout.clone()),
                    );
                    udf.call(vec![column.clone()])
                } else {
                    Expr::TryCast(datafusion::logical_expr::TryCast::new(
                        Box::new(column.clone()),
                        field.data_type().clone(),
                    ))
                };
                if union {
                    // (A union has no NULL of its own: its decoding reads `\N` as a NULL member.)
                    decoded
                } else {
                    datafusion::logical_expr::when(
                        column.eq(lit(null.clone())),
                        lit(ScalarValue::try_from(field.data_type())?),
                    )
                    .otherwise(decoded)?
                }
            } else {
                column
            };
            let physical = state.create_physical_expr(expr, &df_schema)?;
            exprs.push(ProjectionExpr {
                expr: physical,
                alias: field.name().clone(),
            });
        }
        // The decoded columns under the table's own fields: a VARCHAR's or CHAR's declared
        // type travels in its field's metadata, which the decoding expressions do not carry,
        // and plans above the scan expect the schema the table gave.
        let slots = (0..exprs.len()).map(Slot::Input).collect();
        Ok(Arc::new(ConstantColumnsExec::try_new(
            Arc::new(ProjectionExec::try_new(exprs, scan)?),
            slots,
            projected,
        )?))
    }
}

fn split_groups(files: Vec<PartitionedFile>, n: usize) -> Vec<FileGroup> {
    let n = n.max(1).min(files.len().max(1));
    let mut groups: Vec<Vec<PartitionedFile>> = (0..n).map(|_| Vec::new()).collect();
    for (i, f) in files.into_iter().enumerate() {
        groups[i % n].push(f);
    }
    groups.into_iter().map(FileGroup::new).collect()
}

/// Partition values of the `k=v` directories directly under a location, as MSCK REPAIR
/// finds them, for tables partitioned by `keys`.
pub fn partition_values_of(dir_names: &[String], keys: &[Column]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    'names: for name in dir_names {
        let parts: Vec<&str> = name.trim_end_matches('/').split('/').collect();
        if parts.len() != keys.len() {
            continue;
        }
        let mut values = Vec::new();
        for (p, k) in parts.iter().zip(keys) {
            match p.split_once('=') {
                Some((key, v)) if key.eq_ignore_ascii_case(&k.name) => {
                    values.push(unescape_path_value(v))
                }
                _ => continue 'names,
            }
        }
        out.push(values);
    }
    out
}
/// A local directory for a location URL; other stores are not writable yet.
pub fn local_dir(location: &str) -> Result<std::path::PathBuf, crate::StorageError> {
    let url = location_url(location)?;
    if url.scheme() != "file" {
        return Err(crate::StorageError::Unsupported(format!(
            "writing to {} locations",
            url.scheme()
        )));
    }
    url.to_file_path()
        .map_err(|_| crate::StorageError::Location(location.to_string()))
}
