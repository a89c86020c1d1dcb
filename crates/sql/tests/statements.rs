//! Each family of Hive statements run in process on a session over a SQLite metastore and a
//! temporary warehouse: databases, tables, views, ALTER, partitions and MSCK, INSERT, LOAD,
//! DESCRIBE, SHOW, and SET/USE (the `.slt` files cover them in depth, over HS2 too; these
//! check each family's runner through `SqlSession::compile` alone).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use apiary_metastore::SqliteMetastore;
use apiary_sql::render::cell_text;
use apiary_sql::{
    Engine, EngineOptions, Prepared, Registry, SessionChange, SessionOptions, SqlError, SqlSession,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

struct World {
    dir: tempfile::TempDir,
    session: SqlSession,
}

impl World {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let metastore = Arc::new(SqliteMetastore::open(&dir.path().join("m.db")).unwrap());
        let engine = Engine::open(
            EngineOptions::new(&dir.path().join("wh")),
            metastore,
            Arc::new(Registry::default()),
        )
        .await
        .unwrap();
        let session = engine.open_session(SessionOptions::default()).unwrap();
        Self { dir, session }
    }

    /// Runs `sql` to its end and returns its rows as Hive's texts (NULL as "NULL").
    async fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, SqlError> {
        let batches = match self.session.compile(sql).await? {
            Prepared::Rows { batches, .. } => batches,
            Prepared::Query { plan, .. } => {
                let mut stream = plan.stream().await?;
                let mut out = Vec::new();
                while let Some(b) = stream.next().await {
                    out.push(b?);
                }
                out
            }
            Prepared::Task(task) => {
                let output = task.output();
                task.run(CancellationToken::new()).await?;
                output.map(|o| o.rows()).unwrap_or_default()
            }
            Prepared::Session(change) => {
                self.session.apply(change)?;
                Vec::new()
            }
            Prepared::Done => Vec::new(),
        };
        Ok(batches
            .iter()
            .flat_map(|b| {
                (0..b.num_rows()).map(move |r| {
                    b.columns()
                        .iter()
                        .map(|c| cell_text(c.as_ref(), r).unwrap_or_else(|| "NULL".into()))
                        .collect()
                })
            })
            .collect())
    }

    async fn run(&mut self, sql: &str) {
        self.rows(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The first column of every row.
    async fn column(&mut self, sql: &str) -> Vec<String> {
        self.rows(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .into_iter()
            .map(|mut r| r.remove(0))
            .collect()
    }
}

#[tokio::test]
async fn databases_and_use() {
    let mut w = World::new().await;
    w.run("CREATE DATABASE sales COMMENT 'the sales'").await;
    assert_eq!(w.column("SHOW DATABASES").await, ["default", "sales"]);
    assert_eq!(w.column("SHOW SCHEMAS LIKE 'sa*'").await, ["sales"]);
    w.run("USE sales").await;
    assert_eq!(w.column("SELECT current_database()").await, ["sales"]);
    let err = w.rows("USE nowhere").await.unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");
    w.run("USE default").await;
    w.run("DROP DATABASE sales").await;
    assert_eq!(w.column("SHOW DATABASES").await, ["default"]);
}

#[tokio::test]
async fn tables_insert_and_select() {
    let mut w = World::new().await;
    w.run("CREATE TABLE t (id INT, name STRING) STORED AS PARQUET")
        .await;
    w.run("INSERT INTO t VALUES (1, 'a'), (2, 'b')").await;
    w.run("INSERT INTO TABLE t SELECT id + 10, upper(name) FROM t")
        .await;
    assert_eq!(
        w.rows("SELECT id, name FROM t ORDER BY id").await.unwrap(),
        [["1", "a"], ["2", "b"], ["11", "A"], ["12", "B"]]
    );
    w.run("TRUNCATE TABLE t").await;
    assert_eq!(w.column("SELECT count(*) FROM t").await, ["0"]);
    w.run("DROP TABLE t").await;
    assert!(w.column("SHOW TABLES").await.is_empty());
}

#[tokio::test]
async fn views_plan_hive_subscripts_as_queries_do() {
    let mut w = World::new().await;
    w.run("CREATE VIEW v AS SELECT array(10, 20)[0] AS first, split('a,b', ',')[1] AS second")
        .await;
    assert_eq!(w.rows("SELECT * FROM v").await.unwrap(), [["10", "b"]]);
    assert_eq!(
        w.rows("SELECT array(10, 20)[0], split('a,b', ',')[1]")
            .await
            .unwrap(),
        [["10", "b"]]
    );
    assert_eq!(w.column("SHOW VIEWS").await, ["v"]);
}

#[tokio::test]
async fn alter_describe_and_show() {
    let mut w = World::new().await;
    w.run("CREATE TABLE t (id INT) TBLPROPERTIES ('k' = 'v')")
        .await;
    w.run("ALTER TABLE t ADD COLUMNS (note STRING COMMENT 'why')")
        .await;
    w.run("ALTER TABLE t RENAME TO u").await;
    let described = w.rows("DESCRIBE u").await.unwrap();
    assert_eq!(described[0][..2], ["id".to_string(), "int".to_string()]);
    assert_eq!(described[1], ["note", "string", "why"]);
    assert_eq!(w.column("SHOW COLUMNS IN u").await, ["id", "note"]);
    assert_eq!(
        w.rows("SHOW TBLPROPERTIES u ('k')").await.unwrap(),
        [["k", "v"]]
    );
    let create = w.column("SHOW CREATE TABLE u").await.join("\n");
    assert!(
        create.starts_with("CREATE TABLE `u`(\n  `id` int, \n  `note` string COMMENT 'why')"),
        "{create}"
    );
    assert!(w
        .column("SHOW FUNCTIONS LIKE 'date_f*'")
        .await
        .contains(&"date_format".to_string()));
    let described = w.column("DESCRIBE FUNCTION upper").await;
    assert!(described[0].starts_with("upper("), "{described:?}");
}

#[tokio::test]
async fn partitions_msck_and_load() {
    let mut w = World::new().await;
    w.run("CREATE TABLE p (v INT) PARTITIONED BY (ds STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','")
        .await;
    w.run("INSERT INTO p PARTITION (ds = '2026-12-06') VALUES (1)")
        .await;
    w.run("ALTER TABLE p ADD PARTITION (ds = '2026-12-07')")
        .await;
    assert_eq!(
        w.column("SHOW PARTITIONS p").await,
        ["ds=2026-12-06", "ds=2026-12-07"]
    );
    // A file LOADed into the new partition is read from it.
    let file = w.dir.path().join("rows.csv");
    std::fs::write(&file, "5\n6\n").unwrap();
    w.run(&format!(
        "LOAD DATA LOCAL INPATH '{}' INTO TABLE p PARTITION (ds = '2026-12-07')",
        file.display()
    ))
    .await;
    assert_eq!(
        w.rows("SELECT ds, sum(v) FROM p GROUP BY ds ORDER BY ds")
            .await
            .unwrap(),
        [["2026-12-06", "1"], ["2026-12-07", "11"]]
    );
    // A partition folder made behind the catalog's back is found by MSCK.
    let folder = w.dir.path().join("wh").join("p").join("ds=2026-12-08");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("f.csv"), "100\n").unwrap();
    w.run("MSCK REPAIR TABLE p").await;
    assert_eq!(
        w.column("SELECT sum(v) FROM p WHERE ds = '2026-12-08'")
            .await,
        ["100"]
    );
}

#[tokio::test]
async fn set_reset_and_substitution() {
    let mut w = World::new().await;
    w.run("SET hivevar:n=41").await;
    assert_eq!(w.column("SELECT ${hivevar:n} + 1").await, ["42"]);
    w.run("SET hive.exec.dynamic.partition.mode=nonstrict")
        .await;
    assert_eq!(
        w.column("SET hive.exec.dynamic.partition.mode").await,
        ["hive.exec.dynamic.partition.mode=nonstrict"]
    );
    w.run("RESET hive.exec.dynamic.partition.mode").await;
    assert_ne!(
        w.column("SET hive.exec.dynamic.partition.mode").await,
        ["hive.exec.dynamic.partition.mode=nonstrict"]
    );
}

#[tokio::test]
async fn grant_without_authorization_is_refused() {
    let mut w = World::new().await;
    let err = w
        .rows("GRANT SELECT ON TABLE t TO USER bob")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("Authorization is not enabled"),
        "{err}"
    );
}

/// `compile` changes nothing: SET, RESET and USE come back as the change they make, which the
/// session takes only when it is applied (the gateway applies it before the next statement).
#[tokio::test]
async fn compiling_set_and_use_changes_nothing_until_applied() {
    let mut w = World::new().await;
    w.run("CREATE DATABASE sales").await;
    let set = w.session.compile("SET hive.apiary.probe=on").await.unwrap();
    assert!(
        matches!(&set, Prepared::Session(SessionChange::Conf { key, value })
            if key == "hive.apiary.probe" && value == "on"),
        "{set:?}"
    );
    assert_eq!(
        w.column("SET hive.apiary.probe").await,
        ["hive.apiary.probe is undefined"]
    );
    let use_sales = w.session.compile("USE sales").await.unwrap();
    assert_eq!(w.column("SELECT current_database()").await, ["default"]);
    let (Prepared::Session(set), Prepared::Session(use_sales)) = (set, use_sales) else {
        panic!("SET and USE are changes of the session");
    };
    w.session.apply(set).unwrap();
    w.session.apply(use_sales).unwrap();
    assert_eq!(
        w.column("SET hive.apiary.probe").await,
        ["hive.apiary.probe=on"]
    );
    assert_eq!(w.column("SELECT current_database()").await, ["sales"]);
    let reset = w.session.compile("RESET hive.apiary.probe").await.unwrap();
    assert!(
        matches!(&reset, Prepared::Session(SessionChange::Reset(Some(k))) if k == "hive.apiary.probe")
    );
    // A DataFusion option DataFusion refuses is refused as the statement compiles.
    let err = w
        .session
        .compile("SET datafusion.execution.batch_size=lots")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("batch_size"), "{err}");
}
