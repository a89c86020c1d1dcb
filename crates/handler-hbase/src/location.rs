//! Where a Hive table's rows are: the Bigtable project, instance and table its properties
//! name.

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerError, HandlerResult};

use crate::mapping::properties;

/// The Bigtable table a Hive table is (TBLPROPERTIES as written, SERDEPROPERTIES lower-cased).
const TABLE_NAME: &str = "hbase.table.name";
/// The Bigtable project and instance (the keys Bigtable's HBase connector reads).
const PROJECT: &str = "google.bigtable.project.id";
const INSTANCE: &str = "google.bigtable.instance.id";
/// Hive's prefix of names in the default database, left out of the derived table name.
const DEFAULT_PREFIX: &str = "default.";

fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

/// Where a Hive table's rows are: a Bigtable project, instance and table id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) project: String,
    pub(crate) instance: String,
    pub(crate) table: String,
}

impl Location {
    /// The location `table`'s properties name, as Hive's HBaseMetaHook derives the name.
    pub(crate) fn of(table: &Table) -> HandlerResult<Location> {
        let name = match (
            table.parameters.get(TABLE_NAME),
            table.sd.serde.parameters.get(TABLE_NAME),
        ) {
            (Some(n), _) => n.clone(),
            (None, Some(n)) => n.to_lowercase(),
            (None, None) => {
                let full = format!("{}.{}", table.database, table.name).to_lowercase();
                full.strip_prefix(DEFAULT_PREFIX)
                    .map(str::to_string)
                    .unwrap_or(full)
            }
        };
        // Bigtable's table ids: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 characters.
        let valid = name.len() <= 50
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(def_err(format!(
                "'{name}' cannot name a Bigtable table (letters, digits, '_', '-' and '.', at most 50, not starting with '-' or '.'): set {TABLE_NAME}"
            )));
        }
        let props = properties(table);
        let required = |key: &str| {
            props
                .get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    def_err(format!(
                        "{key} must be set in TBLPROPERTIES: the Bigtable {} that holds HBase table {name}",
                        if key == PROJECT { "project" } else { "instance" }
                    ))
                })
        };
        Ok(Location {
            project: required(PROJECT)?,
            instance: required(INSTANCE)?,
            table: name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::tests::table;

    #[test]
    fn the_table_name_is_derived_as_hive_derives_it() {
        let props = [(PROJECT, "p"), (INSTANCE, "i")];
        let mut t = table(&[("k", "string"), ("a", "string")], ":key,cf:a", &props);
        assert_eq!(Location::of(&t).unwrap().table, "t");
        t.database = "Sales".into();
        assert_eq!(Location::of(&t).unwrap().table, "sales.t");
        t.sd.serde
            .parameters
            .insert(TABLE_NAME.into(), "Other".into());
        assert_eq!(Location::of(&t).unwrap().table, "other");
        t.parameters.insert(TABLE_NAME.into(), "Kept".into());
        assert_eq!(Location::of(&t).unwrap().table, "Kept");
        t.parameters.insert(TABLE_NAME.into(), "no/slash".into());
        assert!(Location::of(&t).is_err());
        t.parameters.remove(TABLE_NAME);
        t.sd.serde.parameters.remove(PROJECT);
        let e = Location::of(&t).unwrap_err().to_string();
        assert!(
            e.starts_with("google.bigtable.project.id must be set"),
            "{e}"
        );
    }
}
