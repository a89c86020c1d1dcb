//! DESCRIBE [EXTENDED | FORMATTED] output in Hive's layout (`DESCRIBE t`, `DESCRIBE
//! FORMATTED t`, `DESCRIBE t col`, `DESCRIBE EXTENDED t PARTITION (ds='2026-12-07')`).

use std::collections::BTreeMap;

use apiary_metastore::{Column, Constraint, ConstraintKind, Table};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::prepared::{rows, Prepared};
use crate::statement::show_create::escape_ctl;

/// DESCRIBE [EXTENDED | FORMATTED] output.
pub(super) fn describe(
    table: &Table,
    extended: bool,
    formatted: bool,
    column: Option<&str>,
) -> Result<Prepared, SqlError> {
    let cols = ["col_name", "data_type", "comment"];
    // Over HiveServer2 Hive writes the column rows unpadded, FORMATTED too (its
    // `isOutputPadded` is false for a HiveServer2 query): dbt-hive reads `describe formatted`
    // and quotes those names in the statements it writes. Only the "Key:" rows of the
    // detailed information keep Hive's 20-character alignment.
    let col_row = |c: &Column| {
        vec![
            Some(c.name.clone()),
            Some(c.type_name.clone()),
            Some(c.comment.clone().unwrap_or_default()),
        ]
    };
    let header = || {
        vec![
            Some("# col_name".to_string()),
            Some("data_type".to_string()),
            Some("comment".to_string()),
        ]
    };
    if let Some(name) = column {
        let c = table
            .sd
            .columns
            .iter()
            .chain(&table.partition_keys)
            .find(|c| c.name == name)
            .ok_or_else(|| SqlError::hive(HiveError::InvalidColumn, format!(" {name}")))?;
        return Ok(rows(&cols, vec![col_row(c)]));
    }
    let mut out: Vec<Vec<Option<String>>> = Vec::new();
    let blank = || vec![Some(String::new()), None, None];
    if formatted {
        out.push(header());
    }
    out.extend(table.sd.columns.iter().map(col_row));
    if !formatted {
        // Plain DESCRIBE lists the partition keys with the columns, then again below.
        out.extend(table.partition_keys.iter().map(col_row));
    }
    if !table.partition_keys.is_empty() {
        out.push(blank());
        out.push(vec![Some("# Partition Information".into()), None, None]);
        out.push(header());
        out.extend(table.partition_keys.iter().map(col_row));
    }
    if extended {
        out.push(blank());
        out.push(vec![
            Some("Detailed Table Information".into()),
            Some(thrift_text(table)),
            Some(String::new()),
        ]);
        for (i, line) in extended_constraints(table).into_iter().enumerate() {
            out.push(if i == 0 {
                vec![Some("Constraints".into()), Some(line), Some(String::new())]
            } else {
                vec![Some(line), None, None]
            });
        }
    } else if formatted {
        let kv = |k: &str, v: &str| vec![Some(pad(k)), Some(pad(v)), Some(String::new())];
        out.push(blank());
        out.push(vec![
            Some("# Detailed Table Information".into()),
            None,
            None,
        ]);
        out.push(kv("Database:", &table.database));
        out.push(kv("OwnerType:", "USER"));
        out.push(kv("Owner:", &table.owner));
        out.push(kv("CreateTime:", &format_time(table.create_time)));
        out.push(kv("LastAccessTime:", "UNKNOWN"));
        out.push(kv("Retention:", "0"));
        if let Some(l) = &table.sd.location {
            out.push(kv("Location:", &location_text(l)));
        }
        out.push(kv("Table Type:", table.table_type.as_str()));
        out.push(vec![Some("Table Parameters:".into()), None, None]);
        for (k, v) in &table.parameters {
            out.push(vec![Some(String::new()), Some(pad(k)), Some(pad(v))]);
        }
        if table.is_view() {
            let text = table.view_text.as_deref().unwrap_or("");
            out.push(blank());
            out.push(vec![Some("# View Information".into()), None, None]);
            out.push(kv("View Original Text:", text));
            out.push(kv("View Expanded Text:", text));
            return Ok(rows(&cols, out));
        }
        out.push(blank());
        out.push(vec![Some("# Storage Information".into()), None, None]);
        out.push(kv("SerDe Library:", &table.sd.serde.library));
        out.push(kv(
            "InputFormat:",
            table.sd.input_format.as_deref().unwrap_or("null"),
        ));
        out.push(kv(
            "OutputFormat:",
            table.sd.output_format.as_deref().unwrap_or("null"),
        ));
        out.push(kv(
            "Compressed:",
            if table.sd.compressed { "Yes" } else { "No" },
        ));
        out.push(kv("Num Buckets:", &table.sd.num_buckets.to_string()));
        out.push(kv(
            "Bucket Columns:",
            &format!("[{}]", table.sd.bucket_columns.join(", ")),
        ));
        let sorts: Vec<String> = table
            .sd
            .sort_columns
            .iter()
            .map(|s| format!("Order(col:{}, order:{})", s.column, s.order))
            .collect();
        out.push(kv("Sort Columns:", &format!("[{}]", sorts.join(", "))));
        if !table.sd.serde.parameters.is_empty() {
            out.push(vec![Some("Storage Desc Params:".into()), None, None]);
            for (k, v) in &table.sd.serde.parameters {
                out.push(vec![
                    Some(String::new()),
                    Some(pad(k)),
                    Some(pad(&escape_ctl(v))),
                ]);
            }
        }
        formatted_constraints(table, &mut out);
    }
    Ok(rows(&cols, out))
}

/// The constraints of `table` of one kind, by name.
fn of_kind(table: &Table, kind: fn(&ConstraintKind) -> bool) -> Vec<&Constraint> {
    let mut found: Vec<&Constraint> = table.constraints.iter().filter(|c| kind(&c.kind)).collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Hive's kinds in the order DESCRIBE lists them.
const KINDS: [fn(&ConstraintKind) -> bool; 6] = [
    |k| matches!(k, ConstraintKind::PrimaryKey),
    |k| matches!(k, ConstraintKind::ForeignKey { .. }),
    |k| matches!(k, ConstraintKind::Unique),
    |k| matches!(k, ConstraintKind::NotNull),
    |k| matches!(k, ConstraintKind::Default(_)),
    |k| matches!(k, ConstraintKind::Check(_)),
];

/// DESCRIBE EXTENDED's constraint lines: one per kind, as Hive's metastore objects print.
fn extended_constraints(table: &Table) -> Vec<String> {
    let qualified = table.qualified_name();
    let mut lines = Vec::new();
    for kind in KINDS {
        let found = of_kind(table, kind);
        let Some(first) = found.first() else {
            continue;
        };
        let column = |c: &Constraint| c.columns.first().cloned().unwrap_or_else(|| "null".into());
        let entries: Vec<String> = found
            .iter()
            .map(|c| match &c.kind {
                ConstraintKind::ForeignKey {
                    parent_database,
                    parent_table,
                    parent_columns,
                } => format!(
                    "{{Constraint Name: {}, {}}}",
                    c.name,
                    c.columns
                        .iter()
                        .zip(parent_columns)
                        .enumerate()
                        .map(|(i, (col, parent))| format!(
                            "(Parent Column Name: {parent_database}.{parent_table}.{parent}, Column Name: {col}, Key Sequence: {})",
                            i + 1
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                ConstraintKind::Unique => format!(
                    "{{Constraint Name: {}, {}}}",
                    c.name,
                    c.columns
                        .iter()
                        .enumerate()
                        .map(|(i, col)| format!("(Column Name: {col}, Key Sequence: {})", i + 1))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                ConstraintKind::NotNull => {
                    format!("{{Constraint Name: {}, Column Name: {}}}", c.name, column(c))
                }
                ConstraintKind::Default(v) => format!(
                    "{{Constraint Name: {}, (Column Name: {}, Default Value: {v})}}",
                    c.name,
                    column(c)
                ),
                ConstraintKind::Check(e) => format!(
                    "{{Constraint Name: {}, (Column Name: {}, Check Expression : {e})}}",
                    c.name,
                    column(c)
                ),
                ConstraintKind::PrimaryKey => String::new(),
            })
            .collect();
        lines.push(if first.kind == ConstraintKind::PrimaryKey {
            format!(
                "Primary Key for {qualified}:[{}], Constraint Name: {}",
                first.columns.join(","),
                first.name
            )
        } else {
            format!(
                "{} for {qualified}:[ {}]",
                first.kind.title(),
                entries.join(", ")
            )
        });
    }
    lines
}

/// DESCRIBE FORMATTED's `# Constraints` section, in Hive's layout.
fn formatted_constraints(table: &Table, out: &mut Vec<Vec<Option<String>>>) {
    if table.constraints.is_empty() {
        return;
    }
    let blank = || vec![Some(String::new()), None, None];
    let kv = |k: &str, v: &str| vec![Some(pad(k)), Some(pad(v)), Some(String::new())];
    out.push(blank());
    out.push(vec![Some("# Constraints".into()), None, None]);
    for kind in KINDS {
        let found = of_kind(table, kind);
        if found.is_empty() {
            continue;
        }
        out.push(blank());
        out.push(vec![
            Some(format!("# {}", found[0].kind.title())),
            None,
            None,
        ]);
        out.push(kv("Table:", &table.qualified_name()));
        for c in found {
            out.push(kv("Constraint Name:", &c.name));
            let column = c.columns.first().cloned().unwrap_or_else(|| "null".into());
            match &c.kind {
                ConstraintKind::PrimaryKey => {
                    for col in &c.columns {
                        out.push(kv("Column Name:", col));
                    }
                    continue;
                }
                ConstraintKind::NotNull => out.push(kv("Column Name:", &column)),
                ConstraintKind::ForeignKey {
                    parent_database,
                    parent_table,
                    parent_columns,
                } => {
                    for (i, (col, parent)) in c.columns.iter().zip(parent_columns).enumerate() {
                        out.push(vec![
                            Some(pad(&format!(
                                "Parent Column Name:{parent_database}.{parent_table}.{parent}"
                            ))),
                            Some(pad(&format!("Column Name:{col}"))),
                            Some(pad(&format!("Key Sequence:{}", i + 1))),
                        ]);
                    }
                }
                ConstraintKind::Unique => {
                    for (i, col) in c.columns.iter().enumerate() {
                        out.push(kv(
                            &format!("Column Name:{col}"),
                            &format!("Key Sequence:{}", i + 1),
                        ));
                    }
                }
                ConstraintKind::Default(v) => out.push(kv(
                    &format!("Column Name:{column}"),
                    &format!("Default Value:{v}"),
                )),
                ConstraintKind::Check(e) => out.push(kv(
                    &format!("Column Name:{column}"),
                    &format!("Check Value:{e}"),
                )),
            }
            out.push(blank());
        }
    }
}

/// A table as Hive's DESCRIBE EXTENDED prints it: the metastore object's Thrift text form.
pub(super) fn thrift_text(t: &Table) -> String {
    let map = |m: &BTreeMap<String, String>| {
        format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", escape_ctl(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let cols = |cs: &[Column]| {
        format!(
            "[{}]",
            cs.iter()
                .map(|c| format!(
                    "FieldSchema(name:{}, type:{}, comment:{})",
                    c.name,
                    c.type_name,
                    c.comment.as_deref().unwrap_or("null")
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let sorts =
        t.sd.sort_columns
            .iter()
            .map(|s| format!("Order(col:{}, order:{})", s.column, s.order))
            .collect::<Vec<_>>()
            .join(", ");
    format!(
        "Table(tableName:{}, dbName:{}, owner:{}, createTime:{}, lastAccessTime:0, retention:0, \
         sd:StorageDescriptor(cols:{}, location:{}, inputFormat:{}, outputFormat:{}, compressed:{}, \
         numBuckets:{}, serdeInfo:SerDeInfo(name:null, serializationLib:{}, parameters:{}), \
         bucketCols:[{}], sortCols:[{}], parameters:{{}}), partitionKeys:{}, parameters:{}, \
         viewOriginalText:{}, viewExpandedText:{}, tableType:{})",
        t.name,
        t.database,
        t.owner,
        t.create_time,
        cols(&t.sd.columns),
        t.sd.location.as_deref().map(location_text).unwrap_or_else(|| "null".into()),
        t.sd.input_format.as_deref().unwrap_or("null"),
        t.sd.output_format.as_deref().unwrap_or("null"),
        t.sd.compressed,
        t.sd.num_buckets,
        t.sd.serde.library,
        map(&t.sd.serde.parameters),
        t.sd.bucket_columns.join(", "),
        sorts,
        cols(&t.partition_keys),
        map(&t.parameters),
        t.view_text.as_deref().unwrap_or("null"),
        t.view_text.as_deref().unwrap_or("null"),
        t.table_type.as_str()
    )
}

pub(super) fn format_time(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%a %b %d %H:%M:%S UTC %Y").to_string())
        .unwrap_or_else(|| "UNKNOWN".into())
}

pub(super) fn location_text(loc: &str) -> String {
    if loc.starts_with('/') {
        format!("file:{loc}")
    } else {
        loc.to_string()
    }
}
