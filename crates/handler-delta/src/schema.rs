//! Hive's columns and a Delta table's schema: the Delta schema a managed table is created
//! with, and the check of an external table's declared columns against its log, worded as
//! Hive's connector words it.

use apiary_metastore::{Column, Table};
use apiary_storage::handler::{HandlerResult, PARTITION_COLUMNS};
use apiary_storage::native::column_field;
use apiary_storage::types::HiveType;
use arrow::datatypes::{Field, Schema};
use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
use deltalake::kernel::StructField;

use crate::errors::def_err;

/// The partition columns named in a table's parameters.
pub(crate) fn partition_columns(table: &Table) -> Vec<String> {
    table
        .parameters
        .get(PARTITION_COLUMNS)
        .map(|v| {
            v.split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The Delta columns of a new managed table.
pub(crate) fn delta_columns(columns: &[Column]) -> HandlerResult<Vec<StructField>> {
    columns
        .iter()
        .map(|c| {
            let field = column_field(c).map_err(|e| def_err(e.to_string()))?;
            let field: StructField = (&field).try_into_kernel().map_err(|e| {
                def_err(format!(
                    "column {} of type {} cannot be a Delta column: {e}",
                    c.name, c.type_name
                ))
            })?;
            Ok(field)
        })
        .collect()
}

/// The Hive type a Delta column is read as: a Delta `timestamp` (an instant) and
/// `timestamp_ntz` are both Hive's TIMESTAMP, as Hive's connector reads them.
pub(crate) fn hive_type(field: &Field) -> HiveType {
    match HiveType::of_field(field) {
        HiveType::TimestampLocalTz => HiveType::Timestamp,
        t => t,
    }
}

/// Checks the declared columns against the Delta table's (names, ignoring case, order and
/// types), as Hive's connector does.
pub(crate) fn check(table: &Table, delta: &Schema) -> HandlerResult<()> {
    let existing: Vec<(String, HiveType)> = delta
        .fields()
        .iter()
        .map(|f| (f.name().to_ascii_lowercase(), hive_type(f)))
        .collect();
    let specified: Vec<(String, Option<HiveType>)> = table
        .sd
        .columns
        .iter()
        .map(|c| (c.name.to_ascii_lowercase(), HiveType::parse(&c.type_name)))
        .collect();
    let same = existing.len() == specified.len()
        && existing
            .iter()
            .zip(&specified)
            .all(|((en, et), (sn, st))| en == sn && st.as_ref() == Some(et));
    if same {
        return Ok(());
    }
    let mut diffs = Vec::new();
    let missing: Vec<&str> = existing
        .iter()
        .filter(|(n, _)| !specified.iter().any(|(s, _)| s == n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        diffs.push(format!(
            "Specified schema is missing field(s): {}",
            missing.join(", ")
        ));
    }
    let additional: Vec<&str> = specified
        .iter()
        .filter(|(n, _)| !existing.iter().any(|(e, _)| e == n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !additional.is_empty() {
        diffs.push(format!(
            "Specified schema has additional field(s): {}",
            additional.join(", ")
        ));
    }
    for (name, declared) in &specified {
        if let Some((_, found)) = existing.iter().find(|(e, _)| e == name) {
            if declared.as_ref() != Some(found) {
                let shown = table
                    .sd
                    .columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                    .map(|c| c.type_name.to_ascii_lowercase())
                    .unwrap_or_default();
                diffs.push(format!(
                    "Specified type for {name} is different from existing schema:\nSpecified: {shown}\nExisting:  {found}"
                ));
            }
        }
    }
    let diffs = if diffs.is_empty() {
        "Column order is different".to_string()
    } else {
        diffs.join("\n")
    };
    let delta_tree: Vec<String> = delta
        .fields()
        .iter()
        .map(|f| {
            format!(
                " |-- {}: {} (nullable = {})",
                f.name(),
                hive_type(f),
                f.is_nullable()
            )
        })
        .collect();
    let hive_schema: Vec<String> = table
        .sd
        .columns
        .iter()
        .map(|c| format!("{}: {}", c.name, c.type_name))
        .collect();
    Err(def_err(format!(
        "The Delta table schema is not the same as the Hive schema:\n\n{diffs}\n\nDelta table schema:\nroot\n{}\n\nHive schema:\n{}\n\nPlease update your Hive table's schema to match the Delta table schema.",
        delta_tree.join("\n"),
        hive_schema.join("\n")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiary_metastore::{SerDeInfo, StorageDescriptor, TableType};
    use arrow::datatypes::DataType;

    fn table(cols: &[(&str, &str)]) -> Table {
        Table {
            database: "default".into(),
            name: "t".into(),
            owner: "u".into(),
            create_time: 0,
            table_type: TableType::External,
            sd: StorageDescriptor {
                columns: cols
                    .iter()
                    .map(|(n, t)| Column {
                        name: n.to_string(),
                        type_name: t.to_string(),
                        comment: None,
                    })
                    .collect(),
                location: None,
                input_format: None,
                output_format: None,
                serde: SerDeInfo::default(),
                compressed: false,
                num_buckets: -1,
                bucket_columns: vec![],
                sort_columns: vec![],
            },
            partition_keys: vec![],
            parameters: Default::default(),
            view_text: None,
            view_database: None,
            secrets: Default::default(),
            data_token: None,
            constraints: Vec::new(),
        }
    }

    #[test]
    fn declared_columns_are_checked_as_hives_connector_words_it() {
        let delta = Schema::new(vec![
            Field::new("c1", DataType::Int32, true),
            Field::new("C2", DataType::Utf8, true),
        ]);
        assert!(check(&table(&[("c1", "int"), ("c2", "string")]), &delta).is_ok());
        let cases = [
            (
                vec![("c1", "int"), ("c2", "string"), ("c3", "boolean")],
                "Specified schema has additional field(s): c3",
            ),
            (
                vec![("c1", "int"), ("c3", "string")],
                "Specified schema is missing field(s): c2",
            ),
            (
                vec![("c2", "string"), ("c1", "int")],
                "Column order is different",
            ),
            (
                vec![("c1", "int"), ("c2", "tinyint")],
                "Specified type for c2 is different from existing schema",
            ),
        ];
        for (cols, expected) in cases {
            let e = check(&table(&cols), &delta)
                .expect_err("differs")
                .to_string();
            assert!(
                e.starts_with("The Delta table schema is not the same as the Hive schema"),
                "{e}"
            );
            assert!(e.contains(expected), "{e}");
            assert!(
                e.ends_with(
                    "Please update your Hive table's schema to match the Delta table schema."
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn a_delta_instant_is_a_hive_timestamp() {
        let delta = Schema::new(vec![Field::new(
            "ts",
            DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into())),
            true,
        )]);
        assert!(check(&table(&[("ts", "timestamp")]), &delta).is_ok());
    }
}
