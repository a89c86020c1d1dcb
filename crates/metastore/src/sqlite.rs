//! The embedded metastore: one SQLite file (WAL mode), like Hive's embedded Derby. Several
//! processes may open the same file; SQLite serialises their writes. The catalog's logic is
//! in [`crate::catalog`]; this file runs its transactions and spells its statements.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rusqlite::types::ToSql;
use rusqlite::Connection;

use crate::catalog::{self, Access, Arg, Backend, Stmt, Txn};
use crate::{MetastoreError, Result};

/// Schema migrations, applied in order; the stored version is the number applied.
const MIGRATIONS: &[&str] = &[
    // 1: databases, tables and partitions as JSON documents keyed by name.
    "CREATE TABLE dbs (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
     CREATE TABLE tbls (db TEXT NOT NULL REFERENCES dbs(name), name TEXT NOT NULL,
                        definition TEXT NOT NULL, PRIMARY KEY (db, name));
     CREATE TABLE partitions (db TEXT NOT NULL, tbl TEXT NOT NULL, name TEXT NOT NULL,
                              definition TEXT NOT NULL, PRIMARY KEY (db, tbl, name));",
    // 2: the intent journal of DDL with side effects in other systems.
    "CREATE TABLE intents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, db TEXT NOT NULL,
                           tbl TEXT NOT NULL, created INTEGER NOT NULL, definition TEXT NOT NULL);",
    // 3: SQL-standard authorization: roles, and grants of privileges and role memberships.
    "CREATE TABLE roles (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
     CREATE TABLE grants (object TEXT NOT NULL, principal TEXT NOT NULL, privilege TEXT NOT NULL,
                          definition TEXT NOT NULL, PRIMARY KEY (object, principal, privilege));
     CREATE INDEX grants_by_principal ON grants (principal);",
];

/// The catalog's statements in SQLite's SQL.
fn sql(stmt: Stmt) -> &'static str {
    match stmt {
        Stmt::CreateVersionTable => {
            "CREATE TABLE IF NOT EXISTS apiary_schema_version (version INTEGER NOT NULL)"
        }
        Stmt::SchemaVersion => {
            "SELECT CAST(coalesce(max(version), 0) AS TEXT) FROM apiary_schema_version"
        }
        Stmt::RecordVersion => "INSERT INTO apiary_schema_version (version) VALUES (?1)",
        Stmt::DatabaseExists => "SELECT name FROM dbs WHERE name = ?1",
        Stmt::GetDatabase => "SELECT definition FROM dbs WHERE name = ?1",
        Stmt::ListDatabases => "SELECT name FROM dbs ORDER BY name",
        Stmt::InsertDatabase => "INSERT INTO dbs (name, definition) VALUES (?1, ?2)",
        Stmt::UpdateDatabase => "UPDATE dbs SET definition = ?2 WHERE name = ?1",
        Stmt::DeleteDatabase => "DELETE FROM dbs WHERE name = ?1",
        Stmt::AnyTableOf => "SELECT name FROM tbls WHERE db = ?1 LIMIT 1",
        Stmt::GetTable => "SELECT definition FROM tbls WHERE db = ?1 AND name = ?2",
        Stmt::ListTableNames => "SELECT name FROM tbls WHERE db = ?1 ORDER BY name",
        Stmt::ListTables => "SELECT name, definition FROM tbls WHERE db = ?1 ORDER BY name",
        Stmt::InsertTable => "INSERT INTO tbls (db, name, definition) VALUES (?1, ?2, ?3)",
        Stmt::UpdateTable => {
            "UPDATE tbls SET db = ?3, name = ?4, definition = ?5 WHERE db = ?1 AND name = ?2"
        }
        Stmt::DeleteTable => "DELETE FROM tbls WHERE db = ?1 AND name = ?2",
        Stmt::DeletePartitionsOf => "DELETE FROM partitions WHERE db = ?1 AND tbl = ?2",
        Stmt::MovePartitions => {
            "UPDATE partitions SET db = ?3, tbl = ?4 WHERE db = ?1 AND tbl = ?2"
        }
        Stmt::PartitionExists => {
            "SELECT name FROM partitions WHERE db = ?1 AND tbl = ?2 AND name = ?3"
        }
        Stmt::InsertPartition => {
            "INSERT INTO partitions (db, tbl, name, definition) VALUES (?1, ?2, ?3, ?4)"
        }
        Stmt::ListPartitions => {
            "SELECT name, definition FROM partitions WHERE db = ?1 AND tbl = ?2 ORDER BY name"
        }
        Stmt::UpdatePartition => {
            "UPDATE partitions SET definition = ?4 WHERE db = ?1 AND tbl = ?2 AND name = ?3"
        }
        Stmt::DeletePartition => "DELETE FROM partitions WHERE db = ?1 AND tbl = ?2 AND name = ?3",
        Stmt::GetIntent => "SELECT definition FROM intents WHERE id = ?1",
        Stmt::IntentsOnTable => "SELECT id FROM intents WHERE db = ?1 AND tbl = ?2",
        Stmt::InsertIntent => {
            "INSERT INTO intents (id, owner, db, tbl, created, definition) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        }
        Stmt::UpdateIntent => "UPDATE intents SET definition = ?2 WHERE id = ?1",
        Stmt::DeleteIntent => "DELETE FROM intents WHERE id = ?1",
        Stmt::IntentsOf => "SELECT definition FROM intents WHERE owner = ?1 ORDER BY created, id",
        Stmt::RoleExists => "SELECT name FROM roles WHERE name = ?1",
        Stmt::InsertRole => "INSERT INTO roles (name, definition) VALUES (?1, ?2)",
        Stmt::DeleteRole => "DELETE FROM roles WHERE name = ?1",
        Stmt::ListRoles => "SELECT definition FROM roles ORDER BY name",
        Stmt::PutGrant => {
            "INSERT INTO grants (object, principal, privilege, definition) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (object, principal, privilege) DO UPDATE SET definition = excluded.definition"
        }
        Stmt::GetGrant => {
            "SELECT definition FROM grants WHERE object = ?1 AND principal = ?2 AND privilege = ?3"
        }
        Stmt::DeleteGrant => {
            "DELETE FROM grants WHERE object = ?1 AND principal = ?2 AND privilege = ?3"
        }
        Stmt::DeleteGrantsOn => "DELETE FROM grants WHERE object = ?1",
        Stmt::DeleteGrantsOf => "DELETE FROM grants WHERE principal = ?1",
        Stmt::GrantsOn => "SELECT definition FROM grants WHERE object = ?1 ORDER BY principal, privilege",
        Stmt::GrantsOf => "SELECT definition FROM grants WHERE principal = ?1 ORDER BY object, privilege",
        Stmt::AllGrants => "SELECT definition FROM grants ORDER BY object, principal, privilege",
    }
}

/// The metastore in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteMetastore {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteMetastore {
    /// Opens (creating if needed) the metastore at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Self> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        transaction(&mut conn, true, &(), |tx, ()| {
            Box::pin(catalog::migrate(tx, MIGRATIONS))
        })?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<usize> {
        transaction(&mut self.conn.lock(), false, &(), |tx, ()| {
            Box::pin(catalog::schema_version(tx))
        })
    }
}

/// Runs `body` on this thread. The catalog's futures never wait on I/O here (every statement
/// is a synchronous SQLite call), so polling them to the end blocks only this thread.
fn transaction<A, T, F>(conn: &mut Connection, write: bool, args: &A, body: F) -> Result<T>
where
    F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>>,
{
    if !write {
        return futures::executor::block_on(body(&mut SqliteTxn(conn), args));
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    // A panic inside the body must not leave the connection inside the transaction (every
    // later write would fail, and the file's write lock would stay held): it ends as an error
    // and the transaction is rolled back below.
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        futures::executor::block_on(body(&mut SqliteTxn(conn), args))
    }))
    .unwrap_or_else(|_| {
        Err(MetastoreError::Backend(
            "a metastore call failed unexpectedly (panicked); its transaction was rolled back"
                .into(),
        ))
    });
    let out = done.and_then(|v| Ok(conn.execute_batch("COMMIT").map(|()| v)?));
    if out.is_err() && !conn.is_autocommit() {
        if let Err(e) = conn.execute_batch("ROLLBACK") {
            tracing::warn!(error = %e, "metastore rollback failed");
        }
    }
    out
}

impl Backend for SqliteMetastore {
    fn transact<A, T, F>(&self, access: Access, args: A, body: F) -> BoxFuture<'_, Result<T>>
    where
        A: Send + Sync + 'static,
        T: Send + 'static,
        F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>> + Send + Sync + 'static,
    {
        let conn = self.conn.clone();
        let write = access == Access::Write;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || transaction(&mut conn.lock(), write, &args, body))
                .await
                .map_err(|e| MetastoreError::Backend(format!("metastore task failed: {e}")))?
        })
    }
}

/// A SQLite connection inside (or, for reads, outside) a transaction.
struct SqliteTxn<'c>(&'c mut Connection);

fn params<'a>(args: &'a [Arg<'a>]) -> Vec<&'a dyn ToSql> {
    args.iter()
        .map(|a| match a {
            Arg::Text(s) => s as &dyn ToSql,
            Arg::Int(i) => i as &dyn ToSql,
        })
        .collect()
}

#[async_trait]
impl Txn for SqliteTxn<'_> {
    async fn query(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<Vec<String>>> {
        let mut st = self.0.prepare_cached(sql(stmt))?;
        let width = st.column_count();
        let rows = st
            .query_map(params(args).as_slice(), |r| {
                (0..width).map(|i| r.get::<_, String>(i)).collect()
            })?
            .collect::<rusqlite::Result<Vec<Vec<String>>>>()?;
        Ok(rows)
    }

    async fn execute(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<u64> {
        let mut st = self.0.prepare_cached(sql(stmt))?;
        Ok(st.execute(params(args).as_slice())? as u64)
    }

    async fn batch(&mut self, sql: &str) -> Result<()> {
        Ok(self.0.execute_batch(sql)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Column, StorageDescriptor, TableType};
    use crate::model::{
        Database, Grant, GrantChange, GrantObject, Partition, PrincipalType, Table,
    };
    use crate::Metastore;
    use std::collections::BTreeMap;

    fn db(name: &str) -> Database {
        Database {
            name: name.into(),
            comment: None,
            location: format!("/w/{name}.db"),
            parameters: BTreeMap::new(),
            owner: "u".into(),
            create_time: 0,
        }
    }

    fn table(db: &str, name: &str) -> Table {
        Table {
            database: db.into(),
            name: name.into(),
            owner: "u".into(),
            create_time: 0,
            table_type: TableType::Managed,
            sd: StorageDescriptor {
                columns: vec![Column {
                    name: "a".into(),
                    type_name: "int".into(),
                    comment: None,
                }],
                num_buckets: -1,
                ..Default::default()
            },
            partition_keys: vec![Column {
                name: "p".into(),
                type_name: "string".into(),
                comment: None,
            }],
            parameters: BTreeMap::new(),
            view_text: None,
            view_database: None,
            secrets: Default::default(),
            data_token: None,
            constraints: Vec::new(),
        }
    }

    #[tokio::test]
    async fn objects_persist_and_conflicts_are_refused() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| MetastoreError::Backend(e.to_string()))?;
        let path = dir.path().join("metastore.db");
        {
            let ms = SqliteMetastore::open(&path)?;
            ms.create_database(&db("d")).await?;
            assert!(matches!(
                ms.create_database(&db("d")).await,
                Err(MetastoreError::AlreadyExists(_))
            ));
            ms.create_table(&table("d", "t")).await?;
            assert!(matches!(
                ms.create_table(&table("nodb", "t")).await,
                Err(MetastoreError::NoSuchObject(_))
            ));
            let part = Partition {
                values: vec!["x/y".into()],
                sd: StorageDescriptor::default(),
                parameters: BTreeMap::new(),
                create_time: 0,
            };
            ms.add_partitions("d", "t", std::slice::from_ref(&part), false)
                .await?;
            assert!(ms
                .add_partitions("d", "t", std::slice::from_ref(&part), false)
                .await
                .is_err());
            ms.add_partitions("d", "t", &[part], true).await?;
            assert!(matches!(
                ms.drop_database("d").await,
                Err(MetastoreError::InvalidOperation(_))
            ));
        }
        let ms = SqliteMetastore::open(&path)?;
        assert_eq!(ms.schema_version()?, MIGRATIONS.len());
        assert_eq!(ms.list_databases().await?, vec!["d".to_string()]);
        assert_eq!(ms.get_table("D", "T").await?, Some(table("d", "t")));
        let parts = ms.list_partitions("d", "t").await?;
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].name(&table("d", "t").partition_keys), "p=x%2Fy");
        let mut renamed = table("d", "t2");
        renamed.parameters.insert("k".into(), "v".into());
        ms.alter_table("d", "t", &renamed).await?;
        assert_eq!(ms.list_tables("d").await?, vec!["t2".to_string()]);
        assert_eq!(ms.list_partitions("d", "t2").await?.len(), 1);
        assert_eq!(
            ms.drop_partitions("d", "t2", &[vec!["x/y".into()]]).await?,
            1
        );
        ms.drop_table("d", "t2").await?;
        ms.drop_database("d").await?;
        assert!(ms.list_databases().await?.is_empty());
        Ok(())
    }

    fn grant(object: GrantObject, who: (PrincipalType, &str), privilege: &str) -> Grant {
        Grant {
            object,
            principal_name: who.1.into(),
            principal_type: who.0,
            privilege: privilege.into(),
            grant_option: false,
            grantor: "u".into(),
            grantor_type: PrincipalType::User,
            grant_time: 0,
        }
    }

    fn revoke(
        object: &GrantObject,
        who: (PrincipalType, &str),
        privilege: &str,
        option_only: bool,
    ) -> GrantChange {
        GrantChange::Revoke {
            object: object.clone(),
            principal_type: who.0,
            principal_name: who.1.into(),
            privilege: privilege.into(),
            option_only,
        }
    }

    #[tokio::test]
    async fn grants_follow_tables_and_roles() -> Result<()> {
        use crate::model::Role;
        let dir = tempfile::tempdir().map_err(|e| MetastoreError::Backend(e.to_string()))?;
        let ms = SqliteMetastore::open(&dir.path().join("metastore.db"))?;
        ms.create_database(&db("d")).await?;
        ms.create_table(&table("d", "t")).await?;
        let t = GrantObject::Table {
            database: "d".into(),
            name: "t".into(),
        };
        let bob = (PrincipalType::User, "bob");
        let put = |g: Grant| GrantChange::Put(g);
        ms.change_grants(&[put(grant(t.clone(), bob, "SELECT"))])
            .await?;
        // A second grant of the same privilege replaces the first (adds the option).
        let mut with_option = grant(t.clone(), bob, "SELECT");
        with_option.grant_option = true;
        ms.change_grants(&[put(with_option.clone())]).await?;
        assert_eq!(ms.grants_on(&t).await?, vec![with_option.clone()]);
        // Built-in roles exist without CREATE ROLE.
        ms.change_grants(&[put(grant(
            t.clone(),
            (PrincipalType::Role, "public"),
            "INSERT",
        ))])
        .await?;
        ms.change_grants(&[revoke(&t, (PrincipalType::Role, "public"), "INSERT", false)])
            .await?;
        // One bad step undoes the whole change: a missing role, a missing table.
        let ghost = (PrincipalType::Role, "ghost");
        let carol = (PrincipalType::User, "carol");
        assert!(ms
            .change_grants(&[
                put(grant(t.clone(), carol, "SELECT")),
                put(grant(t.clone(), ghost, "SELECT"))
            ])
            .await
            .is_err());
        let missing = GrantObject::Table {
            database: "d".into(),
            name: "nope".into(),
        };
        assert!(ms
            .change_grants(&[put(grant(missing, bob, "SELECT"))])
            .await
            .is_err());
        assert_eq!(ms.grants_on(&t).await?.len(), 1);
        // Revoking INSERT (never granted) with SELECT fails and keeps SELECT.
        assert!(ms
            .change_grants(&[
                revoke(&t, bob, "SELECT", false),
                revoke(&t, bob, "INSERT", false)
            ])
            .await
            .is_err());
        assert_eq!(ms.grants_on(&t).await?.len(), 1);
        // Only the option goes, then the privilege.
        ms.change_grants(&[revoke(&t, bob, "SELECT", true)]).await?;
        assert!(!ms.grants_on(&t).await?[0].grant_option);
        ms.change_grants(&[revoke(&t, bob, "SELECT", false)])
            .await?;
        assert!(ms
            .change_grants(&[revoke(&t, bob, "SELECT", false)])
            .await
            .is_err());
        // A rename carries the grants; a drop removes them.
        ms.change_grants(&[put(grant(t.clone(), bob, "INSERT"))])
            .await?;
        let renamed = table("d", "t2");
        ms.alter_table("d", "t", &renamed).await?;
        let t2 = GrantObject::Table {
            database: "d".into(),
            name: "t2".into(),
        };
        assert!(ms.grants_on(&t).await?.is_empty());
        assert_eq!(ms.grants_on(&t2).await?.len(), 1);
        assert_eq!(ms.grants_on(&t2).await?[0].object, t2);
        ms.drop_table("d", "t2").await?;
        assert!(ms.all_grants().await?.is_empty());
        // Roles: names are lower case; dropping one drops its memberships and privileges.
        let role = |name: &str| Role {
            name: name.into(),
            owner: "u".into(),
            create_time: 0,
        };
        ms.create_role(&role("Readers")).await?;
        assert!(ms.create_role(&role("readers")).await.is_err());
        ms.create_table(&table("d", "t")).await?;
        let readers = GrantObject::Role {
            name: "readers".into(),
        };
        ms.change_grants(&[
            put(grant(readers.clone(), bob, "MEMBER")),
            put(grant(t.clone(), (PrincipalType::Role, "readers"), "SELECT")),
        ])
        .await?;
        assert_eq!(ms.grants_of(bob).await?.len(), 1);
        ms.drop_role("readers").await?;
        assert!(ms.all_grants().await?.is_empty());
        assert!(ms.list_roles().await?.is_empty());
        assert!(ms.drop_role("readers").await.is_err());
        Ok(())
    }
}
