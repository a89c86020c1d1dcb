//! The intent journal of non-native DDL, tested in process with a storage handler of the
//! test's own (objects in a map, tagged with the operation that made them), registered the
//! way the `apiary` binary registers the real ones: CREATE and DROP of managed and external
//! tables, a failing hook, a cancel while the hook is running, and start-up recovery after a
//! DDL that was cut off inside its hook.

// A test harness: its helpers fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiary_metastore::{Metastore, SqliteMetastore, Table, TableType};
use apiary_sql::{Engine, EngineOptions, Prepared, Registry, SessionOptions, SqlError, SqlSession};
use apiary_storage::handler::{
    Capabilities, HandlerError, HandlerResult, MetaHook, ObjectState, OpTag, StorageHandler,
    CREATED_BY,
};
use async_trait::async_trait;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

/// What the hook does in `pre_create_table`.
const NORMAL: u8 = 0;
/// Refuses.
const FAIL: u8 = 1;
/// Creates the object, then waits until dropped (a slow remote system).
const HANG: u8 = 2;

/// The other system: object name to the tag of the operation that made it.
#[derive(Default)]
struct Objects(Mutex<HashMap<String, String>>);

struct MemoryHandler {
    objects: Arc<Objects>,
    mode: AtomicU8,
}

fn key(table: &Table) -> String {
    table.qualified_name()
}

#[async_trait]
impl MetaHook for MemoryHandler {
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        match self.mode.load(Ordering::SeqCst) {
            FAIL => return Err(HandlerError::Remote("the memory store refused".into())),
            HANG => {
                self.objects.0.lock().insert(key(table), op.id.clone());
                std::future::pending::<()>().await;
            }
            _ => {}
        }
        if table.table_type == TableType::External {
            if !self.objects.0.lock().contains_key(&key(table)) {
                return Err(HandlerError::Definition(format!(
                    "no object {} for an external table",
                    key(table)
                )));
            }
            return Ok(());
        }
        self.objects.0.lock().insert(key(table), op.id.clone());
        Ok(())
    }

    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        let mut objects = self.objects.0.lock();
        if objects.get(&key(table)) == Some(&op.id) {
            objects.remove(&key(table));
        }
        Ok(())
    }

    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()> {
        let mut objects = self.objects.0.lock();
        let made_it = table.parameters.get(CREATED_BY);
        if delete_data && made_it.is_some() && objects.get(&key(table)) == made_it {
            objects.remove(&key(table));
        }
        Ok(())
    }

    async fn object_state(&self, table: &Table, op: &OpTag) -> HandlerResult<ObjectState> {
        Ok(match self.objects.0.lock().get(&key(table)) {
            None => ObjectState::Absent,
            Some(tag) if *tag == op.id => ObjectState::CreatedBy,
            Some(_) => ObjectState::Other,
        })
    }
}

#[async_trait]
impl StorageHandler for MemoryHandler {
    fn class_name(&self) -> &'static str {
        "org.example.MemoryStorageHandler"
    }

    fn short_name(&self) -> &'static str {
        "MEMORY"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            managed: true,
            external: true,
            ..Capabilities::default()
        }
    }

    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        Some(self)
    }
}

struct World {
    dir: tempfile::TempDir,
    objects: Arc<Objects>,
    handler: Arc<MemoryHandler>,
    metastore: Arc<SqliteMetastore>,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let metastore = Arc::new(SqliteMetastore::open(&dir.path().join("m.db")).unwrap());
        let objects = Arc::new(Objects::default());
        let handler = Arc::new(MemoryHandler {
            objects: objects.clone(),
            mode: AtomicU8::new(NORMAL),
        });
        Self {
            dir,
            objects,
            handler,
            metastore,
        }
    }

    /// An engine as a (re)started server opens it: recovery runs with this world's handler.
    async fn engine(&self) -> Engine {
        let mut registry = Registry::default();
        registry.register(self.handler.clone());
        Engine::open(
            EngineOptions::new(&self.dir.path().join("wh")),
            self.metastore.clone(),
            Arc::new(registry),
        )
        .await
        .unwrap()
    }

    fn objects(&self) -> HashMap<String, String> {
        self.objects.0.lock().clone()
    }

    async fn tables(&self) -> Vec<String> {
        self.metastore.list_tables("default").await.unwrap()
    }

    async fn unfinished(&self) -> usize {
        let owner = self.dir.path().join("wh").display().to_string();
        self.metastore
            .unfinished_intents(&owner)
            .await
            .unwrap()
            .len()
    }
}

async fn run(session: &mut SqlSession, sql: &str) -> Result<(), SqlError> {
    match session.compile(sql).await? {
        Prepared::Task(task) => task.run(CancellationToken::new()).await,
        Prepared::Session(change) => session.apply(change),
        _ => Ok(()),
    }
}

fn session(engine: &Engine) -> SqlSession {
    engine.open_session(SessionOptions::default()).unwrap()
}

#[tokio::test]
async fn managed_create_makes_a_tagged_object_and_drop_deletes_it() {
    let w = World::new();
    let engine = w.engine().await;
    let mut s = session(&engine);
    run(&mut s, "CREATE TABLE m (a INT) STORED BY MEMORY")
        .await
        .unwrap();
    assert_eq!(w.tables().await, vec!["m".to_string()]);
    let objects = w.objects();
    assert!(objects.contains_key("default.m"));
    let table = w
        .metastore
        .get_table("default", "m")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        table.parameters.get(CREATED_BY),
        objects.get("default.m"),
        "the catalog names the operation whose tag the object carries"
    );
    assert_eq!(w.unfinished().await, 0);
    run(&mut s, "DROP TABLE m").await.unwrap();
    assert!(w.tables().await.is_empty() && w.objects().is_empty());
    assert_eq!(w.unfinished().await, 0);
}

#[tokio::test]
async fn external_tables_need_the_object_and_drop_keeps_it() {
    let w = World::new();
    let engine = w.engine().await;
    let mut s = session(&engine);
    let err = run(&mut s, "CREATE EXTERNAL TABLE e (a INT) STORED BY MEMORY")
        .await
        .unwrap_err();
    assert!(err.hive_message().contains("no object default.e"));
    assert!(w.tables().await.is_empty());
    w.objects
        .0
        .lock()
        .insert("default.e".into(), "someone else".into());
    run(&mut s, "CREATE EXTERNAL TABLE e (a INT) STORED BY MEMORY")
        .await
        .unwrap();
    run(&mut s, "DROP TABLE e").await.unwrap();
    assert!(w.tables().await.is_empty());
    assert_eq!(
        w.objects().get("default.e").map(String::as_str),
        Some("someone else")
    );
    assert_eq!(w.unfinished().await, 0);
}

#[tokio::test]
async fn a_failing_hook_leaves_both_sides_as_they_were() {
    let w = World::new();
    let engine = w.engine().await;
    let mut s = session(&engine);
    w.handler.mode.store(FAIL, Ordering::SeqCst);
    let err = run(&mut s, "CREATE TABLE f (a INT) STORED BY MEMORY")
        .await
        .unwrap_err();
    assert!(err.hive_message().contains("the memory store refused"));
    assert!(w.tables().await.is_empty() && w.objects().is_empty());
    assert_eq!(w.unfinished().await, 0);
    w.handler.mode.store(NORMAL, Ordering::SeqCst);
    run(&mut s, "CREATE TABLE f (a INT) STORED BY MEMORY")
        .await
        .unwrap();
    assert_eq!(w.tables().await, vec!["f".to_string()]);
}

#[tokio::test]
async fn a_cancel_inside_the_hook_undoes_the_create() {
    let w = World::new();
    let engine = w.engine().await;
    let mut s = session(&engine);
    w.handler.mode.store(HANG, Ordering::SeqCst);
    let Prepared::Task(task) = s
        .compile("CREATE TABLE c (a INT) STORED BY MEMORY")
        .await
        .unwrap()
    else {
        panic!("a CREATE is a task");
    };
    let interrupt = CancellationToken::new();
    let running = tokio::spawn(task.run(interrupt.clone()));
    for _ in 0..200 {
        if !w.objects().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(w.objects().contains_key("default.c"), "the hook is running");
    interrupt.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(SqlError::Cancelled)), "{result:?}");
    assert!(w.tables().await.is_empty(), "no catalog row");
    assert!(w.objects().is_empty(), "the object it made is undone");
    assert_eq!(w.unfinished().await, 0);
}

#[tokio::test]
async fn recovery_undoes_a_create_cut_off_inside_its_hook() {
    let w = World::new();
    {
        let engine = w.engine().await;
        let mut s = session(&engine);
        w.handler.mode.store(HANG, Ordering::SeqCst);
        // The work is dropped inside the hook, as a crash would leave it: the intent is
        // pending and the object exists, tagged.
        let cut =
            tokio::spawn(
                async move { run(&mut s, "CREATE TABLE r (a INT) STORED BY MEMORY").await },
            );
        for _ in 0..500 {
            if !w.objects().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cut.abort();
        assert!(cut.await.is_err(), "the create was cut off");
    }
    assert!(w.objects().contains_key("default.r"));
    assert_eq!(w.unfinished().await, 1);
    w.handler.mode.store(NORMAL, Ordering::SeqCst);
    // A restart: recovery finds the pending intent and undoes it with the handler.
    let engine = w.engine().await;
    assert!(w.objects().is_empty());
    assert!(w.tables().await.is_empty());
    assert_eq!(w.unfinished().await, 0);
    // The same DDL then succeeds.
    let mut s = session(&engine);
    run(&mut s, "CREATE TABLE r (a INT) STORED BY MEMORY")
        .await
        .unwrap();
    assert_eq!(w.tables().await, vec!["r".to_string()]);
}
