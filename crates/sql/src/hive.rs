//! Running the statements of [`crate::ddl`]: DDL against the metastore and the warehouse,
//! DESCRIBE / SHOW output in Hive's layout, and INSERT through the storage layer.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiary_metastore::{
    Column, Database, Partition, SerDeInfo, SortColumn, StorageDescriptor, Table, TableType,
};
use apiary_storage::format::NativeFormat;
use apiary_storage::handler::AlterOp;
use apiary_storage::ownership;
use apiary_storage::write::{self, InsertSpec};
use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;

use crate::ddl::{
    AlterTable, ColumnDef, CreateTable, HiveStatement, PartitionSpec, RowFormat, StoredAs,
    TableName,
};
use crate::error::{HiveError, SqlError};
use crate::pattern::hive_like;
use crate::session::{string_rows, Prepared, SqlSession};
use crate::types::HiveType;

/// Hive's column width in DESCRIBE output.
const ALIGN: usize = 20;

fn pad(s: &str) -> String {
    format!("{s:<ALIGN$}")
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A result of string columns.
pub(crate) fn rows(columns: &[&str], data: Vec<Vec<Option<String>>>) -> Prepared {
    let schema: SchemaRef = Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(*c, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = (0..columns.len())
        .map(|i| {
            Arc::new(StringArray::from(
                data.iter()
                    .map(|r| r.get(i).cloned().flatten())
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        })
        .collect();
    match RecordBatch::try_new(schema.clone(), arrays) {
        Ok(b) => Prepared::Rows {
            schema,
            batches: vec![b],
        },
        Err(_) => Prepared::Rows {
            schema,
            batches: vec![],
        },
    }
}

fn to_columns(defs: &[ColumnDef]) -> Vec<Column> {
    defs.iter()
        .map(|c| Column {
            name: c.name.clone(),
            type_name: c.type_name.clone(),
            comment: c.comment.clone(),
        })
        .collect()
}

fn check_duplicates(cols: &[Column]) -> Result<(), SqlError> {
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

fn format_time(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%a %b %d %H:%M:%S UTC %Y").to_string())
        .unwrap_or_else(|| "UNKNOWN".into())
}

fn location_text(loc: &str) -> String {
    if loc.starts_with('/') {
        format!("file:{loc}")
    } else {
        loc.to_string()
    }
}

impl SqlSession {
    fn qualify(&self, name: &TableName) -> (String, String) {
        (
            name.db
                .clone()
                .unwrap_or_else(|| self.database().to_string()),
            name.name.clone(),
        )
    }

    async fn require_table(&self, name: &TableName) -> Result<Table, SqlError> {
        let (db, t) = self.qualify(name);
        if let Some(reason) = self.unavailable().reason(&db, &t) {
            return Err(crate::recovery::Unavailable::error(&db, &t, &reason));
        }
        self.metastore()
            .get_table(&db, &t)
            .await?
            .ok_or_else(|| SqlError::TableNotFound(format!("{db}.{t}")))
    }

    async fn require_database(&self, db: &str) -> Result<Database, SqlError> {
        self.metastore()
            .get_database(db)
            .await?
            .ok_or_else(|| SqlError::DatabaseNotFound(db.to_string()))
    }

    /// Runs one parsed Hive statement.
    pub(crate) async fn run_hive(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        let renames = matches!(
            stmt,
            HiveStatement::CreateDatabase { .. }
                | HiveStatement::DropDatabase { .. }
                | HiveStatement::CreateTable(_)
                | HiveStatement::CreateView { .. }
                | HiveStatement::DropTable { .. }
                | HiveStatement::AlterTable {
                    action: AlterTable::Rename(_),
                    ..
                }
        );
        let out = self.run_hive_inner(stmt).await;
        if renames {
            // Keep DataFusion's synchronous name lists in step with what the DDL changed.
            let _ = self.refresh_catalog().await;
        }
        out
    }

    async fn run_hive_inner(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::CreateDatabase {
                if_not_exists,
                name,
                comment,
                location,
                properties,
            } => {
                apiary_metastore::check_database_name(&name)?;
                if self.metastore().get_database(&name).await?.is_some() {
                    if if_not_exists {
                        return Ok(Prepared::Done);
                    }
                    return Err(SqlError::Ddl(format!("Database {name} already exists")));
                }
                let location = match location {
                    Some(l) => l,
                    None => ownership::child(self.warehouse(), &format!("{name}.db"))
                        .map_err(meta_error)?
                        .display()
                        .to_string(),
                };
                if let Ok(dir) = write::local_dir(&location) {
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| SqlError::Ddl(format!("cannot create {location}: {e}")))?;
                }
                let db = Database {
                    name,
                    comment,
                    location,
                    parameters: properties,
                    owner: self.user().to_string(),
                    create_time: now(),
                };
                self.metastore().create_database(&db).await?;
                Ok(Prepared::Done)
            }
            HiveStatement::DropDatabase {
                if_exists,
                name,
                cascade,
            } => {
                if name == crate::session::DEFAULT_DATABASE {
                    return Err(SqlError::Ddl(
                        "InvalidOperationException(message:Can not drop default database)".into(),
                    ));
                }
                let Some(db) = self.metastore().get_database(&name).await? else {
                    if if_exists {
                        return Ok(Prepared::Done);
                    }
                    return Err(SqlError::DatabaseNotFound(name));
                };
                let tables = self.metastore().get_tables(&name).await?;
                if !tables.is_empty() && !cascade {
                    return Err(SqlError::Ddl(format!(
                        "InvalidOperationException(message:Database {name} is not empty. One or more tables exist.)"
                    )));
                }
                // Each table as DROP TABLE would: non-native ones through their hooks.
                for t in tables {
                    self.drop_one(&t).await?;
                }
                self.metastore().drop_database(&name).await?;
                // Only an emptied folder goes: a LOCATION may hold files that are not ours.
                if let Ok(dir) = write::local_dir(&db.location) {
                    let _ = std::fs::remove_dir(dir);
                }
                if self.database() == name {
                    self.set_database(crate::session::DEFAULT_DATABASE);
                }
                Ok(Prepared::Done)
            }
            HiveStatement::AlterDatabase {
                name,
                properties,
                location,
                owner,
            } => {
                let mut db = self.require_database(&name).await?;
                db.parameters.extend(properties);
                if let Some(l) = location {
                    db.location = l;
                }
                if let Some(o) = owner {
                    db.owner = o;
                }
                self.metastore().alter_database(&db).await?;
                Ok(Prepared::Done)
            }
            HiveStatement::DescribeDatabase { extended, name } => {
                let db = self.require_database(&name).await?;
                let params = if extended && !db.parameters.is_empty() {
                    Some(format!(
                        "{{{}}}",
                        db.parameters
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                } else {
                    None
                };
                let mut cols = vec!["db_name", "comment", "location", "owner_name", "owner_type"];
                let mut row = vec![
                    Some(db.name.clone()),
                    Some(db.comment.clone().unwrap_or_default()),
                    Some(location_text(&db.location)),
                    Some(db.owner.clone()),
                    Some("USER".into()),
                ];
                if extended {
                    cols.push("parameters");
                    row.push(Some(params.unwrap_or_default()));
                }
                Ok(rows(&cols, vec![row]))
            }
            HiveStatement::CreateTable(ct) => self.create_table(*ct).await,
            HiveStatement::CreateView {
                if_not_exists,
                or_replace,
                name,
                columns,
                comment,
                properties,
                query,
            } => {
                let (db, vname) = self.qualify(&name);
                apiary_metastore::check_table_name(&vname)?;
                self.require_database(&db).await?;
                let existing = self.metastore().get_table(&db, &vname).await?;
                if let Some(t) = &existing {
                    if if_not_exists {
                        return Ok(Prepared::Done);
                    }
                    if !or_replace || !t.is_view() {
                        return Err(SqlError::Ddl(format!(
                            "AlreadyExistsException(message:Table hive.{db}.{vname} already exists)"
                        )));
                    }
                }
                let plan = self.plan_query(&query).await?;
                let fields = plan.schema().fields().clone();
                if !columns.is_empty() && columns.len() != fields.len() {
                    return Err(SqlError::hive(
                        HiveError::ViewColumnCountMismatch,
                        format!(": {} columns, {} names", fields.len(), columns.len()),
                    ));
                }
                let cols: Vec<Column> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| Column {
                        name: columns
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| f.name().to_lowercase()),
                        type_name: HiveType::of_field(f).to_string(),
                        comment: None,
                    })
                    .collect();
                check_duplicates(&cols)?;
                let mut parameters = properties;
                if let Some(c) = comment {
                    parameters.insert("comment".into(), c);
                }
                parameters.insert("transient_lastDdlTime".into(), now().to_string());
                let view = Table {
                    database: db.clone(),
                    name: vname.clone(),
                    owner: self.user().to_string(),
                    create_time: now(),
                    table_type: TableType::VirtualView,
                    sd: StorageDescriptor {
                        columns: cols,
                        num_buckets: -1,
                        ..Default::default()
                    },
                    partition_keys: vec![],
                    parameters,
                    view_text: Some(query),
                    view_database: Some(self.database().to_string()),
                    secrets: Default::default(),
                    data_token: None,
                };
                match existing {
                    Some(_) => self.metastore().alter_table(&db, &vname, &view).await?,
                    None => self.metastore().create_table(&view).await?,
                }
                Ok(Prepared::Done)
            }
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
                    return Err(SqlError::TableNotFound(format!("{db}.{t}")));
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
            HiveStatement::AlterTable { name, action } => self.alter_table(&name, action).await,
            HiveStatement::Describe {
                extended,
                formatted,
                name,
                column,
                partition: _,
            } => {
                let table = crate::nonnative::for_display(self.require_table(&name).await?);
                describe(&table, extended, formatted, column.as_deref())
            }
            HiveStatement::ShowCreateTable(name) => {
                let table = crate::nonnative::for_display(self.require_table(&name).await?);
                if table.is_view() {
                    return Ok(string_rows(
                        "createtab_stmt",
                        vec![format!(
                            "CREATE VIEW `{}`.`{}` AS {}",
                            table.database,
                            table.name,
                            table.view_text.clone().unwrap_or_default()
                        )],
                    ));
                }
                let text = crate::show::show_create_table(&table);
                Ok(string_rows(
                    "createtab_stmt",
                    text.lines().map(str::to_string).collect(),
                ))
            }
            HiveStatement::ShowTblProperties(name, key) => {
                let table = crate::nonnative::for_display(self.require_table(&name).await?);
                match key {
                    Some(k) => {
                        let v = table.parameters.get(&k).cloned().unwrap_or_else(|| {
                            format!(
                                "Table {} does not have property: {k}",
                                table.qualified_name()
                            )
                        });
                        Ok(rows(
                            &["prpt_name", "prpt_value"],
                            vec![vec![Some(k), Some(v)]],
                        ))
                    }
                    None => Ok(rows(
                        &["prpt_name", "prpt_value"],
                        table
                            .parameters
                            .iter()
                            .map(|(k, v)| vec![Some(k.clone()), Some(v.clone())])
                            .collect(),
                    )),
                }
            }
            HiveStatement::ShowColumns(name) => {
                let table = self.require_table(&name).await?;
                Ok(string_rows(
                    "field",
                    table
                        .sd
                        .columns
                        .iter()
                        .chain(&table.partition_keys)
                        .map(|c| pad(&c.name))
                        .collect(),
                ))
            }
            HiveStatement::ShowPartitions(name, spec) => {
                let table = self.require_table(&name).await?;
                if table.partition_keys.is_empty() {
                    return Err(SqlError::hive(
                        HiveError::NotPartitioned,
                        format!(
                            "Table {} is not a partitioned table",
                            table.qualified_name()
                        ),
                    ));
                }
                let spec = spec.unwrap_or_default();
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                Ok(string_rows(
                    "partition",
                    parts
                        .iter()
                        .filter(|p| spec_matches(&table, &spec, &p.values))
                        .map(|p| p.name(&table.partition_keys))
                        .collect(),
                ))
            }
            HiveStatement::ShowTables { views, db, pattern } => {
                let db = db.unwrap_or_else(|| self.database().to_string());
                self.require_database(&db).await?;
                let tables = self.metastore().get_tables(&db).await?;
                let names = tables
                    .iter()
                    .filter(|t| !views || t.is_view())
                    .map(|t| t.name.clone())
                    .filter(|n| pattern.as_ref().is_none_or(|p| hive_like(p, n)))
                    .collect();
                Ok(string_rows("tab_name", names))
            }
            HiveStatement::MsckRepair(name) => self.msck(&name).await,
            HiveStatement::LoadData {
                local: _,
                path,
                overwrite,
                table,
                partition,
            } => self.load_data(&path, overwrite, &table, partition).await,
            HiveStatement::Insert {
                overwrite,
                table,
                partition,
                columns,
                query,
            } => {
                let table = self.require_table(&table).await?;
                let task = self
                    .insert(&table, partition, &columns, &query, overwrite)
                    .await?;
                Ok(Prepared::Task(task))
            }
        }
    }

    /// Drops one table or view. Native: the catalog row goes first (a crash after it leaves
    /// unreferenced files in the warehouse, never a table whose data is half gone), then a
    /// managed table's files. Non-native: through the handler's hooks and the journal.
    async fn drop_one(&self, table: &Table) -> Result<(), SqlError> {
        if let Some(handler) = crate::nonnative::handler_of(self.handlers(), table)? {
            let metastore = self.metastore().clone();
            return crate::nonnative::drop(
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

    async fn drop_table_data(&self, table: &Table) -> Result<(), SqlError> {
        if let Some(kept) = remove_managed_data(table).await {
            self.note(kept);
        }
        Ok(())
    }

    /// CREATE [EXTERNAL] TABLE .. STORED BY: the handler's object and the catalog entry
    /// together, through the intent journal.
    async fn create_nonnative(
        &mut self,
        ct: &CreateTable,
        db: String,
        tname: String,
    ) -> Result<Prepared, SqlError> {
        let name = ct.stored_by.as_deref().unwrap_or_default();
        let handler = crate::nonnative::resolve(self.handlers(), name)?;
        let class = handler.class_name();
        let caps = handler.capabilities();
        if ct.as_select.is_some() || ct.like.is_some() {
            return Err(SqlError::semantic(format!(
                "CREATE TABLE .. {} cannot be used with a table stored by {class}",
                if ct.like.is_some() {
                    "LIKE"
                } else {
                    "AS SELECT"
                }
            )));
        }
        if !ct.partitioned_by.is_empty() {
            return Err(SqlError::semantic(format!(
                "PARTITIONED BY cannot be used with a table stored by {class}"
            )));
        }
        if ct.location.is_some() && !caps.location {
            return Err(SqlError::semantic(format!(
                "LOCATION may not be specified for a table stored by {class}"
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
        let columns = to_columns(&ct.columns);
        if columns.is_empty() {
            return Err(SqlError::hive(HiveError::InvalidTableDdlSerde, ""));
        }
        check_duplicates(&columns)?;
        let mut serde_params = ct.handler_serde_props.clone();
        serde_params
            .entry("serialization.format".into())
            .or_insert_with(|| "1".into());
        let mut parameters = ct.tblproperties.clone();
        if let Some(c) = &ct.comment {
            parameters.insert("comment".into(), c.clone());
        }
        parameters.insert("storage_handler".into(), class.to_string());
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
                location: ct.location.clone(),
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
        };
        crate::nonnative::separate_secrets(handler.as_ref(), &mut table);
        let metastore = self.metastore().clone();
        crate::nonnative::create(
            metastore.as_ref(),
            handler.as_ref(),
            self.owner(),
            &table,
            self.interrupt(),
        )
        .await?;
        Ok(Prepared::Done)
    }

    async fn create_table(&mut self, ct: CreateTable) -> Result<Prepared, SqlError> {
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
            return Err(SqlError::Ddl(format!(
                "AlreadyExistsException(message:Table hive.{db}.{tname} already exists)"
            )));
        }
        if ct.stored_by.is_some() {
            if ct.row_format.is_some() || ct.stored_as.is_some() {
                return Err(SqlError::hive(HiveError::StoredByWithRowFormat, ""));
            }
            return self.create_nonnative(&ct, db, tname).await;
        }
        let mut table = if let Some(like) = &ct.like {
            let src = self.require_table(like).await?;
            let mut t = src.clone();
            t.sd.location = None;
            t.data_token = None;
            t.parameters
                .retain(|k, _| k != "EXTERNAL" && k != "transient_lastDdlTime");
            t.table_type = TableType::Managed;
            if src.is_view() {
                return Err(SqlError::Unsupported("CREATE TABLE LIKE a view".into()));
            }
            t
        } else {
            let mut plan_schema: Option<SchemaRef> = None;
            let mut columns = to_columns(&ct.columns);
            if let Some(q) = &ct.as_select {
                if ct.external {
                    return Err(SqlError::hive(HiveError::CtasExternalTable, ""));
                }
                if !ct.partitioned_by.is_empty() {
                    return Err(SqlError::hive(HiveError::CtasPartitioning, ""));
                }
                if !columns.is_empty() {
                    return Err(SqlError::hive(HiveError::CtasColumnList, ""));
                }
                let plan = self.plan_query(q).await?;
                let schema: SchemaRef = Arc::new(plan.schema().as_arrow().clone());
                columns = schema
                    .fields()
                    .iter()
                    .map(|f| Column {
                        name: f.name().to_lowercase(),
                        type_name: HiveType::of_field(f).to_string(),
                        comment: None,
                    })
                    .collect();
                plan_schema = Some(schema);
            }
            let _ = plan_schema;
            if columns.is_empty() {
                return Err(SqlError::hive(HiveError::InvalidTableDdlSerde, ""));
            }
            let partition_keys = to_columns(&ct.partitioned_by);
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
            }
        };
        table.database = db.clone();
        table.name = tname.clone();
        table.owner = self.user().to_string();
        table.create_time = now();
        if let Some(c) = &ct.comment {
            table.parameters.insert("comment".into(), c.clone());
        }
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
                        SqlError::Ddl(format!(
                            "MetaException(message:cannot create {location}: {e})"
                        ))
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
        match self.insert(&table, None, &[], q, false).await {
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

    async fn alter_table(
        &mut self,
        name: &TableName,
        action: AlterTable,
    ) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        let mut t = table.clone();
        // A non-native table allows only what its handler declares (Hive's rule).
        let handler = crate::nonnative::handler_of(self.handlers(), &table)?;
        let alter_op = match &action {
            AlterTable::SetProperties(p)
                if !p.contains_key("EXTERNAL") && !p.contains_key("storage_handler") =>
            {
                Some(AlterOp::AddProps)
            }
            AlterTable::UnsetProperties(keys, _)
                if !keys
                    .iter()
                    .any(|k| k == "EXTERNAL" || k == "storage_handler") =>
            {
                Some(AlterOp::DropProps)
            }
            AlterTable::AddColumns(_) => Some(AlterOp::AddCols),
            _ => None,
        };
        if let Some(h) = &handler {
            crate::nonnative::check_alter(h.as_ref(), &table, None, alter_op).await?;
        }
        match action {
            AlterTable::Rename(to) => {
                let (db, n) = self.qualify(&to);
                self.require_database(&db).await?;
                t.database = db.clone();
                t.name = n.clone();
                apiary_metastore::check_table_name(&n)?;
                // Only a folder Apiary made for the table moves with it.
                let moves = table.table_type == TableType::Managed
                    && ownership::owned_root(&table).is_some()
                    && table.sd.location.as_deref()
                        == Some(&self.default_location(&table.database, &table.name).await?);
                if moves {
                    let new_loc = self.default_location(&db, &n).await?;
                    let from = write::local_dir(table.sd.location.as_deref().unwrap_or(""))?;
                    let to_dir = write::local_dir(&new_loc)?;
                    blocking(move || {
                        if !from.exists() {
                            return Ok(());
                        }
                        std::fs::rename(&from, &to_dir).map_err(|e| {
                            SqlError::Ddl(format!("Unable to rename {}: {e}", from.display()))
                        })
                    })
                    .await?;
                    t.sd.location = Some(new_loc);
                }
                if let Err(e) = self
                    .metastore()
                    .alter_table(&table.database, &table.name, &t)
                    .await
                {
                    if moves {
                        let _ = std::fs::rename(
                            write::local_dir(t.sd.location.as_deref().unwrap_or(""))?,
                            write::local_dir(table.sd.location.as_deref().unwrap_or(""))?,
                        );
                    }
                    return Err(e.into());
                }
                return Ok(Prepared::Done);
            }
            AlterTable::AddColumns(cols) => {
                t.sd.columns.extend(to_columns(&cols));
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
            }
            AlterTable::ReplaceColumns(cols) => {
                t.sd.columns = to_columns(&cols);
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
            }
            AlterTable::ChangeColumn { old, new } => {
                let Some(c) = t.sd.columns.iter_mut().find(|c| c.name == old) else {
                    return Err(SqlError::hive(HiveError::InvalidColumn, format!(" {old}")));
                };
                c.name = new.name;
                c.type_name = new.type_name;
                if new.comment.is_some() {
                    c.comment = new.comment;
                }
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
            }
            AlterTable::SetProperties(p) => {
                if let Some(v) = p.get("EXTERNAL") {
                    t.table_type = if v.eq_ignore_ascii_case("true") {
                        TableType::External
                    } else {
                        TableType::Managed
                    };
                }
                t.parameters.extend(p);
            }
            AlterTable::UnsetProperties(keys, if_exists) => {
                for k in keys {
                    if t.parameters.remove(&k).is_none() && !if_exists {
                        return Err(SqlError::hive(
                            HiveError::UnsetNonExistentProperty,
                            format!(
                                " The following property {k} does not exist in {}",
                                table.name
                            ),
                        ));
                    }
                }
            }
            AlterTable::SetSerdeProperties(p) => t.sd.serde.parameters.extend(p),
            AlterTable::SetLocation(l) => t.sd.location = Some(l),
            AlterTable::AddPartitions(if_not_exists, parts) => {
                let mut new = Vec::new();
                for (spec, loc) in parts {
                    let values = full_spec(&table, &spec)?;
                    let location = match loc {
                        Some(l) => Some(l),
                        None => Some(write::partition_dir(&table, &values)?.display().to_string()),
                    };
                    if let Some(l) = &location {
                        if let Ok(d) = write::local_dir(l) {
                            let _ = std::fs::create_dir_all(d);
                        }
                    }
                    new.push(new_partition(values, location));
                }
                self.metastore()
                    .add_partitions(&table.database, &table.name, &new, if_not_exists)
                    .await?;
                return Ok(Prepared::Done);
            }
            AlterTable::DropPartitions(if_exists, specs) => {
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                let mut drop = Vec::new();
                for spec in &specs {
                    check_spec_keys(&table, spec)?;
                    let matching: Vec<&Partition> = parts
                        .iter()
                        .filter(|p| spec_matches(&table, spec, &p.values))
                        .collect();
                    if matching.is_empty() && !if_exists {
                        return Err(SqlError::hive(
                            HiveError::InvalidPartition,
                            format!(" {}", spec_text(spec)),
                        ));
                    }
                    drop.extend(matching);
                }
                let values: Vec<Vec<String>> = drop.iter().map(|p| p.values.clone()).collect();
                self.metastore()
                    .drop_partitions(&table.database, &table.name, &values)
                    .await?;
                if table.table_type == TableType::Managed {
                    let root = ownership::owned_root(&table);
                    for p in drop {
                        let dir = match &p.sd.location {
                            Some(l) => write::local_dir(l),
                            None => write::partition_dir(&table, &p.values),
                        };
                        let Ok(d) = dir else { continue };
                        if root
                            .as_ref()
                            .is_some_and(|r| ownership::inside(r, &d) && r != &d)
                        {
                            blocking(move || remove_dir_if_present(&d)).await?;
                        } else {
                            self.note(format!(
                                "kept the files of partition {} at {}: Apiary did not create that folder for table {}",
                                p.name(&table.partition_keys),
                                d.display(),
                                table.qualified_name()
                            ));
                        }
                    }
                }
                return Ok(Prepared::Done);
            }
            AlterTable::PartitionLocation(spec, loc) => {
                let values = full_spec(&table, &spec)?;
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                let mut p = parts
                    .into_iter()
                    .find(|p| p.values == values)
                    .ok_or_else(|| {
                        SqlError::hive(
                            HiveError::InvalidPartition,
                            format!(" {}", spec_text(&spec)),
                        )
                    })?;
                p.sd.location = Some(loc);
                self.metastore()
                    .alter_partition(&table.database, &table.name, &p)
                    .await?;
                return Ok(Prepared::Done);
            }
        }
        t.parameters
            .insert("transient_lastDdlTime".into(), now().to_string());
        if let Some(h) = &handler {
            crate::nonnative::separate_secrets(h.as_ref(), &mut t);
            crate::nonnative::check_alter(h.as_ref(), &table, Some(&t), alter_op).await?;
        }
        self.metastore()
            .alter_table(&table.database, &table.name, &t)
            .await?;
        Ok(Prepared::Done)
    }

    async fn default_location(&self, db: &str, table: &str) -> Result<String, SqlError> {
        let d = self.require_database(db).await?;
        table_location(&d.location, table)
    }

    async fn msck(&mut self, name: &TableName) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        if table.partition_keys.is_empty() {
            return Ok(Prepared::Done);
        }
        let root = write::local_dir(table.sd.location.as_deref().unwrap_or(""))?;
        let mut found = Vec::new();
        collect_partition_dirs(&root, String::new(), table.partition_keys.len(), &mut found);
        let values = apiary_storage::native::partition_values_of(&found, &table.partition_keys);
        let known: Vec<Vec<String>> = self
            .metastore()
            .list_partitions(&table.database, &table.name)
            .await?
            .into_iter()
            .map(|p| p.values)
            .collect();
        let new: Vec<Partition> = values
            .into_iter()
            .filter(|v| !known.contains(v))
            .map(|values| default_partition(&table, values))
            .collect();
        let lines: Vec<String> = new
            .iter()
            .map(|p| {
                format!(
                    "Repair: Added partition to metastore {}:{}",
                    table.qualified_name(),
                    p.name(&table.partition_keys)
                )
            })
            .collect();
        self.metastore()
            .add_partitions(&table.database, &table.name, &new, true)
            .await?;
        if lines.is_empty() {
            Ok(Prepared::Done)
        } else {
            Ok(string_rows("result", lines))
        }
    }

    async fn load_data(
        &mut self,
        path: &str,
        overwrite: bool,
        name: &TableName,
        partition: Option<PartitionSpec>,
    ) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        if table.storage_handler().is_some() {
            return Err(SqlError::hive(HiveError::NonNativeLoad, ""));
        }
        let values = match (&partition, table.partition_keys.is_empty()) {
            (None, true) => vec![],
            (Some(_), true) => {
                return Err(SqlError::hive(
                    HiveError::PartitionSpecOnUnpartitioned,
                    format!(" {}", table.qualified_name()),
                ))
            }
            (None, false) => return Err(SqlError::hive(HiveError::NeedPartitionColumns, "")),
            (Some(spec), false) => full_spec(&table, spec)?,
        };
        // LOCAL paths and file: URLs; Hive moves from HDFS, Apiary copies (the source stays).
        let local = path
            .strip_prefix("file://")
            .or_else(|| path.strip_prefix("file:"))
            .unwrap_or(path);
        let src = std::path::PathBuf::from(local);
        let dir = write::partition_dir(&table, &values)?;
        if overwrite {
            let root = owned_root_for(&table, "overwrite")?;
            if !ownership::inside(&root, &dir) {
                return Err(not_owned(&table, "overwrite", &dir.display().to_string()));
            }
        }
        let path = path.to_string();
        let target_dir = dir.clone();
        blocking(move || load_files(&path, &src, &target_dir, overwrite)).await?;
        if !table.partition_keys.is_empty() {
            let part = new_partition(values, Some(dir.display().to_string()));
            self.metastore()
                .add_partitions(&table.database, &table.name, &[part], true)
                .await?;
        }
        Ok(Prepared::Done)
    }

    /// INSERT INTO/OVERWRITE: plans `query` and checks its columns against the table here;
    /// the returned task writes the rows and registers new partitions.
    pub(crate) async fn insert(
        &mut self,
        table: &Table,
        partition: Option<PartitionSpec>,
        columns: &[String],
        query: &str,
        overwrite: bool,
    ) -> Result<crate::session::Task, SqlError> {
        if table.is_view() {
            return Err(SqlError::hive(
                HiveError::ViewAsTarget,
                format!(": {}", table.qualified_name()),
            ));
        }
        if let Some(handler) = crate::nonnative::handler_of(self.handlers(), table)? {
            if partition.is_some() {
                return Err(SqlError::hive(
                    HiveError::PartitionSpecOnUnpartitioned,
                    format!(" {}", table.qualified_name()),
                ));
            }
            let caps = handler.capabilities();
            if !(if overwrite {
                caps.overwrite
            } else {
                caps.insert
            }) {
                return Err(SqlError::semantic(format!(
                    "INSERT {} is not supported for a table stored by {}",
                    if overwrite { "OVERWRITE" } else { "INTO" },
                    handler.class_name()
                )));
            }
            let plan = self.insert_plan(table, query, columns, 0).await?;
            let ctx = self.context().clone();
            let table = table.clone();
            return Ok(crate::session::Task::abortable(async move {
                let failed = |e: apiary_storage::handler::HandlerError| {
                    SqlError::Execution(format!("org.apache.hadoop.hive.ql.exec.MoveTask. {e}"))
                };
                let hook = handler.meta_hook();
                if let Some(h) = hook {
                    h.pre_insert_table(&table, overwrite)
                        .await
                        .map_err(failed)?;
                }
                let stream = crate::session::execute(&ctx, plan).await?;
                let job = handler.job_properties(&table);
                let rows = match handler.insert(&table, job, stream, overwrite).await {
                    Ok(rows) => rows,
                    Err(e) => {
                        if let Some(h) = hook {
                            if let Err(r) = h.rollback_insert_table(&table, overwrite).await {
                                tracing::warn!(error = %r, "rollback hook of INSERT failed");
                            }
                        }
                        return Err(failed(e));
                    }
                };
                if let Some(h) = hook {
                    h.commit_insert_table(&table, overwrite)
                        .await
                        .map_err(failed)?;
                }
                tracing::info!(table = %table.qualified_name(), rows, overwrite, "insert into a non-native table committed");
                Ok(())
            }));
        }
        let spec: Vec<Option<String>> = match (&partition, table.partition_keys.is_empty()) {
            (None, true) => vec![],
            (Some(_), true) => {
                return Err(SqlError::hive(HiveError::PartitionSpecOnUnpartitioned, format!(" {}",
                    table.qualified_name()
                )))
            }
            (None, false) => {
                return Err(SqlError::hive(HiveError::TargetTableColumnMismatch, format!(" '{}': Need to specify partition columns because the destination table is partitioned",
                    table.name
                )))
            }
            (Some(spec), false) => {
                check_spec_keys(table, spec)?;
                if spec.len() != table.partition_keys.len() {
                    return Err(SqlError::hive(HiveError::TargetTableColumnMismatch, format!(" '{}': Partition spec {} does not name every partition column",
                        table.name,
                        spec_text(spec)
                    )));
                }
                table
                    .partition_keys
                    .iter()
                    .map(|k| {
                        spec.iter()
                            .find(|(n, _)| n == &k.name)
                            .and_then(|(_, v)| v.clone())
                    })
                    .collect()
            }
        };
        let dynamic = spec.iter().filter(|v| v.is_none()).count();
        let owned_root = if overwrite {
            Some(owned_root_for(table, "overwrite")?)
        } else {
            None
        };
        let plan = self.insert_plan(table, query, columns, dynamic).await?;
        let ctx = self.context().clone();
        let server_tag = self.server_tag().to_string();
        let metastore = self.metastore().clone();
        let table = table.clone();
        Ok(crate::session::Task::abortable(async move {
            let stream = crate::session::execute(&ctx, plan).await?;
            let parts = metastore
                .list_partitions(&table.database, &table.name)
                .await?;
            let dirs: BTreeMap<Vec<String>, Option<String>> = parts
                .iter()
                .map(|p| (p.values.clone(), p.sd.location.clone()))
                .collect();
            let staged = write::insert(
                &table,
                &InsertSpec {
                    partition: spec,
                    overwrite,
                    owned_root,
                    server_tag,
                },
                stream,
                &dirs,
            )
            .await
            .map_err(move_task_error)?;
            // The decision to commit is durable now: partitions first (still empty), then
            // the files; recovery at start-up repeats both if a crash comes in between.
            failpoint("insert.after_manifest").await?;
            register_partitions(metastore.as_ref(), &table, &staged.manifest).await?;
            failpoint("insert.after_partitions").await?;
            let rows = staged.manifest.rows;
            let files = match tokio::task::spawn_blocking(move || staged.commit()).await {
                Ok(r) => r.map_err(move_task_error)?,
                Err(e) => {
                    return Err(SqlError::Execution(format!(
                        "org.apache.hadoop.hive.ql.exec.MoveTask. file task failed: {e}"
                    )))
                }
            };
            tracing::info!(table = %table.qualified_name(), rows, files, "insert committed");
            Ok(())
        }))
    }

    /// An INSERT's query planned: reordered by an explicit column list (NULL for the columns
    /// it leaves out), and checked to give the table's data columns plus `dynamic` partition
    /// values.
    async fn insert_plan(
        &mut self,
        table: &Table,
        query: &str,
        columns: &[String],
        dynamic: usize,
    ) -> Result<LogicalPlan, SqlError> {
        let mut plan = self.plan_query(query).await?;
        if !columns.is_empty() {
            plan = self.reorder_columns(plan, table, columns, dynamic)?;
        }
        let got = plan.schema().fields().len();
        let want = table.sd.columns.len() + dynamic;
        if got != want {
            return Err(SqlError::hive_at(
                HiveError::TargetTableColumnMismatch,
                "Line 1:12 ",
                format!(
                    " '{}': Table insclause-0 has {want} columns, but query has {got} columns.",
                    table.name
                ),
            ));
        }
        Ok(plan)
    }

    fn reorder_columns(
        &self,
        plan: LogicalPlan,
        table: &Table,
        columns: &[String],
        dynamic: usize,
    ) -> Result<LogicalPlan, SqlError> {
        use datafusion::logical_expr::{col, lit, LogicalPlanBuilder};
        let fields = plan.schema().fields().clone();
        if fields.len() != columns.len() + dynamic {
            return Err(SqlError::hive(
                HiveError::TargetTableColumnMismatch,
                format!(
                    " '{}': Table insclause-0 has {} columns, but query has {} columns.",
                    table.name,
                    columns.len() + dynamic,
                    fields.len()
                ),
            ));
        }
        let mut exprs = Vec::new();
        for c in &table.sd.columns {
            match columns.iter().position(|x| x == &c.name) {
                Some(i) => exprs.push(
                    col(datafusion::common::Column::from_name(fields[i].name())).alias(&c.name),
                ),
                None => exprs.push(lit(datafusion::common::ScalarValue::Null).alias(&c.name)),
            }
        }
        for c in columns {
            if !table.sd.columns.iter().any(|x| &x.name == c) {
                return Err(SqlError::hive(HiveError::InvalidColumn, format!(" {c}")));
            }
        }
        for f in &fields[columns.len()..] {
            exprs.push(col(datafusion::common::Column::from_name(f.name())));
        }
        LogicalPlanBuilder::from(plan)
            .project(exprs)
            .and_then(|b| b.build())
            .map_err(SqlError::from_planning)
    }
}

/// LOAD DATA's file work: copies the data files of `src` (a file or a folder) into `dir`,
/// after clearing `dir`'s data files for OVERWRITE.
fn load_files(
    path: &str,
    src: &std::path::Path,
    dir: &std::path::Path,
    overwrite: bool,
) -> Result<(), SqlError> {
    let files: Vec<std::path::PathBuf> = if src.is_dir() {
        std::fs::read_dir(src)
            .map_err(|e| {
                SqlError::hive(
                    HiveError::InvalidPath,
                    format!("Invalid path '{path}': {e}"),
                )
            })?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .map(|n| apiary_storage::native::is_data_file(&n.to_string_lossy()))
                    .unwrap_or(false)
            })
            .collect()
    } else if src.is_file() {
        vec![src.to_path_buf()]
    } else {
        return Err(SqlError::hive_at(
            HiveError::InvalidPath,
            "Line 1:17 ",
            format!("Path is not legal '{path}': No files matching path {path}"),
        ));
    };
    std::fs::create_dir_all(dir).map_err(|e| SqlError::Ddl(e.to_string()))?;
    if overwrite {
        write::clear_data_files(dir)?;
    }
    for f in files {
        let name = f.file_name().map(|n| n.to_owned()).unwrap_or_default();
        let mut target = dir.join(&name);
        if target.exists() {
            target = dir.join(format!(
                "{}_copy_{}",
                name.to_string_lossy(),
                uuid::Uuid::new_v4().simple()
            ));
        }
        // LOAD copies from a LOCAL path (Hive moves from HDFS; copying keeps the source).
        std::fs::copy(&f, &target).map_err(|e| SqlError::Ddl(format!("{}: {e}", f.display())))?;
    }
    Ok(())
}

/// A new partition with these values, stored at `location`.
fn new_partition(values: Vec<String>, location: Option<String>) -> Partition {
    Partition {
        values,
        sd: StorageDescriptor {
            location,
            ..Default::default()
        },
        parameters: BTreeMap::new(),
        create_time: now(),
    }
}

/// Reaches a fail point; an injected failure is an execution error.
pub(crate) async fn failpoint(name: &str) -> Result<(), SqlError> {
    apiary_failpoints::reach(name)
        .await
        .map_err(|e| SqlError::Execution(e.to_string()))
}

fn move_task_error(e: apiary_storage::StorageError) -> SqlError {
    match e {
        apiary_storage::StorageError::Write(m) => {
            SqlError::Execution(format!("org.apache.hadoop.hive.ql.exec.MoveTask. {m}"))
        }
        other => other.into(),
    }
}

/// Adds the partitions an INSERT creates to the metastore (those already there are kept).
pub(crate) async fn register_partitions(
    metastore: &dyn apiary_metastore::Metastore,
    table: &Table,
    manifest: &write::CommitManifest,
) -> Result<(), SqlError> {
    let new: Vec<Partition> = manifest
        .new_partitions()
        .into_iter()
        .map(|values| default_partition(table, values))
        .collect();
    if !new.is_empty() {
        metastore
            .add_partitions(&table.database, &table.name, &new, true)
            .await?;
    }
    Ok(())
}

/// A new partition in its default folder under the table (`k=v/...`).
fn default_partition(table: &Table, values: Vec<String>) -> Partition {
    let location = write::partition_dir(table, &values)
        .ok()
        .map(|d| d.display().to_string());
    new_partition(values, location)
}

/// Deletes a managed native table's data folder when Apiary made it for the table (external
/// tables keep theirs); otherwise returns what was kept, for the operation log.
async fn remove_managed_data(table: &Table) -> Option<String> {
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
fn remove_dir_if_present(dir: &std::path::Path) -> Result<(), apiary_storage::StorageError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(apiary_storage::StorageError::io(dir, e)),
    }
}

/// Runs file-system work on a blocking thread, off the async workers.
pub(crate) async fn blocking<T, E>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, SqlError>
where
    T: Send + 'static,
    E: Into<SqlError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(Into::into),
        Err(e) => Err(SqlError::Execution(format!(
            "org.apache.hadoop.hive.ql.exec.MoveTask. file task failed: {e}"
        ))),
    }
}

/// A DDL error about the catalog's view of the file system (Hive's MetaException).
fn meta_error(e: impl std::fmt::Display) -> SqlError {
    SqlError::Ddl(format!("MetaException(message:{e})"))
}

/// The default location of table `name` in a database at `db_location`: a folder directly
/// inside the database's folder.
fn table_location(db_location: &str, name: &str) -> Result<String, SqlError> {
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

/// The table's data folder when Apiary owns it; otherwise the error for `what` (truncate,
/// overwrite) on a table whose files are not Apiary's to delete.
pub(crate) fn owned_root_for(table: &Table, what: &str) -> Result<std::path::PathBuf, SqlError> {
    ownership::owned_root(table).ok_or_else(|| {
        not_owned(
            table,
            what,
            table.sd.location.as_deref().unwrap_or("(no location)"),
        )
    })
}

fn not_owned(table: &Table, what: &str, path: &str) -> SqlError {
    SqlError::hive(HiveError::Generic, format!("Cannot {what} table {}: {path} is not a folder Apiary created for this table, so Apiary does not delete the files in it",
        table.qualified_name()
    ))
}

fn collect_partition_dirs(
    dir: &std::path::Path,
    prefix: String,
    depth: usize,
    out: &mut Vec<String>,
) {
    if depth == 0 {
        out.push(prefix);
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false)
            && name.contains('=')
            && apiary_storage::native::is_data_file(&name)
        {
            let p = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            collect_partition_dirs(&e.path(), p, depth - 1, out);
        }
    }
}

fn spec_text(spec: &PartitionSpec) -> String {
    format!(
        "{{{}}}",
        spec.iter()
            .map(|(k, v)| format!("{k}={}", v.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn check_spec_keys(table: &Table, spec: &PartitionSpec) -> Result<(), SqlError> {
    for (k, _) in spec {
        if !table.partition_keys.iter().any(|p| &p.name == k) {
            return Err(SqlError::hive(
                HiveError::NonPartitionColumnInSpec,
                format!(" {k}"),
            ));
        }
    }
    Ok(())
}

/// Values for every partition key; the spec must name each with a value.
fn full_spec(table: &Table, spec: &PartitionSpec) -> Result<Vec<String>, SqlError> {
    check_spec_keys(table, spec)?;
    table
        .partition_keys
        .iter()
        .map(|k| {
            spec.iter()
                .find(|(n, _)| n == &k.name)
                .and_then(|(_, v)| v.clone())
                .ok_or_else(|| {
                    // Hive's code for a partition it cannot find, with a message of its own.
                    SqlError::Semantic {
                        error: Some(HiveError::InvalidPartition),
                        message: format!(
                            "Partition spec {} is missing a value for partition column {}",
                            spec_text(spec),
                            k.name
                        ),
                    }
                })
        })
        .collect()
}

fn spec_matches(table: &Table, spec: &PartitionSpec, values: &[String]) -> bool {
    spec.iter().all(|(k, v)| match v {
        None => true,
        Some(v) => table
            .partition_keys
            .iter()
            .position(|p| &p.name == k)
            .and_then(|i| values.get(i))
            .is_some_and(|x| x == v),
    })
}

fn resolve_format(ct: &CreateTable) -> Result<(NativeFormat, Option<RowFormat>), SqlError> {
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

/// DESCRIBE [EXTENDED | FORMATTED] output.
fn describe(
    table: &Table,
    extended: bool,
    formatted: bool,
    column: Option<&str>,
) -> Result<Prepared, SqlError> {
    let cols = ["col_name", "data_type", "comment"];
    let col_row = |c: &Column| {
        vec![
            Some(pad(&c.name)),
            Some(pad(&c.type_name)),
            Some(pad(c.comment.as_deref().unwrap_or(""))),
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
        out.push(vec![
            Some(pad("# col_name")),
            Some(pad("data_type")),
            Some(pad("comment")),
        ]);
    }
    out.extend(table.sd.columns.iter().map(col_row));
    if !formatted {
        // Plain DESCRIBE lists the partition keys with the columns, then again below.
        out.extend(table.partition_keys.iter().map(col_row));
    }
    if !table.partition_keys.is_empty() {
        out.push(blank());
        out.push(vec![Some("# Partition Information".into()), None, None]);
        out.push(vec![
            Some(pad("# col_name")),
            Some(pad("data_type")),
            Some(pad("comment")),
        ]);
        out.extend(table.partition_keys.iter().map(col_row));
    }
    if extended {
        out.push(blank());
        out.push(vec![
            Some("Detailed Table Information".into()),
            Some(thrift_text(table)),
            Some(String::new()),
        ]);
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
    }
    Ok(rows(&cols, out))
}

/// A table as Hive's DESCRIBE EXTENDED prints it: the metastore object's Thrift text form.
fn thrift_text(t: &Table) -> String {
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
