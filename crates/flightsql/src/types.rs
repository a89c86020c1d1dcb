//! What Flight SQL clients read about types: result schemas with Flight SQL's column
//! metadata, the type list of GetXdbcTypeInfo and the server facts of GetSqlInfo.

use std::collections::HashMap;
use std::sync::Arc;

use apiary_gateway::HiveType;
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, FieldRef, IntervalUnit, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use arrow_flight::sql::metadata::{
    SqlInfoData, SqlInfoDataBuilder, XdbcTypeInfo, XdbcTypeInfoData, XdbcTypeInfoDataBuilder,
};
use arrow_flight::sql::{
    Nullable, Searchable, SqlInfo, SqlNullOrdering, SqlSupportedCaseSensitivity,
    SqlSupportedTransaction, XdbcDataType, XdbcDatetimeSubcode,
};

/// Flight SQL's column metadata keys.
const TYPE_NAME: &str = "ARROW:FLIGHT:SQL:TYPE_NAME";
const PRECISION: &str = "ARROW:FLIGHT:SQL:PRECISION";
const SCALE: &str = "ARROW:FLIGHT:SQL:SCALE";
const CATALOG_NAME: &str = "ARROW:FLIGHT:SQL:CATALOG_NAME";
const SCHEMA_NAME: &str = "ARROW:FLIGHT:SQL:SCHEMA_NAME";
const TABLE_NAME: &str = "ARROW:FLIGHT:SQL:TABLE_NAME";

/// The catalog Flight SQL clients see: Hive has one per metastore, and ADBC's object listing
/// walks catalogs first, so it is named rather than empty.
pub(crate) const CATALOG: &str = "hive";

/// A schema as Flight SQL clients read it: each field keeps its Arrow type and its Hive
/// metadata, and gains Flight SQL's type name, precision (the length of a CHAR or VARCHAR,
/// the precision of a DECIMAL) and scale; with `table`, the database and table it is from.
pub(crate) fn flight_schema(schema: &Schema, table: Option<(&str, &str)>) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let hive = HiveType::of_field(f);
            let mut meta: HashMap<String, String> = f.metadata().clone();
            meta.insert(TYPE_NAME.into(), type_name(&hive));
            match hive {
                HiveType::Varchar(n) | HiveType::Char(n) => {
                    meta.insert(PRECISION.into(), n.to_string());
                }
                HiveType::Decimal(p, s) => {
                    meta.insert(PRECISION.into(), p.to_string());
                    meta.insert(SCALE.into(), s.to_string());
                }
                _ => {}
            }
            if let Some((db, t)) = table {
                meta.insert(CATALOG_NAME.into(), CATALOG.into());
                meta.insert(SCHEMA_NAME.into(), db.into());
                meta.insert(TABLE_NAME.into(), t.into());
            }
            f.as_ref()
                .clone()
                .with_data_type(wire_type(f.data_type()))
                .with_metadata(meta)
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The Arrow type a column travels as (inside nested types too): Hive's timestamps have
/// microsecond precision here, so a timestamp of any unit travels in microseconds; a
/// year-month interval travels as a month-day-nano one holding only months (the same value,
/// in the interval type every Arrow client reads; pyarrow cannot read year-month ones), and a
/// day-time interval (a duration here) as one holding only nanoseconds.
fn wire_type(t: &DataType) -> DataType {
    let field = |f: &FieldRef| -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(wire_type(f.data_type())))
    };
    match t {
        DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Microsecond, tz.clone()),
        DataType::Interval(IntervalUnit::YearMonth) | DataType::Duration(_) => {
            DataType::Interval(IntervalUnit::MonthDayNano)
        }
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        other => other.clone(),
    }
}

/// A batch as the client was told it comes (`schema`, from [`flight_schema`]): columns whose
/// type differs (see [`wire_type`]) are cast, and the schema's metadata is attached.
pub(crate) fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(a, f)| {
            if a.data_type() == f.data_type() {
                Ok(a.clone())
            } else {
                arrow::compute::cast(a, f.data_type())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), columns)
}

/// Hive's type name without its parameters (`VARCHAR`, `DECIMAL`, `ARRAY<INT>`).
fn type_name(t: &HiveType) -> String {
    let full = t.to_string().to_uppercase();
    if t.is_complex() {
        return full;
    }
    full.split('(').next().unwrap_or_default().to_string()
}

/// GetXdbcTypeInfo's rows: the Hive types, as JDBC's GetTypeInfo lists them.
pub(crate) fn xdbc_types() -> Option<XdbcTypeInfoData> {
    let mut b = XdbcTypeInfoDataBuilder::new();
    let mut add = |name: &str,
                   code: XdbcDataType,
                   size: Option<i32>,
                   quoted: bool,
                   params: Option<&[&str]>,
                   case_sensitive: bool,
                   radix: Option<i32>| {
        b.append(XdbcTypeInfo {
            type_name: name.into(),
            data_type: code,
            column_size: size,
            literal_prefix: quoted.then(|| "'".to_string()),
            literal_suffix: quoted.then(|| "'".to_string()),
            create_params: params.map(|p| p.iter().map(|s| s.to_string()).collect()),
            nullable: Nullable::NullabilityNullable,
            case_sensitive,
            searchable: if case_sensitive {
                Searchable::Full
            } else {
                Searchable::Basic
            },
            unsigned_attribute: radix.map(|_| false),
            fixed_prec_scale: false,
            auto_increment: radix.map(|_| false),
            local_type_name: Some(name.into()),
            minimum_scale: Some(0),
            maximum_scale: Some(if name == "DECIMAL" { 38 } else { 0 }),
            sql_data_type: code,
            datetime_subcode: match code {
                // XDBC_SUBCODE_DATE shares 1 with YEAR in the protocol.
                XdbcDataType::XdbcDate => Some(XdbcDatetimeSubcode::XdbcSubcodeYear),
                XdbcDataType::XdbcTimestamp => Some(XdbcDatetimeSubcode::XdbcSubcodeTimestamp),
                _ => None,
            },
            num_prec_radix: radix,
            interval_precision: None,
        });
    };
    use XdbcDataType as X;
    add("BOOLEAN", X::XdbcBit, None, false, None, false, None);
    add(
        "TINYINT",
        X::XdbcTinyint,
        Some(3),
        false,
        None,
        false,
        Some(10),
    );
    add(
        "SMALLINT",
        X::XdbcSmallint,
        Some(5),
        false,
        None,
        false,
        Some(10),
    );
    add(
        "INT",
        X::XdbcInteger,
        Some(10),
        false,
        None,
        false,
        Some(10),
    );
    add(
        "BIGINT",
        X::XdbcBigint,
        Some(19),
        false,
        None,
        false,
        Some(10),
    );
    add("FLOAT", X::XdbcFloat, Some(7), false, None, false, Some(10));
    add(
        "DOUBLE",
        X::XdbcDouble,
        Some(15),
        false,
        None,
        false,
        Some(10),
    );
    add(
        "DECIMAL",
        X::XdbcDecimal,
        Some(38),
        false,
        Some(&["precision", "scale"]),
        false,
        Some(10),
    );
    add("STRING", X::XdbcVarchar, None, true, None, true, None);
    add(
        "VARCHAR",
        X::XdbcVarchar,
        Some(65535),
        true,
        Some(&["length"]),
        true,
        None,
    );
    add(
        "CHAR",
        X::XdbcChar,
        Some(255),
        true,
        Some(&["length"]),
        true,
        None,
    );
    add("DATE", X::XdbcDate, Some(10), true, None, false, None);
    add(
        "TIMESTAMP",
        X::XdbcTimestamp,
        Some(29),
        true,
        None,
        false,
        None,
    );
    add("BINARY", X::XdbcBinary, None, false, None, false, None);
    // ARRAY, MAP and STRUCT have no xdbc code of their own.
    add("ARRAY", X::XdbcUnknownType, None, false, None, false, None);
    add("MAP", X::XdbcUnknownType, None, false, None, false, None);
    add("STRUCT", X::XdbcUnknownType, None, false, None, false, None);
    b.build().ok()
}

/// GetSqlInfo's facts about the server.
pub(crate) fn sql_info() -> Option<SqlInfoData> {
    let mut b = SqlInfoDataBuilder::new();
    b.append(SqlInfo::FlightSqlServerName, "Apiary");
    b.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
    b.append(SqlInfo::FlightSqlServerArrowVersion, "59");
    b.append(SqlInfo::FlightSqlServerReadOnly, false);
    b.append(SqlInfo::FlightSqlServerSql, true);
    b.append(SqlInfo::FlightSqlServerSubstrait, false);
    b.append(
        SqlInfo::FlightSqlServerTransaction,
        SqlSupportedTransaction::None as i32,
    );
    b.append(SqlInfo::FlightSqlServerCancel, true);
    b.append(SqlInfo::FlightSqlServerStatementTimeout, 0i32);
    b.append(SqlInfo::SqlDdlCatalog, false);
    b.append(SqlInfo::SqlDdlSchema, true);
    b.append(SqlInfo::SqlDdlTable, true);
    b.append(
        SqlInfo::SqlIdentifierCase,
        SqlSupportedCaseSensitivity::SqlCaseSensitivityLowercase as i32,
    );
    b.append(SqlInfo::SqlIdentifierQuoteChar, "`");
    b.append(
        SqlInfo::SqlQuotedIdentifierCase,
        SqlSupportedCaseSensitivity::SqlCaseSensitivityCaseInsensitive as i32,
    );
    b.append(
        SqlInfo::SqlNullOrdering,
        SqlNullOrdering::SqlNullsSortedAtStart as i32,
    );
    b.append(SqlInfo::SqlSchemaTerm, "database");
    b.append(SqlInfo::SqlCatalogTerm, "catalog");
    b.append(SqlInfo::SqlTransactionsSupported, false);
    b.build().ok()
}
