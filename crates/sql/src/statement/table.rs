//! CREATE TABLE (native and non-native, LIKE, AS SELECT), DROP TABLE / VIEW, TRUNCATE
//! (`CREATE TABLE t (id INT) STORED AS ORC`, `CREATE TABLE j (..) STORED BY
//! 'org.apache.hive.storage.jdbc.JdbcStorageHandler' TBLPROPERTIES (..)`, `CREATE TABLE c AS
//! SELECT ..`, `DROP TABLE t PURGE`, `TRUNCATE TABLE t PARTITION (ds='2026-12-07')`); the
//! grammar is in [`crate::parser`]'s `create.rs` and `drop.rs`.

use std::collections::BTreeMap;

use apiary_metastore::{Column, SerDeInfo, SortColumn, StorageDescriptor, Table, TableType};
use apiary_storage::format::NativeFormat;
use apiary_storage::handler::PARTITION_COLUMNS;
use apiary_storage::ownership;
use apiary_storage::write::{self};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::{ColumnDef, CreateTable, HiveStatement, RowFormat, StoredAs, TableName};
use crate::prepared::Prepared;
use crate::statement::partition::spec_matches;
use crate::task::blocking;
use crate::types::HiveType;

impl dyn Scope {
    /// Runs one of this family's statements (the dispatcher routes only those here).
    pub(super) async fn run_table(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::DropTable {
                view,
                if_exists,
                name,
                purge: _,
            } => {
                let (db, t) = self.qualify(&name);
                let Some(table) = self.metastore().get_table(&db, &t).await? else {
                    if if_exists {
                        return Ok(Prepared::Done);
                    }
                    return Err(SqlError::TableNotFound(as_written(&name)));
                };
                if view && !table.is_view() {
                    return Err(SqlError::hive(
                        HiveError::DropTableOnView,
                        format!(": {db}.{t}"),
                    ));
                }
                if !view && table.is_view() {
                    return Err(SqlError::hive(
                        HiveError::DropViewOnTableOrAlterNonNative,
                        format!("To drop a view you need to use DROP VIEW: {db}.{t}"),
                    ));
                }
                self.drop_one(&table).await?;
                Ok(Prepared::Done)
            }
            HiveStatement::Truncate { name, partition } => {
                let table = self.require_table(&name).await?;
                if table.storage_handler().is_some() {
                    return Err(SqlError::hive(
                        HiveError::TruncateNonNative,
                        format!(" {}.", table.name),
                    ));
                }
                if table.table_type != TableType::Managed {
                    return Err(SqlError::hive(
                        HiveError::TruncateNonManaged,
                        format!(" {}.", table.qualified_name()),
                    ));
                }
                let root = owned_root_for(&table, "truncate")?;
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                let dirs = if table.partition_keys.is_empty() {
                    vec![root.clone()]
                } else {
                    let spec = partition.unwrap_or_default();
                    let mut dirs = Vec::new();
                    for p in &parts {
                        if spec_matches(&table, &spec, &p.values) {
                            dirs.push(match &p.sd.location {
                                Some(l) => write::local_dir(l)?,
                                None => write::partition_dir(&table, &p.values)?,
                            });
                        }
                    }
                    dirs
                };
                if let Some(d) = dirs.iter().find(|d| !ownership::inside(&root, d)) {
                    return Err(not_owned(&table, "truncate", &d.display().to_string()));
                }
                for d in dirs {
                    blocking(move || write::clear_data_files(&d)).await?;
                }
                Ok(Prepared::Done)
            }
            other => Err(misrouted(&other)),
        }
    }
}

impl dyn Scope {
    /// Drops one table or view. Native: the catalog row goes first (a crash after it leaves
    /// unreferenced files in the warehouse, never a table whose data is half gone), then a
    /// managed table's files. Non-native: through the handler's hooks and the journal.
    pub(super) async fn drop_one(&self, table: &Table) -> Result<(), SqlError> {
        if let Some(handler) = crate::journal::handler_ddl::handler_of(self.handlers(), table)? {
            let metastore = self.metastore().clone();
            return crate::journal::handler_ddl::drop(
                metastore.as_ref(),
                handler.as_ref(),
                self.owner(),
                table,
                self.interrupt(),
            )
            .await;
        }
        self.metastore()
            .drop_table(&table.database, &table.name)
            .await?;
        self.unavailable().clear(&table.database, &table.name);
        self.drop_table_data(table).await
    }

    pub(super) async fn drop_table_data(&self, table: &Table) -> Result<(), SqlError> {
        if let Some(kept) = remove_managed_data(table).await {
            self.note(kept);
        }
        Ok(())
    }

    /// A CTAS's columns, from its query: the data columns, the partition columns PARTITIONED
    /// BY (c, ..) names among them (Hive 4's form; with types, the older form, is refused), and
    /// the query's column names in order.
    async fn ctas_columns(
        &mut self,
        ct: &CreateTable,
        query: &str,
    ) -> Result<(Vec<Column>, Vec<Column>, Vec<String>), SqlError> {
        if ct.external {
            return Err(SqlError::hive(HiveError::CtasExternalTable, ""));
        }
        if ct.partitioned_by.iter().any(|c| !c.type_name.is_empty()) {
            return Err(SqlError::hive(HiveError::CtasPartitioning, ""));
        }
        if !ct.columns.is_empty() {
            return Err(SqlError::hive(HiveError::CtasColumnList, ""));
        }
        let plan = self.plan_query(query).await?;
        let mut columns: Vec<Column> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| Column {
                // (A column named twice keeps one name: the duplicate is Hive's 10036.)
                name: column_name(f.name()),
                type_name: HiveType::of_field(f).to_string(),
                comment: None,
            })
            .collect();
        let targets = columns.iter().map(|c| c.name.clone()).collect();
        let mut keys = Vec::new();
        for key in &ct.partitioned_by {
            let name = key.name.to_lowercase();
            let Some(i) = columns.iter().position(|c| c.name == name) else {
                return Err(SqlError::hive(
                    HiveError::InvalidColumn,
                    format!(" {name} in PARTITIONED BY"),
                ));
            };
            keys.push(columns.remove(i));
        }
        Ok((columns, keys, targets))
    }

    /// CREATE [EXTERNAL] TABLE .. STORED BY: the handler's object and the catalog entry
    /// together, through the intent journal.
    pub(super) async fn create_nonnative(
        &mut self,
        ct: &CreateTable,
        db: String,
        tname: String,
    ) -> Result<Prepared, SqlError> {
        check_reserved_properties(ct.tblproperties.keys())?;
        let mut ct = ct.clone();
        // TBLPROPERTIES ('EXTERNAL'='TRUE') makes an external table, as for a native one.
        if ct
            .tblproperties
            .get("EXTERNAL")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        {
            ct.external = true;
        }
        let name = ct.stored_by.clone().unwrap_or_default();
        let handler = crate::journal::handler_ddl::resolve(self.handlers(), &name)?;
        let class = handler.class_name();
        let caps = handler.capabilities();
        // ROW FORMAT only as SHOW CREATE TABLE prints it: the handler's own SerDe.
        match &ct.row_format {
            None => {}
            Some(RowFormat::Serde(serde, props))
                if props.is_empty() && serde == handler.serde_class() => {}
            Some(_) => return Err(SqlError::hive(HiveError::StoredByWithRowFormat, "")),
        }
        // CTAS: a managed table its handler writes; its columns are the query's.
        let ctas = ct.as_select.is_some() && !ct.external && caps.managed && caps.insert;
        if ct.like.is_some() || (ct.as_select.is_some() && !ctas) {
            if ct.as_select.is_some() && ct.external {
                return Err(SqlError::hive(HiveError::CtasExternalTable, ""));
            }
            return Err(SqlError::semantic(format!(
                "CREATE TABLE .. {} cannot be used with a table stored by {class}",
                if ct.like.is_some() {
                    "LIKE"
                } else {
                    "AS SELECT"
                }
            )));
        }
        let mut ctas_targets: Vec<String> = vec![];
        if let (true, Some(q)) = (ctas, &ct.as_select) {
            let (data, keys, targets) = self.ctas_columns(&ct, q).await?;
            let def = |c: Column| ColumnDef {
                name: c.name,
                type_name: c.type_name,
                comment: c.comment,
            };
            ct.columns = data.into_iter().map(def).collect();
            ct.partitioned_by = keys.into_iter().map(def).collect();
            ctas_targets = targets;
        }
        let ct = &ct;
        if !ct.partitioned_by.is_empty() && !caps.partition_columns {
            return Err(SqlError::semantic(format!(
                "PARTITIONED BY cannot be used with a table stored by {class}"
            )));
        }
        if ct.location.is_some() && !caps.location {
            return Err(SqlError::semantic(format!(
                "LOCATION may not be specified for {}.",
                handler.system_name()
            )));
        }
        if ct.external && !caps.external {
            return Err(SqlError::semantic(format!(
                "{class} does not support EXTERNAL tables"
            )));
        }
        if !ct.external && !caps.managed {
            return Err(SqlError::semantic(format!(
                "{class} supports only EXTERNAL tables: use CREATE EXTERNAL TABLE"
            )));
        }
        let mut columns = to_columns(&ct.columns);
        if columns.is_empty() {
            return Err(SqlError::hive(HiveError::InvalidTableDdlSerde, ""));
        }
        // Partition columns the handler's object keeps: the last columns, named in a parameter.
        let partition_columns = to_columns(&ct.partitioned_by);
        let partition_names: Vec<String> =
            partition_columns.iter().map(|c| c.name.clone()).collect();
        columns.extend(partition_columns);
        check_duplicates(&columns)?;
        // A managed table whose handler keeps a folder gets the warehouse's, as a native one.
        let location = match (&ct.location, caps.location && !ct.external) {
            (None, true) => Some(self.default_location(&db, &tname).await?),
            (given, _) => given.clone(),
        };
        let mut serde_params = ct.handler_serde_props.clone();
        serde_params
            .entry("serialization.format".into())
            .or_insert_with(|| "1".into());
        let mut parameters = ct.tblproperties.clone();
        if let Some(c) = &ct.comment {
            parameters.insert("comment".into(), c.clone());
        }
        parameters.insert("storage_handler".into(), class.to_string());
        if !partition_names.is_empty() {
            parameters.insert(PARTITION_COLUMNS.into(), partition_names.join(","));
        }
        if ct.external {
            parameters.insert("EXTERNAL".into(), "TRUE".into());
        }
        parameters.insert("transient_lastDdlTime".into(), now().to_string());
        let mut table = Table {
            database: db,
            name: tname,
            owner: self.user().to_string(),
            create_time: now(),
            table_type: if ct.external {
                TableType::External
            } else {
                TableType::Managed
            },
            sd: StorageDescriptor {
                columns,
                location,
                input_format: None,
                output_format: None,
                serde: SerDeInfo {
                    library: handler.serde_class().to_string(),
                    parameters: serde_params,
                },
                compressed: false,
                num_buckets: ct.buckets.unwrap_or(-1),
                bucket_columns: ct.clustered_by.clone(),
                sort_columns: vec![],
            },
            partition_keys: vec![],
            parameters,
            view_text: None,
            view_database: None,
            secrets: Default::default(),
            data_token: None,
            constraints: Vec::new(),
        };
        table.constraints = self.resolve_constraints(&ct.constraints, &table).await?;
        crate::journal::handler_ddl::separate_secrets(handler.as_ref(), &mut table);
        let metastore = self.metastore().clone();
        crate::journal::handler_ddl::create(
            metastore.as_ref(),
            handler.as_ref(),
            self.owner(),
            &table,
            self.interrupt(),
        )
        .await?;
        let Some(q) = ct.as_select.as_ref() else {
            return Ok(Prepared::Done);
        };
        // CTAS is all or nothing: if writing fails or is cancelled, the table goes again
        // (through the journal, with its object); until its rows are in, it is not committed.
        crate::task::set_committed(false);
        let created = self
            .require_table(&TableName {
                db: Some(table.database.clone()),
                name: table.name.clone(),
            })
            .await?;
        let written = match self.insert(&created, None, &ctas_targets, q, false).await {
            Ok(task) => task.run(self.interrupt().clone()).await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            let undo = crate::journal::handler_ddl::drop(
                metastore.as_ref(),
                handler.as_ref(),
                self.owner(),
                &created,
                &tokio_util::sync::CancellationToken::new(),
            )
            .await;
            if let Err(u) = undo {
                tracing::warn!(error = %u, table = %created.qualified_name(), "undoing a failed CTAS failed");
            }
            // The undo's DROP committed; the statement as a whole ends undone.
            crate::task::set_committed(false);
            return Err(e);
        }
        Ok(Prepared::Done)
    }

    pub(super) async fn create_table(&mut self, ct: CreateTable) -> Result<Prepared, SqlError> {
        let name = ct
            .name
            .clone()
            .ok_or_else(|| SqlError::semantic("CREATE TABLE needs a name".into()))?;
        let (db, tname) = self.qualify(&name);
        apiary_metastore::check_table_name(&tname)?;
        let database = self.require_database(&db).await?;
        if self.metastore().get_table(&db, &tname).await?.is_some() {
            if ct.if_not_exists {
                return Ok(Prepared::Done);
            }
            return Err(SqlError::ddl(format!(
                "AlreadyExistsException(message:Table hive.{db}.{tname} already exists)"
            )));
        }
        if ct.stored_by.is_some() {
            if ct.stored_as.is_some() {
                return Err(SqlError::hive(HiveError::StoredByWithRowFormat, ""));
            }
            return self.create_nonnative(&ct, db, tname).await;
        }
        // A CTAS with PARTITIONED BY (names): its query's columns in order, which the insert
        // maps onto the table's data and partition columns by name.
        let mut ctas_targets: Vec<String> = vec![];
        let mut table = if let Some(like) = &ct.like {
            let src = self.require_table(like).await?;
            let mut t = src.clone();
            t.sd.location = None;
            t.data_token = None;
            // As in Hive, LIKE copies the columns and storage, not the constraints.
            t.constraints.clear();
            t.parameters
                .retain(|k, _| k != "EXTERNAL" && k != "transient_lastDdlTime");
            t.table_type = TableType::Managed;
            if src.is_view() {
                return Err(SqlError::Unsupported("CREATE TABLE LIKE a view".into()));
            }
            t
        } else {
            let mut columns = to_columns(&ct.columns);
            let mut partition_keys = to_columns(&ct.partitioned_by);
            if let Some(q) = &ct.as_select {
                let (data, keys, targets) = self.ctas_columns(&ct, q).await?;
                columns = data;
                partition_keys = keys;
                if !partition_keys.is_empty() {
                    ctas_targets = targets;
                }
            }
            if columns.is_empty() {
                return Err(SqlError::hive(HiveError::InvalidTableDdlSerde, ""));
            }
            let mut all = columns.clone();
            all.extend(partition_keys.clone());
            check_duplicates(&all)?;
            for c in &ct.clustered_by {
                if !columns.iter().any(|x| &x.name == c) {
                    return Err(SqlError::hive(
                        HiveError::InvalidColumn,
                        format!(" {c} in CLUSTERED BY"),
                    ));
                }
            }
            let (format, serde) = resolve_format(&ct)?;
            check_union_columns(&columns, &partition_keys, format)?;
            let (input, output, default_serde) = format.classes();
            let mut sd = StorageDescriptor {
                columns,
                location: None,
                input_format: Some(input.to_string()),
                output_format: Some(output.to_string()),
                serde: SerDeInfo {
                    library: default_serde.to_string(),
                    parameters: BTreeMap::new(),
                },
                compressed: false,
                num_buckets: ct.buckets.unwrap_or(-1),
                bucket_columns: ct.clustered_by.clone(),
                sort_columns: ct
                    .sorted_by
                    .iter()
                    .map(|(c, asc)| SortColumn {
                        column: c.clone(),
                        order: i32::from(*asc),
                    })
                    .collect(),
            };
            if let StoredAs::Classes(i, o) = ct
                .stored_as
                .clone()
                .unwrap_or(StoredAs::Format(String::new()))
            {
                sd.input_format = Some(i);
                sd.output_format = Some(o);
            }
            match serde {
                Some(RowFormat::Serde(class, params)) => {
                    sd.serde.library = class;
                    sd.serde.parameters = params;
                }
                Some(RowFormat::Delimited(params)) => sd.serde.parameters = params,
                None => {}
            }
            if sd.serde.library == apiary_storage::format::OPEN_CSV_SERDE {
                // OpenCSVSerde reads every column as a string, whatever was declared.
                for c in &mut sd.columns {
                    c.type_name = "string".into();
                }
            }
            if matches!(format, NativeFormat::Text)
                && !sd.serde.parameters.contains_key("serialization.format")
            {
                sd.serde
                    .parameters
                    .insert("serialization.format".into(), "1".into());
            }
            Table {
                database: db.clone(),
                name: tname.clone(),
                owner: self.user().to_string(),
                create_time: now(),
                table_type: TableType::Managed,
                sd,
                partition_keys,
                parameters: BTreeMap::new(),
                view_text: None,
                view_database: None,
                secrets: Default::default(),
                data_token: None,
                constraints: Vec::new(),
            }
        };
        table.database = db.clone();
        table.name = tname.clone();
        table.owner = self.user().to_string();
        table.create_time = now();
        if let Some(c) = &ct.comment {
            table.parameters.insert("comment".into(), c.clone());
        }
        check_reserved_properties(ct.tblproperties.keys())?;
        table.parameters.extend(ct.tblproperties.clone());
        let external = ct.external
            || table
                .parameters
                .get("EXTERNAL")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if external {
            table.table_type = TableType::External;
            table.parameters.insert("EXTERNAL".into(), "TRUE".into());
        }
        table
            .parameters
            .insert("transient_lastDdlTime".into(), now().to_string());
        // Checked before the table's folder is made: a refused constraint leaves nothing.
        table.constraints = self.resolve_constraints(&ct.constraints, &table).await?;
        let location = match &ct.location {
            Some(l) => l.clone(),
            None => table_location(&database.location, &tname)?,
        };
        if let Ok(dir) = write::local_dir(&location) {
            // Apiary owns the folder (and may later delete it) only if it makes it now.
            let token = ownership::new_token();
            let claimed = {
                let (token, location) = (token.clone(), location.clone());
                blocking(move || {
                    ownership::claim(&dir, &token).map_err(|e| {
                        SqlError::ddl_caused(
                            format!("MetaException(message:cannot create {location}: {e})"),
                            e,
                        )
                    })
                })
                .await?
            };
            if claimed {
                table.data_token = Some(token);
            } else if table.table_type == TableType::Managed {
                self.note(format!(
                    "{location} already held files when table {db}.{tname} was created: Apiary will not delete them (DROP keeps them; TRUNCATE and INSERT OVERWRITE are refused)"
                ));
            }
        }
        table.sd.location = Some(location);
        self.metastore().create_table(&table).await?;
        let Some(q) = &ct.as_select else {
            return Ok(Prepared::Done);
        };
        // CTAS is all or nothing: if planning or writing fails, the table goes again.
        let undo = {
            let metastore = self.metastore().clone();
            let table = table.clone();
            move || async move {
                let _ = metastore.drop_table(&table.database, &table.name).await;
                remove_managed_data(&table).await;
            }
        };
        match self.insert(&table, None, &ctas_targets, q, false).await {
            Ok(task) => {
                // Run here, inside the CTAS's own task: a cancel ends the insert and the undo
                // follows.
                let r = task.run(self.interrupt().clone()).await;
                if r.is_err() {
                    undo().await;
                }
                r.map(|()| Prepared::Done)
            }
            Err(e) => {
                undo().await;
                Err(e)
            }
        }
    }

    pub(super) async fn default_location(&self, db: &str, table: &str) -> Result<String, SqlError> {
        let d = self.require_database(db).await?;
        table_location(&d.location, table)
    }
}

pub(super) fn resolve_format(
    ct: &CreateTable,
) -> Result<(NativeFormat, Option<RowFormat>), SqlError> {
    let serde = ct.row_format.clone();
    let format = match &ct.stored_as {
        Some(StoredAs::Format(f)) => NativeFormat::from_stored_as(f)
            .ok_or_else(|| SqlError::hive(HiveError::UnknownFileFormat, format!(" '{f}'")))?,
        Some(StoredAs::Classes(i, _)) => NativeFormat::of(&StorageDescriptor {
            input_format: Some(i.clone()),
            ..Default::default()
        })
        .unwrap_or(NativeFormat::Text),
        None => NativeFormat::Text,
    };
    // ROW FORMAT SERDE may name a format's serde (CSV, JSON) on top of TEXTFILE.
    let format = match (&serde, format) {
        (Some(RowFormat::Serde(class, _)), NativeFormat::Text) => {
            NativeFormat::of(&StorageDescriptor {
                serde: SerDeInfo {
                    library: class.clone(),
                    parameters: BTreeMap::new(),
                },
                ..Default::default()
            })
            .unwrap_or(NativeFormat::Text)
        }
        (_, f) => f,
    };
    Ok((format, serde))
}

/// Deletes a managed native table's data folder when Apiary made it for the table (external
/// tables keep theirs); otherwise returns what was kept, for the operation log.
pub(super) async fn remove_managed_data(table: &Table) -> Option<String> {
    if table.table_type != TableType::Managed || table.storage_handler().is_some() {
        return None;
    }
    let location = table.sd.location.as_deref()?;
    let Some(dir) = ownership::owned_root(table) else {
        let kept = format!(
            "kept the files at {location}: Apiary did not create that folder for table {}",
            table.qualified_name()
        );
        tracing::info!("{kept}");
        return Some(kept);
    };
    if let Err(e) = blocking(move || remove_dir_if_present(&dir)).await {
        tracing::warn!(table = %table.qualified_name(), error = %e, "could not delete table data");
    }
    None
}

/// Removes a folder and what it holds; a folder already gone is fine.
pub(super) fn remove_dir_if_present(
    dir: &std::path::Path,
) -> Result<(), apiary_storage::StorageError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(apiary_storage::StorageError::io(dir, e)),
    }
}

/// The default location of table `name` in a database at `db_location`: a folder directly
/// inside the database's folder.
pub(super) fn table_location(db_location: &str, name: &str) -> Result<String, SqlError> {
    match write::local_dir(db_location) {
        Ok(dir) => Ok(ownership::child(&dir, name)
            .map_err(meta_error)?
            .display()
            .to_string()),
        Err(_) => {
            apiary_metastore::check_table_name(name)?;
            Ok(format!("{}/{name}", db_location.trim_end_matches('/')))
        }
    }
}

pub(super) fn to_columns(defs: &[ColumnDef]) -> Vec<Column> {
    defs.iter()
        .map(|c| Column {
            name: c.name.clone(),
            type_name: c.type_name.clone(),
            comment: c.comment.clone(),
        })
        .collect()
}

pub(super) fn check_duplicates(cols: &[Column]) -> Result<(), SqlError> {
    let mut seen = std::collections::BTreeSet::new();
    for c in cols {
        if !seen.insert(c.name.as_str()) {
            return Err(SqlError::hive(
                HiveError::DuplicateColumnNames,
                format!(" {}", c.name),
            ));
        }
    }
    Ok(())
}

/// UNIONTYPE columns: data columns of TEXTFILE tables only (Apiary reads and writes unions in
/// LazySimpleSerDe's text; Parquet has no unions, and Hive's partition keys are primitive).
fn check_union_columns(
    columns: &[Column],
    partition_keys: &[Column],
    format: NativeFormat,
) -> Result<(), SqlError> {
    let union = |c: &&Column| HiveType::parse(&c.type_name).is_some_and(|t| t.has_union());
    if let Some(c) = partition_keys.iter().find(union) {
        return Err(SqlError::semantic(format!(
            "Partition column {} of type {} must be of a primitive type",
            c.name, c.type_name
        )));
    }
    if format != NativeFormat::Text {
        if let Some(c) = columns.iter().find(union) {
            return Err(SqlError::Unsupported(format!(
                "column {} of type {}: UNIONTYPE columns are kept in TEXTFILE tables only",
                c.name, c.type_name
            )));
        }
    }
    Ok(())
}

/// A table's or view's column named by a query's result column (`c` for `t.c`, and for a
/// column the select list names twice).
pub(super) fn column_name(result: &str) -> String {
    crate::names::bare_result_name(result).to_lowercase()
}
