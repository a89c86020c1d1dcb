//! The HiveQL front end on arbitrary text: variable substitution, parsing and planning (and,
//! for statements with side effects, running them in a throwaway warehouse) return a result
//! or an error, never a panic. The first line of the input is a value for `${hivevar:v}`.
#![no_main]

use std::sync::{Arc, OnceLock};

use apiary_metastore::SqliteMetastore;
use apiary_sql::{Engine, EngineOptions, Registry, SessionOptions};
use libfuzzer_sys::fuzz_target;

struct World {
    runtime: tokio::runtime::Runtime,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

fn world() -> Option<&'static World> {
    static WORLD: OnceLock<Option<World>> = OnceLock::new();
    WORLD
        .get_or_init(|| {
            let dir = tempfile::tempdir().ok()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .thread_stack_size(16 << 20)
                .build()
                .ok()?;
            let metastore = Arc::new(SqliteMetastore::open(&dir.path().join("ms.db")).ok()?);
            let warehouse = dir.path().join("warehouse");
            let engine = runtime
                // No storage handlers: the front end is what is fuzzed, not remote systems.
                .block_on(Engine::open(
                    EngineOptions::new(&warehouse),
                    metastore,
                    Arc::new(Registry::default()),
                ))
                .ok()?;
            Some(World {
                runtime,
                engine: Arc::new(engine),
                _dir: dir,
            })
        })
        .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Statements that move or read files the fuzzer's machine holds are left out.
    let lower = text.to_ascii_lowercase();
    if lower.contains("load") || lower.contains("location") || lower.contains("inpath") {
        return;
    }
    let Some(w) = world() else {
        return;
    };
    let (var, statement) = text.split_once('\n').unwrap_or(("", text));
    let mut opts = SessionOptions {
        user: "fuzz".into(),
        ..Default::default()
    };
    opts.hivevar.insert("v".into(), var.to_string());
    let Ok(mut session) = w.engine.open_session(opts) else {
        return;
    };
    w.runtime.block_on(async {
        // Planned, not run: a fuzzed query could ask for unbounded work.
        let _ = session.compile(statement).await;
    });
});
