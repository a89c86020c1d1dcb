//! Catalog requests: what a front end may ask of the catalog (HiveServer2's GetSchemas,
//! GetTables, ... and Flight SQL's GetDbSchemas, GetTables, ...), typed, so no front end
//! reaches into the SQL layer. Answers come either as an operation whose rows have JDBC's
//! `DatabaseMetaData` shapes ([`crate::Gateway::catalog`]) or as typed lists
//! ([`crate::Gateway::databases`], [`crate::Gateway::tables`]).

pub use apiary_sql::catalog::answers::TableInfo;
use apiary_sql::catalog::answers::{self, CatalogReader};
use apiary_sql::{Prepared, SqlError};

use crate::OperationKind;

/// One catalog request. Patterns are JDBC's (`%` and `_`, `\` escapes; none = all).
#[derive(Debug, Clone)]
pub enum CatalogRequest {
    /// The SQL types the server knows (GetTypeInfo).
    TypeInfo,
    /// The catalogs (Hive has none to list).
    Catalogs,
    /// Databases.
    Schemas {
        /// Database name pattern.
        schema_pattern: Option<String>,
    },
    /// Tables and views.
    Tables {
        /// Database name pattern.
        schema_pattern: Option<String>,
        /// Table name pattern.
        table_pattern: Option<String>,
        /// Table types wanted (`TABLE`, `VIEW`, or Hive's own names); none = all.
        table_types: Option<Vec<String>>,
    },
    /// The table types.
    TableTypes,
    /// Columns.
    Columns {
        /// Database name pattern.
        schema_pattern: Option<String>,
        /// Table name pattern.
        table_pattern: Option<String>,
        /// Column name pattern.
        column_pattern: Option<String>,
    },
    /// Functions.
    Functions {
        /// Function name pattern.
        function_pattern: String,
    },
    /// A table's primary key (Hive tables declare none).
    PrimaryKeys,
    /// Foreign keys between two tables (none).
    CrossReference,
}

impl CatalogRequest {
    /// The operation kind that answers it.
    pub fn kind(&self) -> OperationKind {
        match self {
            CatalogRequest::TypeInfo => OperationKind::GetTypeInfo,
            CatalogRequest::Catalogs => OperationKind::GetCatalogs,
            CatalogRequest::Schemas { .. } => OperationKind::GetSchemas,
            CatalogRequest::Tables { .. } => OperationKind::GetTables,
            CatalogRequest::TableTypes => OperationKind::GetTableTypes,
            CatalogRequest::Columns { .. } => OperationKind::GetColumns,
            CatalogRequest::Functions { .. } => OperationKind::GetFunctions,
            CatalogRequest::PrimaryKeys => OperationKind::GetPrimaryKeys,
            CatalogRequest::CrossReference => OperationKind::GetCrossReference,
        }
    }

    /// The rows answering it, read from the metastore now (so other servers' DDL is seen).
    pub(crate) async fn answer(self, reader: &CatalogReader) -> Result<Prepared, SqlError> {
        Ok(match self {
            CatalogRequest::TypeInfo => answers::type_info(),
            CatalogRequest::Catalogs => answers::catalogs(),
            CatalogRequest::Schemas { schema_pattern } => {
                reader.schemas(schema_pattern.as_deref()).await?
            }
            CatalogRequest::Tables {
                schema_pattern,
                table_pattern,
                table_types,
            } => {
                reader
                    .tables(
                        schema_pattern.as_deref(),
                        table_pattern.as_deref(),
                        table_types.as_deref(),
                    )
                    .await?
            }
            CatalogRequest::TableTypes => answers::table_types(),
            CatalogRequest::Columns {
                schema_pattern,
                table_pattern,
                column_pattern,
            } => {
                reader
                    .columns(
                        schema_pattern.as_deref(),
                        table_pattern.as_deref(),
                        column_pattern.as_deref(),
                    )
                    .await?
            }
            CatalogRequest::Functions { function_pattern } => reader.functions(&function_pattern),
            CatalogRequest::PrimaryKeys => answers::primary_keys(),
            CatalogRequest::CrossReference => answers::cross_reference(),
        })
    }
}
