//! The gateway alone, with an engine in this process and no front end: the operation state
//! machine, fetch slicing, FETCH_FIRST, cancel and the query timeout, for queries and for
//! statements that run as tasks (CTAS), and the catalog requests.

// A test harness: its helpers fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiary_gateway::{
    CatalogRequest, Client, Gateway, GatewayConfig, GatewayError, OperationState, SessionRequest,
};
use apiary_sql::{Engine, EngineOptions, Registry};

const ENDLESS: &str =
    "SELECT sum(a.value * b.value) AS s FROM range(200000) a CROSS JOIN range(200000) b";

struct Fixture {
    gateway: Arc<Gateway>,
    session: apiary_gateway::Handle,
    _dir: tempfile::TempDir,
}

async fn fixture(config: GatewayConfig) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let metastore =
        Arc::new(apiary_metastore::SqliteMetastore::open(&dir.path().join("m.db")).unwrap());
    let engine = Engine::open(
        EngineOptions::new(&dir.path().join("wh")),
        metastore,
        Arc::new(Registry::default()),
    )
    .await
    .unwrap();
    let gateway = Gateway::new(Arc::new(engine), config);
    let client = Client {
        user: "tester".into(),
        address: None,
        proxy_user: None,
    };
    let session = gateway
        .open_session(&client, SessionRequest::default())
        .await
        .unwrap()
        .handle();
    Fixture {
        gateway,
        session,
        _dir: dir,
    }
}

async fn run(
    f: &Fixture,
    sql: &str,
    run_async: bool,
    timeout: i64,
) -> Result<Arc<apiary_gateway::Operation>, GatewayError> {
    f.gateway
        .execute_statement(&f.session, sql, &BTreeMap::new(), run_async, timeout)
        .await
}

fn values(rows: &apiary_gateway::FetchedRows) -> Vec<i64> {
    rows.batches
        .iter()
        .flat_map(|b| {
            let a = b
                .column(0)
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap();
            a.values().to_vec()
        })
        .collect()
}

async fn wait_state(op: &apiary_gateway::Operation, want: OperationState) {
    for _ in 0..400 {
        if op.state() == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("operation stayed {:?}, wanted {want:?}", op.state());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_slices_batches_and_fetch_first_reruns() {
    let f = fixture(GatewayConfig::default()).await;
    let op = run(&f, "SELECT value FROM range(100) ORDER BY value", false, 0)
        .await
        .unwrap();
    assert_eq!(op.state(), OperationState::Finished);
    let first = op.fetch(10, false).await.unwrap();
    assert_eq!(values(&first), (0..10).collect::<Vec<_>>());
    assert_eq!(first.start_offset, 0);
    assert!(first.has_more);
    let next = op.fetch(5, false).await.unwrap();
    assert_eq!(values(&next), (10..15).collect::<Vec<_>>());
    assert_eq!(next.start_offset, 10);
    let again = op.fetch(5, true).await.unwrap();
    assert_eq!(values(&again), (0..5).collect::<Vec<_>>());
    assert_eq!(again.start_offset, 0);
    let rest = op.fetch(1000, false).await.unwrap();
    assert_eq!(values(&rest), (5..100).collect::<Vec<_>>());
    let end = op.fetch(10, false).await.unwrap();
    assert!(values(&end).is_empty() && !end.has_more);
    f.gateway.close_operation(&op.handle()).unwrap();
    assert!(matches!(
        f.gateway.operation(&op.handle()),
        Err(GatewayError::InvalidHandle(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_ends_a_running_query() {
    let f = fixture(GatewayConfig::default()).await;
    let op = run(&f, ENDLESS, true, 0).await.unwrap();
    wait_state(&op, OperationState::Running).await;
    f.gateway.cancel_operation(&op.handle()).await.unwrap();
    assert_eq!(op.state(), OperationState::Canceled);
    // Nothing can be fetched from a cancelled operation; closing it still works.
    assert!(matches!(
        op.fetch(10, false).await,
        Err(GatewayError::InvalidState(_))
    ));
    f.gateway.close_operation(&op.handle()).unwrap();
    assert_eq!(f.gateway.operation_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_timeout_times_out_async_and_fails_sync() {
    let f = fixture(GatewayConfig::default()).await;
    let op = run(&f, ENDLESS, true, 1).await.unwrap();
    wait_state(&op, OperationState::TimedOut).await;
    let status = op.status();
    assert!(status.error.unwrap().message.contains("timed out"));
    match run(&f, ENDLESS, false, 1).await {
        Err(GatewayError::Failed(e)) => assert!(e.message.contains("timed out"), "{}", e.message),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctas_runs_as_its_operation_and_a_cancel_undoes_it() {
    let f = fixture(GatewayConfig::default()).await;
    let op = run(&f, &format!("CREATE TABLE c AS {ENDLESS}"), true, 0)
        .await
        .unwrap();
    assert!(!op.has_result_set());
    wait_state(&op, OperationState::Running).await;
    f.gateway.cancel_operation(&op.handle()).await.unwrap();
    assert_eq!(op.state(), OperationState::Canceled);
    // The table was not left behind, and the same name can be created.
    let err = run(&f, "SELECT * FROM c", false, 0).await.unwrap_err();
    assert!(
        err.message().contains("Table not found"),
        "{}",
        err.message()
    );
    let op = run(&f, "CREATE TABLE c AS SELECT 1 AS one", true, 0)
        .await
        .unwrap();
    op.wait_ready().await;
    assert_eq!(op.state(), OperationState::Finished);
    let q = run(&f, "SELECT CAST(one AS BIGINT) FROM c", false, 0)
        .await
        .unwrap();
    assert_eq!(values(&q.fetch(10, false).await.unwrap()), vec![1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_after_a_ddl_finished_leaves_it_finished() {
    let f = fixture(GatewayConfig::default()).await;
    let op = run(&f, "CREATE TABLE done_before (a INT)", true, 0)
        .await
        .unwrap();
    assert_eq!(op.wait_ready().await, OperationState::Finished);
    // What the DDL did is done: the state must not claim otherwise.
    f.gateway.cancel_operation(&op.handle()).await.unwrap();
    assert_eq!(op.state(), OperationState::Finished);
    let q = run(&f, "SELECT count(*) FROM done_before", false, 0)
        .await
        .unwrap();
    assert_eq!(values(&q.fetch(10, false).await.unwrap()), vec![0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn msck_runs_as_a_task_with_its_lines_as_the_result() {
    let f = fixture(GatewayConfig::default()).await;
    run(
        &f,
        "CREATE TABLE pt (a INT) PARTITIONED BY (p STRING)",
        false,
        0,
    )
    .await
    .unwrap();
    for p in ["x", "y"] {
        std::fs::create_dir_all(f._dir.path().join("wh").join("pt").join(format!("p={p}")))
            .unwrap();
    }
    let op = run(&f, "MSCK REPAIR TABLE pt", true, 0).await.unwrap();
    assert!(op.has_result_set());
    assert_eq!(op.wait_ready().await, OperationState::Finished);
    let rows = op.fetch(10, false).await.unwrap();
    let lines: Vec<String> = rows
        .batches
        .iter()
        .flat_map(|b| {
            let a = b
                .column(0)
                .as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .unwrap();
            a.iter()
                .map(|v| v.unwrap_or_default().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            "Repair: Added partition to metastore default.pt:p=x",
            "Repair: Added partition to metastore default.pt:p=y"
        ]
    );
    // FETCH_FIRST reads the same lines again; a second repair finds nothing new.
    assert_eq!(
        op.fetch(10, true)
            .await
            .unwrap()
            .batches
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        2
    );
    let again = run(&f, "MSCK REPAIR TABLE pt", false, 0).await.unwrap();
    assert_eq!(again.state(), OperationState::Finished);
    let more = again.fetch(10, false).await.unwrap();
    assert_eq!(more.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_task_ends_in_error_with_hive_text() {
    let f = fixture(GatewayConfig::default()).await;
    run(&f, "CREATE TABLE t (a INT)", false, 0).await.unwrap();
    let op = run(&f, "CREATE TABLE t (a INT)", true, 0).await.unwrap();
    assert_eq!(op.wait_ready().await, OperationState::Error);
    let e = op.status().error.unwrap();
    assert!(e.message.contains("already exists"), "{}", e.message);
    // A synchronous run returns the failure as the call's error.
    let err = run(&f, "CREATE TABLE t (a INT)", false, 0)
        .await
        .unwrap_err();
    assert!(err.message().contains("already exists"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_cap_refuses_then_recovers() {
    let config = GatewayConfig {
        operations_per_session: 2,
        ..GatewayConfig::default()
    };
    let f = fixture(config).await;
    let a = run(&f, "SELECT 1", false, 0).await.unwrap();
    let _b = run(&f, "SELECT 2", false, 0).await.unwrap();
    let err = run(&f, "SELECT 3", false, 0).await.unwrap_err();
    assert!(matches!(err, GatewayError::Busy(_)));
    f.gateway.close_operation(&a.handle()).unwrap();
    run(&f, "SELECT 3", false, 0).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_requests_and_listings() {
    let f = fixture(GatewayConfig::default()).await;
    run(&f, "CREATE TABLE listed (a INT, b STRING)", false, 0)
        .await
        .unwrap();
    run(&f, "CREATE VIEW listed_v AS SELECT a FROM listed", false, 0)
        .await
        .unwrap();
    let dbs = f.gateway.databases(&f.session, Some("def%")).await.unwrap();
    assert_eq!(dbs, vec!["default".to_string()]);
    let tables = f
        .gateway
        .tables(&f.session, Some("default"), Some("listed%"), None)
        .await
        .unwrap();
    let names: Vec<_> = tables.iter().map(|t| (t.name.as_str(), t.kind)).collect();
    assert_eq!(names, vec![("listed", "TABLE"), ("listed_v", "VIEW")]);
    assert_eq!(tables[0].schema.fields().len(), 2);
    let op = f
        .gateway
        .catalog(
            &f.session,
            CatalogRequest::Schemas {
                schema_pattern: None,
            },
        )
        .await
        .unwrap();
    assert!(op.has_result_set());
    let rows = op.fetch(100, false).await.unwrap();
    assert_eq!(rows.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_closed_handles_are_refused() {
    let f = fixture(GatewayConfig::default()).await;
    let forged = apiary_gateway::Handle::random();
    assert!(matches!(
        f.gateway.operation(&forged),
        Err(GatewayError::InvalidHandle(_))
    ));
    f.gateway.close_session(&f.session).unwrap();
    assert!(matches!(
        run(&f, "SELECT 1", false, 0).await,
        Err(GatewayError::InvalidHandle(_))
    ));
}
