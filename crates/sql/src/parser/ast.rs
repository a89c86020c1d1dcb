//! The parsed Hive statements: a leaf module the statement runners and the parser share.

use std::collections::BTreeMap;

/// A table name, optionally qualified by its database.
#[derive(Debug, Clone, PartialEq)]
pub struct TableName {
    /// The database, if written.
    pub db: Option<String>,
    /// The table.
    pub name: String,
}

/// A column definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Name, lower case.
    pub name: String,
    /// Hive type as written, lower case.
    pub type_name: String,
    /// COMMENT.
    pub comment: Option<String>,
}

/// A constraint as CREATE TABLE writes it, on a column (`a INT NOT NULL`) or beside the
/// columns (`PRIMARY KEY (a, b) DISABLE NOVALIDATE`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintDef {
    /// CONSTRAINT name, lower case.
    pub name: Option<String>,
    /// What it requires; a foreign key's parent database is empty when not written.
    pub kind: apiary_metastore::ConstraintKind,
    /// The columns, in key order (none for a CHECK beside the columns).
    pub columns: Vec<String>,
    /// ENABLE / ENFORCED (true) or DISABLE / NOT ENFORCED (false), when written.
    pub enable: Option<bool>,
    /// VALIDATE or NOVALIDATE, when written.
    pub validate: Option<bool>,
    /// RELY or NORELY, when written.
    pub rely: Option<bool>,
    /// Where it starts in the statement (for errors).
    pub at: usize,
}

/// ROW FORMAT.
#[derive(Debug, Clone, PartialEq)]
pub enum RowFormat {
    /// ROW FORMAT DELIMITED ...: the serde parameters it sets.
    Delimited(BTreeMap<String, String>),
    /// ROW FORMAT SERDE 'class' [WITH SERDEPROPERTIES (...)].
    Serde(String, BTreeMap<String, String>),
}

/// STORED AS.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredAs {
    /// A format keyword (TEXTFILE, PARQUET, ...).
    Format(String),
    /// INPUTFORMAT 'a' OUTPUTFORMAT 'b'.
    Classes(String, String),
}

/// CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTable {
    /// EXTERNAL.
    pub external: bool,
    /// TEMPORARY (accepted, treated as a session-independent table).
    pub temporary: bool,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// The name.
    pub name: Option<TableName>,
    /// Columns.
    pub columns: Vec<ColumnDef>,
    /// COMMENT.
    pub comment: Option<String>,
    /// PARTITIONED BY.
    pub partitioned_by: Vec<ColumnDef>,
    /// Constraints, of the columns and of the partition columns.
    pub constraints: Vec<ConstraintDef>,
    /// CLUSTERED BY columns.
    pub clustered_by: Vec<String>,
    /// SORTED BY (column, ascending).
    pub sorted_by: Vec<(String, bool)>,
    /// INTO n BUCKETS.
    pub buckets: Option<i32>,
    /// ROW FORMAT.
    pub row_format: Option<RowFormat>,
    /// STORED AS.
    pub stored_as: Option<StoredAs>,
    /// STORED BY 'class' or STORED BY NAME.
    pub stored_by: Option<String>,
    /// WITH SERDEPROPERTIES after STORED BY.
    pub handler_serde_props: BTreeMap<String, String>,
    /// LOCATION.
    pub location: Option<String>,
    /// TBLPROPERTIES.
    pub tblproperties: BTreeMap<String, String>,
    /// AS <query>: the query text.
    pub as_select: Option<String>,
    /// LIKE <table>.
    pub like: Option<TableName>,
}

/// A partition spec: key with value, or key alone (dynamic).
pub type PartitionSpec = Vec<(String, Option<String>)>;

/// ALTER TABLE actions.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTable {
    /// RENAME TO.
    Rename(TableName),
    /// ADD COLUMNS (...).
    AddColumns(Vec<ColumnDef>),
    /// REPLACE COLUMNS (...).
    ReplaceColumns(Vec<ColumnDef>),
    /// CHANGE [COLUMN] old new type [COMMENT c] [FIRST | AFTER col].
    ChangeColumn {
        /// The column changed.
        old: String,
        /// Its new definition.
        new: ColumnDef,
        /// Constraints it adds to the column (`CONSTRAINT nn NOT NULL ENABLE`).
        constraints: Vec<ConstraintDef>,
    },
    /// ADD CONSTRAINT name PRIMARY KEY (..) | UNIQUE (..) | FOREIGN KEY .. | CHECK (..).
    AddConstraint(ConstraintDef),
    /// DROP CONSTRAINT name.
    DropConstraint(String),
    /// SET TBLPROPERTIES.
    SetProperties(BTreeMap<String, String>),
    /// UNSET TBLPROPERTIES [IF EXISTS].
    UnsetProperties(Vec<String>, bool),
    /// SET SERDEPROPERTIES.
    SetSerdeProperties(BTreeMap<String, String>),
    /// SET LOCATION.
    SetLocation(String),
    /// ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] ...
    AddPartitions(bool, Vec<(PartitionSpec, Option<String>)>),
    /// DROP [IF EXISTS] PARTITION (...), ...
    DropPartitions(bool, Vec<PartitionSpec>),
    /// PARTITION (...) SET LOCATION '...'.
    PartitionLocation(PartitionSpec, String),
}

/// A statement this module parses.
#[derive(Debug, Clone, PartialEq)]
pub enum HiveStatement {
    /// CREATE DATABASE.
    CreateDatabase {
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// Name.
        name: String,
        /// COMMENT.
        comment: Option<String>,
        /// LOCATION.
        location: Option<String>,
        /// WITH DBPROPERTIES.
        properties: BTreeMap<String, String>,
    },
    /// DROP DATABASE.
    DropDatabase {
        /// IF EXISTS.
        if_exists: bool,
        /// Name.
        name: String,
        /// CASCADE.
        cascade: bool,
    },
    /// ALTER DATABASE .. SET DBPROPERTIES / LOCATION / OWNER.
    AlterDatabase {
        /// Name.
        name: String,
        /// Properties to set.
        properties: BTreeMap<String, String>,
        /// New location.
        location: Option<String>,
        /// New owner.
        owner: Option<String>,
    },
    /// DESCRIBE FUNCTION [EXTENDED] name.
    DescribeFunction {
        /// EXTENDED.
        extended: bool,
        /// The function's name, as written.
        name: String,
    },
    /// DESCRIBE DATABASE [EXTENDED].
    DescribeDatabase {
        /// EXTENDED.
        extended: bool,
        /// Name.
        name: String,
    },
    /// CREATE TABLE.
    CreateTable(Box<CreateTable>),
    /// CREATE VIEW.
    CreateView {
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// OR REPLACE.
        or_replace: bool,
        /// Name.
        name: TableName,
        /// Column names given.
        columns: Vec<String>,
        /// COMMENT.
        comment: Option<String>,
        /// TBLPROPERTIES.
        properties: BTreeMap<String, String>,
        /// The query text.
        query: String,
    },
    /// DROP TABLE / DROP VIEW.
    DropTable {
        /// DROP VIEW.
        view: bool,
        /// IF EXISTS.
        if_exists: bool,
        /// Name.
        name: TableName,
        /// PURGE.
        purge: bool,
    },
    /// DROP MATERIALIZED VIEW (dbt sends it on every run): Apiary has none, so with IF
    /// EXISTS it does nothing, and without it the view is not found.
    DropMaterializedView {
        /// IF EXISTS.
        if_exists: bool,
        /// Name.
        name: TableName,
    },
    /// TRUNCATE TABLE.
    Truncate {
        /// Name.
        name: TableName,
        /// PARTITION.
        partition: Option<PartitionSpec>,
    },
    /// ALTER TABLE.
    AlterTable {
        /// Name.
        name: TableName,
        /// Action.
        action: AlterTable,
    },
    /// DESCRIBE [EXTENDED|FORMATTED] table [column].
    Describe {
        /// EXTENDED.
        extended: bool,
        /// FORMATTED.
        formatted: bool,
        /// Table.
        name: TableName,
        /// Column.
        column: Option<String>,
        /// PARTITION spec.
        partition: Option<PartitionSpec>,
    },
    /// SHOW CREATE TABLE.
    ShowCreateTable(TableName),
    /// SHOW TBLPROPERTIES t [('key')].
    ShowTblProperties(TableName, Option<String>),
    /// SHOW COLUMNS IN t [IN db].
    ShowColumns(TableName),
    /// SHOW PARTITIONS t [PARTITION (...)].
    ShowPartitions(TableName, Option<PartitionSpec>),
    /// SHOW DATABASES / SCHEMAS [[LIKE] 'p'].
    ShowDatabases(Option<String>),
    /// SHOW FUNCTIONS [[LIKE] 'p'].
    ShowFunctions(Option<String>),
    /// SHOW TABLES / SHOW VIEWS [IN db] [LIKE 'p'].
    ShowTables {
        /// SHOW VIEWS.
        views: bool,
        /// IN/FROM database.
        db: Option<String>,
        /// Pattern.
        pattern: Option<String>,
    },
    /// MSCK REPAIR TABLE.
    MsckRepair(TableName),
    /// LOAD DATA [LOCAL] INPATH .. [OVERWRITE] INTO TABLE .. [PARTITION].
    LoadData {
        /// LOCAL.
        local: bool,
        /// The path.
        path: String,
        /// OVERWRITE.
        overwrite: bool,
        /// Target table.
        table: TableName,
        /// Partition.
        partition: Option<PartitionSpec>,
    },
    /// INSERT OVERWRITE [LOCAL] DIRECTORY 'path' <query> (refused after its path is checked).
    InsertDirectory {
        /// LOCAL.
        local: bool,
        /// The folder.
        path: String,
        /// The rest of the statement (its row format and query).
        query: String,
    },
    /// INSERT INTO / OVERWRITE.
    Insert {
        /// OVERWRITE.
        overwrite: bool,
        /// Target table.
        table: TableName,
        /// PARTITION spec.
        partition: Option<PartitionSpec>,
        /// Column list.
        columns: Vec<String>,
        /// The query (SELECT ... or VALUES ...).
        query: String,
    },
}

impl HiveStatement {
    /// Whether the statement only reads the catalog (DESCRIBE, SHOW): it runs while being
    /// compiled; every other statement runs as its operation's task.
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            HiveStatement::DescribeDatabase { .. }
                | HiveStatement::DescribeFunction { .. }
                | HiveStatement::Describe { .. }
                | HiveStatement::ShowCreateTable(_)
                | HiveStatement::ShowTblProperties(..)
                | HiveStatement::ShowColumns(_)
                | HiveStatement::ShowPartitions(..)
                | HiveStatement::ShowTables { .. }
                | HiveStatement::ShowDatabases(_)
                | HiveStatement::ShowFunctions(_)
        )
    }

    /// The file-system paths the statement names, each with the clause that names it, for
    /// the server's check of what statements may reach.
    pub fn named_paths(&self) -> Vec<(&'static str, &str)> {
        let mut paths = Vec::new();
        match self {
            HiveStatement::CreateDatabase { location, .. }
            | HiveStatement::AlterDatabase { location, .. } => {
                paths.extend(location.as_deref().map(|l| ("LOCATION", l)));
            }
            HiveStatement::CreateTable(c) => {
                paths.extend(c.location.as_deref().map(|l| ("LOCATION", l)));
            }
            HiveStatement::AlterTable { action, .. } => match action {
                AlterTable::SetLocation(l) | AlterTable::PartitionLocation(_, l) => {
                    paths.push(("SET LOCATION", l.as_str()));
                }
                AlterTable::AddPartitions(_, parts) => paths.extend(
                    parts
                        .iter()
                        .filter_map(|(_, l)| l.as_deref().map(|l| ("LOCATION", l))),
                ),
                _ => {}
            },
            HiveStatement::InsertDirectory { local, path, .. } => paths.push((
                if *local {
                    "INSERT OVERWRITE LOCAL DIRECTORY"
                } else {
                    "INSERT OVERWRITE DIRECTORY"
                },
                path.as_str(),
            )),
            HiveStatement::LoadData { local, path, .. } => paths.push((
                if *local {
                    "LOAD DATA LOCAL INPATH"
                } else {
                    "LOAD DATA INPATH"
                },
                path.as_str(),
            )),
            _ => {}
        }
        paths
    }
}

/// Who a privilege or role is granted to, as written (`USER bob`, `ROLE analysts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A user (names keep their case).
    User(String),
    /// A role (lower case).
    Role(String),
}

/// The statements of SQL-standard authorization.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthzStatement {
    /// CREATE ROLE.
    CreateRole(String),
    /// DROP ROLE.
    DropRole(String),
    /// SET ROLE name | ALL | NONE (lower case).
    SetRole(String),
    /// SHOW ROLES.
    ShowRoles,
    /// SHOW CURRENT ROLES.
    ShowCurrentRoles,
    /// SHOW ROLE GRANT USER|ROLE name.
    ShowRoleGrant(Principal),
    /// SHOW PRINCIPALS role.
    ShowPrincipals(String),
    /// GRANT role, .. TO principal, .. [WITH ADMIN OPTION].
    GrantRole {
        /// The roles.
        roles: Vec<String>,
        /// To whom.
        to: Vec<Principal>,
        /// WITH ADMIN OPTION.
        admin_option: bool,
    },
    /// REVOKE [ADMIN OPTION FOR] role, .. FROM principal, ...
    RevokeRole {
        /// The roles.
        roles: Vec<String>,
        /// From whom.
        from: Vec<Principal>,
        /// ADMIN OPTION FOR: only the admin option goes.
        admin_option_only: bool,
    },
    /// GRANT privilege, .. ON [TABLE] t TO principal, .. [WITH GRANT OPTION].
    Grant {
        /// SELECT, INSERT, UPDATE, DELETE (ALL expanded).
        privileges: Vec<String>,
        /// The table or view.
        table: TableName,
        /// To whom.
        to: Vec<Principal>,
        /// WITH GRANT OPTION.
        grant_option: bool,
    },
    /// REVOKE [GRANT OPTION FOR] privilege, .. ON [TABLE] t FROM principal, ...
    Revoke {
        /// SELECT, INSERT, UPDATE, DELETE (ALL expanded).
        privileges: Vec<String>,
        /// The table or view.
        table: TableName,
        /// From whom.
        from: Vec<Principal>,
        /// GRANT OPTION FOR: only the grant option goes.
        grant_option_only: bool,
    },
    /// SHOW GRANT [principal] [ON [TABLE] t | ON ALL].
    ShowGrant {
        /// Whose grants; everyone's when absent.
        principal: Option<Principal>,
        /// On which table; every object when absent.
        table: Option<TableName>,
    },
}

impl AuthzStatement {
    /// Whether it changes the metastore's roles or grants (and so runs as a task).
    pub fn changes_grants(&self) -> bool {
        matches!(
            self,
            AuthzStatement::CreateRole(_)
                | AuthzStatement::DropRole(_)
                | AuthzStatement::GrantRole { .. }
                | AuthzStatement::RevokeRole { .. }
                | AuthzStatement::Grant { .. }
                | AuthzStatement::Revoke { .. }
        )
    }
}

/// The privileges of SQL-standard authorization on tables and views.
pub const PRIVILEGES: [&str; 4] = ["SELECT", "INSERT", "UPDATE", "DELETE"];
