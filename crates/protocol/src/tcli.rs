//! The TCLIService (HiveServer2) wire contract, protocol versions V1 to V11.
//!
//! Written for Apiary from the public protocol's field ids and types. Every struct, union and
//! enum here has the IDL's name; fields are the IDL's names in snake case.

use std::collections::BTreeMap;

use crate::codec::Binary;
use crate::{thrift_enum, thrift_struct, thrift_union};

thrift_enum!(
    /// Protocol version negotiated by OpenSession (`HIVE_CLI_SERVICE_PROTOCOL_Vn`).
    TProtocolVersion {
        V1 = 0, V2 = 1, V3 = 2, V4 = 3, V5 = 4, V6 = 5, V7 = 6, V8 = 7, V9 = 8, V10 = 9, V11 = 10,
    }
);

thrift_enum!(
    /// Hive type ids as they appear in result-set metadata.
    TTypeId {
        BOOLEAN_TYPE = 0, TINYINT_TYPE = 1, SMALLINT_TYPE = 2, INT_TYPE = 3, BIGINT_TYPE = 4,
        FLOAT_TYPE = 5, DOUBLE_TYPE = 6, STRING_TYPE = 7, TIMESTAMP_TYPE = 8, BINARY_TYPE = 9,
        ARRAY_TYPE = 10, MAP_TYPE = 11, STRUCT_TYPE = 12, UNION_TYPE = 13, USER_DEFINED_TYPE = 14,
        DECIMAL_TYPE = 15, NULL_TYPE = 16, DATE_TYPE = 17, VARCHAR_TYPE = 18, CHAR_TYPE = 19,
        INTERVAL_YEAR_MONTH_TYPE = 20, INTERVAL_DAY_TIME_TYPE = 21, TIMESTAMPLOCALTZ_TYPE = 22,
    }
);

thrift_enum!(
    /// Status of an RPC.
    TStatusCode {
        SUCCESS_STATUS = 0, SUCCESS_WITH_INFO_STATUS = 1, STILL_EXECUTING_STATUS = 2,
        ERROR_STATUS = 3, INVALID_HANDLE_STATUS = 4,
    }
);

thrift_enum!(
    /// State of an operation (the IDL's spelling `UKNOWN_STATE` is kept).
    TOperationState {
        INITIALIZED_STATE = 0, RUNNING_STATE = 1, FINISHED_STATE = 2, CANCELED_STATE = 3,
        CLOSED_STATE = 4, ERROR_STATE = 5, UKNOWN_STATE = 6, PENDING_STATE = 7, TIMEDOUT_STATE = 8,
    }
);

thrift_enum!(
    /// Kind of operation a handle refers to.
    TOperationType {
        EXECUTE_STATEMENT = 0, GET_TYPE_INFO = 1, GET_CATALOGS = 2, GET_SCHEMAS = 3,
        GET_TABLES = 4, GET_TABLE_TYPES = 5, GET_COLUMNS = 6, GET_FUNCTIONS = 7, UNKNOWN = 8,
    }
);

thrift_enum!(
    /// Information types of GetInfo (ODBC's SQLGetInfo numbering).
    TGetInfoType {
        CLI_MAX_DRIVER_CONNECTIONS = 0, CLI_MAX_CONCURRENT_ACTIVITIES = 1,
        CLI_DATA_SOURCE_NAME = 2, CLI_FETCH_DIRECTION = 8, CLI_SERVER_NAME = 13,
        CLI_SEARCH_PATTERN_ESCAPE = 14, CLI_DBMS_NAME = 17, CLI_DBMS_VER = 18,
        CLI_ACCESSIBLE_TABLES = 19, CLI_ACCESSIBLE_PROCEDURES = 20,
        CLI_CURSOR_COMMIT_BEHAVIOR = 23, CLI_DATA_SOURCE_READ_ONLY = 25,
        CLI_DEFAULT_TXN_ISOLATION = 26, CLI_IDENTIFIER_CASE = 28, CLI_IDENTIFIER_QUOTE_CHAR = 29,
        CLI_MAX_COLUMN_NAME_LEN = 30, CLI_MAX_CURSOR_NAME_LEN = 31, CLI_MAX_SCHEMA_NAME_LEN = 32,
        CLI_MAX_CATALOG_NAME_LEN = 34, CLI_MAX_TABLE_NAME_LEN = 35, CLI_SCROLL_CONCURRENCY = 43,
        CLI_TXN_CAPABLE = 46, CLI_USER_NAME = 47, CLI_TXN_ISOLATION_OPTION = 72,
        CLI_INTEGRITY = 73, CLI_GETDATA_EXTENSIONS = 81, CLI_NULL_COLLATION = 85,
        CLI_ALTER_TABLE = 86, CLI_ORDER_BY_COLUMNS_IN_SELECT = 90, CLI_SPECIAL_CHARACTERS = 94,
        CLI_MAX_COLUMNS_IN_GROUP_BY = 97, CLI_MAX_COLUMNS_IN_INDEX = 98,
        CLI_MAX_COLUMNS_IN_ORDER_BY = 99, CLI_MAX_COLUMNS_IN_SELECT = 100,
        CLI_MAX_COLUMNS_IN_TABLE = 101, CLI_MAX_INDEX_SIZE = 102, CLI_MAX_ROW_SIZE = 104,
        CLI_MAX_STATEMENT_LEN = 105, CLI_MAX_TABLES_IN_SELECT = 106, CLI_MAX_USER_NAME_LEN = 107,
        CLI_OJ_CAPABILITIES = 115, CLI_XOPEN_CLI_YEAR = 10000, CLI_CURSOR_SENSITIVITY = 10001,
        CLI_DESCRIBE_PARAMETER = 10002, CLI_CATALOG_NAME = 10003, CLI_COLLATION_SEQ = 10004,
        CLI_MAX_IDENTIFIER_LEN = 10005, CLI_ODBC_KEYWORDS = 10006,
    }
);

thrift_enum!(
    /// Direction of FetchResults.
    TFetchOrientation {
        FETCH_NEXT = 0, FETCH_PRIOR = 1, FETCH_RELATIVE = 2, FETCH_ABSOLUTE = 3, FETCH_FIRST = 4,
        FETCH_LAST = 5,
    }
);

thrift_enum!(
    /// Progress of the jobs behind an operation.
    TJobExecutionStatus { IN_PROGRESS = 0, COMPLETE = 1, NOT_AVAILABLE = 2 }
);

thrift_union!(
    /// A type qualifier's value.
    TTypeQualifierValue { 1: I32Value(i32), 2: StringValue(String) }
);

thrift_struct!(
    /// Qualifiers such as `characterMaximumLength`, `precision`, `scale`.
    TTypeQualifiers { 1: required qualifiers: BTreeMap<String, TTypeQualifierValue> }
);

thrift_struct!(
    /// A primitive type with optional qualifiers.
    TPrimitiveTypeEntry {
        1: required r#type: TTypeId,
        2: optional type_qualifiers: TTypeQualifiers,
    }
);

thrift_struct!(
    /// ARRAY: index of the element type in the enclosing `TTypeDesc.types`.
    TArrayTypeEntry { 1: required object_type_ptr: i32 }
);

thrift_struct!(
    /// MAP: indexes of the key and value types.
    TMapTypeEntry { 1: required key_type_ptr: i32, 2: required value_type_ptr: i32 }
);

thrift_struct!(
    /// STRUCT: field name to type index.
    TStructTypeEntry { 1: required name_to_type_ptr: BTreeMap<String, i32> }
);

thrift_struct!(
    /// UNIONTYPE: alternative name to type index.
    TUnionTypeEntry { 1: required name_to_type_ptr: BTreeMap<String, i32> }
);

thrift_struct!(
    /// A user-defined type by class name.
    TUserDefinedTypeEntry { 1: required type_class_name: String }
);

thrift_union!(
    /// One node of a type tree.
    TTypeEntry {
        1: PrimitiveEntry(TPrimitiveTypeEntry),
        2: ArrayEntry(TArrayTypeEntry),
        3: MapEntry(TMapTypeEntry),
        4: StructEntry(TStructTypeEntry),
        5: UnionEntry(TUnionTypeEntry),
        6: UserDefinedTypeEntry(TUserDefinedTypeEntry),
    }
);

thrift_struct!(
    /// A type as a flattened tree; entry 0 is the root.
    TTypeDesc { 1: required types: Vec<TTypeEntry> }
);

thrift_struct!(
    /// One column of a result set.
    TColumnDesc {
        1: required column_name: String,
        2: required type_desc: TTypeDesc,
        3: required position: i32,
        4: optional comment: String,
    }
);

thrift_struct!(
    /// A result set's schema.
    TTableSchema { 1: required columns: Vec<TColumnDesc> }
);

thrift_struct!(
    /// Boolean cell (row-based result sets).
    TBoolValue { 1: optional value: bool }
);
thrift_struct!(
    /// Byte cell.
    TByteValue { 1: optional value: i8 }
);
thrift_struct!(
    /// i16 cell.
    TI16Value { 1: optional value: i16 }
);
thrift_struct!(
    /// i32 cell.
    TI32Value { 1: optional value: i32 }
);
thrift_struct!(
    /// i64 cell.
    TI64Value { 1: optional value: i64 }
);
thrift_struct!(
    /// Double cell.
    TDoubleValue { 1: optional value: f64 }
);
thrift_struct!(
    /// String cell.
    TStringValue { 1: optional value: String }
);

thrift_union!(
    /// One cell of a row-based result set (protocol below V6).
    TColumnValue {
        1: BoolVal(TBoolValue),
        2: ByteVal(TByteValue),
        3: I16Val(TI16Value),
        4: I32Val(TI32Value),
        5: I64Val(TI64Value),
        6: DoubleVal(TDoubleValue),
        7: StringVal(TStringValue),
    }
);

thrift_struct!(
    /// One row of a row-based result set.
    TRow { 1: required col_vals: Vec<TColumnValue> }
);

thrift_struct!(
    /// Boolean column: values plus a null bitmap (LSB first).
    TBoolColumn { 1: required values: Vec<bool>, 2: required nulls: Binary }
);
thrift_struct!(
    /// Byte column.
    TByteColumn { 1: required values: Vec<i8>, 2: required nulls: Binary }
);
thrift_struct!(
    /// i16 column.
    TI16Column { 1: required values: Vec<i16>, 2: required nulls: Binary }
);
thrift_struct!(
    /// i32 column.
    TI32Column { 1: required values: Vec<i32>, 2: required nulls: Binary }
);
thrift_struct!(
    /// i64 column.
    TI64Column { 1: required values: Vec<i64>, 2: required nulls: Binary }
);
thrift_struct!(
    /// Double column.
    TDoubleColumn { 1: required values: Vec<f64>, 2: required nulls: Binary }
);
thrift_struct!(
    /// String column.
    TStringColumn { 1: required values: Vec<String>, 2: required nulls: Binary }
);
thrift_struct!(
    /// Binary column.
    TBinaryColumn { 1: required values: Vec<Binary>, 2: required nulls: Binary }
);

thrift_union!(
    /// One column of a column-based result set (V6 and later).
    TColumn {
        1: BoolVal(TBoolColumn),
        2: ByteVal(TByteColumn),
        3: I16Val(TI16Column),
        4: I32Val(TI32Column),
        5: I64Val(TI64Column),
        6: DoubleVal(TDoubleColumn),
        7: StringVal(TStringColumn),
        8: BinaryVal(TBinaryColumn),
    }
);

thrift_struct!(
    /// A batch of results: rows below V6, columns from V6 (`rows` is required, so it is sent empty).
    TRowSet {
        1: required start_row_offset: i64,
        2: required rows: Vec<TRow>,
        3: optional columns: Vec<TColumn>,
        4: optional binary_columns: Binary,
        5: optional column_count: i32,
    }
);

thrift_struct!(
    /// Outcome of an RPC.
    TStatus {
        1: required status_code: TStatusCode,
        2: optional info_messages: Vec<String>,
        3: optional sql_state: String,
        4: optional error_code: i32,
        5: optional error_message: String,
    }
);

thrift_struct!(
    /// 16-byte guid and 16-byte secret naming a session or an operation.
    THandleIdentifier { 1: required guid: Binary, 2: required secret: Binary }
);

thrift_struct!(
    /// A session's handle.
    TSessionHandle { 1: required session_id: THandleIdentifier }
);

thrift_struct!(
    /// An operation's handle.
    TOperationHandle {
        1: required operation_id: THandleIdentifier,
        2: required operation_type: TOperationType,
        3: required has_result_set: bool,
        4: optional modified_row_count: f64,
    }
);

thrift_struct!(
    /// OpenSession request.
    TOpenSessionReq {
        1: required client_protocol: TProtocolVersion,
        2: optional username: String,
        3: optional password: String,
        4: optional configuration: BTreeMap<String, String>,
    }
);
thrift_struct!(
    /// OpenSession reply.
    TOpenSessionResp {
        1: required status: TStatus,
        2: required server_protocol_version: TProtocolVersion,
        3: optional session_handle: TSessionHandle,
        4: optional configuration: BTreeMap<String, String>,
    }
);

thrift_struct!(
    /// SetClientInfo request.
    TSetClientInfoReq {
        1: required session_handle: TSessionHandle,
        2: optional configuration: BTreeMap<String, String>,
    }
);
thrift_struct!(
    /// SetClientInfo reply.
    TSetClientInfoResp { 1: required status: TStatus }
);

thrift_struct!(
    /// CloseSession request.
    TCloseSessionReq { 1: required session_handle: TSessionHandle }
);
thrift_struct!(
    /// CloseSession reply.
    TCloseSessionResp { 1: required status: TStatus }
);

thrift_union!(
    /// GetInfo's answer.
    TGetInfoValue {
        1: StringValue(String),
        2: SmallIntValue(i16),
        3: IntegerBitmask(i32),
        4: IntegerFlag(i32),
        5: BinaryValue(i32),
        6: LenValue(i64),
    }
);

thrift_struct!(
    /// GetInfo request.
    TGetInfoReq { 1: required session_handle: TSessionHandle, 2: required info_type: TGetInfoType }
);
thrift_struct!(
    /// GetInfo reply (`info_value` is required even on error).
    TGetInfoResp { 1: required status: TStatus, 2: required info_value: TGetInfoValue }
);

thrift_struct!(
    /// ExecuteStatement request.
    TExecuteStatementReq {
        1: required session_handle: TSessionHandle,
        2: required statement: String,
        3: optional conf_overlay: BTreeMap<String, String>,
        4: optional run_async: bool,
        5: optional query_timeout: i64,
    }
);

thrift_struct!(
    /// Reply of every RPC that starts an operation.
    TOperationResp { 1: required status: TStatus, 2: optional operation_handle: TOperationHandle }
);

thrift_struct!(
    /// GetTypeInfo request.
    TGetTypeInfoReq { 1: required session_handle: TSessionHandle }
);
thrift_struct!(
    /// GetCatalogs request.
    TGetCatalogsReq { 1: required session_handle: TSessionHandle }
);
thrift_struct!(
    /// GetSchemas request.
    TGetSchemasReq {
        1: required session_handle: TSessionHandle,
        2: optional catalog_name: String,
        3: optional schema_name: String,
    }
);
thrift_struct!(
    /// GetTables request.
    TGetTablesReq {
        1: required session_handle: TSessionHandle,
        2: optional catalog_name: String,
        3: optional schema_name: String,
        4: optional table_name: String,
        5: optional table_types: Vec<String>,
    }
);
thrift_struct!(
    /// GetTableTypes request.
    TGetTableTypesReq { 1: required session_handle: TSessionHandle }
);
thrift_struct!(
    /// GetColumns request.
    TGetColumnsReq {
        1: required session_handle: TSessionHandle,
        2: optional catalog_name: String,
        3: optional schema_name: String,
        4: optional table_name: String,
        5: optional column_name: String,
    }
);
thrift_struct!(
    /// GetFunctions request.
    TGetFunctionsReq {
        1: required session_handle: TSessionHandle,
        2: optional catalog_name: String,
        3: optional schema_name: String,
        4: required function_name: String,
    }
);
thrift_struct!(
    /// GetPrimaryKeys request.
    TGetPrimaryKeysReq {
        1: required session_handle: TSessionHandle,
        2: optional catalog_name: String,
        3: optional schema_name: String,
        4: optional table_name: String,
    }
);
thrift_struct!(
    /// GetCrossReference request.
    TGetCrossReferenceReq {
        1: required session_handle: TSessionHandle,
        2: optional parent_catalog_name: String,
        3: optional parent_schema_name: String,
        4: optional parent_table_name: String,
        5: optional foreign_catalog_name: String,
        6: optional foreign_schema_name: String,
        7: optional foreign_table_name: String,
    }
);

thrift_struct!(
    /// GetOperationStatus request.
    TGetOperationStatusReq {
        1: required operation_handle: TOperationHandle,
        2: optional get_progress_update: bool,
    }
);

thrift_struct!(
    /// Progress of an operation, as beeline draws it.
    TProgressUpdateResp {
        1: required header_names: Vec<String>,
        2: required rows: Vec<Vec<String>>,
        3: required progressed_percentage: f64,
        4: required status: TJobExecutionStatus,
        5: required footer_summary: String,
        6: required start_time: i64,
    }
);

thrift_struct!(
    /// GetOperationStatus reply.
    TGetOperationStatusResp {
        1: required status: TStatus,
        2: optional operation_state: TOperationState,
        3: optional sql_state: String,
        4: optional error_code: i32,
        5: optional error_message: String,
        6: optional task_status: String,
        7: optional operation_started: i64,
        8: optional operation_completed: i64,
        9: optional has_result_set: bool,
        10: optional progress_update_response: TProgressUpdateResp,
        11: optional num_modified_rows: i64,
    }
);

thrift_struct!(
    /// Request naming one operation (CancelOperation, CloseOperation, GetResultSetMetadata).
    TOperationReq { 1: required operation_handle: TOperationHandle }
);

thrift_struct!(
    /// Reply carrying only a status.
    TStatusResp { 1: required status: TStatus }
);

thrift_struct!(
    /// GetResultSetMetadata reply.
    TGetResultSetMetadataResp { 1: required status: TStatus, 2: optional schema: TTableSchema }
);

thrift_struct!(
    /// FetchResults request; `fetch_type` 1 reads the operation log.
    TFetchResultsReq {
        1: required operation_handle: TOperationHandle,
        2: required orientation: TFetchOrientation,
        3: required max_rows: i64,
        4: optional fetch_type: i16,
    }
);
thrift_struct!(
    /// FetchResults reply.
    TFetchResultsResp {
        1: required status: TStatus,
        2: optional has_more_rows: bool,
        3: optional results: TRowSet,
    }
);

thrift_struct!(
    /// GetDelegationToken request.
    TGetDelegationTokenReq {
        1: required session_handle: TSessionHandle,
        2: required owner: String,
        3: required renewer: String,
    }
);
thrift_struct!(
    /// GetDelegationToken reply.
    TGetDelegationTokenResp { 1: required status: TStatus, 2: optional delegation_token: String }
);
thrift_struct!(
    /// CancelDelegationToken and RenewDelegationToken request.
    TDelegationTokenReq {
        1: required session_handle: TSessionHandle,
        2: required delegation_token: String,
    }
);

thrift_struct!(
    /// GetLog reply (an RPC of early HiveServer2 that some clients still call).
    TGetLogResp { 1: required status: TStatus, 2: required log: String }
);

thrift_struct!(
    /// GetQueryId request.
    TGetQueryIdReq { 1: required operation_handle: TOperationHandle }
);
thrift_struct!(
    /// GetQueryId reply.
    TGetQueryIdResp { 1: required query_id: String }
);

thrift_struct!(
    /// UploadData request (some forks).
    TUploadDataReq {
        1: optional session_handle: TSessionHandle,
        2: optional table_name: String,
        3: optional path: String,
        4: required values: Binary,
    }
);
thrift_struct!(
    /// DownloadData request (some forks).
    TDownloadDataReq {
        1: required session_handle: TSessionHandle,
        2: optional table_name: String,
        3: optional query: String,
        4: optional format: String,
        5: optional download_options: BTreeMap<String, String>,
    }
);

/// The RPCs of TCLIService, by wire name.
pub const METHODS: &[&str] = &[
    "OpenSession",
    "CloseSession",
    "GetInfo",
    "ExecuteStatement",
    "GetTypeInfo",
    "GetCatalogs",
    "GetSchemas",
    "GetTables",
    "GetTableTypes",
    "GetColumns",
    "GetFunctions",
    "GetPrimaryKeys",
    "GetCrossReference",
    "GetOperationStatus",
    "CancelOperation",
    "CloseOperation",
    "GetResultSetMetadata",
    "FetchResults",
    "GetDelegationToken",
    "CancelDelegationToken",
    "RenewDelegationToken",
    "GetQueryId",
    "SetClientInfo",
    "UploadData",
    "DownloadData",
];

/// One struct, union or enum of the contract, as it travels.
#[derive(Debug, Clone, Copy)]
pub enum WireType {
    /// A struct or union and its fields.
    Struct(&'static str, &'static [crate::codec::FieldSpec]),
    /// An enum and its constants.
    Enum(&'static str, &'static [(&'static str, i32)]),
}

/// Every struct, union and enum defined here, for a test that compares them with the
/// definitions real clients ship (`apiary wire-spec` prints them).
pub fn wire_spec() -> Vec<WireType> {
    vec![
        WireType::Struct("TTypeQualifierValue", TTypeQualifierValue::WIRE_FIELDS),
        WireType::Struct("TTypeQualifiers", TTypeQualifiers::WIRE_FIELDS),
        WireType::Struct("TPrimitiveTypeEntry", TPrimitiveTypeEntry::WIRE_FIELDS),
        WireType::Struct("TArrayTypeEntry", TArrayTypeEntry::WIRE_FIELDS),
        WireType::Struct("TMapTypeEntry", TMapTypeEntry::WIRE_FIELDS),
        WireType::Struct("TStructTypeEntry", TStructTypeEntry::WIRE_FIELDS),
        WireType::Struct("TUnionTypeEntry", TUnionTypeEntry::WIRE_FIELDS),
        WireType::Struct("TUserDefinedTypeEntry", TUserDefinedTypeEntry::WIRE_FIELDS),
        WireType::Struct("TTypeEntry", TTypeEntry::WIRE_FIELDS),
        WireType::Struct("TTypeDesc", TTypeDesc::WIRE_FIELDS),
        WireType::Struct("TColumnDesc", TColumnDesc::WIRE_FIELDS),
        WireType::Struct("TTableSchema", TTableSchema::WIRE_FIELDS),
        WireType::Struct("TBoolValue", TBoolValue::WIRE_FIELDS),
        WireType::Struct("TByteValue", TByteValue::WIRE_FIELDS),
        WireType::Struct("TI16Value", TI16Value::WIRE_FIELDS),
        WireType::Struct("TI32Value", TI32Value::WIRE_FIELDS),
        WireType::Struct("TI64Value", TI64Value::WIRE_FIELDS),
        WireType::Struct("TDoubleValue", TDoubleValue::WIRE_FIELDS),
        WireType::Struct("TStringValue", TStringValue::WIRE_FIELDS),
        WireType::Struct("TColumnValue", TColumnValue::WIRE_FIELDS),
        WireType::Struct("TRow", TRow::WIRE_FIELDS),
        WireType::Struct("TBoolColumn", TBoolColumn::WIRE_FIELDS),
        WireType::Struct("TByteColumn", TByteColumn::WIRE_FIELDS),
        WireType::Struct("TI16Column", TI16Column::WIRE_FIELDS),
        WireType::Struct("TI32Column", TI32Column::WIRE_FIELDS),
        WireType::Struct("TI64Column", TI64Column::WIRE_FIELDS),
        WireType::Struct("TDoubleColumn", TDoubleColumn::WIRE_FIELDS),
        WireType::Struct("TStringColumn", TStringColumn::WIRE_FIELDS),
        WireType::Struct("TBinaryColumn", TBinaryColumn::WIRE_FIELDS),
        WireType::Struct("TColumn", TColumn::WIRE_FIELDS),
        WireType::Struct("TRowSet", TRowSet::WIRE_FIELDS),
        WireType::Struct("TStatus", TStatus::WIRE_FIELDS),
        WireType::Struct("THandleIdentifier", THandleIdentifier::WIRE_FIELDS),
        WireType::Struct("TSessionHandle", TSessionHandle::WIRE_FIELDS),
        WireType::Struct("TOperationHandle", TOperationHandle::WIRE_FIELDS),
        WireType::Struct("TOpenSessionReq", TOpenSessionReq::WIRE_FIELDS),
        WireType::Struct("TOpenSessionResp", TOpenSessionResp::WIRE_FIELDS),
        WireType::Struct("TSetClientInfoReq", TSetClientInfoReq::WIRE_FIELDS),
        WireType::Struct("TSetClientInfoResp", TSetClientInfoResp::WIRE_FIELDS),
        WireType::Struct("TCloseSessionReq", TCloseSessionReq::WIRE_FIELDS),
        WireType::Struct("TCloseSessionResp", TCloseSessionResp::WIRE_FIELDS),
        WireType::Struct("TGetInfoValue", TGetInfoValue::WIRE_FIELDS),
        WireType::Struct("TGetInfoReq", TGetInfoReq::WIRE_FIELDS),
        WireType::Struct("TGetInfoResp", TGetInfoResp::WIRE_FIELDS),
        WireType::Struct("TExecuteStatementReq", TExecuteStatementReq::WIRE_FIELDS),
        WireType::Struct("TOperationResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetTypeInfoReq", TGetTypeInfoReq::WIRE_FIELDS),
        WireType::Struct("TGetCatalogsReq", TGetCatalogsReq::WIRE_FIELDS),
        WireType::Struct("TGetSchemasReq", TGetSchemasReq::WIRE_FIELDS),
        WireType::Struct("TGetTablesReq", TGetTablesReq::WIRE_FIELDS),
        WireType::Struct("TGetTableTypesReq", TGetTableTypesReq::WIRE_FIELDS),
        WireType::Struct("TGetColumnsReq", TGetColumnsReq::WIRE_FIELDS),
        WireType::Struct("TGetFunctionsReq", TGetFunctionsReq::WIRE_FIELDS),
        WireType::Struct("TGetPrimaryKeysReq", TGetPrimaryKeysReq::WIRE_FIELDS),
        WireType::Struct("TGetCrossReferenceReq", TGetCrossReferenceReq::WIRE_FIELDS),
        WireType::Struct(
            "TGetOperationStatusReq",
            TGetOperationStatusReq::WIRE_FIELDS,
        ),
        WireType::Struct("TProgressUpdateResp", TProgressUpdateResp::WIRE_FIELDS),
        WireType::Struct(
            "TGetOperationStatusResp",
            TGetOperationStatusResp::WIRE_FIELDS,
        ),
        WireType::Struct("TOperationReq", TOperationReq::WIRE_FIELDS),
        WireType::Struct("TStatusResp", TStatusResp::WIRE_FIELDS),
        WireType::Struct(
            "TGetResultSetMetadataResp",
            TGetResultSetMetadataResp::WIRE_FIELDS,
        ),
        WireType::Struct("TFetchResultsReq", TFetchResultsReq::WIRE_FIELDS),
        WireType::Struct("TFetchResultsResp", TFetchResultsResp::WIRE_FIELDS),
        WireType::Struct(
            "TGetDelegationTokenReq",
            TGetDelegationTokenReq::WIRE_FIELDS,
        ),
        WireType::Struct(
            "TGetDelegationTokenResp",
            TGetDelegationTokenResp::WIRE_FIELDS,
        ),
        WireType::Struct("TDelegationTokenReq", TDelegationTokenReq::WIRE_FIELDS),
        WireType::Struct("TGetLogResp", TGetLogResp::WIRE_FIELDS),
        WireType::Struct("TGetQueryIdReq", TGetQueryIdReq::WIRE_FIELDS),
        WireType::Struct("TGetQueryIdResp", TGetQueryIdResp::WIRE_FIELDS),
        WireType::Struct("TUploadDataReq", TUploadDataReq::WIRE_FIELDS),
        WireType::Struct("TDownloadDataReq", TDownloadDataReq::WIRE_FIELDS),
        // The IDL's structs that share one shape here, under their IDL names.
        WireType::Struct("TExecuteStatementResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetTypeInfoResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetCatalogsResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetSchemasResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetTablesResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetTableTypesResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetColumnsResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetFunctionsResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetPrimaryKeysResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TGetCrossReferenceResp", TOperationResp::WIRE_FIELDS),
        WireType::Struct("TCancelOperationReq", TOperationReq::WIRE_FIELDS),
        WireType::Struct("TCloseOperationReq", TOperationReq::WIRE_FIELDS),
        WireType::Struct("TGetResultSetMetadataReq", TOperationReq::WIRE_FIELDS),
        WireType::Struct("TGetLogReq", TOperationReq::WIRE_FIELDS),
        WireType::Struct("TCancelOperationResp", TStatusResp::WIRE_FIELDS),
        WireType::Struct("TCloseOperationResp", TStatusResp::WIRE_FIELDS),
        WireType::Struct("TCancelDelegationTokenResp", TStatusResp::WIRE_FIELDS),
        WireType::Struct("TRenewDelegationTokenResp", TStatusResp::WIRE_FIELDS),
        WireType::Struct(
            "TCancelDelegationTokenReq",
            TDelegationTokenReq::WIRE_FIELDS,
        ),
        WireType::Struct("TRenewDelegationTokenReq", TDelegationTokenReq::WIRE_FIELDS),
        WireType::Enum("TProtocolVersion", TProtocolVersion::WIRE_VALUES),
        WireType::Enum("TTypeId", TTypeId::WIRE_VALUES),
        WireType::Enum("TStatusCode", TStatusCode::WIRE_VALUES),
        WireType::Enum("TOperationState", TOperationState::WIRE_VALUES),
        WireType::Enum("TOperationType", TOperationType::WIRE_VALUES),
        WireType::Enum("TGetInfoType", TGetInfoType::WIRE_VALUES),
        WireType::Enum("TFetchOrientation", TFetchOrientation::WIRE_VALUES),
        WireType::Enum("TJobExecutionStatus", TJobExecutionStatus::WIRE_VALUES),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Decoder, Encoder, ThriftValue};
    use crate::error::ProtocolError;

    fn round_trip<T: ThriftValue + PartialEq + std::fmt::Debug>(v: &T) {
        let mut e = Encoder::new();
        v.write(&mut e);
        let bytes = e.into_bytes();
        let mut d = Decoder::new(&bytes);
        let back = T::read(&mut d).expect("decodes");
        assert_eq!(&back, v);
        assert_eq!(d.remaining(), 0);
    }

    #[test]
    fn messages_round_trip() {
        let mut conf = BTreeMap::new();
        conf.insert("use:database".to_string(), "default".to_string());
        round_trip(&TOpenSessionReq {
            client_protocol: TProtocolVersion::V10,
            username: Some("alice".into()),
            password: None,
            configuration: Some(conf),
        });
        round_trip(&TFetchResultsResp {
            status: TStatus::default(),
            has_more_rows: Some(false),
            results: Some(TRowSet {
                start_row_offset: 0,
                rows: vec![],
                columns: Some(vec![
                    TColumn::I64Val(TI64Column {
                        values: vec![1, 0, 3],
                        nulls: Binary(vec![0b010]),
                    }),
                    TColumn::StringVal(TStringColumn {
                        values: vec!["a".into(), "".into(), "c".into()],
                        nulls: Binary(vec![0b010]),
                    }),
                ]),
                binary_columns: None,
                column_count: None,
            }),
        });
        round_trip(&TGetInfoResp {
            status: TStatus::default(),
            info_value: TGetInfoValue::SmallIntValue(3),
        });
        round_trip(&TTypeDesc {
            types: vec![
                TTypeEntry::ArrayEntry(TArrayTypeEntry { object_type_ptr: 1 }),
                TTypeEntry::PrimitiveEntry(TPrimitiveTypeEntry {
                    r#type: TTypeId::DECIMAL_TYPE,
                    type_qualifiers: Some(TTypeQualifiers {
                        qualifiers: [("precision".to_string(), TTypeQualifierValue::I32Value(10))]
                            .into_iter()
                            .collect(),
                    }),
                }),
            ],
        });
    }

    #[test]
    fn missing_required_field_names_it() {
        // An empty struct where TOpenSessionReq is expected.
        let err = TOpenSessionReq::read(&mut Decoder::new(&[0])).expect_err("must fail");
        assert_eq!(
            err,
            ProtocolError::MissingField {
                structure: "TOpenSessionReq",
                field: "client_protocol"
            }
        );
    }

    #[test]
    fn unknown_fields_are_skipped() {
        let mut e = Encoder::new();
        e.field_begin(crate::codec::ttype::STRING, 99);
        e.string("from the future");
        e.field_begin(crate::codec::ttype::I32, 1);
        e.i32(3);
        e.field_stop();
        let bytes = e.into_bytes();
        let v = TCloseSessionResp::read(&mut Decoder::new(&bytes));
        assert!(matches!(v, Err(ProtocolError::MissingField { .. })));
        let v = TSetClientInfoResp::read(&mut Decoder::new(&bytes));
        assert!(v.is_err());
    }
}
