//! The catalog calls of HiveServer2 (GetSchemas, GetTables, GetColumns, GetTypeInfo, ...),
//! answered with the result shapes JDBC's `DatabaseMetaData` defines, as Hive does.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Int16Array, Int32Array, Int8Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::SessionContext;

use crate::access::decide::Visibility;
use crate::catalog::pattern::jdbc_like;
use crate::error::SqlError;
use crate::prepared::Prepared;
use crate::types::HiveType;

/// A cell of a catalog result.
#[derive(Debug, Clone)]
enum Cell {
    S(Option<String>),
    I(Option<i32>),
    Small(Option<i16>),
    Tiny(Option<i8>),
    B(Option<bool>),
}

fn s(v: impl Into<String>) -> Cell {
    Cell::S(Some(v.into()))
}

/// Builds a one-batch result from column definitions and rows of cells.
fn table(columns: &[(&str, DataType)], rows: Vec<Vec<Cell>>) -> Prepared {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .enumerate()
        .map(|(c, (_, t))| -> ArrayRef {
            let col = rows.iter().map(|r| r.get(c).cloned());
            match t {
                DataType::Int32 => Arc::new(
                    col.map(|v| match v {
                        Some(Cell::I(x)) => x,
                        _ => None,
                    })
                    .collect::<Int32Array>(),
                ),
                DataType::Int16 => Arc::new(
                    col.map(|v| match v {
                        Some(Cell::Small(x)) => x,
                        _ => None,
                    })
                    .collect::<Int16Array>(),
                ),
                DataType::Int8 => Arc::new(
                    col.map(|v| match v {
                        Some(Cell::Tiny(x)) => x,
                        _ => None,
                    })
                    .collect::<Int8Array>(),
                ),
                DataType::Boolean => Arc::new(
                    col.map(|v| match v {
                        Some(Cell::B(x)) => x,
                        _ => None,
                    })
                    .collect::<BooleanArray>(),
                ),
                _ => Arc::new(
                    col.map(|v| match v {
                        Some(Cell::S(x)) => x,
                        _ => None,
                    })
                    .collect::<StringArray>(),
                ),
            }
        })
        .collect();
    let batches = RecordBatch::try_new(schema.clone(), arrays)
        .into_iter()
        .collect();
    Prepared::Rows { schema, batches }
}

/// GetCatalogs: Hive has no catalogs, so the result is empty.
pub fn catalogs() -> Prepared {
    table(&[("TABLE_CAT", DataType::Utf8)], vec![])
}

/// GetSchemas: the databases matching `pattern`, read from the metastore.
pub async fn schemas(ctx: &SessionContext, pattern: Option<&str>) -> Result<Prepared, SqlError> {
    let rows = database_names(ctx, pattern)
        .await?
        .into_iter()
        .map(|d| vec![s(d), s("")])
        .collect();
    Ok(table(
        &[
            ("TABLE_SCHEM", DataType::Utf8),
            ("TABLE_CATALOG", DataType::Utf8),
        ],
        rows,
    ))
}

/// GetTableTypes: Hive's CLASSIC mapping (what `getTables` reports).
pub fn table_types() -> Prepared {
    table(
        &[("TABLE_TYPE", DataType::Utf8)],
        vec![vec![s("TABLE")], vec![s("VIEW")]],
    )
}

/// Whether a table of type `t` is asked for by a JDBC type filter, which may use the CLASSIC
/// names (TABLE, VIEW) or Hive's own (MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW).
fn type_wanted(t: apiary_metastore::TableType, wanted: &[String]) -> bool {
    use apiary_metastore::TableType as T;
    wanted.iter().any(|w| {
        let w = w.to_ascii_uppercase();
        w == t.as_str()
            || (w == "TABLE" && matches!(t, T::Managed | T::External))
            || (w == "VIEW" && t == T::VirtualView)
    })
}

/// The CLASSIC name of a table type.
fn classic(t: apiary_metastore::TableType) -> &'static str {
    match t {
        apiary_metastore::TableType::VirtualView => "VIEW",
        _ => "TABLE",
    }
}

/// The matching tables of the wanted types (none or an empty list: all).
async fn typed_tables(
    ctx: &SessionContext,
    visibility: Option<&Visibility>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    types: Option<&[String]>,
) -> Result<Vec<apiary_metastore::Table>, SqlError> {
    let mut tables = matching_tables(ctx, visibility, schema_pattern, table_pattern).await?;
    if let Some(types) = types.filter(|t| !t.is_empty()) {
        tables.retain(|t| type_wanted(t.table_type, types));
    }
    Ok(tables)
}

async fn matching_tables(
    ctx: &SessionContext,
    visibility: Option<&Visibility>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
) -> Result<Vec<apiary_metastore::Table>, SqlError> {
    let Some(metastore) = crate::catalog::provider::HiveCatalog::of(ctx) else {
        return Ok(vec![]);
    };
    let dbs = match crate::catalog::pattern::jdbc_literal(schema_pattern) {
        Some(db) => vec![db],
        None => metastore.list_databases().await?,
    };
    let mut out = Vec::new();
    for db in dbs {
        if !jdbc_like(schema_pattern, &db) {
            continue;
        }
        // A pattern without wildcards names one table: look it up instead of listing.
        if let Some(name) = crate::catalog::pattern::jdbc_literal(table_pattern) {
            out.extend(metastore.get_table(&db, &name).await?);
            continue;
        }
        out.extend(
            metastore
                .get_tables(&db)
                .await?
                .into_iter()
                .filter(|t| jdbc_like(table_pattern, &t.name)),
        );
    }
    match visibility {
        Some(v) => v.filter(out).await,
        None => Ok(out),
    }
}

/// A table or view as a front end lists it.
#[derive(Debug, Clone)]
pub struct TableInfo {
    /// Its database.
    pub database: String,
    /// Its name.
    pub name: String,
    /// `TABLE` or `VIEW`.
    pub kind: &'static str,
    /// Its comment.
    pub comment: Option<String>,
    /// Its columns as Arrow fields (partition columns last), with the declared Hive type in
    /// each field's metadata.
    pub schema: arrow::datatypes::SchemaRef,
}

/// The databases matching a JDBC-style `pattern`, sorted.
pub async fn database_names(
    ctx: &SessionContext,
    pattern: Option<&str>,
) -> Result<Vec<String>, SqlError> {
    let mut names = match crate::catalog::provider::HiveCatalog::of(ctx) {
        Some(metastore) => metastore.list_databases().await?,
        None => vec![],
    };
    names.retain(|d| jdbc_like(pattern, d));
    names.sort();
    Ok(names)
}

/// The tables of matching databases with their Arrow schemas, sorted by database and name.
pub async fn table_infos(
    ctx: &SessionContext,
    visibility: Option<&Visibility>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    types: Option<&[String]>,
) -> Result<Vec<TableInfo>, SqlError> {
    let mut out = Vec::new();
    let tables = typed_tables(ctx, visibility, schema_pattern, table_pattern, types).await?;
    // Columns are shown, as by GetColumns, only of the tables the session may SELECT from;
    // the others are listed with an empty schema.
    let readable: Option<std::collections::HashSet<(String, String)>> = match visibility {
        Some(v) => Some(
            v.readable(tables.clone())
                .await?
                .into_iter()
                .map(|t| (t.database, t.name))
                .collect(),
        ),
        None => None,
    };
    for t in tables {
        let shown = readable
            .as_ref()
            .is_none_or(|r| r.contains(&(t.database.clone(), t.name.clone())));
        let fields: Vec<Field> =
            t.sd.columns
                .iter()
                .chain(&t.partition_keys)
                .filter(|_| shown)
                .map(|c| {
                    let ty = HiveType::parse(&c.type_name).unwrap_or(HiveType::String);
                    let mut f = ty.to_field(&c.name);
                    let mut meta = f.metadata().clone();
                    meta.insert(crate::types::HIVE_TYPE_KEY.to_string(), ty.to_string());
                    f.set_metadata(meta);
                    f
                })
                .collect();
        out.push(TableInfo {
            database: t.database.clone(),
            name: t.name.clone(),
            kind: classic(t.table_type),
            comment: t.parameters.get("comment").cloned(),
            schema: Arc::new(Schema::new(fields)),
        });
    }
    out.sort_by(|a, b| (&a.database, &a.name).cmp(&(&b.database, &b.name)));
    Ok(out)
}

/// GetTables: tables of matching databases, sorted by type, database and name as JDBC requires.
pub async fn tables(
    ctx: &SessionContext,
    visibility: Option<&Visibility>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    types: Option<&[String]>,
) -> Result<Prepared, SqlError> {
    let mut rows = Vec::new();
    for t in typed_tables(ctx, visibility, schema_pattern, table_pattern, types).await? {
        rows.push(vec![
            s(""),
            s(t.database.clone()),
            s(t.name.clone()),
            s(classic(t.table_type)),
            s(t.parameters.get("comment").cloned().unwrap_or_default()),
            Cell::S(None),
            Cell::S(None),
            Cell::S(None),
            Cell::S(None),
            Cell::S(None),
        ]);
    }
    rows.sort_by_key(|r| key(r, &[3, 1, 2]));
    Ok(table(
        &[
            ("TABLE_CAT", DataType::Utf8),
            ("TABLE_SCHEM", DataType::Utf8),
            ("TABLE_NAME", DataType::Utf8),
            ("TABLE_TYPE", DataType::Utf8),
            ("REMARKS", DataType::Utf8),
            ("TYPE_CAT", DataType::Utf8),
            ("TYPE_SCHEM", DataType::Utf8),
            ("TYPE_NAME", DataType::Utf8),
            ("SELF_REFERENCING_COL_NAME", DataType::Utf8),
            ("REF_GENERATION", DataType::Utf8),
        ],
        rows,
    ))
}

fn key(row: &[Cell], cols: &[usize]) -> Vec<String> {
    cols.iter()
        .map(|c| match row.get(*c) {
            Some(Cell::S(Some(v))) => v.clone(),
            _ => String::new(),
        })
        .collect()
}

/// java.sql.Types code of a Hive type.
pub fn jdbc_type(t: &HiveType) -> i32 {
    match t {
        HiveType::Boolean => 16,
        HiveType::TinyInt => -6,
        HiveType::SmallInt => 5,
        HiveType::Int => 4,
        HiveType::BigInt => -5,
        HiveType::Float => 6,
        HiveType::Double => 8,
        HiveType::Decimal(_, _) => 3,
        HiveType::String | HiveType::Varchar(_) => 12,
        HiveType::Char(_) => 1,
        HiveType::Date => 91,
        HiveType::Timestamp => 93,
        HiveType::TimestampLocalTz => 2014,
        HiveType::Binary => -2,
        HiveType::Array(_) => 2003,
        HiveType::Map(_, _) => 2000,
        HiveType::Struct(_) => 2002,
        // Hive's Type.UNION_TYPE is java.sql.Types.OTHER.
        HiveType::Union(_) => 1111,
        HiveType::IntervalYearMonth | HiveType::IntervalDayTime => 1111,
        HiveType::Null => 0,
    }
}

/// COLUMN_SIZE as Hive reports it.
pub fn column_size(t: &HiveType) -> Option<i32> {
    Some(match t {
        HiveType::Boolean => 1,
        HiveType::TinyInt => 3,
        HiveType::SmallInt => 5,
        HiveType::Int => 10,
        HiveType::BigInt => 19,
        HiveType::Float => 7,
        HiveType::Double => 15,
        HiveType::Decimal(p, _) => i32::from(*p),
        HiveType::String | HiveType::Binary => i32::MAX,
        HiveType::Varchar(n) | HiveType::Char(n) => i32::try_from(*n).unwrap_or(i32::MAX),
        HiveType::Date => 10,
        HiveType::Timestamp | HiveType::TimestampLocalTz => 29,
        _ => return None,
    })
}

/// DECIMAL_DIGITS as Hive reports it.
pub fn decimal_digits(t: &HiveType) -> Option<i32> {
    Some(match t {
        HiveType::TinyInt
        | HiveType::SmallInt
        | HiveType::Int
        | HiveType::BigInt
        | HiveType::Boolean => 0,
        HiveType::Float => 7,
        HiveType::Double => 15,
        HiveType::Decimal(_, s) => i32::from(*s),
        HiveType::Timestamp | HiveType::TimestampLocalTz => 9,
        _ => return None,
    })
}

fn is_numeric(t: &HiveType) -> bool {
    matches!(
        t,
        HiveType::TinyInt
            | HiveType::SmallInt
            | HiveType::Int
            | HiveType::BigInt
            | HiveType::Float
            | HiveType::Double
            | HiveType::Decimal(_, _)
    )
}

/// TYPE_NAME as Hive's GetColumns gives it: the bare name of a primitive type (`DECIMAL`,
/// `VARCHAR`; precision and length are in their own columns), the whole name of a complex one.
fn type_name(t: &HiveType) -> String {
    let full = t.to_string().to_uppercase();
    if t.is_complex() {
        return full;
    }
    full.split('(').next().unwrap_or_default().to_string()
}

/// GetColumns: columns of matching tables, in database, table and ordinal order.
pub async fn columns(
    ctx: &SessionContext,
    visibility: Option<&Visibility>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    column_pattern: Option<&str>,
) -> Result<Prepared, SqlError> {
    let mut rows = Vec::new();
    let mut tables = matching_tables(ctx, visibility, schema_pattern, table_pattern).await?;
    if let Some(v) = visibility {
        tables = v.readable(tables).await?;
    }
    for t in tables {
        let (db, name) = (t.database.clone(), t.name.clone());
        {
            for (i, c) in t.sd.columns.iter().chain(&t.partition_keys).enumerate() {
                if !jdbc_like(column_pattern, &c.name) {
                    continue;
                }
                let Some(ht) = HiveType::parse(&c.type_name) else {
                    continue;
                };
                let numeric = is_numeric(&ht);
                rows.push(vec![
                    Cell::S(None),
                    s(db.clone()),
                    s(name.clone()),
                    s(c.name.clone()),
                    Cell::I(Some(jdbc_type(&ht))),
                    s(type_name(&ht)),
                    Cell::I(column_size(&ht)),
                    Cell::Tiny(None),
                    Cell::I(decimal_digits(&ht)),
                    Cell::I(numeric.then_some(10)),
                    Cell::I(Some(1)),
                    s(c.comment.clone().unwrap_or_default()),
                    Cell::S(None),
                    Cell::I(None),
                    Cell::I(None),
                    Cell::I(None),
                    Cell::I(Some(i32::try_from(i + 1).unwrap_or(i32::MAX))),
                    s("YES"),
                    Cell::S(None),
                    Cell::S(None),
                    Cell::S(None),
                    Cell::Small(None),
                    s("NO"),
                ]);
            }
        }
    }
    Ok(table(
        &[
            ("TABLE_CAT", DataType::Utf8),
            ("TABLE_SCHEM", DataType::Utf8),
            ("TABLE_NAME", DataType::Utf8),
            ("COLUMN_NAME", DataType::Utf8),
            ("DATA_TYPE", DataType::Int32),
            ("TYPE_NAME", DataType::Utf8),
            ("COLUMN_SIZE", DataType::Int32),
            ("BUFFER_LENGTH", DataType::Int8),
            ("DECIMAL_DIGITS", DataType::Int32),
            ("NUM_PREC_RADIX", DataType::Int32),
            ("NULLABLE", DataType::Int32),
            ("REMARKS", DataType::Utf8),
            ("COLUMN_DEF", DataType::Utf8),
            ("SQL_DATA_TYPE", DataType::Int32),
            ("SQL_DATETIME_SUB", DataType::Int32),
            ("CHAR_OCTET_LENGTH", DataType::Int32),
            ("ORDINAL_POSITION", DataType::Int32),
            ("IS_NULLABLE", DataType::Utf8),
            ("SCOPE_CATALOG", DataType::Utf8),
            ("SCOPE_SCHEMA", DataType::Utf8),
            ("SCOPE_TABLE", DataType::Utf8),
            ("SOURCE_DATA_TYPE", DataType::Int16),
            ("IS_AUTO_INCREMENT", DataType::Utf8),
        ],
        rows,
    ))
}

/// GetTypeInfo: every Hive type, as JDBC's `getTypeInfo` describes them.
pub fn type_info() -> Prepared {
    let types = [
        HiveType::Null,
        HiveType::Boolean,
        HiveType::String,
        HiveType::Binary,
        HiveType::TinyInt,
        HiveType::SmallInt,
        HiveType::Int,
        HiveType::BigInt,
        HiveType::Float,
        HiveType::Double,
        HiveType::Decimal(38, 18),
        HiveType::Date,
        HiveType::Timestamp,
        HiveType::Varchar(65535),
        HiveType::Char(255),
        HiveType::IntervalYearMonth,
        HiveType::IntervalDayTime,
        HiveType::Array(Box::new(HiveType::String)),
        HiveType::Map(Box::new(HiveType::String), Box::new(HiveType::String)),
        HiveType::Struct(vec![]),
        HiveType::Union(vec![]),
    ];
    let rows = types
        .iter()
        .map(|t| {
            let name = match t {
                HiveType::Decimal(_, _) => "DECIMAL".to_string(),
                HiveType::Varchar(_) => "VARCHAR".to_string(),
                HiveType::Char(_) => "CHAR".to_string(),
                HiveType::Array(_) => "ARRAY".to_string(),
                HiveType::Map(_, _) => "MAP".to_string(),
                HiveType::Struct(_) => "STRUCT".to_string(),
                HiveType::Union(_) => "UNIONTYPE".to_string(),
                HiveType::Null => "VOID".to_string(),
                other => other.to_string().to_uppercase(),
            };
            let numeric = is_numeric(t);
            let quoted = matches!(
                t,
                HiveType::String | HiveType::Varchar(_) | HiveType::Char(_)
            );
            vec![
                s(name.clone()),
                Cell::I(Some(jdbc_type(t))),
                Cell::I(column_size(t)),
                Cell::S(quoted.then(|| "'".to_string())),
                Cell::S(quoted.then(|| "'".to_string())),
                Cell::S(match t {
                    HiveType::Decimal(_, _) => Some("precision,scale".into()),
                    HiveType::Varchar(_) | HiveType::Char(_) => Some("length".into()),
                    _ => None,
                }),
                Cell::Small(Some(1)),
                Cell::B(Some(quoted)),
                Cell::Small(Some(
                    if matches!(
                        t,
                        HiveType::Array(_)
                            | HiveType::Map(_, _)
                            | HiveType::Struct(_)
                            | HiveType::Union(_)
                    ) {
                        0
                    } else {
                        3
                    },
                )),
                Cell::B(Some(!numeric)),
                Cell::B(Some(false)),
                Cell::B(Some(false)),
                Cell::S(None),
                Cell::Small(Some(0)),
                Cell::Small(Some(match t {
                    HiveType::Decimal(_, _) => 38,
                    _ => 0,
                })),
                Cell::I(None),
                Cell::I(None),
                Cell::I(numeric.then_some(10)),
            ]
        })
        .collect();
    table(
        &[
            ("TYPE_NAME", DataType::Utf8),
            ("DATA_TYPE", DataType::Int32),
            ("PRECISION", DataType::Int32),
            ("LITERAL_PREFIX", DataType::Utf8),
            ("LITERAL_SUFFIX", DataType::Utf8),
            ("CREATE_PARAMS", DataType::Utf8),
            ("NULLABLE", DataType::Int16),
            ("CASE_SENSITIVE", DataType::Boolean),
            ("SEARCHABLE", DataType::Int16),
            ("UNSIGNED_ATTRIBUTE", DataType::Boolean),
            ("FIXED_PREC_SCALE", DataType::Boolean),
            ("AUTO_INCREMENT", DataType::Boolean),
            ("LOCAL_TYPE_NAME", DataType::Utf8),
            ("MINIMUM_SCALE", DataType::Int16),
            ("MAXIMUM_SCALE", DataType::Int16),
            ("SQL_DATA_TYPE", DataType::Int32),
            ("SQL_DATETIME_SUB", DataType::Int32),
            ("NUM_PREC_RADIX", DataType::Int32),
        ],
        rows,
    )
}

/// GetFunctions: scalar, aggregate and window functions matching `pattern`.
pub fn functions(ctx: &SessionContext, pattern: &str) -> Prepared {
    let state = ctx.state();
    let mut names: Vec<(String, i32)> = Vec::new();
    // FUNCTION_TYPE: 1 = functionNoTable (scalar), 2 = functionReturnsTable.
    names.extend(state.scalar_functions().keys().map(|k| (k.clone(), 1)));
    names.extend(state.aggregate_functions().keys().map(|k| (k.clone(), 1)));
    names.extend(state.window_functions().keys().map(|k| (k.clone(), 1)));
    names.extend(
        ["range", "generate_series"]
            .iter()
            .map(|k| (k.to_string(), 2)),
    );
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);
    let rows = names
        .into_iter()
        .filter(|(n, _)| jdbc_like(Some(pattern), n))
        .map(|(n, kind)| {
            vec![
                Cell::S(None),
                Cell::S(None),
                s(n.clone()),
                s(""),
                Cell::I(Some(kind)),
                s(n),
            ]
        })
        .collect();
    table(
        &[
            ("FUNCTION_CAT", DataType::Utf8),
            ("FUNCTION_SCHEM", DataType::Utf8),
            ("FUNCTION_NAME", DataType::Utf8),
            ("REMARKS", DataType::Utf8),
            ("FUNCTION_TYPE", DataType::Int32),
            ("SPECIFIC_NAME", DataType::Utf8),
        ],
        rows,
    )
}

/// GetPrimaryKeys: Hive tables declare none here, so the result is empty (with its shape).
pub fn primary_keys() -> Prepared {
    table(
        &[
            ("TABLE_CAT", DataType::Utf8),
            ("TABLE_SCHEM", DataType::Utf8),
            ("TABLE_NAME", DataType::Utf8),
            ("COLUMN_NAME", DataType::Utf8),
            ("KEQ_SEQ", DataType::Int32),
            ("PK_NAME", DataType::Utf8),
        ],
        vec![],
    )
}

/// GetCrossReference: no foreign keys, an empty result of JDBC's shape.
pub fn cross_reference() -> Prepared {
    table(
        &[
            ("PKTABLE_CAT", DataType::Utf8),
            ("PKTABLE_SCHEM", DataType::Utf8),
            ("PKTABLE_NAME", DataType::Utf8),
            ("PKCOLUMN_NAME", DataType::Utf8),
            ("FKTABLE_CAT", DataType::Utf8),
            ("FKTABLE_SCHEM", DataType::Utf8),
            ("FKTABLE_NAME", DataType::Utf8),
            ("FKCOLUMN_NAME", DataType::Utf8),
            ("KEQ_SEQ", DataType::Int32),
            ("UPDATE_RULE", DataType::Int16),
            ("DELETE_RULE", DataType::Int16),
            ("FK_NAME", DataType::Utf8),
            ("PK_NAME", DataType::Utf8),
            ("DEFERRABILITY", DataType::Int16),
        ],
        vec![],
    )
}

/// What front ends may read of the catalog through one session (its view of the metastore
/// and functions), opaque to the layers above: they never see DataFusion's context. Each
/// call reads the metastore now, so other servers' DDL is seen.
#[derive(Clone)]
pub struct CatalogReader {
    ctx: SessionContext,
    visibility: Option<Visibility>,
}

impl std::fmt::Debug for CatalogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CatalogReader")
    }
}

impl CatalogReader {
    pub(crate) fn new(ctx: SessionContext, visibility: Option<Visibility>) -> Self {
        Self { ctx, visibility }
    }

    /// GetSchemas' rows.
    pub async fn schemas(&self, pattern: Option<&str>) -> Result<Prepared, SqlError> {
        schemas(&self.ctx, pattern).await
    }

    /// GetTables' rows.
    pub async fn tables(
        &self,
        schema_pattern: Option<&str>,
        table_pattern: Option<&str>,
        types: Option<&[String]>,
    ) -> Result<Prepared, SqlError> {
        tables(
            &self.ctx,
            self.visibility.as_ref(),
            schema_pattern,
            table_pattern,
            types,
        )
        .await
    }

    /// GetColumns' rows.
    pub async fn columns(
        &self,
        schema_pattern: Option<&str>,
        table_pattern: Option<&str>,
        column_pattern: Option<&str>,
    ) -> Result<Prepared, SqlError> {
        columns(
            &self.ctx,
            self.visibility.as_ref(),
            schema_pattern,
            table_pattern,
            column_pattern,
        )
        .await
    }

    /// GetFunctions' rows.
    pub fn functions(&self, pattern: &str) -> Prepared {
        functions(&self.ctx, pattern)
    }

    /// The databases matching `pattern`, sorted.
    pub async fn database_names(&self, pattern: Option<&str>) -> Result<Vec<String>, SqlError> {
        database_names(&self.ctx, pattern).await
    }

    /// The tables and views matching the patterns, with their Arrow schemas.
    pub async fn table_infos(
        &self,
        schema_pattern: Option<&str>,
        table_pattern: Option<&str>,
        types: Option<&[String]>,
    ) -> Result<Vec<TableInfo>, SqlError> {
        table_infos(
            &self.ctx,
            self.visibility.as_ref(),
            schema_pattern,
            table_pattern,
            types,
        )
        .await
    }
}
