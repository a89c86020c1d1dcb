"""The metastore and the warehouse across restarts and crashes, through PyHive."""

import glob
import os
import signal
import time

import clients
from conftest import Server


def rows(cur, sql):
    cur.execute(sql)
    return cur.fetchall()


def test_everything_persists_across_a_restart():
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE DATABASE keep COMMENT 'kept' WITH DBPROPERTIES ('p'='1')")
        cur.execute("CREATE TABLE keep.t (id INT, s STRING) PARTITIONED BY (dt STRING) STORED AS PARQUET")
        cur.execute("INSERT INTO keep.t PARTITION (dt='a') VALUES (1, 'one'), (2, 'two')")
        cur.execute("CREATE EXTERNAL TABLE keep.e (x INT) LOCATION '%s'" % os.path.join(data, "ext"))
        cur.execute("INSERT INTO keep.e VALUES (7)")
        before = rows(cur, "SHOW CREATE TABLE keep.t")
    finally:
        srv.stop()
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        assert rows(cur, "SELECT id, s, dt FROM keep.t ORDER BY id") == [(1, "one", "a"), (2, "two", "a")]
        assert rows(cur, "SELECT x FROM keep.e") == [(7,)]
        assert rows(cur, "SHOW PARTITIONS keep.t") == [("dt=a",)]
        assert rows(cur, "SHOW CREATE TABLE keep.t") == before
        assert rows(cur, "DESCRIBE DATABASE EXTENDED keep")[0][1] == "kept"
        # DROP of an external table keeps its files; of a managed one deletes them.
        cur.execute("DROP TABLE keep.e")
        assert glob.glob(os.path.join(data, "ext", "*"))
        location = os.path.join(data, "d", "warehouse", "keep.db", "t")
        assert os.path.isdir(location)
        cur.execute("DROP TABLE keep.t")
        assert not os.path.exists(location)
    finally:
        srv.stop()


def test_kill_during_insert_leaves_no_partial_rows():
    srv = Server()
    data = srv.data
    table_dir = os.path.join(data, "d", "warehouse", "crash.db", "t")
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE DATABASE crash")
        cur.execute("CREATE TABLE crash.t (v BIGINT, s STRING) STORED AS TEXTFILE")
        cur.execute("INSERT INTO crash.t VALUES (1, 'before')")
        # Large enough to be running when the server is killed.
        cur.execute("INSERT INTO crash.t SELECT value, concat('row ', CAST(value AS STRING)) "
                    "FROM range(200000000)", async_=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            staged = glob.glob(os.path.join(table_dir, ".apiary-staging-*", "*", "*"))
            if staged and os.path.getsize(staged[0]) > 0:
                break
            time.sleep(0.05)
        assert staged, "the INSERT never started writing"
        os.kill(srv.proc.pid, signal.SIGKILL)
        srv.proc.wait(10)
    finally:
        srv.stop()
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        assert rows(cur, "SELECT count(*), max(s) FROM crash.t") == [(1, "before")]
        visible = [f for f in os.listdir(table_dir) if not f.startswith(".")]
        assert len(visible) == 1, visible
        # The staging folder of the interrupted INSERT is cleaned up at start-up.
        assert not glob.glob(os.path.join(table_dir, ".apiary-staging-*"))
    finally:
        srv.stop()


def test_sqlalchemy_reflection_sees_created_tables(server):
    from sqlalchemy import create_engine, inspect

    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE reflect_db")
    cur.execute("CREATE TABLE reflect_db.r (id BIGINT, name VARCHAR(10), price DECIMAL(8,2)) "
                "PARTITIONED BY (dt STRING) STORED AS PARQUET")
    try:
        engine = create_engine(f"hive://alice@127.0.0.1:{server.binary_port}/default")
        insp = inspect(engine)
        assert "reflect_db" in insp.get_schema_names()
        assert insp.get_table_names(schema="reflect_db") == ["r"]
        cols = [(c["name"], str(c["type"])) for c in insp.get_columns("r", schema="reflect_db")]
        assert [c[0] for c in cols] == ["id", "name", "price", "dt"], cols
        assert cols[0][1] == "BIGINT"
        engine.dispose()
    finally:
        cur.execute("DROP DATABASE reflect_db CASCADE")


def test_impyla_catalog_calls_with_regex_style_patterns(server):
    """impyla sends `.*` for "any" (Hive matches catalog patterns as regular expressions)."""
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE imp_cat")
    cur.execute("CREATE TABLE imp_cat.t1 (id BIGINT COMMENT 'k', d DECIMAL(9,2)) PARTITIONED BY (p STRING)")
    try:
        imp = clients.impyla_plain(server).cursor()
        imp.get_tables(database_name="imp_cat")
        assert [r[2] for r in imp.fetchall()] == ["t1"]
        schema = imp.get_table_schema("t1", "imp_cat")
        assert [c[0] for c in schema] == ["id", "d", "p"], schema
        imp.close()
    finally:
        cur.execute("DROP DATABASE imp_cat CASCADE")
