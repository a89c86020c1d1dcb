//! The Flight SQL service: each RPC mapped onto the gateway.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::Arc;

use apiary_gateway::{
    Client, Gateway, GatewayError, Handle, Operation, OperationState, SessionRequest,
};
use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::sql::metadata::{SqlInfoData, XdbcTypeInfoData};
use arrow_flight::sql::server::PeekableFlightDataStream;
use arrow_flight::sql::{
    ActionCancelQueryRequest, ActionCancelQueryResult, ActionClosePreparedStatementRequest,
    ActionCreatePreparedStatementRequest, ActionCreatePreparedStatementResult, Any,
    CommandGetCatalogs, CommandGetDbSchemas, CommandGetPrimaryKeys, CommandGetSqlInfo,
    CommandGetTableTypes, CommandGetTables, CommandGetXdbcTypeInfo, CommandPreparedStatementQuery,
    CommandPreparedStatementUpdate, CommandStatementQuery, CommandStatementUpdate,
    DoPutPreparedStatementResult, ProstMessageExt, SqlInfo, TicketStatementQuery,
};
use arrow_flight::{
    Action, CancelFlightInfoRequest, CancelFlightInfoResult, CancelStatus, FlightDescriptor,
    FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, Ticket,
};
use base64::Engine as _;
use futures::{Stream, StreamExt, TryStreamExt};
use parking_lot::Mutex;
use prost::Message;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status, Streaming};

use crate::error::FlightSqlError;
use crate::types::{conform, flight_schema, sql_info, xdbc_types, CATALOG};

/// Rows asked of the operation per fetch while streaming (a few of DataFusion's batches).
const FETCH_ROWS: usize = 65_536;
/// The Flight RPC action that cancels the query behind a FlightInfo.
const CANCEL_FLIGHT_INFO: &str = "CancelFlightInfo";
/// The Flight RPC action that ends the caller's session (its token stops working).
const CLOSE_SESSION: &str = "CloseSession";

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

/// A prepared statement: its text, the session it belongs to, and the parameter rows bound.
struct PreparedStatement {
    session: Handle,
    sql: String,
    params: Option<RecordBatch>,
}

/// The Flight SQL service over a gateway.
pub struct ApiaryFlightSql {
    gateway: Arc<Gateway>,
    /// Bearer tokens, each naming the session its handshake opened.
    tokens: Mutex<HashMap<String, Handle>>,
    prepared: Mutex<HashMap<Vec<u8>, PreparedStatement>>,
    sql_info: Option<SqlInfoData>,
    xdbc: Option<XdbcTypeInfoData>,
}

impl std::fmt::Debug for ApiaryFlightSql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiaryFlightSql").finish_non_exhaustive()
    }
}

fn handle_bytes(h: &Handle) -> Vec<u8> {
    let mut v = Vec::with_capacity(32);
    v.extend_from_slice(&h.guid);
    v.extend_from_slice(&h.secret);
    v
}

fn handle_of(bytes: &[u8]) -> Option<Handle> {
    if bytes.len() != 32 {
        return None;
    }
    Handle::from_bytes(&bytes[..16], &bytes[16..])
}

/// The statement handle in the ticket of a statement without a result set: it has run to its
/// end by the time the client has the ticket, and DoGet answers an empty stream (so clients
/// that fetch after every statement, as ADBC's DB-API and pandas do, get no rows, not an error).
/// Unlike an operation's handle (32 bytes), it names nothing that must still exist.
const NO_ROWS_TICKET: &[u8] = b"apiary:no-rows";

/// An error out of Arrow's Flight encoder as the status a stream ends with (through the one
/// conversion of [`FlightSqlError`]).
fn flight_err(e: FlightError) -> Status {
    FlightSqlError::from(e).into()
}

/// Closes the operation once its stream ends or the client goes away.
struct CloseOnDrop {
    gateway: Arc<Gateway>,
    operation: Handle,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let _ = self.gateway.close_operation(&self.operation);
    }
}

impl ApiaryFlightSql {
    /// A service over `gateway`.
    pub fn new(gateway: Arc<Gateway>) -> Self {
        Self {
            gateway,
            tokens: Mutex::new(HashMap::new()),
            prepared: Mutex::new(HashMap::new()),
            sql_info: sql_info(),
            xdbc: xdbc_types(),
        }
    }

    /// The session the call's bearer token names; refused when there is none, it is forged,
    /// or its session has ended.
    fn session(&self, metadata: &MetadataMap) -> Result<Handle, FlightSqlError> {
        let header = metadata
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let Some(token) = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
        else {
            return Err(FlightSqlError::unauthenticated(
                "authenticate first: a Flight handshake with a user name and password gives the bearer token every call carries",
            ));
        };
        let Some(handle) = self.tokens.lock().get(token.trim()).copied() else {
            return Err(FlightSqlError::unauthenticated(
                "invalid or expired bearer token",
            ));
        };
        if self.gateway.session(&handle).is_err() {
            self.tokens.lock().remove(token.trim());
            return Err(FlightSqlError::unauthenticated(
                "the session of this bearer token has ended; authenticate again",
            ));
        }
        Ok(handle)
    }

    /// An operation of `session`, or the answer for an unknown handle.
    fn operation_of(
        &self,
        session: &Handle,
        bytes: &[u8],
    ) -> Result<Arc<Operation>, FlightSqlError> {
        let h = handle_of(bytes).ok_or(FlightSqlError::UnknownStatement)?;
        let op = self
            .gateway
            .operation(&h)
            .map_err(|_| FlightSqlError::UnknownStatement)?;
        if op.session() != *session {
            return Err(FlightSqlError::UnknownStatement);
        }
        Ok(op)
    }

    /// Compiles and starts a statement. A query returns at once with its schema and a
    /// ticket; a statement without a result set has run to its end (its error is this
    /// call's) and gets an empty result.
    async fn start(
        &self,
        session: &Handle,
        sql: &str,
        descriptor: FlightDescriptor,
    ) -> Result<FlightInfo, FlightSqlError> {
        let op = self
            .gateway
            .execute_statement(session, sql, &BTreeMap::new(), true, 0)
            .await?;
        let (schema, handle) = match op.schema() {
            Some(s) if op.has_result_set() => (flight_schema(s, None), handle_bytes(&op.handle())),
            _ => {
                self.settle(op.clone()).await?;
                (Arc::new(Schema::empty()), NO_ROWS_TICKET.to_vec())
            }
        };
        let ticket = TicketStatementQuery {
            statement_handle: handle.into(),
        };
        let info = FlightInfo::new()
            .try_with_schema(&schema)
            .map_err(|e| FlightSqlError::internal(e.to_string()))?
            .with_endpoint(
                FlightEndpoint::new().with_ticket(Ticket::new(ticket.as_any().encode_to_vec())),
            )
            .with_descriptor(descriptor)
            .with_total_records(-1)
            .with_total_bytes(-1);
        Ok(info)
    }

    /// Runs a statement to its end (CommandStatementUpdate and prepared updates).
    async fn run_update(&self, session: &Handle, sql: &str) -> Result<(), FlightSqlError> {
        let op = self
            .gateway
            .execute_statement(session, sql, &BTreeMap::new(), true, 0)
            .await?;
        self.settle(op).await
    }

    /// Waits for a statement without a result set to end; its failure or cancellation is
    /// the call's error. The operation is closed when this returns, and also when the client
    /// goes away first (the statement is then cancelled, and a DDL undone or finished as the
    /// journal says).
    async fn settle(&self, op: Arc<Operation>) -> Result<(), FlightSqlError> {
        let _close = CloseOnDrop {
            gateway: self.gateway.clone(),
            operation: op.handle(),
        };
        match op.wait_ready().await {
            OperationState::Finished => Ok(()),
            OperationState::Canceled | OperationState::Closed => Err(FlightSqlError::Cancelled),
            _ => Err(match op.status().error {
                Some(e) => FlightSqlError::Gateway(GatewayError::Failed(e)),
                None => FlightSqlError::internal("the statement failed"),
            }),
        }
    }

    /// The operation's rows as Flight data: fetched as the client reads, the operation
    /// closed when the stream ends or is dropped.
    fn stream(&self, op: Arc<Operation>) -> Stream_<arrow_flight::FlightData> {
        let schema: SchemaRef = op
            .schema()
            .map(|s| flight_schema(s, None))
            .unwrap_or_else(|| Arc::new(Schema::empty()));
        let guard = CloseOnDrop {
            gateway: self.gateway.clone(),
            operation: op.handle(),
        };
        let batches = futures::stream::unfold((op, guard, false), |(op, guard, done)| async move {
            if done {
                return None;
            }
            match op.fetch(FETCH_ROWS, false).await {
                Ok(rows) => {
                    let end = !rows.has_more;
                    if end && rows.batches.is_empty() {
                        return None;
                    }
                    let items: Vec<Result<RecordBatch, FlightError>> =
                        rows.batches.into_iter().map(Ok).collect();
                    Some((futures::stream::iter(items), (op, guard, end)))
                }
                // (A query cancelled under the reader ends its stream with the gateway's
                // error, not CANCELLED: pyarrow's Flight client turns a CANCELLED stream into
                // a SIGINT of its own process.)
                Err(e) => Some((
                    futures::stream::iter(vec![Err(FlightSqlError::Gateway(e).into_flight())]),
                    (op, guard, true),
                )),
            }
        })
        .flatten();
        // The batches take the schema the client was given (with its Flight SQL metadata).
        let given = schema.clone();
        let batches =
            batches.map(move |b| b.and_then(|b| conform(b, &given).map_err(FlightError::Arrow)));
        let encoded = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .build(batches);
        Box::pin(encoded.map_err(flight_err))
    }
}

impl ApiaryFlightSql {
    /// For a caller with a session, a FlightInfo whose one ticket is `command` itself (the
    /// catalog commands): DoGet answers it from the metastore when the client reads.
    fn command_info(
        &self,
        command: &impl ProstMessageExt,
        schema: &Schema,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, FlightSqlError> {
        self.session(request.metadata())?;
        Ok(Response::new(command_info(
            command,
            schema,
            request.into_inner(),
        )?))
    }
}

fn command_info(
    command: &impl ProstMessageExt,
    schema: &Schema,
    descriptor: FlightDescriptor,
) -> Result<FlightInfo, FlightSqlError> {
    Ok(FlightInfo::new()
        .try_with_schema(schema)
        .map_err(|e| FlightSqlError::internal(e.to_string()))?
        .with_endpoint(
            FlightEndpoint::new().with_ticket(Ticket::new(command.as_any().encode_to_vec())),
        )
        .with_descriptor(descriptor)
        .with_total_records(-1)
        .with_total_bytes(-1))
}

/// One batch as a DoGet stream.
fn one_batch<E: std::fmt::Display>(
    batch: Result<RecordBatch, E>,
) -> Result<Response<Stream_<arrow_flight::FlightData>>, FlightSqlError> {
    let batch = batch.map_err(|e| FlightSqlError::internal(e.to_string()))?;
    let stream = FlightDataEncoderBuilder::new()
        .with_schema(batch.schema())
        .build(futures::stream::once(async move { Ok(batch) }))
        .map_err(flight_err);
    Ok(Response::new(Box::pin(stream)))
}

/// The parameter rows a DoPut carries.
async fn read_batches(
    stream: PeekableFlightDataStream,
) -> Result<Option<RecordBatch>, FlightSqlError> {
    let batches: Vec<RecordBatch> =
        // The stream itself, not its inner one: the first message (the descriptor and the
        // schema) was peeked at to route the call and would be lost.
        arrow_flight::decode::FlightRecordBatchStream::new_from_flight_data(
            stream.map_err(|e| FlightError::Tonic(Box::new(e))),
        )
        .try_collect()
        .await
        .map_err(|e| match e {
            // Data the client sent that does not decode as Arrow.
            FlightError::Arrow(_) | FlightError::DecodeError(_) | FlightError::ProtocolError(_) => {
                FlightSqlError::invalid_argument(e.to_string())
            }
            other => other.into(),
        })?;
    match batches.first() {
        None => Ok(None),
        Some(first) => arrow::compute::concat_batches(&first.schema(), &batches)
            .map(Some)
            .map_err(|e| FlightSqlError::invalid_argument(e.to_string())),
    }
}

#[tonic::async_trait]
impl arrow_flight::sql::server::FlightSqlService for ApiaryFlightSql {
    type FlightService = ApiaryFlightSql;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Stream_<HandshakeResponse>>, Status> {
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let Some(encoded) = header
            .strip_prefix("Basic ")
            .or_else(|| header.strip_prefix("basic "))
        else {
            return Err(FlightSqlError::unauthenticated(
                "the handshake needs HTTP Basic credentials (authorization: Basic ...)",
            )
            .into());
        };
        // With or without padding: Arrow's Go client (ADBC) sends it unpadded.
        let decoded = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(encoded.trim().trim_end_matches('='))
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| FlightSqlError::unauthenticated("malformed Basic credentials"))?;
        let (user, password) = decoded.split_once(':').unwrap_or((decoded.as_str(), ""));
        // The same check as the HiveServer2 ports: NONE accepts anyone, a password mode asks
        // its directory. A refused handshake gets no token and holds nothing.
        self.gateway
            .authenticate(request.remote_addr().map(|a| a.ip()), user, password)
            .await
            .map_err(FlightSqlError::from)?;
        let client = Client {
            user: if user.is_empty() {
                "anonymous".into()
            } else {
                user.to_string()
            },
            address: request.remote_addr().map(|a| a.ip()),
            proxy_user: None,
        };
        let session = self
            .gateway
            .open_session(&client, SessionRequest::default())
            .await
            .map_err(FlightSqlError::from)?;
        let token = hex(&rand::random::<[u8; 32]>());
        {
            let mut tokens = self.tokens.lock();
            // Tokens of sessions that ended (closed, expired) go, so the map stays as small
            // as the open sessions.
            tokens.retain(|_, h| self.gateway.session_exists(h));
            tokens.insert(token.clone(), session.handle());
        }
        // Prepared statements of ended sessions go too.
        self.prepared
            .lock()
            .retain(|_, p| self.gateway.session_exists(&p.session));
        tracing::info!(user = %client.user, session = %session.handle(), "Flight SQL session opened");
        let response = HandshakeResponse {
            protocol_version: 0,
            payload: token.clone().into(),
        };
        let mut resp: Response<Stream_<HandshakeResponse>> =
            Response::new(Box::pin(futures::stream::iter(vec![Ok(response)])));
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| FlightSqlError::internal("cannot encode the token"))?;
        resp.metadata_mut().insert("authorization", value);
        Ok(resp)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let session = self.session(request.metadata())?;
        let info = self
            .start(&session, &query.query, request.into_inner())
            .await?;
        Ok(Response::new(info))
    }

    async fn get_flight_info_prepared_statement(
        &self,
        cmd: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let session = self.session(request.metadata())?;
        let sql = self.bound_query(&session, &cmd.prepared_statement_handle)?;
        let info = self.start(&session, &sql, request.into_inner()).await?;
        Ok(Response::new(info))
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        let session = self.session(request.metadata())?;
        if ticket.statement_handle.as_ref() == NO_ROWS_TICKET {
            let empty = FlightDataEncoderBuilder::new()
                .with_schema(Arc::new(Schema::empty()))
                .build(futures::stream::empty())
                .map_err(flight_err);
            return Ok(Response::new(Box::pin(empty)));
        }
        let op = self.operation_of(&session, &ticket.statement_handle)?;
        Ok(Response::new(self.stream(op)))
    }

    async fn do_put_statement_update(
        &self,
        cmd: CommandStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let session = self.session(request.metadata())?;
        self.run_update(&session, &cmd.query).await?;
        // Hive reports no row counts.
        Ok(-1)
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let session = self.session(request.metadata())?;
        let id = rand::random::<[u8; 16]>().to_vec();
        self.prepared.lock().insert(
            id.clone(),
            PreparedStatement {
                session,
                sql: query.query,
                params: None,
            },
        );
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: id.into(),
            dataset_schema: Default::default(),
            parameter_schema: Default::default(),
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        query: ActionClosePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<(), Status> {
        let session = self.session(request.metadata())?;
        let mut prepared = self.prepared.lock();
        let key = query.prepared_statement_handle.to_vec();
        if prepared.get(&key).is_some_and(|p| p.session == session) {
            prepared.remove(&key);
        }
        Ok(())
    }

    async fn do_put_prepared_statement_query(
        &self,
        cmd: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        let session = self.session(request.metadata())?;
        let params = read_batches(request.into_inner()).await?;
        let key = cmd.prepared_statement_handle.to_vec();
        match self.prepared.lock().get_mut(&key) {
            Some(p) if p.session == session => p.params = params,
            _ => return Err(FlightSqlError::UnknownStatement.into()),
        }
        Ok(DoPutPreparedStatementResult {
            prepared_statement_handle: Some(cmd.prepared_statement_handle),
        })
    }

    async fn do_put_prepared_statement_update(
        &self,
        cmd: CommandPreparedStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let session = self.session(request.metadata())?;
        // Parameters may come with the update itself, or from an earlier bind.
        let sent = read_batches(request.into_inner()).await?;
        let key = cmd.prepared_statement_handle.to_vec();
        let (sql, params) = match self.prepared.lock().get(&key) {
            Some(p) if p.session == session => (p.sql.clone(), sent.or_else(|| p.params.clone())),
            _ => return Err(FlightSqlError::UnknownStatement.into()),
        };
        match params {
            None => self.run_update(&session, &sql).await?,
            Some(rows) => {
                // Many rows of an INSERT .. VALUES run as one INSERT: all land or none.
                for text in
                    crate::params::bind_all(&sql, &rows).map_err(FlightSqlError::InvalidArgument)?
                {
                    self.run_update(&session, &text).await?;
                }
            }
        }
        Ok(-1)
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        Ok(self.command_info(&query, &schema, request)?)
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        self.session(request.metadata())?;
        let mut b = query.into_builder();
        b.append(CATALOG);
        Ok(one_batch(b.build())?)
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        Ok(self.command_info(&query, &schema, request)?)
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        let session = self.session(request.metadata())?;
        let names = if query.catalog.as_deref().is_none_or(|c| c == CATALOG) {
            self.gateway
                .databases(&session, query.db_schema_filter_pattern.as_deref())
                .await
                .map_err(FlightSqlError::from)?
        } else {
            vec![]
        };
        let mut b = query.into_builder();
        for n in names {
            b.append(CATALOG, n);
        }
        Ok(one_batch(b.build())?)
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        Ok(self.command_info(&query, &schema, request)?)
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        let session = self.session(request.metadata())?;
        let tables = if query.catalog.as_deref().is_none_or(|c| c == CATALOG) {
            let types = (!query.table_types.is_empty()).then(|| query.table_types.clone());
            self.gateway
                .tables(
                    &session,
                    query.db_schema_filter_pattern.as_deref(),
                    query.table_name_filter_pattern.as_deref(),
                    types.as_deref(),
                )
                .await
                .map_err(FlightSqlError::from)?
        } else {
            vec![]
        };
        let mut b = query.into_builder();
        for t in tables {
            let schema = flight_schema(&t.schema, Some((&t.database, &t.name)));
            b.append(CATALOG, &t.database, &t.name, t.kind, &schema)
                .map_err(|e| FlightSqlError::internal(e.to_string()))?;
        }
        Ok(one_batch(b.build())?)
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        Ok(self.command_info(&query, &schema, request)?)
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        self.session(request.metadata())?;
        let mut b = query.into_builder();
        b.append("TABLE");
        b.append("VIEW");
        Ok(one_batch(b.build())?)
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let info = self
            .sql_info
            .as_ref()
            .ok_or_else(|| FlightSqlError::internal("no SQL info"))?;
        let schema = query.clone().into_builder(info).schema();
        Ok(self.command_info(&query, &schema, request)?)
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        self.session(request.metadata())?;
        let info = self
            .sql_info
            .as_ref()
            .ok_or_else(|| FlightSqlError::internal("no SQL info"))?;
        Ok(one_batch(query.into_builder(info).build())?)
    }

    async fn get_flight_info_primary_keys(
        &self,
        query: CommandGetPrimaryKeys,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        Ok(self.command_info(&query, &primary_keys_schema(), request)?)
    }

    async fn do_get_primary_keys(
        &self,
        _query: CommandGetPrimaryKeys,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        self.session(request.metadata())?;
        // Hive tables declare no primary keys: an empty result of Flight SQL's shape.
        Ok(one_batch::<FlightSqlError>(Ok(RecordBatch::new_empty(
            Arc::new(primary_keys_schema()),
        )))?)
    }

    async fn get_flight_info_xdbc_type_info(
        &self,
        query: CommandGetXdbcTypeInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let types = self
            .xdbc
            .as_ref()
            .ok_or_else(|| FlightSqlError::internal("no type info"))?;
        Ok(self.command_info(&query, &types.schema(), request)?)
    }

    async fn do_get_xdbc_type_info(
        &self,
        query: CommandGetXdbcTypeInfo,
        request: Request<Ticket>,
    ) -> Result<Response<Stream_<arrow_flight::FlightData>>, Status> {
        self.session(request.metadata())?;
        let types = self
            .xdbc
            .as_ref()
            .ok_or_else(|| FlightSqlError::internal("no type info"))?;
        Ok(one_batch(types.record_batch(query.data_type))?)
    }

    async fn do_action_cancel_query(
        &self,
        query: ActionCancelQueryRequest,
        request: Request<Action>,
    ) -> Result<ActionCancelQueryResult, Status> {
        let session = self.session(request.metadata())?;
        let info = FlightInfo::decode(query.info)
            .map_err(|e| FlightSqlError::invalid_argument(e.to_string()))?;
        let cancelled = self.cancel_info(&session, &info).await?;
        // CANCEL_RESULT_CANCELLED = 1, NOT_CANCELLABLE = 3.
        Ok(ActionCancelQueryResult {
            result: if cancelled { 1 } else { 3 },
        })
    }

    async fn do_action_fallback(
        &self,
        request: Request<Action>,
    ) -> Result<Response<Stream_<arrow_flight::Result>>, Status> {
        if request.get_ref().r#type == CLOSE_SESSION {
            return Ok(self.close_session(request.metadata())?);
        }
        if request.get_ref().r#type != CANCEL_FLIGHT_INFO {
            return Err(FlightSqlError::invalid_argument(format!(
                "unknown action {:?}",
                request.get_ref().r#type
            ))
            .into());
        }
        let session = self.session(request.metadata())?;
        let req = CancelFlightInfoRequest::decode(request.get_ref().body.clone())
            .map_err(|e| FlightSqlError::invalid_argument(e.to_string()))?;
        let info = req.info.ok_or_else(|| {
            FlightSqlError::invalid_argument("CancelFlightInfo needs the FlightInfo")
        })?;
        let cancelled = self.cancel_info(&session, &info).await?;
        let result = CancelFlightInfoResult {
            status: if cancelled {
                CancelStatus::Cancelled as i32
            } else {
                CancelStatus::NotCancellable as i32
            },
        };
        let body = arrow_flight::Result {
            body: result.encode_to_vec().into(),
        };
        Ok(Response::new(Box::pin(futures::stream::iter(vec![Ok(
            body,
        )]))))
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

impl ApiaryFlightSql {
    /// CloseSession: closes the gateway session the bearer token names (its operations too)
    /// and forgets the token. Replies `CloseSessionResult { status: CLOSED }`.
    fn close_session(
        &self,
        metadata: &MetadataMap,
    ) -> Result<Response<Stream_<arrow_flight::Result>>, FlightSqlError> {
        let session = self.session(metadata)?;
        self.tokens.lock().retain(|_, h| *h != session);
        self.prepared.lock().retain(|_, p| p.session != session);
        let _ = self.gateway.close_session(&session);
        tracing::info!(session = %session, "Flight SQL session closed");
        // Field 1 (status), varint 1 (CLOSED).
        let body = arrow_flight::Result {
            body: vec![0x08, 0x01].into(),
        };
        Ok(Response::new(Box::pin(futures::stream::iter(vec![Ok(
            body,
        )]))))
    }

    /// The text of a prepared query with its one row of parameters bound.
    fn bound_query(&self, session: &Handle, handle: &[u8]) -> Result<String, FlightSqlError> {
        let prepared = self.prepared.lock();
        let p = prepared
            .get(handle)
            .filter(|p| p.session == *session)
            .ok_or(FlightSqlError::UnknownStatement)?;
        match &p.params {
            None => Ok(p.sql.clone()),
            Some(rows) if rows.num_rows() == 1 => {
                crate::params::bind(&p.sql, rows, 0).map_err(FlightSqlError::InvalidArgument)
            }
            Some(rows) => Err(FlightSqlError::invalid_argument(format!(
                "a prepared query takes one row of parameters; {} were bound",
                rows.num_rows()
            ))),
        }
    }

    /// Cancels the operations a FlightInfo's tickets name; whether any was running.
    async fn cancel_info(
        &self,
        session: &Handle,
        info: &FlightInfo,
    ) -> Result<bool, FlightSqlError> {
        let mut cancelled = false;
        for endpoint in &info.endpoint {
            let Some(ticket) = &endpoint.ticket else {
                continue;
            };
            let Ok(any) = Any::decode(ticket.ticket.clone()) else {
                continue;
            };
            let Ok(Some(t)) = any.unpack::<TicketStatementQuery>() else {
                continue;
            };
            // A statement without rows had ended before its ticket was handed out.
            if t.statement_handle.as_ref() == NO_ROWS_TICKET {
                continue;
            }
            let op = self.operation_of(session, &t.statement_handle)?;
            if op.state().is_terminal() {
                continue;
            }
            self.gateway.cancel_operation(&op.handle()).await?;
            cancelled = true;
        }
        Ok(cancelled)
    }
}

/// GetPrimaryKeys' shape in Flight SQL.
fn primary_keys_schema() -> Schema {
    use arrow::datatypes::{DataType, Field};
    Schema::new(vec![
        Field::new("catalog_name", DataType::Utf8, true),
        Field::new("db_schema_name", DataType::Utf8, true),
        Field::new("table_name", DataType::Utf8, false),
        Field::new("column_name", DataType::Utf8, false),
        Field::new("key_name", DataType::Utf8, true),
        Field::new("key_sequence", DataType::Int32, false),
    ])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
