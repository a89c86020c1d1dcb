//! INSERT INTO an HBase table: each row one Bigtable mutation (atomic for the row), sent in
//! batches as the rows come. As in HBase, an INSERT is not one transaction: a failure leaves
//! the rows of the batches already sent.
//!
//! A row's cells are its non-NULL values: one cell per `family:qualifier` column, one per entry
//! of a family or prefix map (qualifier = the key). The row key and `:timestamp` columns are
//! not cells; the cells' time is `hbase.put.timestamp` when set, else the row's `:timestamp`
//! value, else the server's clock.

use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::format::TextLayout;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::write::cast_columns;
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Schema, SchemaRef, TimeUnit};
use bigtable_rs::google::bigtable::v2::mutate_rows_request::Entry;
use bigtable_rs::google::bigtable::v2::{mutation, MutateRowsRequest, Mutation};
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;

use crate::client::{remote_err, Instance};
use crate::codec::encode_column;
use crate::location::Location;
use crate::mapping::{properties, Mapping, Target};

/// The cells' time in HBase's milliseconds, for every row (Hive's `hbase.put.timestamp`).
const PUT_TIMESTAMP: &str = "hbase.put.timestamp";
/// Bigtable's "the server's time" for a cell.
const SERVER_TIME: i64 = -1;
/// Mutations per MutateRows request (Bigtable takes at most 100,000).
const BATCH_MUTATIONS: usize = 20_000;

/// The cells of one row.
struct RowCells {
    key: Vec<u8>,
    cells: Vec<mutation::SetCell>,
}

/// Writes `rows` (the table's columns in order) into the Bigtable table. Returns the rows
/// written.
pub(crate) async fn insert(
    table: &Table,
    location: &Location,
    mapping: &Mapping,
    instance: &Instance,
    mut rows: SendableRecordBatchStream,
) -> HandlerResult<u64> {
    let put_time = match properties(table).get(PUT_TIMESTAMP) {
        None => None,
        Some(v) => match v.trim().parse::<i64>() {
            Ok(ms) if ms >= 0 => Some(ms.checked_mul(1000).ok_or_else(|| {
                HandlerError::Definition(format!("{PUT_TIMESTAMP}={v} is out of range"))
            })?),
            Ok(_) => None,
            Err(_) => {
                return Err(HandlerError::Definition(format!(
                    "{PUT_TIMESTAMP}={v} is not a number of milliseconds"
                )))
            }
        },
    };
    let layout = TextLayout::from_params(&table.sd.serde.parameters);
    let name = instance.table_name(&location.table);
    let mut client = instance.data();
    let mut pending: Vec<Entry> = Vec::new();
    let mut pending_mutations = 0usize;
    let mut written = 0u64;
    let schema: SchemaRef = Arc::new(Schema::new(
        mapping
            .columns
            .iter()
            .map(|c| c.hive.to_field(&c.name))
            .collect::<Vec<_>>(),
    ));
    while let Some(batch) = rows.next().await {
        let batch = batch.map_err(remote_err)?;
        if batch.num_columns() != schema.fields().len() {
            return Err(remote_err(format!(
                "an INSERT into {} sent {} columns for its {}",
                table.qualified_name(),
                batch.num_columns(),
                schema.fields().len()
            )));
        }
        let batch = cast_columns(&batch, &schema).map_err(remote_err)?;
        for row in row_cells(batch.columns(), mapping, &layout, put_time)? {
            pending_mutations += row.cells.len();
            pending.push(Entry {
                row_key: row.key,
                mutations: row
                    .cells
                    .into_iter()
                    .map(|c| Mutation {
                        mutation: Some(mutation::Mutation::SetCell(c)),
                    })
                    .collect(),
                ..Default::default()
            });
            if pending_mutations >= BATCH_MUTATIONS {
                written += send(&mut client, &name, std::mem::take(&mut pending)).await?;
                pending_mutations = 0;
            }
        }
    }
    if !pending.is_empty() {
        written += send(&mut client, &name, pending).await?;
    }
    Ok(written)
}

/// Sends one MutateRows request; every entry must succeed.
async fn send(
    client: &mut bigtable_rs::bigtable::BigTable,
    table_name: &str,
    entries: Vec<Entry>,
) -> HandlerResult<u64> {
    let n = entries.len();
    let request = MutateRowsRequest {
        table_name: table_name.to_string(),
        entries,
        ..Default::default()
    };
    let mut responses = client.mutate_rows(request).await.map_err(remote_err)?;
    let mut done = 0usize;
    while let Some(response) = responses.message().await.map_err(remote_err)? {
        for entry in response.entries {
            match entry.status {
                Some(s) if s.code != 0 => {
                    return Err(remote_err(format!(
                        "Bigtable refused a row of the INSERT: {} (code {}); rows sent before it are written",
                        s.message, s.code
                    )))
                }
                _ => done += 1,
            }
        }
    }
    if done != n {
        return Err(remote_err(format!(
            "Bigtable confirmed {done} of {n} rows of the INSERT"
        )));
    }
    Ok(n as u64)
}

/// The cells of each row of a batch.
fn row_cells(
    columns: &[ArrayRef],
    mapping: &Mapping,
    layout: &TextLayout,
    put_time: Option<i64>,
) -> HandlerResult<Vec<RowCells>> {
    let n = columns.first().map_or(0, |c| c.len());
    let key_col = mapping.key();
    let keys = encode_column(&columns[mapping.key], &key_col.hive, key_col.binary, layout)?;
    // Each row's cell time, in Bigtable's microseconds (whole milliseconds, as HBase's).
    let times: Vec<i64> = match (
        put_time,
        mapping
            .columns
            .iter()
            .position(|c| c.target == Target::Timestamp),
    ) {
        (Some(t), _) => vec![t; n],
        (None, Some(i)) => row_times(&columns[i])?,
        (None, None) => vec![SERVER_TIME; n],
    };
    let mut rows: Vec<RowCells> = keys
        .into_iter()
        .map(|key| {
            key.map(|key| RowCells {
                key,
                cells: Vec::new(),
            })
            .ok_or_else(|| HandlerError::Definition("HBase row key cannot be NULL".to_string()))
        })
        .collect::<HandlerResult<_>>()?;
    for (array, c) in columns.iter().zip(&mapping.columns) {
        match &c.target {
            Target::Key | Target::Timestamp => {}
            Target::Cell { family, qualifier } => {
                for (i, v) in encode_column(array, &c.hive, c.binary, layout)?
                    .into_iter()
                    .enumerate()
                {
                    if let Some(value) = v {
                        rows[i].cells.push(mutation::SetCell {
                            family_name: family.clone(),
                            column_qualifier: qualifier.clone(),
                            timestamp_micros: times[i],
                            value,
                        });
                    }
                }
            }
            Target::Family { family } | Target::Prefix { family, .. } => {
                // A hidden prefix is put back, so the entry reads back under its column.
                let prefix: &[u8] = match &c.target {
                    Target::Prefix {
                        prefix, hide: true, ..
                    } => prefix,
                    _ => &[],
                };
                let Some(map) = array.as_map_opt() else {
                    return Err(remote_err(format!("column {} is not a map", c.name)));
                };
                let (kt, vt) = match &c.hive {
                    apiary_storage::types::HiveType::Map(k, v) => (k.as_ref(), v.as_ref()),
                    _ => return Err(remote_err(format!("column {} is not a map", c.name))),
                };
                let keys = encode_column(map.keys(), kt, c.key_binary, layout)?;
                let values = encode_column(map.values(), vt, c.binary, layout)?;
                let offsets = map.value_offsets();
                for (i, row) in rows.iter_mut().enumerate() {
                    if map.is_null(i) {
                        continue;
                    }
                    let (from, to) = (
                        usize::try_from(offsets[i]).unwrap_or(0),
                        usize::try_from(offsets[i + 1]).unwrap_or(0),
                    );
                    for e in from..to {
                        // An entry with a NULL value has no cell (it would read as none).
                        if let (Some(k), Some(v)) = (&keys[e], &values[e]) {
                            let mut qualifier = prefix.to_vec();
                            qualifier.extend_from_slice(k);
                            row.cells.push(mutation::SetCell {
                                family_name: family.clone(),
                                column_qualifier: qualifier,
                                timestamp_micros: times[i],
                                value: v.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    if let Some(empty) = rows.iter().find(|r| r.cells.is_empty()) {
        // HBase's client refuses such a put ("No columns to insert"): a row exists only
        // through its cells.
        return Err(HandlerError::Definition(format!(
            "No columns to insert: every mapped column of the row with key '{}' is NULL, and an HBase row exists only through its cells",
            crate::keys::show_key(&empty.key)
        )));
    }
    Ok(rows)
}

/// Each row's `:timestamp` value as Bigtable's microseconds (NULL: the server's time).
fn row_times(array: &ArrayRef) -> HandlerResult<Vec<i64>> {
    let n = array.len();
    // A cell's time is not before 1970 (Bigtable refuses it).
    let to_micros = |ms: i64| {
        ms.checked_mul(1000).filter(|m| *m >= 0).ok_or_else(|| {
            HandlerError::Definition(format!(
                ":timestamp {ms} ms is out of range: a cell's time is from 1970-01-01 on"
            ))
        })
    };
    let mut out = Vec::with_capacity(n);
    match array.data_type() {
        DataType::Int64 => {
            let a = array.as_primitive::<arrow::datatypes::Int64Type>();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    SERVER_TIME
                } else {
                    to_micros(a.value(i))?
                });
            }
        }
        DataType::Timestamp(TimeUnit::Microsecond, None) => {
            let a = array.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
            for i in 0..n {
                // HBase keeps milliseconds: the microseconds below are dropped.
                out.push(if a.is_null(i) {
                    SERVER_TIME
                } else {
                    to_micros(a.value(i).div_euclid(1000))?
                });
            }
        }
        other => {
            return Err(HandlerError::Definition(format!(
                "a :timestamp column cannot be of type {other}"
            )))
        }
    }
    Ok(out)
}
