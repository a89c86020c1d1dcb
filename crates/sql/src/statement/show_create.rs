//! SHOW CREATE TABLE in Hive's layout.

use apiary_metastore::{Column, Constraint, ConstraintKind, Table, TableType};
use apiary_storage::handler::{CREATED_BY, PARTITION_COLUMNS};

fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

/// Hive's escaping of a property value or delimiter in DDL text (`\u0001` for control chars).
fn prop(v: &str) -> String {
    escape_ctl(&quote(v))
}

/// The statement that re-creates `table`, as Hive prints it.
pub fn show_create_table(t: &Table) -> String {
    let mut s = String::new();
    let kind = if t.table_type == TableType::External {
        "CREATE EXTERNAL TABLE"
    } else {
        "CREATE TABLE"
    };
    s.push_str(&format!("{kind} `{}`(\n", t.name));
    // A handler's partition columns (the last columns, named in a parameter) go back under
    // PARTITIONED BY.
    let handler_partitions: Vec<&str> = match t.parameters.get(PARTITION_COLUMNS) {
        Some(names) if t.storage_handler().is_some() => names.split(',').map(str::trim).collect(),
        _ => Vec::new(),
    };
    let (columns, partition_keys): (Vec<&Column>, Vec<&Column>) = if handler_partitions.is_empty() {
        (
            t.sd.columns.iter().collect(),
            t.partition_keys.iter().collect(),
        )
    } else {
        t.sd.columns
            .iter()
            .partition(|c| !handler_partitions.contains(&c.name.as_str()))
    };
    let cols: Vec<String> = columns
        .iter()
        .map(|c| match &c.comment {
            Some(cm) => format!("  `{}` {} COMMENT '{}'", c.name, c.type_name, quote(cm)),
            None => format!("  `{}` {}", c.name, c.type_name),
        })
        .collect();
    s.push_str(&cols.join(", \n"));
    s.push_str(")\n");
    if let Some(c) = t.parameters.get("comment") {
        s.push_str(&format!("COMMENT '{}'\n", quote(c)));
    }
    if !partition_keys.is_empty() {
        s.push_str("PARTITIONED BY ( \n");
        let keys: Vec<String> = partition_keys
            .iter()
            .map(|c| match &c.comment {
                Some(cm) => format!("  `{}` {} COMMENT '{}'", c.name, c.type_name, quote(cm)),
                None => format!("  `{}` {}", c.name, c.type_name),
            })
            .collect();
        s.push_str(&keys.join(", \n"));
        s.push_str(")\n");
    }
    if t.sd.num_buckets > 0 {
        s.push_str(&format!(
            "CLUSTERED BY ( \n  {}) \n",
            t.sd.bucket_columns.join(", \n  ")
        ));
        if !t.sd.sort_columns.is_empty() {
            let sorts: Vec<String> =
                t.sd.sort_columns
                    .iter()
                    .map(|c| format!("{} {}", c.column, if c.order == 1 { "ASC" } else { "DESC" }))
                    .collect();
            s.push_str(&format!("SORTED BY ( \n  {}) \n", sorts.join(", \n  ")));
        }
        s.push_str(&format!("INTO {} BUCKETS\n", t.sd.num_buckets));
    }
    if let Some(handler) = t.storage_handler() {
        s.push_str(&format!("ROW FORMAT SERDE \n  '{}' \n", t.sd.serde.library));
        s.push_str(&format!("STORED BY \n  '{}' \n", quote(handler)));
        if !t.sd.serde.parameters.is_empty() {
            s.push_str("WITH SERDEPROPERTIES ( \n");
            s.push_str(&props(&t.sd.serde.parameters));
            s.push_str(")\n");
        }
    } else {
        s.push_str(&format!("ROW FORMAT SERDE \n  '{}' \n", t.sd.serde.library));
        if !t.sd.serde.parameters.is_empty() {
            s.push_str("WITH SERDEPROPERTIES ( \n");
            s.push_str(&props(&t.sd.serde.parameters));
            s.push_str(") \n");
        }
        s.push_str(&format!(
            "STORED AS INPUTFORMAT \n  '{}' \nOUTPUTFORMAT \n  '{}'\n",
            t.sd.input_format.as_deref().unwrap_or(""),
            t.sd.output_format.as_deref().unwrap_or("")
        ));
    }
    if let Some(l) = &t.sd.location {
        let l = if l.starts_with('/') {
            format!("file:{l}")
        } else {
            l.clone()
        };
        s.push_str(&format!("LOCATION\n  '{}'\n", quote(&l)));
    }
    let shown: std::collections::BTreeMap<String, String> = t
        .parameters
        .iter()
        .filter(|(k, _)| {
            !matches!(k.as_str(), "EXTERNAL" | "comment" | "storage_handler")
                && k.as_str() != PARTITION_COLUMNS
                && k.as_str() != CREATED_BY
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !shown.is_empty() {
        s.push_str("TBLPROPERTIES (\n");
        s.push_str(&props(&shown));
        s.push_str(")\n");
    }
    let mut s = s.trim_end().to_string();
    for line in constraint_statements(t) {
        s.push('\n');
        s.push_str(&line);
    }
    s
}

/// The constraints of `t` as the ALTER TABLE statements that add them, in Hive 4's order:
/// primary key, foreign keys, unique keys, defaults, checks, NOT NULLs.
fn constraint_statements(t: &Table) -> Vec<String> {
    let table = t.qualified_name();
    let flags = |c: &Constraint| {
        format!(
            "{} {} {}",
            if c.enable { "ENABLE" } else { "DISABLE" },
            if c.validate { "VALIDATE" } else { "NOVALIDATE" },
            if c.rely { "RELY" } else { "NORELY" }
        )
    };
    let column_type = |name: &str| {
        t.sd.columns
            .iter()
            .chain(&t.partition_keys)
            .find(|c| c.name == name)
            .map(|c| c.type_name.clone())
            .unwrap_or_default()
    };
    let rank = |c: &Constraint| match c.kind {
        ConstraintKind::PrimaryKey => 0,
        ConstraintKind::ForeignKey { .. } => 1,
        ConstraintKind::Unique => 2,
        ConstraintKind::Default(_) => 3,
        ConstraintKind::Check(_) => 4,
        ConstraintKind::NotNull => 5,
    };
    let mut sorted: Vec<&Constraint> = t.constraints.iter().collect();
    sorted.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.name.cmp(&b.name)));
    sorted
        .into_iter()
        .map(|c| {
            let column = c.columns.first().cloned().unwrap_or_default();
            let body = match &c.kind {
                ConstraintKind::PrimaryKey => {
                    format!("ADD CONSTRAINT {} PRIMARY KEY ({})", c.name, c.columns.join(","))
                }
                ConstraintKind::Unique => {
                    format!("ADD CONSTRAINT {} UNIQUE ({})", c.name, c.columns.join(","))
                }
                ConstraintKind::ForeignKey {
                    parent_database,
                    parent_table,
                    parent_columns,
                } => format!(
                    "ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {parent_database}.{parent_table}({})",
                    c.name,
                    c.columns.join(","),
                    parent_columns.join(",")
                ),
                ConstraintKind::Check(e) => format!("ADD CONSTRAINT {} CHECK ({e})", c.name),
                ConstraintKind::Default(v) => format!(
                    "CHANGE COLUMN {column} {column} {} CONSTRAINT {} DEFAULT {v}",
                    column_type(&column),
                    c.name
                ),
                ConstraintKind::NotNull => format!(
                    "CHANGE COLUMN {column} {column} {} CONSTRAINT {} NOT NULL",
                    column_type(&column),
                    c.name
                ),
            };
            format!("ALTER TABLE {table} {body} {};", flags(c))
        })
        .collect()
}

fn props(p: &std::collections::BTreeMap<String, String>) -> String {
    p.iter()
        .map(|(k, v)| format!("  '{}'='{}'", prop(k), prop(v)))
        .collect::<Vec<_>>()
        .join(", \n")
}

/// Control characters as Hive prints them in DESCRIBE (`\u0001`).
pub(crate) fn escape_ctl(v: &str) -> String {
    v.chars()
        .map(|c| {
            if (c as u32) < 0x20 && c != '\t' && c != '\n' {
                format!("\\u{:04X}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}
