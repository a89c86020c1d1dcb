//! In-process side of the Flight SQL benchmark (`bench/flight_bench.py`): runs a query
//! through the gateway on an engine in this process and reads every row from the operation,
//! the way both front ends read it, but with no wire in between. Prints
//! `rows=N seconds=S rate=R` and asserts nothing.
//!
//! Usage: `cargo run -p apiary-gateway --example collect_bench -- "<query>" [RUNS]`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use apiary_gateway::{Client, Gateway, GatewayConfig, SessionRequest};
use apiary_sql::{Engine, EngineOptions, Registry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let query = args.next().ok_or("usage: collect_bench <query> [runs]")?;
    let runs: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(1);
    let dir = tempfile::tempdir()?;
    let metastore = Arc::new(apiary_metastore::SqliteMetastore::open(
        &dir.path().join("metastore.db"),
    )?);
    let engine = Engine::open(
        EngineOptions::new(&dir.path().join("warehouse")),
        metastore,
        Arc::new(Registry::default()),
    )
    .await?;
    let gateway = Gateway::new(Arc::new(engine), GatewayConfig::default());
    let client = Client {
        user: "bench".into(),
        address: None,
        proxy_user: None,
    };
    let session = gateway
        .open_session(&client, SessionRequest::default())
        .await?;
    for _ in 0..runs {
        let started = Instant::now();
        let op = gateway
            .execute_statement(&session.handle(), &query, &BTreeMap::new(), false, 0)
            .await?;
        let mut rows = 0usize;
        loop {
            let fetched = op.fetch(65_536, false).await?;
            rows += fetched.batches.iter().map(|b| b.num_rows()).sum::<usize>();
            if !fetched.has_more {
                break;
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        gateway.close_operation(&op.handle())?;
        println!(
            "rows={rows} seconds={seconds:.3} rate={:.0}",
            rows as f64 / seconds
        );
    }
    Ok(())
}
