//! The Hive metastore's object model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A database (Hive also calls it a schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Database {
    /// Name, lower case.
    pub name: String,
    /// COMMENT.
    pub comment: Option<String>,
    /// Where managed tables of this database live (`<warehouse>/<name>.db`).
    pub location: String,
    /// WITH DBPROPERTIES.
    pub parameters: BTreeMap<String, String>,
    /// The user who created it.
    pub owner: String,
    /// Seconds since the epoch.
    pub create_time: i64,
}

/// Hive's table types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableType {
    /// Apiary owns the data: DROP deletes it.
    #[serde(rename = "MANAGED_TABLE")]
    Managed,
    /// The data belongs to someone else: DROP keeps it.
    #[serde(rename = "EXTERNAL_TABLE")]
    External,
    /// A view; its text is in [`Table::view_text`].
    #[serde(rename = "VIRTUAL_VIEW")]
    VirtualView,
}

impl TableType {
    /// The name Hive shows (`MANAGED_TABLE`, `EXTERNAL_TABLE`, `VIRTUAL_VIEW`).
    pub fn as_str(&self) -> &'static str {
        match self {
            TableType::Managed => "MANAGED_TABLE",
            TableType::External => "EXTERNAL_TABLE",
            TableType::VirtualView => "VIRTUAL_VIEW",
        }
    }
}

/// A column: name, Hive type text (`int`, `decimal(10,2)`, `map<string,int>`) and comment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Name, lower case.
    pub name: String,
    /// Hive type, lower case, without blanks (`array<struct<a:int,b:string>>`).
    pub type_name: String,
    /// COMMENT.
    pub comment: Option<String>,
}

/// A serde class and its parameters (SERDEPROPERTIES, delimiters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SerDeInfo {
    /// Serde class name.
    pub library: String,
    /// Serde parameters (`field.delim`, `serialization.format`, ...).
    pub parameters: BTreeMap<String, String>,
}

/// A SORTED BY column and its order (1 ascending, 0 descending, as Hive stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SortColumn {
    /// Column name.
    pub column: String,
    /// 1 ascending, 0 descending.
    pub order: i32,
}

/// Where and how a table's or partition's data is stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageDescriptor {
    /// Data columns (partition keys are not among them).
    pub columns: Vec<Column>,
    /// LOCATION (a URL or an absolute path); `None` for views and non-native tables.
    pub location: Option<String>,
    /// Input format class.
    pub input_format: Option<String>,
    /// Output format class.
    pub output_format: Option<String>,
    /// Serde class and parameters.
    pub serde: SerDeInfo,
    /// Whether the data is compressed.
    pub compressed: bool,
    /// INTO n BUCKETS; -1 when not bucketed.
    pub num_buckets: i32,
    /// CLUSTERED BY columns.
    pub bucket_columns: Vec<String>,
    /// SORTED BY columns.
    pub sort_columns: Vec<SortColumn>,
}

/// A table or a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Database name, lower case.
    pub database: String,
    /// Table name, lower case.
    pub name: String,
    /// The user who created it.
    pub owner: String,
    /// Seconds since the epoch.
    pub create_time: i64,
    /// Managed, external or view.
    pub table_type: TableType,
    /// Columns and storage.
    pub sd: StorageDescriptor,
    /// PARTITIONED BY columns.
    pub partition_keys: Vec<Column>,
    /// TBLPROPERTIES plus those Hive sets itself (`transient_lastDdlTime`, `EXTERNAL`, ...).
    pub parameters: BTreeMap<String, String>,
    /// A view's text as written.
    pub view_text: Option<String>,
    /// The current database when the view was created: unqualified names in its text
    /// resolve there.
    #[serde(default)]
    pub view_database: Option<String>,
    /// Properties a storage handler declares secret (a JDBC password): kept apart from
    /// `parameters`, never shown (DESCRIBE and SHOW CREATE TABLE mask them), and handed only
    /// to the handler's reader and writer.
    /// On disk they are sealed under the server's key ([`crate::sealed`]).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "crate::sealed"
    )]
    pub secrets: BTreeMap<String, String>,
    /// The token of the data folder Apiary created (or claimed empty) for this table, also
    /// written in that folder's marker file: the proof that the folder is the table's to
    /// delete. `None` when the table's location was someone else's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_token: Option<String>,
    /// Constraints declared in CREATE TABLE (Hive keeps them beside the table, not in its
    /// parameters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<Constraint>,
}

/// What a constraint requires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    /// PRIMARY KEY (columns).
    PrimaryKey,
    /// UNIQUE (columns).
    Unique,
    /// FOREIGN KEY (columns) REFERENCES db.table (parent columns).
    ForeignKey {
        /// The referenced table's database.
        parent_database: String,
        /// The referenced table.
        parent_table: String,
        /// The referenced columns, one per column of the key.
        parent_columns: Vec<String>,
    },
    /// NOT NULL (one column).
    NotNull,
    /// DEFAULT value (one column): the expression's text as written.
    Default(String),
    /// CHECK (expression): its text as written; a column-level CHECK names its column.
    Check(String),
}

/// A table constraint as Hive records it: a name (Hive makes one up when none is given),
/// the columns, and the ENABLE / VALIDATE / RELY flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Constraint {
    /// The constraint's name, lower case.
    pub name: String,
    /// The kind.
    pub kind: ConstraintKind,
    /// The columns it covers, in key order (empty for a table-level CHECK).
    pub columns: Vec<String>,
    /// ENABLE (Apiary enforces NOT NULL and CHECK on INSERT, and fills DEFAULT) or DISABLE.
    pub enable: bool,
    /// VALIDATE or NOVALIDATE.
    pub validate: bool,
    /// RELY or NORELY.
    pub rely: bool,
}

impl ConstraintKind {
    /// The name of the kind in Hive's DESCRIBE output (`Primary Key`, `Not Null Constraints`).
    pub fn title(&self) -> &'static str {
        match self {
            ConstraintKind::PrimaryKey => "Primary Key",
            ConstraintKind::Unique => "Unique Constraints",
            ConstraintKind::ForeignKey { .. } => "Foreign Keys",
            ConstraintKind::NotNull => "Not Null Constraints",
            ConstraintKind::Default(_) => "Default Constraints",
            ConstraintKind::Check(_) => "Check Constraints",
        }
    }
}

impl Table {
    /// `db.name`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.database, self.name)
    }

    /// Whether the table is a view.
    pub fn is_view(&self) -> bool {
        self.table_type == TableType::VirtualView
    }

    /// The storage handler class of a non-native table (table parameter `storage_handler`).
    pub fn storage_handler(&self) -> Option<&str> {
        self.parameters.get("storage_handler").map(String::as_str)
    }
}

/// Whether `name` is a valid database or table name for Hive's metastore: ASCII letters,
/// digits and underscores only (Java's `\\w+`). Such a name is also safe as a folder name.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A partition of a table: one value per partition key, and its own storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    /// Values in the order of the table's partition keys.
    pub values: Vec<String>,
    /// Storage (location) of this partition.
    pub sd: StorageDescriptor,
    /// Partition parameters.
    pub parameters: BTreeMap<String, String>,
    /// Seconds since the epoch.
    pub create_time: i64,
}

impl Partition {
    /// Hive's partition name for `keys`: `k1=v1/k2=v2`, with Hive's escaping of values.
    pub fn name(&self, keys: &[Column]) -> String {
        partition_name(keys, &self.values)
    }
}

impl Table {
    /// The partition name of `part` in this table, checking it has one value per key.
    pub fn partition_name_of(&self, part: &Partition) -> Result<String, crate::MetastoreError> {
        if part.values.len() != self.partition_keys.len() {
            return Err(crate::MetastoreError::InvalidOperation(format!(
                "partition spec has {} values; table {} has {} partition columns",
                part.values.len(),
                self.qualified_name(),
                self.partition_keys.len()
            )));
        }
        Ok(partition_name(&self.partition_keys, &part.values))
    }
}

/// `k1=v1/k2=v2` for these keys and values, escaping keys and values as Hive does in
/// partition paths (so no part can hold a `/` or be `.` or `..`).
pub fn partition_name(keys: &[Column], values: &[String]) -> String {
    keys.iter()
        .zip(values)
        .map(|(k, v)| format!("{}={}", escape_path_value(&k.name), escape_path_value(v)))
        .collect::<Vec<_>>()
        .join("/")
}

/// Escapes a partition value for a path the way Hive does (`%XX` for special characters).
pub fn escape_path_value(v: &str) -> String {
    if v.is_empty() {
        return "__HIVE_DEFAULT_PARTITION__".into();
    }
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        let special = matches!(
            c,
            '"' | '#'
                | '%'
                | '\''
                | '*'
                | '/'
                | ':'
                | '='
                | '?'
                | '\\'
                | '\x7f'
                | '{'
                | '['
                | ']'
                | '^'
        ) || (c as u32) < 0x20;
        if special {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`escape_path_value`].
pub fn unescape_path_value(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_values_escape_and_unescape() {
        for v in ["2024-01-01", "a/b", "x=y", "50%", "plain"] {
            assert_eq!(unescape_path_value(&escape_path_value(v)), v);
        }
        assert_eq!(escape_path_value("a/b"), "a%2Fb");
        assert_eq!(escape_path_value(""), "__HIVE_DEFAULT_PARTITION__");
    }
}

/// Who a privilege or role is granted to (Hive's `principal_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PrincipalType {
    /// A user name.
    User,
    /// A role.
    Role,
}

impl PrincipalType {
    /// Hive's name: `USER` or `ROLE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalType::User => "USER",
            PrincipalType::Role => "ROLE",
        }
    }
}

/// Roles that always exist and are never stored: `public` (everyone) and `admin`.
pub const BUILTIN_ROLES: [&str; 2] = ["admin", "public"];

/// One step of a GRANT or REVOKE statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantChange {
    /// Grant (or re-grant) this.
    Put(Grant),
    /// Revoke `privilege` on `object` from the principal; with `option_only`, only its grant
    /// (or admin) option.
    Revoke {
        /// What it is on.
        object: GrantObject,
        /// Whether the holder is a user or a role.
        principal_type: PrincipalType,
        /// The holder.
        principal_name: String,
        /// The privilege (`MEMBER` for a role).
        privilege: String,
        /// Only the option.
        option_only: bool,
    },
}

/// A role of SQL-standard authorization (CREATE ROLE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Role {
    /// Name, lower case.
    pub name: String,
    /// Who created it.
    pub owner: String,
    /// Seconds since the epoch.
    pub create_time: i64,
}

/// What a grant is on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum GrantObject {
    /// A table or view: a privilege (SELECT, INSERT, UPDATE, DELETE) on it.
    Table {
        /// Database, lower case.
        database: String,
        /// Table or view, lower case.
        name: String,
    },
    /// A role: membership in it (GRANT ROLE).
    Role {
        /// The role, lower case.
        name: String,
    },
}

impl GrantObject {
    /// The key the catalog stores the object under.
    pub fn key(&self) -> String {
        match self {
            GrantObject::Table { database, name } => format!("table:{database}.{name}"),
            GrantObject::Role { name } => format!("role:{name}"),
        }
    }
}

/// One privilege (or role membership) held by one principal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// What it is on.
    pub object: GrantObject,
    /// Who holds it.
    pub principal_name: String,
    /// Whether the holder is a user or a role.
    pub principal_type: PrincipalType,
    /// SELECT, INSERT, UPDATE or DELETE on a table; `MEMBER` of a role.
    pub privilege: String,
    /// WITH GRANT OPTION (tables) or WITH ADMIN OPTION (roles).
    pub grant_option: bool,
    /// Who granted it.
    pub grantor: String,
    /// Whether the grantor acted as a user or through a role.
    pub grantor_type: PrincipalType,
    /// Seconds since the epoch.
    pub grant_time: i64,
}

impl Grant {
    /// The key of the holder (`USER:bob`, `ROLE:analysts`).
    pub fn principal_key(&self) -> String {
        principal_key(self.principal_type, &self.principal_name)
    }
}

/// The key the catalog stores a principal under.
pub fn principal_key(kind: PrincipalType, name: &str) -> String {
    format!("{}:{name}", kind.as_str())
}
