//! The JDBC storage handler (`org.apache.hive.storage.jdbc.JdbcStorageHandler`, short name
//! JDBC): a table in a SQL database, named by Hive's properties (`hive.sql.database.type`,
//! `hive.sql.jdbc.url`, `hive.sql.dbcp.username`, `hive.sql.dbcp.password`, `hive.sql.table` or
//! `hive.sql.query`, `hive.sql.schema`). PostgreSQL, MySQL/MariaDB and SQLite are spoken
//! natively (no JVM), each in its own module behind one trait ([`remote::RemoteDb`]).
//!
//! Past Hive: a managed table creates the remote table (tagged with the operation that made
//! it: a table comment in PostgreSQL and MySQL, a row of `apiary_tags` in SQLite, written with
//! the CREATE) and DROP removes it ([`hook`]); an external table is checked against the remote
//! columns. Scans push projection, filters and limit into the remote SQL, which EXPLAIN shows
//! ([`scan`]); aggregates over one table run remotely too ([`pushdown`]).

#![warn(missing_docs)]

mod connect;
mod hook;
mod mysql;
mod postgres;
mod properties;
mod pushdown;
mod remote;
mod scan;
mod sqlite;

use std::collections::BTreeMap;
use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::{
    AlterOp, Capabilities, HandlerError, HandlerResult, JobProperties, MetaHook, StorageHandler,
    WriteMode,
};
use apiary_storage::native::column_field;
use apiary_storage::types::HiveType;
use apiary_storage::Reach;
use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::TableProvider;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
pub use pushdown::AggregatePushdown;
pub use scan::JdbcScanExec;

use crate::connect::{remote_of, remote_of_table};
use crate::hook::JdbcHook;
use crate::properties::PASSWORD;
use crate::remote::{all_properties, def_err, literal, quoted, remote_columns, remote_err, Kind};
use crate::scan::JdbcTable;

/// Hive's class name.
pub const CLASS: &str = "org.apache.hive.storage.jdbc.JdbcStorageHandler";
const SERDE: &str = "org.apache.hive.storage.jdbc.JdbcSerDe";
/// Table property: `false` reads every row and filters and aggregates here (for comparison).
pub const PUSHDOWN: &str = "apiary.jdbc.pushdown";
/// Rows per INSERT statement sent to the remote database.
const INSERT_ROWS: usize = 500;

/// The JDBC handler.
#[derive(Debug, Clone, Default)]
pub struct JdbcHandler {
    hook: JdbcHook,
}

impl JdbcHandler {
    /// A handler whose tables may reach only what `reach` allows (hosts, and the files of
    /// `jdbc:sqlite:` URLs).
    pub fn new(reach: Arc<Reach>) -> Self {
        Self {
            hook: JdbcHook { reach },
        }
    }

    fn reach(&self) -> &Reach {
        &self.hook.reach
    }
}

#[async_trait]
impl StorageHandler for JdbcHandler {
    fn class_name(&self) -> &'static str {
        CLASS
    }

    fn short_name(&self) -> &'static str {
        "JDBC"
    }

    fn serde_class(&self) -> &'static str {
        SERDE
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            managed: true,
            external: true,
            insert: true,
            overwrite: true,
            alter: vec![AlterOp::AddProps, AlterOp::DropProps, AlterOp::AddCols],
            ..Capabilities::default()
        }
    }

    fn secret_keys(&self) -> &'static [&'static str] {
        &[PASSWORD]
    }

    fn local_paths(&self, properties: &BTreeMap<String, String>) -> Vec<String> {
        // A `jdbc:sqlite:` URL names a database file on this machine.
        properties
            .get("hive.sql.jdbc.url")
            .and_then(|url| url.trim().strip_prefix("jdbc:sqlite:"))
            .map(|path| vec![path.to_string()])
            .unwrap_or_default()
    }

    fn optimizer_rules(&self) -> Vec<Arc<dyn datafusion::optimizer::OptimizerRule + Send + Sync>> {
        vec![Arc::new(AggregatePushdown)]
    }

    fn validate(&self, table: &Table) -> HandlerResult<()> {
        remote_of_table(self.reach(), table).map(|_| ())
    }

    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        Some(&self.hook)
    }

    fn job_properties(&self, table: &Table) -> JobProperties {
        JobProperties(
            all_properties(table)
                .into_iter()
                .filter(|(k, _)| k.starts_with("hive.sql.") || k == PUSHDOWN)
                .collect(),
        )
    }

    async fn table_provider(
        &self,
        table: &Table,
        job: JobProperties,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        let remote = remote_of(self.reach(), &job.0)?;
        let fields = table
            .sd
            .columns
            .iter()
            .map(column_field)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| def_err(e.to_string()))?;
        // The remote names of the declared columns (same order), as the database spells them.
        let remote_names = match &remote.table {
            Some(_) => remote_columns(&remote).await?.unwrap_or_default(),
            None => Vec::new(),
        };
        let names = table
            .sd
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                remote_names
                    .get(i)
                    .filter(|r| r.eq_ignore_ascii_case(&c.name))
                    .cloned()
                    .unwrap_or_else(|| c.name.clone())
            })
            .collect();
        let pushdown = !job
            .get(PUSHDOWN)
            .is_some_and(|v| v.eq_ignore_ascii_case("false"));
        Ok(Arc::new(JdbcTable {
            remote,
            schema: Arc::new(Schema::new(fields)),
            names,
            hive_name: table.qualified_name(),
            pushdown,
        }))
    }

    async fn insert(
        &self,
        table: &Table,
        job: JobProperties,
        mut rows: SendableRecordBatchStream,
        mode: WriteMode,
    ) -> HandlerResult<u64> {
        let overwrite = match mode {
            WriteMode::Append => false,
            WriteMode::Overwrite => true,
            WriteMode::OverwritePartitions(_) => {
                return Err(HandlerError::Unsupported(format!(
                    "table {} has no partitions",
                    table.qualified_name()
                )))
            }
        };
        let remote = remote_of(self.reach(), &job.0)?;
        let Some(name) = remote.table.clone() else {
            return Err(HandlerError::Unsupported(format!(
                "table {} reads hive.sql.query and cannot be written",
                table.qualified_name()
            )));
        };
        let present = match remote_columns(&remote).await? {
            Some(c) => c,
            None => {
                return Err(remote_err(format!(
                    "the remote table {} does not exist",
                    name.sql()
                )))
            }
        };
        // The declared columns, by their remote spelling.
        let cols: Vec<String> = table
            .sd
            .columns
            .iter()
            .map(|c| {
                let remote_name = present
                    .iter()
                    .find(|p| p.eq_ignore_ascii_case(&c.name))
                    .cloned()
                    .unwrap_or_else(|| c.name.clone());
                quoted(remote.kind, &remote_name)
            })
            .collect();
        let target: SchemaRef = Arc::new(Schema::new(
            table
                .sd
                .columns
                .iter()
                .map(column_field)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| def_err(e.to_string()))?,
        ));
        let types: Vec<HiveType> = table
            .sd
            .columns
            .iter()
            .map(|c| HiveType::parse(&c.type_name).unwrap_or(HiveType::String))
            .collect();
        let head = format!("INSERT INTO {} ({}) VALUES ", name.sql(), cols.join(", "));
        // One remote transaction, fed chunk by chunk as rows arrive (memory stays bounded).
        let mut writer = remote.db.begin().await?;
        if overwrite {
            writer.exec(format!("DELETE FROM {}", name.sql())).await?;
        }
        let mut count = 0u64;
        let mut values: Vec<String> = Vec::new();
        let strict = arrow::compute::CastOptions {
            safe: false,
            ..Default::default()
        };
        while let Some(batch) = rows.next().await {
            let batch = batch.map_err(remote_err)?;
            if batch.num_columns() != cols.len() {
                return Err(remote_err(format!(
                    "expected {} columns, got {}",
                    cols.len(),
                    batch.num_columns()
                )));
            }
            // Values as the declared types; one that does not convert is an error, not NULL.
            let columns = batch
                .columns()
                .iter()
                .zip(target.fields())
                .map(|(a, f)| arrow::compute::cast_with_options(a, f.data_type(), &strict))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| def_err(format!("a value does not fit its column: {e}")))?;
            for r in 0..batch.num_rows() {
                let row: Vec<String> = columns
                    .iter()
                    .zip(&types)
                    .map(|(a, t)| sql_value(a.as_ref(), r, t, remote.kind))
                    .collect::<HandlerResult<_>>()?;
                values.push(format!("({})", row.join(", ")));
                count += 1;
                if values.len() == INSERT_ROWS {
                    writer.exec(format!("{head}{}", values.join(", "))).await?;
                    values.clear();
                }
            }
        }
        if !values.is_empty() {
            writer.exec(format!("{head}{}", values.join(", "))).await?;
        }
        writer.commit().await?;
        Ok(count)
    }
}

fn sql_value(a: &dyn Array, r: usize, t: &HiveType, kind: Kind) -> HandlerResult<String> {
    if a.is_null(r) || a.data_type() == &DataType::Null {
        return Ok("NULL".into());
    }
    let text = arrow::util::display::array_value_to_string(a, r).map_err(remote_err)?;
    Ok(match t {
        HiveType::TinyInt
        | HiveType::SmallInt
        | HiveType::Int
        | HiveType::BigInt
        | HiveType::Float
        | HiveType::Double
        | HiveType::Decimal(_, _) => {
            if text.parse::<f64>().is_ok_and(f64::is_finite) {
                text
            } else {
                literal(kind, &text)
            }
        }
        HiveType::Boolean if kind == Kind::Sqlite => {
            if a.as_boolean_opt().is_some_and(|b| b.value(r)) {
                "1".into()
            } else {
                "0".into()
            }
        }
        HiveType::Boolean => {
            if a.as_boolean_opt().is_some_and(|b| b.value(r)) {
                "TRUE".into()
            } else {
                "FALSE".into()
            }
        }
        HiveType::Binary if kind == Kind::Postgres => {
            let bytes = a
                .as_binary_opt::<i32>()
                .map(|b| b.value(r).to_vec())
                .unwrap_or_default();
            format!(
                "'\\x{}'::bytea",
                bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        }
        HiveType::Binary => {
            let bytes = a
                .as_binary_opt::<i32>()
                .map(|b| b.value(r).to_vec())
                .unwrap_or_default();
            format!(
                "X'{}'",
                bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        }
        _ => literal(kind, &text),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use apiary_metastore::{Column, Table, TableType};

    use crate::connect::remote_of;
    use crate::hook::check_columns;
    use crate::remote::{decode_hex, ident, literal, quoted, Kind};
    use apiary_storage::Reach;

    #[test]
    fn properties_name_the_remote_table() {
        let mut p = BTreeMap::new();
        p.insert("hive.sql.database.type".into(), "POSTGRES".into());
        p.insert(
            "hive.sql.jdbc.url".into(),
            "jdbc:postgresql://127.0.0.1:5433/shop".into(),
        );
        p.insert("hive.sql.table".into(), "Orders".into());
        p.insert("hive.sql.schema".into(), "sales".into());
        let r = remote_of(&Reach::unrestricted(), &p).expect("valid");
        assert_eq!(r.kind, Kind::Postgres);
        assert_eq!(
            r.table.as_ref().map(|t| t.sql()).as_deref(),
            Some("\"sales\".\"orders\"")
        );
        p.insert("hive.sql.database.type".into(), "ORACLE".into());
        assert!(remote_of(&Reach::unrestricted(), &p).is_err());
        p.insert("hive.sql.database.type".into(), "sqlite".into());
        assert!(
            remote_of(&Reach::unrestricted(), &p).is_err(),
            "a postgresql URL is not a SQLite one"
        );
        p.remove("hive.sql.table");
        p.insert("hive.sql.jdbc.url".into(), "jdbc:sqlite:/tmp/x.db".into());
        assert!(
            remote_of(&Reach::unrestricted(), &p).is_err(),
            "no table and no query"
        );
    }

    #[test]
    fn urls_reach_only_allowed_hosts_and_folders() {
        let dir = tempfile::tempdir().expect("temp dir");
        let allowed = dir.path().join("allowed");
        std::fs::create_dir_all(&allowed).expect("folder");
        let reach =
            Reach::new(allowed.to_str(), &[], Some("127.0.0.1:5432,db.internal")).expect("reach");
        let props = |kind: &str, url: &str| {
            let mut p = BTreeMap::new();
            p.insert("hive.sql.database.type".to_string(), kind.to_string());
            p.insert("hive.sql.jdbc.url".to_string(), url.to_string());
            p.insert("hive.sql.table".to_string(), "t".to_string());
            p
        };
        let ok = |kind: &str, url: String| remote_of(&reach, &props(kind, &url)).map(|_| ());
        assert!(ok("POSTGRES", "jdbc:postgresql://127.0.0.1:5432/d".into()).is_ok());
        assert!(ok("MYSQL", "jdbc:mysql://db.internal:3306/d".into()).is_ok());
        assert!(ok("SQLITE", format!("jdbc:sqlite:{}/x.db", allowed.display())).is_ok());
        for (kind, url) in [
            ("POSTGRES", "jdbc:postgresql://127.0.0.1:5433/d".to_string()),
            ("POSTGRES", "jdbc:postgresql://10.0.0.1/d".to_string()),
            ("MYSQL", "jdbc:mariadb://evil.example:3306/d".to_string()),
            (
                "SQLITE",
                format!("jdbc:sqlite:{}/../x.db", allowed.display()),
            ),
            ("SQLITE", "jdbc:sqlite:/etc/x.db".to_string()),
        ] {
            let err = ok(kind, url.clone()).expect_err(&url);
            assert!(err.to_string().contains("allowed"), "{url}: {err}");
        }
    }

    #[test]
    fn hex_decodes() {
        assert_eq!(decode_hex("0aff10"), Some(vec![0x0a, 0xff, 0x10]));
        assert_eq!(decode_hex("abc"), None);
        assert_eq!(decode_hex("zz"), None);
        assert_eq!(decode_hex(""), Some(vec![]));
    }

    #[test]
    fn identifiers_and_literals_are_quoted() {
        assert_eq!(ident(Kind::Postgres, "Plain_1"), "\"plain_1\"");
        assert_eq!(ident(Kind::Mysql, "order"), "`order`");
        assert_eq!(ident(Kind::Postgres, "Mixed Case"), "\"Mixed Case\"");
        assert_eq!(ident(Kind::Postgres, "a\"b"), "\"a\"\"b\"");
        assert_eq!(literal(Kind::Postgres, "it's"), "'it''s'");
        assert_eq!(literal(Kind::Mysql, "a\\'b"), "'a\\\\''b'");
        assert_eq!(quoted(Kind::Mysql, "we`ird"), "`we``ird`");
    }

    #[test]
    fn declared_columns_are_checked_against_the_remote_ones() {
        let mut t = Table {
            database: "d".into(),
            name: "t".into(),
            owner: String::new(),
            create_time: 0,
            table_type: TableType::External,
            sd: Default::default(),
            partition_keys: vec![],
            parameters: BTreeMap::new(),
            view_text: None,
            view_database: None,
            secrets: BTreeMap::new(),
            data_token: None,
            constraints: Vec::new(),
        };
        t.sd.columns = vec![Column {
            name: "id".into(),
            type_name: "int".into(),
            comment: None,
        }];
        let err = check_columns(&t, &["id".into(), "name".into()]).expect_err("mismatch");
        assert_eq!(
            err.to_string(),
            "Column numbers do not match. Remote table columns are [id, name] and declared table columns in Hive external table are [id]"
        );
        assert!(check_columns(&t, &["ID".into()]).is_ok());
    }
}
