//! Maps TCLIService RPCs onto the gateway: decode the request, call the gateway, encode the
//! reply. [`status_of`] is the one place where an error becomes a wire status.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use apiary_gateway::{
    CatalogRequest, Client, FetchedRows, Gateway, GatewayError, Handle, Operation, OperationKind,
    OperationState, SessionRequest,
};
use apiary_protocol::codec::Decoder;
use apiary_protocol::message::{
    encode_exception, encode_reply, read_args, read_call_header, skip_args, INTERNAL_ERROR,
    PROTOCOL_ERROR, UNKNOWN_METHOD,
};
use apiary_protocol::tcli::*;
use apiary_protocol::{Binary, ProtocolError};
use futures::FutureExt;

use crate::info::get_info;
use crate::results::{row_set, table_schema};

/// The outcome of one call on a connection.
#[derive(Debug)]
pub enum CallOutcome {
    /// Send these bytes and keep the connection.
    Reply(Vec<u8>),
    /// Send these bytes (if any), then close the connection: the stream cannot be trusted.
    Close(Option<Vec<u8>>, String),
}

/// Impala's extensions of the HiveServer2 service that impyla calls before Hive's own.
const IMPALA_ONLY_METHODS: &[&str] = &[
    "CloseImpalaOperation",
    "GetExecSummary",
    "GetRuntimeProfile",
];

/// Decodes one whole message from `buf` and answers it. Returns the bytes consumed, or
/// `Err(Incomplete)` when `buf` does not yet hold a whole message.
pub async fn handle_message(
    gateway: &Arc<Gateway>,
    client: &Client,
    buf: &[u8],
    opened: &mut Vec<Handle>,
) -> Result<(usize, CallOutcome), ProtocolError> {
    // First find the message's extent, so a partial message is never acted on.
    let mut probe = Decoder::new(buf);
    let header = match read_call_header(&mut probe) {
        Ok(h) => h,
        Err(ProtocolError::Incomplete) => return Err(ProtocolError::Incomplete),
        Err(e) => {
            return Ok((
                buf.len(),
                CallOutcome::Close(None, format!("unreadable message header: {e}")),
            ))
        }
    };
    match skip_args(&mut probe) {
        Ok(()) => {}
        Err(ProtocolError::Incomplete) => return Err(ProtocolError::Incomplete),
        Err(e) => {
            let reply =
                encode_exception(&header.name, header.seq_id, PROTOCOL_ERROR, &e.to_string());
            return Ok((
                buf.len(),
                CallOutcome::Close(Some(reply), format!("malformed {} call: {e}", header.name)),
            ));
        }
    }
    let used = probe.position();
    tracing::trace!(method = %header.name, bytes = used, "call");
    let mut d = Decoder::new(&buf[..used]);
    // Re-read the header on the bounded slice, then dispatch on the arguments.
    let _ = read_call_header(&mut d)?;
    // A panic while answering is this call's error; the connection and the server go on.
    let answered = AssertUnwindSafe(dispatch(
        gateway,
        client,
        &header.name,
        header.seq_id,
        &mut d,
        opened,
    ))
    .catch_unwind()
    .await
    .unwrap_or_else(|_| {
        tracing::error!(method = %header.name, "answering a call panicked");
        Err(DispatchError::Internal)
    });
    let outcome = match answered {
        Ok(bytes) => CallOutcome::Reply(bytes),
        Err(DispatchError::Internal) => CallOutcome::Reply(encode_exception(
            &header.name,
            header.seq_id,
            INTERNAL_ERROR,
            &format!("Internal error processing {}", header.name),
        )),
        Err(DispatchError::UnknownMethod) => {
            // impyla tries Impala's own calls first and falls back on Hive's when they are
            // unknown (on every operation it closes): expected, not worth a warning.
            if IMPALA_ONLY_METHODS.contains(&header.name.as_str()) {
                tracing::debug!(method = %header.name, "client called an Impala-only method");
            } else {
                tracing::warn!(method = %header.name, "client called an unknown method");
            }
            CallOutcome::Reply(encode_exception(
                &header.name,
                header.seq_id,
                UNKNOWN_METHOD,
                &format!("Invalid method name: '{}'", header.name),
            ))
        }
        Err(DispatchError::Protocol(e)) => CallOutcome::Reply(encode_exception(
            &header.name,
            header.seq_id,
            PROTOCOL_ERROR,
            &e.to_string(),
        )),
    };
    Ok((used, outcome))
}

enum DispatchError {
    UnknownMethod,
    /// Answering panicked (a bug): the client gets Thrift's internal-error exception.
    Internal,
    Protocol(ProtocolError),
}

impl From<ProtocolError> for DispatchError {
    fn from(e: ProtocolError) -> Self {
        DispatchError::Protocol(e)
    }
}

/// The newest protocol version the server speaks (V11, counted from V1 = 0).
pub const SERVER_PROTOCOL: i32 = 10;

/// The session configuration key naming the user to act as.
const PROXY_USER_KEY: &str = "hive.server2.proxy.user";

/// The session an OpenSession configuration asks for: `set:hiveconf:K`, `set:hivevar:K`,
/// `use:database`; plain keys are configuration too (Hive applies them so; PyHive sends them).
fn session_request(conf: &BTreeMap<String, String>, protocol: i32) -> SessionRequest {
    let mut request = SessionRequest {
        protocol,
        ..Default::default()
    };
    for (k, v) in conf {
        // The user to act as: asked for in the session configuration (JDBC's
        // `;hive.server2.proxy.user=bob`), checked by the gateway, never a configuration key.
        if k == PROXY_USER_KEY || k.strip_prefix("set:hiveconf:") == Some(PROXY_USER_KEY) {
            request.proxy_user = Some(v.clone());
            continue;
        }
        if let Some(name) = k.strip_prefix("set:hiveconf:") {
            request.conf.insert(name.to_string(), v.clone());
        } else if let Some(name) = k.strip_prefix("set:hivevar:") {
            request.vars.insert(name.to_string(), v.clone());
        } else if k == "use:database" {
            request.database = Some(v.clone());
        } else if !k.starts_with("set:") && !k.starts_with("use:") {
            request.conf.insert(k.clone(), v.clone());
        }
    }
    request
}

/// The configuration OpenSession echoes: the default fetch size, and the `set:` and
/// `use:database` keys the client sent.
fn echoed_configuration(gw: &Gateway, conf: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert(
        "hive.server2.thrift.resultset.default.fetch.size".to_string(),
        gw.config().default_fetch_size.to_string(),
    );
    for (k, v) in conf {
        if k.starts_with("set:") || k == "use:database" {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// The wire status for an error: message, SQLSTATE and error code.
pub fn status_of(e: &GatewayError) -> TStatus {
    let code = match e {
        GatewayError::InvalidHandle(_) => TStatusCode::INVALID_HANDLE_STATUS,
        _ => TStatusCode::ERROR_STATUS,
    };
    let message = e.message();
    TStatus {
        status_code: code,
        info_messages: None,
        sql_state: e.sql_state().map(str::to_string),
        error_code: Some(e.error_code()),
        error_message: Some(message),
    }
}

fn ok() -> TStatus {
    TStatus {
        status_code: TStatusCode::SUCCESS_STATUS,
        ..Default::default()
    }
}

fn unsupported(what: &str) -> TStatus {
    status_of(&GatewayError::Unsupported(format!(
        "{what} is not supported by Apiary"
    )))
}

fn session_handle(gw: &Gateway, client: &Client, h: &TSessionHandle) -> Handle {
    owned(
        gw,
        client,
        Handle::from_bytes(&h.session_id.guid.0, &h.session_id.secret.0),
    )
}

fn operation_handle(gw: &Gateway, client: &Client, h: &TOperationHandle) -> Handle {
    owned(
        gw,
        client,
        Handle::from_bytes(&h.operation_id.guid.0, &h.operation_id.secret.0),
    )
}

/// A handle as the gateway should see it from `client`. With a password mode, a session or
/// operation belongs to the user who opened it: another user's handle is turned into one that
/// matches nothing (same id, no secret), so that caller gets exactly the answer an unknown
/// handle gets, and nothing is done.
fn owned(gw: &Gateway, client: &Client, h: Option<Handle>) -> Handle {
    let none = Handle {
        guid: [0; 16],
        secret: [0; 16],
    };
    let Some(h) = h else {
        return none;
    };
    if gw.requires_login() && gw.owner(&h).is_some_and(|owner| owner != client.user) {
        return Handle {
            guid: h.guid,
            secret: [0; 16],
        };
    }
    h
}

fn wire_session(h: Handle) -> TSessionHandle {
    TSessionHandle {
        session_id: THandleIdentifier {
            guid: Binary(h.guid.to_vec()),
            secret: Binary(h.secret.to_vec()),
        },
    }
}

fn wire_operation(op: &Operation) -> TOperationHandle {
    let h = op.handle();
    TOperationHandle {
        operation_id: THandleIdentifier {
            guid: Binary(h.guid.to_vec()),
            secret: Binary(h.secret.to_vec()),
        },
        operation_type: match op.kind() {
            OperationKind::ExecuteStatement => TOperationType::EXECUTE_STATEMENT,
            OperationKind::GetTypeInfo => TOperationType::GET_TYPE_INFO,
            OperationKind::GetCatalogs => TOperationType::GET_CATALOGS,
            OperationKind::GetSchemas => TOperationType::GET_SCHEMAS,
            OperationKind::GetTables => TOperationType::GET_TABLES,
            OperationKind::GetTableTypes => TOperationType::GET_TABLE_TYPES,
            OperationKind::GetColumns => TOperationType::GET_COLUMNS,
            OperationKind::GetFunctions => TOperationType::GET_FUNCTIONS,
            OperationKind::GetPrimaryKeys | OperationKind::GetCrossReference => {
                TOperationType::UNKNOWN
            }
        },
        has_result_set: op.has_result_set(),
        modified_row_count: None,
    }
}

fn wire_state(s: OperationState) -> TOperationState {
    match s {
        OperationState::Initialized => TOperationState::INITIALIZED_STATE,
        OperationState::Pending => TOperationState::PENDING_STATE,
        OperationState::Running => TOperationState::RUNNING_STATE,
        OperationState::Finished => TOperationState::FINISHED_STATE,
        OperationState::Canceled => TOperationState::CANCELED_STATE,
        OperationState::Closed => TOperationState::CLOSED_STATE,
        OperationState::Error => TOperationState::ERROR_STATE,
        OperationState::TimedOut => TOperationState::TIMEDOUT_STATE,
    }
}

fn op_resp(r: Result<Arc<Operation>, GatewayError>) -> TOperationResp {
    match r {
        Ok(op) => TOperationResp {
            status: ok(),
            operation_handle: Some(wire_operation(&op)),
        },
        Err(e) => TOperationResp {
            status: status_of(&e),
            operation_handle: None,
        },
    }
}

fn status_resp(r: Result<(), GatewayError>) -> TStatusResp {
    TStatusResp {
        status: match r {
            Ok(()) => ok(),
            Err(e) => status_of(&e),
        },
    }
}

async fn dispatch(
    gw: &Arc<Gateway>,
    client: &Client,
    name: &str,
    seq: i32,
    d: &mut Decoder<'_>,
    opened: &mut Vec<Handle>,
) -> Result<Vec<u8>, DispatchError> {
    macro_rules! reply {
        ($v:expr) => {
            Ok(encode_reply(name, seq, &$v))
        };
    }
    match name {
        "OpenSession" => {
            let req: TOpenSessionReq = read_args(d, "OpenSession_args")?;
            // With a password mode the session belongs to whoever authenticated, whatever
            // the request claims; with NONE, the request's user name if it gives one.
            let user = req
                .username
                .as_deref()
                .filter(|u| !u.is_empty() && !gw.requires_login())
                .unwrap_or(&client.user)
                .to_string();
            let conf = req.configuration.unwrap_or_default();
            let who = Client {
                user: user.clone(),
                address: client.address,
                proxy_user: client.proxy_user.clone(),
            };
            let protocol = req.client_protocol.0.clamp(0, SERVER_PROTOCOL);
            match gw
                .open_session(&who, session_request(&conf, protocol))
                .await
            {
                Ok(session) => {
                    tracing::info!(user = %user, session = %session.handle(), protocol = session.protocol() + 1, "session opened");
                    opened.push(session.handle());
                    reply!(TOpenSessionResp {
                        status: ok(),
                        server_protocol_version: TProtocolVersion(session.protocol()),
                        session_handle: Some(wire_session(session.handle())),
                        configuration: Some(echoed_configuration(gw, &conf)),
                    })
                }
                Err(e) => reply!(TOpenSessionResp {
                    status: status_of(&e),
                    server_protocol_version: TProtocolVersion(protocol),
                    session_handle: None,
                    configuration: None,
                }),
            }
        }
        "CloseSession" => {
            let req: TCloseSessionReq = read_args(d, "CloseSession_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            opened.retain(|o| *o != h);
            let closed = gw.close_session(&h);
            if closed.is_ok() {
                tracing::info!(session = %h, "session closed");
            }
            reply!(status_resp(closed))
        }
        "GetInfo" => {
            let req: TGetInfoReq = read_args(d, "GetInfo_args")?;
            let resp = match gw.session(&session_handle(gw, client, &req.session_handle)) {
                Ok(s) => get_info(req.info_type, s.user()),
                Err(e) => TGetInfoResp {
                    status: status_of(&e),
                    info_value: TGetInfoValue::StringValue(String::new()),
                },
            };
            reply!(resp)
        }
        "ExecuteStatement" => {
            let req: TExecuteStatementReq = read_args(d, "ExecuteStatement_args")?;
            let conf = req.conf_overlay.unwrap_or_default();
            let r = gw
                .execute_statement(
                    &session_handle(gw, client, &req.session_handle),
                    &req.statement,
                    &conf,
                    req.run_async.unwrap_or(false),
                    req.query_timeout.unwrap_or(0),
                )
                .await;
            if let Err(e) = &r {
                tracing::debug!(error = %e.message(), "statement failed");
            }
            reply!(op_resp(r))
        }
        "GetTypeInfo" => {
            let req: TGetTypeInfoReq = read_args(d, "GetTypeInfo_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(gw.catalog(&h, CatalogRequest::TypeInfo).await))
        }
        "GetCatalogs" => {
            let req: TGetCatalogsReq = read_args(d, "GetCatalogs_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(gw.catalog(&h, CatalogRequest::Catalogs).await))
        }
        "GetSchemas" => {
            let req: TGetSchemasReq = read_args(d, "GetSchemas_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            let pattern = req.schema_name;
            reply!(op_resp(
                gw.catalog(
                    &h,
                    CatalogRequest::Schemas {
                        schema_pattern: pattern
                    }
                )
                .await
            ))
        }
        "GetTables" => {
            let req: TGetTablesReq = read_args(d, "GetTables_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(
                gw.catalog(
                    &h,
                    CatalogRequest::Tables {
                        schema_pattern: req.schema_name,
                        table_pattern: req.table_name,
                        table_types: req.table_types,
                    }
                )
                .await
            ))
        }
        "GetTableTypes" => {
            let req: TGetTableTypesReq = read_args(d, "GetTableTypes_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(gw.catalog(&h, CatalogRequest::TableTypes).await))
        }
        "GetColumns" => {
            let req: TGetColumnsReq = read_args(d, "GetColumns_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(
                gw.catalog(
                    &h,
                    CatalogRequest::Columns {
                        schema_pattern: req.schema_name,
                        table_pattern: req.table_name,
                        column_pattern: req.column_name,
                    }
                )
                .await
            ))
        }
        "GetFunctions" => {
            let req: TGetFunctionsReq = read_args(d, "GetFunctions_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(
                gw.catalog(
                    &h,
                    CatalogRequest::Functions {
                        function_pattern: req.function_name,
                    }
                )
                .await
            ))
        }
        "GetPrimaryKeys" => {
            let req: TGetPrimaryKeysReq = read_args(d, "GetPrimaryKeys_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(gw.catalog(&h, CatalogRequest::PrimaryKeys).await))
        }
        "GetCrossReference" => {
            let req: TGetCrossReferenceReq = read_args(d, "GetCrossReference_args")?;
            let h = session_handle(gw, client, &req.session_handle);
            reply!(op_resp(
                gw.catalog(&h, CatalogRequest::CrossReference).await
            ))
        }
        "GetOperationStatus" => {
            let req: TGetOperationStatusReq = read_args(d, "GetOperationStatus_args")?;
            reply!(operation_status(gw, client, &req))
        }
        "CancelOperation" => {
            let req: TOperationReq = read_args(d, "CancelOperation_args")?;
            let r = gw
                .cancel_operation(&operation_handle(gw, client, &req.operation_handle))
                .await;
            reply!(status_resp(r))
        }
        "CloseOperation" => {
            let req: TOperationReq = read_args(d, "CloseOperation_args")?;
            reply!(status_resp(gw.close_operation(&operation_handle(
                gw,
                client,
                &req.operation_handle
            ))))
        }
        "GetResultSetMetadata" => {
            let req: TOperationReq = read_args(d, "GetResultSetMetadata_args")?;
            let resp = match gw.operation(&operation_handle(gw, client, &req.operation_handle)) {
                Ok(op) => match op.schema() {
                    Some(schema) => TGetResultSetMetadataResp {
                        status: ok(),
                        schema: Some(table_schema(schema, session_protocol(gw, &op))),
                    },
                    None => TGetResultSetMetadataResp {
                        status: ok(),
                        schema: Some(TTableSchema { columns: vec![] }),
                    },
                },
                Err(e) => TGetResultSetMetadataResp {
                    status: status_of(&e),
                    schema: None,
                },
            };
            reply!(resp)
        }
        "FetchResults" => {
            let req: TFetchResultsReq = read_args(d, "FetchResults_args")?;
            reply!(fetch_results(gw, client, &req).await)
        }
        "GetLog" => {
            // An older RPC some clients still call; the log also comes through FetchResults.
            let req: TOperationReq = read_args(d, "GetLog_args")?;
            let resp = match gw.operation(&operation_handle(gw, client, &req.operation_handle)) {
                Ok(op) => TGetLogResp {
                    status: ok(),
                    log: op.read_log(true, usize::MAX).join("\n"),
                },
                Err(e) => TGetLogResp {
                    status: status_of(&e),
                    log: String::new(),
                },
            };
            reply!(resp)
        }
        "GetQueryId" => {
            let req: TGetQueryIdReq = read_args(d, "GetQueryId_args")?;
            // The reply has no status field: an unknown handle gets an empty id.
            let id = gw
                .operation(&operation_handle(gw, client, &req.operation_handle))
                .map(|op| op.query_id().to_string())
                .unwrap_or_default();
            reply!(TGetQueryIdResp { query_id: id })
        }
        "SetClientInfo" => {
            let req: TSetClientInfoReq = read_args(d, "SetClientInfo_args")?;
            let r = gw.set_client_info(
                &session_handle(gw, client, &req.session_handle),
                req.configuration.unwrap_or_default(),
            );
            reply!(status_resp(r))
        }
        "GetDelegationToken" => {
            let _req: TGetDelegationTokenReq = read_args(d, "GetDelegationToken_args")?;
            reply!(TGetDelegationTokenResp {
                status: unsupported("Delegation tokens (GetDelegationToken)"),
                delegation_token: None,
            })
        }
        "CancelDelegationToken" | "RenewDelegationToken" => {
            let _req: TDelegationTokenReq = read_args(d, "DelegationToken_args")?;
            reply!(TStatusResp {
                status: unsupported(&format!("Delegation tokens ({name})")),
            })
        }
        "UploadData" | "DownloadData" => {
            skip_args(d)?;
            reply!(TOperationResp {
                status: unsupported(name),
                operation_handle: None,
            })
        }
        _ => {
            skip_args(d)?;
            Err(DispatchError::UnknownMethod)
        }
    }
}

fn session_protocol(gw: &Gateway, op: &Operation) -> i32 {
    gw.session(&op.session())
        .map(|s| s.protocol())
        .unwrap_or(SERVER_PROTOCOL)
}

fn operation_status(
    gw: &Gateway,
    client: &Client,
    req: &TGetOperationStatusReq,
) -> TGetOperationStatusResp {
    let op = match gw.operation(&operation_handle(gw, client, &req.operation_handle)) {
        Ok(op) => op,
        Err(e) => {
            return TGetOperationStatusResp {
                status: status_of(&e),
                ..Default::default()
            }
        }
    };
    let st = op.status();
    let progress = req.get_progress_update.unwrap_or(false).then(|| {
        let done = st.complete || st.state.is_terminal() && st.state != OperationState::Finished;
        TProgressUpdateResp {
            // Beeline's in-place progress bar formats exactly these nine columns (Hive's
            // vertex table); fewer make it fail with a MissingFormatArgumentException.
            header_names: [
                "VERTICES",
                "MODE",
                "STATUS",
                "TOTAL",
                "COMPLETED",
                "RUNNING",
                "PENDING",
                "FAILED",
                "KILLED",
            ]
            .iter()
            .map(|h| h.to_string())
            .collect(),
            rows: vec![{
                let failed = matches!(st.state, OperationState::Error | OperationState::TimedOut);
                let killed = st.state == OperationState::Canceled;
                let (status, completed, running, pending) = if done {
                    (
                        if failed {
                            "FAILED"
                        } else if killed {
                            "KILLED"
                        } else {
                            "SUCCEEDED"
                        },
                        "1",
                        "0",
                        "0",
                    )
                } else if st.state == OperationState::Pending {
                    ("INITED", "0", "0", "1")
                } else {
                    ("RUNNING", "0", "1", "0")
                };
                vec![
                    "Stage-1".into(),
                    "datafusion".into(),
                    status.into(),
                    "1".into(),
                    completed.into(),
                    running.into(),
                    pending.into(),
                    if failed { "1" } else { "0" }.into(),
                    if killed { "1" } else { "0" }.into(),
                ]
            }],
            progressed_percentage: if done { 1.0 } else { 0.0 },
            status: if done {
                TJobExecutionStatus::COMPLETE
            } else {
                TJobExecutionStatus::IN_PROGRESS
            },
            footer_summary: format!("Rows produced: {}", st.rows_produced),
            start_time: st.started_ms,
        }
    });
    TGetOperationStatusResp {
        status: ok(),
        operation_state: Some(wire_state(st.state)),
        sql_state: st.error.as_ref().and_then(|e| e.sql_state.clone()),
        error_code: st.error.as_ref().map(|e| e.code),
        error_message: st.error.as_ref().map(|e| e.message.clone()),
        task_status: None,
        operation_started: Some(st.started_ms),
        operation_completed: (st.completed_ms > 0).then_some(st.completed_ms),
        has_result_set: Some(st.has_result_set),
        progress_update_response: progress,
        num_modified_rows: None,
    }
}

/// A FetchResults reply for encoded rows, or the error that kept them from being encoded.
fn fetched(
    rows: Result<TRowSet, crate::results::ColumnTypeMismatch>,
    has_more: bool,
) -> TFetchResultsResp {
    match rows {
        Ok(rows) => TFetchResultsResp {
            status: ok(),
            has_more_rows: Some(has_more),
            results: Some(rows),
        },
        Err(e) => TFetchResultsResp {
            status: status_of(&GatewayError::Internal(e.to_string())),
            has_more_rows: None,
            results: None,
        },
    }
}

/// Most rows one FetchResults may ask for; larger requests are served in pieces.
const MAX_FETCH_ROWS: i64 = 100_000;

async fn fetch_results(gw: &Gateway, client: &Client, req: &TFetchResultsReq) -> TFetchResultsResp {
    let handle = operation_handle(gw, client, &req.operation_handle);
    let op = match gw.operation(&handle) {
        Ok(op) => op,
        Err(e) => {
            return TFetchResultsResp {
                status: status_of(&e),
                has_more_rows: None,
                results: None,
            }
        }
    };
    let protocol = session_protocol(gw, &op);
    let from_start = req.orientation == TFetchOrientation::FETCH_FIRST;
    if !matches!(
        req.orientation,
        TFetchOrientation::FETCH_NEXT | TFetchOrientation::FETCH_FIRST
    ) {
        return TFetchResultsResp {
            status: status_of(&GatewayError::Unsupported(format!(
                "The fetch type {} is not supported for this resultset",
                req.orientation.name().unwrap_or("?")
            ))),
            has_more_rows: None,
            results: None,
        };
    }
    let max_rows = usize::try_from(req.max_rows.clamp(1, MAX_FETCH_ROWS)).unwrap_or(1);
    if req.fetch_type == Some(1) {
        let lines = op.read_log(from_start, max_rows);
        let schema = arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "operation_log",
            arrow::datatypes::DataType::Utf8,
            true,
        )]);
        let array: arrow::array::ArrayRef = Arc::new(arrow::array::StringArray::from(lines));
        let batches: Vec<_> =
            arrow::array::RecordBatch::try_new(Arc::new(schema.clone()), vec![array])
                .into_iter()
                .collect();
        return fetched(row_set(&schema, &batches, 0, protocol), false);
    }
    let Some(schema) = op.schema().cloned() else {
        return TFetchResultsResp {
            status: status_of(&GatewayError::InvalidState(
                "The operation has no result set".into(),
            )),
            has_more_rows: None,
            results: None,
        };
    };
    tracing::trace!(max_rows, from_start, "FetchResults");
    match op.fetch(max_rows, from_start).await {
        Ok(FetchedRows {
            batches,
            start_offset,
            has_more,
        }) => fetched(row_set(&schema, &batches, start_offset, protocol), has_more),
        Err(e) => TFetchResultsResp {
            status: status_of(&e),
            has_more_rows: None,
            results: None,
        },
    }
}
