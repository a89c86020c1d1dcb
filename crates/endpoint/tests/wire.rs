//! The binary transport on a socket: a server bound to 127.0.0.1:0 over an engine in this
//! process, spoken to with raw bytes (NOSASL Thrift messages written with the protocol
//! crate's client helpers, and garbage), without any client library.

// A test harness: its helpers fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use apiary_endpoint::{AuthMode, EndpointConfig, Endpoints, TransportMode};
use apiary_gateway::{Gateway, GatewayConfig};
use apiary_protocol::message::{decode_reply, encode_call, Reply};
use apiary_protocol::tcli::*;
use apiary_protocol::ThriftValue;
use apiary_sql::{Engine, EngineOptions, Registry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(dir: &std::path::Path) -> Endpoints {
    let metastore = Arc::new(apiary_metastore::SqliteMetastore::open(&dir.join("m.db")).unwrap());
    let engine = Engine::open(
        EngineOptions::new(&dir.join("wh")),
        metastore,
        Arc::new(Registry::default()),
    )
    .await
    .unwrap();
    let gateway = Gateway::new(Arc::new(engine), GatewayConfig::default());
    let config = EndpointConfig {
        bind: "127.0.0.1".into(),
        binary_port: 0,
        transport: TransportMode::Binary,
        auth: AuthMode::NoSasl,
        handshake_timeout: Duration::from_secs(2),
        ..EndpointConfig::default()
    };
    Endpoints::start(gateway, config).await.unwrap()
}

/// Sends one call and reads bytes until they decode as its reply.
async fn call<Req: ThriftValue, Resp: ThriftValue>(
    s: &mut TcpStream,
    name: &str,
    seq: i32,
    req: &Req,
) -> Resp {
    s.write_all(&encode_call(name, seq, req)).await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Ok(Reply::Value(v)) = decode_reply::<Resp>(&buf) {
            return v;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn open(s: &mut TcpStream) -> TSessionHandle {
    let resp: TOpenSessionResp = call(
        s,
        "OpenSession",
        1,
        &TOpenSessionReq {
            client_protocol: TProtocolVersion::V10,
            username: Some("raw".into()),
            password: None,
            configuration: None,
        },
    )
    .await;
    assert_eq!(resp.status.status_code, TStatusCode::SUCCESS_STATUS);
    resp.session_handle.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_nosasl_messages_run_a_query() {
    let dir = tempfile::tempdir().unwrap();
    let endpoints = server(dir.path()).await;
    let addr = endpoints.binary_addr.unwrap();
    assert!(addr.ip().is_loopback());
    let mut s = TcpStream::connect(addr).await.unwrap();
    let session = open(&mut s).await;
    let exec: TOperationResp = call(
        &mut s,
        "ExecuteStatement",
        2,
        &TExecuteStatementReq {
            session_handle: session.clone(),
            statement: "SELECT 41 + 1 AS v".into(),
            conf_overlay: None,
            run_async: Some(false),
            query_timeout: None,
        },
    )
    .await;
    assert_eq!(exec.status.status_code, TStatusCode::SUCCESS_STATUS);
    let fetched: TFetchResultsResp = call(
        &mut s,
        "FetchResults",
        3,
        &TFetchResultsReq {
            operation_handle: exec.operation_handle.unwrap(),
            orientation: TFetchOrientation::FETCH_NEXT,
            max_rows: 10,
            fetch_type: None,
        },
    )
    .await;
    let columns = fetched.results.unwrap().columns.unwrap();
    match &columns[0] {
        TColumn::I32Val(c) => assert_eq!(c.values, vec![42]),
        other => panic!("expected an INT column, got {other:?}"),
    }
    // A wrong statement answers with Hive's text and SQLSTATE, and the session goes on.
    let bad: TOperationResp = call(
        &mut s,
        "ExecuteStatement",
        4,
        &TExecuteStatementReq {
            session_handle: session,
            statement: "SELECT * FROM missing_table".into(),
            conf_overlay: None,
            run_async: Some(false),
            query_timeout: None,
        },
    )
    .await;
    assert_eq!(bad.status.status_code, TStatusCode::ERROR_STATUS);
    assert!(bad
        .status
        .error_message
        .unwrap()
        .contains("Table not found 'missing_table'"));
    assert_eq!(bad.status.sql_state.as_deref(), Some("42S02"));
    assert_eq!(bad.status.error_code, Some(10001));
    endpoints.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_closes_only_its_own_connection() {
    let dir = tempfile::tempdir().unwrap();
    let endpoints = server(dir.path()).await;
    let addr = endpoints.binary_addr.unwrap();
    let mut bad = TcpStream::connect(addr).await.unwrap();
    // A message header claiming a 2 GiB method name, then nothing.
    bad.write_all(&[0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff])
        .await
        .unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), bad.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the server keeps a hostile connection open");
    let mut good = TcpStream::connect(addr).await.unwrap();
    open(&mut good).await;
    endpoints.shutdown().await;
}
