//! Reading an HBase table from Bigtable: conditions on a text row key become row ranges and row
//! sets ([`KeySet`]), the projection becomes a filter reading only the mapped families and
//! qualifiers (newest cell of each), and the plan node streams the rows into batches.
//!
//! Every row read is returned, also when none of the projected cells is in it (Hive reads it
//! with NULLs): the filter adds, for each row, its first cell stripped of its value and
//! labelled [`ROW_LABEL`], which is not a value of any column.

use std::fmt;
use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::format::TextLayout;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::types::HiveType;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use async_trait::async_trait;
use bigtable_rs::bigtable::RoutingMetadata;
use bigtable_rs::google::bigtable::v2::{
    column_range, row_filter, row_range, ColumnRange, ReadRowsRequest, RowFilter, RowRange, RowSet,
};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::TableType as DfTableType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};

use crate::client::{remote_err, Instance};
use crate::codec::{decode_column, decode_map};
use crate::keys::{prefix_range, show_key, Bound, KeySet};
use crate::location::Location;
use crate::mapping::{is_text, Mapped, Mapping, Target};
use crate::rows::{Merger, Row};

/// Label of the cell that makes Bigtable return a row (see the module's text).
const ROW_LABEL: &str = "apiary-row";
/// Rows per batch.
const BATCH_ROWS: usize = 4096;

/// An HBase table's reader.
#[derive(Debug)]
pub(crate) struct HBaseTable {
    instance: Arc<Instance>,
    location: Location,
    hive_name: String,
    mapping: Arc<Mapping>,
    schema: SchemaRef,
    layout: TextLayout,
}

impl HBaseTable {
    pub(crate) fn new(
        table: &Table,
        location: Location,
        mapping: Mapping,
        instance: Arc<Instance>,
    ) -> Self {
        let fields: Vec<Field> = mapping
            .columns
            .iter()
            .map(|c| c.hive.to_field(&c.name))
            .collect();
        Self {
            instance,
            location,
            hive_name: table.qualified_name(),
            mapping: Arc::new(mapping),
            schema: Arc::new(Schema::new(fields)),
            layout: TextLayout::from_params(&table.sd.serde.parameters),
        }
    }

    /// The keys a condition leaves, when the row key is text (its byte order is the strings'
    /// order) and the condition narrows it.
    fn keys_of(&self, condition: &Expr) -> Option<KeySet> {
        let key = self.mapping.key();
        let text_key = matches!(key.hive, HiveType::String | HiveType::Varchar(_)) && !key.binary;
        if !text_key {
            return None;
        }
        KeySet::of_condition(condition, &key.name).filter(|s| !s.is_all())
    }
}

#[async_trait]
impl TableProvider for HBaseTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> DfTableType {
        DfTableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        // Inexact: the rows read are filtered again above the scan.
        Ok(filters
            .iter()
            .map(|f| match self.keys_of(f) {
                Some(_) => TableProviderFilterPushDown::Inexact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let keys = filters
            .iter()
            .filter_map(|f| self.keys_of(f))
            .fold(KeySet::all(), |acc, s| acc.intersect(&s));
        let schema = Arc::new(self.schema.project(&projection)?);
        // A limit reaches the scan only when no condition is left above it.
        let limit = if filters.is_empty() { limit } else { None };
        Ok(Arc::new(HBaseScanExec::new(
            self, projection, keys, limit, schema,
        )))
    }
}

/// Reads rows of one Bigtable table and streams them as batches.
#[derive(Debug)]
pub struct HBaseScanExec {
    instance: Arc<Instance>,
    bigtable: String,
    table: String,
    mapping: Arc<Mapping>,
    projection: Vec<usize>,
    keys: KeySet,
    limit: Option<usize>,
    schema: SchemaRef,
    layout: TextLayout,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl HBaseScanExec {
    /// The scan of `table`'s `keys`, its columns `projection` (of type `schema`).
    fn new(
        table: &HBaseTable,
        projection: Vec<usize>,
        keys: KeySet,
        limit: Option<usize>,
        schema: SchemaRef,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            instance: table.instance.clone(),
            bigtable: table.location.table.clone(),
            table: table.hive_name.clone(),
            mapping: table.mapping.clone(),
            projection,
            keys,
            limit,
            schema,
            layout: table.layout.clone(),
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The mapped columns whose cells the scan reads: the projected ones, or all of them when
    /// the projection has the timestamp (the newest of the mapped cells' times).
    fn cell_columns(&self) -> Vec<&Mapped> {
        let all = self
            .projection
            .iter()
            .any(|&i| self.mapping.columns[i].target == Target::Timestamp);
        self.mapping
            .columns
            .iter()
            .enumerate()
            .filter(|(i, c)| c.target.family().is_some() && (all || self.projection.contains(i)))
            .map(|(_, c)| c)
            .collect()
    }

    /// The row filter: the columns' cells (newest of each), and each row's marker cell.
    fn filter(&self) -> RowFilter {
        let f = |filter| RowFilter {
            filter: Some(filter),
        };
        let one = |mut filters: Vec<RowFilter>| {
            if filters.len() == 1 {
                filters.remove(0)
            } else {
                f(row_filter::Filter::Interleave(row_filter::Interleave {
                    filters,
                }))
            }
        };
        let selections: Vec<RowFilter> = self
            .cell_columns()
            .into_iter()
            .filter_map(|c| {
                Some(match &c.target {
                    Target::Cell { family, qualifier } => {
                        f(row_filter::Filter::ColumnRangeFilter(ColumnRange {
                            family_name: family.clone(),
                            start_qualifier: Some(
                                column_range::StartQualifier::StartQualifierClosed(
                                    qualifier.clone(),
                                ),
                            ),
                            end_qualifier: Some(column_range::EndQualifier::EndQualifierClosed(
                                qualifier.clone(),
                            )),
                        }))
                    }
                    Target::Family { family } => f(row_filter::Filter::FamilyNameRegexFilter(
                        format!("^{}$", regex_escape(family)),
                    )),
                    Target::Prefix { family, prefix, .. } => {
                        let range = prefix_range(prefix);
                        f(row_filter::Filter::ColumnRangeFilter(ColumnRange {
                            family_name: family.clone(),
                            start_qualifier: Some(
                                column_range::StartQualifier::StartQualifierClosed(prefix.clone()),
                            ),
                            end_qualifier: match range.end {
                                Bound::Excluded(e) => {
                                    Some(column_range::EndQualifier::EndQualifierOpen(e))
                                }
                                _ => None,
                            },
                        }))
                    }
                    Target::Key | Target::Timestamp => return None,
                })
            })
            .collect();
        let marker = f(row_filter::Filter::Chain(row_filter::Chain {
            filters: vec![
                f(row_filter::Filter::CellsPerRowLimitFilter(1)),
                f(row_filter::Filter::StripValueTransformer(true)),
                f(row_filter::Filter::ApplyLabelTransformer(ROW_LABEL.into())),
            ],
        }));
        if selections.is_empty() {
            return marker;
        }
        let values = f(row_filter::Filter::Chain(row_filter::Chain {
            filters: vec![
                one(selections),
                f(row_filter::Filter::CellsPerColumnLimitFilter(1)),
            ],
        }));
        one(vec![values, marker])
    }

    /// The rows to read, as Bigtable's row set (None: every row).
    fn row_set(&self) -> Option<RowSet> {
        if self.keys.is_all() {
            return None;
        }
        let mut set = RowSet::default();
        for r in &self.keys.0 {
            if let Some(k) = r.as_point() {
                set.row_keys.push(k.to_vec());
                continue;
            }
            set.row_ranges.push(RowRange {
                start_key: match &r.start {
                    Bound::Unbounded => None,
                    Bound::Included(k) => Some(row_range::StartKey::StartKeyClosed(k.clone())),
                    Bound::Excluded(k) => Some(row_range::StartKey::StartKeyOpen(k.clone())),
                },
                end_key: match &r.end {
                    Bound::Unbounded => None,
                    Bound::Included(k) => Some(row_range::EndKey::EndKeyClosed(k.clone())),
                    Bound::Excluded(k) => Some(row_range::EndKey::EndKeyOpen(k.clone())),
                },
            });
        }
        Some(set)
    }
}

/// `s` as an RE2 regular expression matching exactly `s`.
fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if !c.is_ascii_alphanumeric() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl DisplayAs for HBaseScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "HBaseScan: table={} bigtable={}",
            self.table,
            self.instance.table_name(&self.bigtable)
        )?;
        if self.keys.is_all() {
            f.write_str(" rows=all")?;
        } else {
            let points: Vec<String> = self
                .keys
                .0
                .iter()
                .filter_map(|r| r.as_point().map(show_key))
                .collect();
            let ranges: Vec<String> = self
                .keys
                .0
                .iter()
                .filter(|r| r.as_point().is_none())
                .map(|r| r.to_string())
                .collect();
            if !points.is_empty() {
                write!(f, " row_keys=[{}]", points.join(", "))?;
            }
            if !ranges.is_empty() {
                write!(f, " row_ranges=[{}]", ranges.join(", "))?;
            }
            if points.is_empty() && ranges.is_empty() {
                f.write_str(" rows=none")?;
            }
        }
        let columns: Vec<String> = self
            .cell_columns()
            .into_iter()
            .map(|c| match &c.target {
                Target::Cell { family, qualifier } => {
                    format!("{family}:{}", show_key(qualifier))
                }
                Target::Family { family } => format!("{family}:*"),
                Target::Prefix { family, prefix, .. } => {
                    format!("{family}:{}*", show_key(prefix))
                }
                Target::Key | Target::Timestamp => String::new(),
            })
            .collect();
        write!(f, " columns=[{}]", columns.join(", "))?;
        if let Some(n) = self.limit {
            write!(f, " limit={n}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for HBaseScanExec {
    fn name(&self) -> &str {
        "HBaseScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let rows_read = MetricBuilder::new(&self.metrics).output_rows(partition);
        let request = ReadRowsRequest {
            table_name: self.instance.table_name(&self.bigtable),
            rows: self.row_set(),
            filter: Some(self.filter()),
            rows_limit: self.limit.and_then(|n| i64::try_from(n).ok()).unwrap_or(0),
            ..Default::default()
        };
        let decoder = Decoder {
            mapping: self.mapping.clone(),
            projection: self.projection.clone(),
            schema: self.schema.clone(),
            layout: self.layout.clone(),
        };
        let mut client = self.instance.data();
        // (Bigtable reads every row for an empty row set, and takes a limit of 0 as none.)
        let nothing = self.keys.0.is_empty() || self.limit == Some(0);
        let table = self.table.clone();
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        builder.spawn(async move {
            let run = async {
                if nothing {
                    return Ok(0usize);
                }
                let header = request.get_routing_header();
                let mut call = tonic::Request::new(request);
                call.metadata_mut()
                    .insert("x-goog-request-params", header.parse().map_err(remote_err)?);
                let mut answer = client
                    .get_client()
                    .read_rows(call)
                    .await
                    .map_err(remote_err)?
                    .into_inner();
                let mut merger = Merger::default();
                let mut rows = Vec::with_capacity(BATCH_ROWS);
                let mut total = 0usize;
                while let Some(message) = answer.message().await.map_err(remote_err)? {
                    for chunk in message.chunks {
                        merger.push(chunk, &mut rows)?;
                    }
                    if rows.len() >= BATCH_ROWS {
                        total += rows.len();
                        rows_read.add(rows.len());
                        let batch = decoder.batch(&std::mem::take(&mut rows))?;
                        if tx.send(Ok(batch)).await.is_err() {
                            return Ok(total);
                        }
                    }
                }
                merger.finish()?;
                total += rows.len();
                rows_read.add(rows.len());
                if !rows.is_empty() {
                    let batch = decoder.batch(&rows)?;
                    let _ = tx.send(Ok(batch)).await;
                }
                Ok::<usize, HandlerError>(total)
            };
            let n = run
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            tracing::info!(table = %table, rows = n, "HBase scan read its rows");
            Ok(())
        });
        Ok(builder.build())
    }
}

/// Turns rows read into batches of the projected columns.
struct Decoder {
    mapping: Arc<Mapping>,
    projection: Vec<usize>,
    schema: SchemaRef,
    layout: TextLayout,
}

impl Decoder {
    fn batch(&self, rows: &[Row]) -> HandlerResult<RecordBatch> {
        let null = self.layout.null.as_bytes();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.projection.len());
        for (field, &i) in self.schema.fields().iter().zip(&self.projection) {
            let c = &self.mapping.columns[i];
            // A cell (or key) holding the NULL text is NULL, as Hive reads it.
            let value = |v: &[u8]| v != null;
            let array = match &c.target {
                Target::Key => {
                    // Key conditions were read as byte ranges: a text key must be its text
                    // byte for byte, or the ranges and the decoded keys would disagree.
                    if !c.binary && is_text(&c.hive) {
                        if let Some((k, _)) =
                            rows.iter().find(|(k, _)| std::str::from_utf8(k).is_err())
                        {
                            return Err(HandlerError::Remote(format!(
                                "row key '{}' is not UTF-8 text: declare the key column {} BINARY to read this table",
                                show_key(k),
                                c.name
                            )));
                        }
                    }
                    let cells: Vec<Option<&[u8]>> = rows
                        .iter()
                        .map(|(k, _)| Some(k.as_slice()).filter(|k| value(k)))
                        .collect();
                    decode_column(&cells, &c.hive, field, c.binary, &self.layout)?
                }
                Target::Timestamp => self.timestamps(rows, field)?,
                Target::Cell { family, qualifier } => {
                    let cells: Vec<Option<&[u8]>> = rows
                        .iter()
                        .map(|(_, cells)| {
                            cells
                                .iter()
                                .find(|x| {
                                    x.labels.is_empty()
                                        && x.family == *family
                                        && x.qualifier == *qualifier
                                })
                                .map(|x| x.value.as_slice())
                                .filter(|v| value(v))
                        })
                        .collect();
                    decode_column(&cells, &c.hive, field, c.binary, &self.layout)?
                }
                Target::Family { family } | Target::Prefix { family, .. } => {
                    let (prefix, hide) = match &c.target {
                        Target::Prefix { prefix, hide, .. } => (prefix.as_slice(), *hide),
                        _ => (&[][..], false),
                    };
                    // Empty values are left out, as Hive's cell maps leave them out.
                    let entries: Vec<Vec<(&[u8], &[u8])>> = rows
                        .iter()
                        .map(|(_, cells)| {
                            cells
                                .iter()
                                .filter(|x| {
                                    x.labels.is_empty()
                                        && x.family == *family
                                        && x.qualifier.starts_with(prefix)
                                        && !x.value.is_empty()
                                })
                                .map(|x| {
                                    let q = if hide {
                                        &x.qualifier[prefix.len()..]
                                    } else {
                                        &x.qualifier[..]
                                    };
                                    (q, x.value.as_slice())
                                })
                                .collect()
                        })
                        .collect();
                    decode_map(
                        &entries,
                        &c.hive,
                        field,
                        c.key_binary,
                        c.binary,
                        &self.layout,
                    )?
                }
            };
            columns.push(array);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
            .map_err(remote_err)
    }

    /// The newest time of each row's mapped cells: HBase's milliseconds for a BIGINT column,
    /// a TIMESTAMP otherwise; NULL for a row with none.
    fn timestamps(&self, rows: &[Row], field: &Field) -> HandlerResult<ArrayRef> {
        let micros: Vec<Option<i64>> = rows
            .iter()
            .map(|(_, cells)| {
                cells
                    .iter()
                    .filter(|x| x.labels.is_empty())
                    .map(|x| x.timestamp_micros)
                    .max()
            })
            .collect();
        match field.data_type() {
            DataType::Int64 => Ok(Arc::new(Int64Array::from(
                micros
                    .into_iter()
                    .map(|m| m.map(|m| m.div_euclid(1000)))
                    .collect::<Vec<_>>(),
            ))),
            DataType::Timestamp(TimeUnit::Microsecond, None) => Ok(Arc::new(
                arrow::array::TimestampMicrosecondArray::from(micros),
            )),
            other => Err(HandlerError::Remote(format!(
                "a :timestamp column cannot be of type {other}"
            ))),
        }
    }
}
