"""The metastore and the warehouse across restarts and crashes, through PyHive."""

import glob
import os
import signal
import tempfile
import time

import pytest

import clients
from clients import rows
from conftest import Server


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


@pytest.mark.parametrize("point", ["insert.after_manifest", "insert.after_partitions", "insert.between_moves"])
@pytest.mark.parametrize("overwrite", [False, True], ids=["into", "overwrite"])
def test_crash_while_committing_a_multi_partition_insert_is_rolled_forward(point, overwrite):
    """Once an INSERT has decided to commit, a crash at any later step is finished at
    start-up: every partition's rows appear, none half. (A crash before the decision is the
    test above: nothing appears.)"""
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE TABLE t (v INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
        cur.execute("INSERT INTO t PARTITION (p='a') VALUES (0)")
    finally:
        srv.stop()
    srv = Server("--hiveconf", f"apiary.failpoints={point}=abort", data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        verb = "OVERWRITE TABLE" if overwrite else "INTO"
        with pytest.raises(Exception):
            cur.execute(f"INSERT {verb} t PARTITION (p) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        srv.proc.wait(10)
        assert not srv.alive(), "the fail point did not stop the server"
    finally:
        srv.stop()
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        expected = [(1, "a"), (2, "b"), (3, "c")] if overwrite else [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
        assert rows(cur, "SELECT v, p FROM t ORDER BY v") == expected
        assert rows(cur, "SHOW PARTITIONS t") == [("p=a",), ("p=b",), ("p=c",)]
        assert not glob.glob(os.path.join(data, "d", "warehouse", "t", ".apiary-staging-*"))
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


def test_load_data_copies_files_into_the_table(server):
    src = tempfile.mkdtemp(prefix="apiary-load-")
    with open(os.path.join(src, "a.txt"), "w") as f:
        f.write("1\x01one\n2\x01\\N\n")
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE load_db")
    try:
        cur.execute("CREATE TABLE load_db.t (id INT, s STRING)")
        cur.execute(f"LOAD DATA LOCAL INPATH '{src}/a.txt' INTO TABLE load_db.t")
        cur.execute(f"LOAD DATA LOCAL INPATH 'file://{src}' INTO TABLE load_db.t")
        assert rows(cur, "SELECT id, s FROM load_db.t ORDER BY id, s") == [
            (1, "one"), (1, "one"), (2, None), (2, None)]
        cur.execute(f"LOAD DATA LOCAL INPATH '{src}/a.txt' OVERWRITE INTO TABLE load_db.t")
        assert rows(cur, "SELECT count(*) FROM load_db.t") == [(2,)]
        cur.execute("CREATE TABLE load_db.p (id INT, s STRING) PARTITIONED BY (dt STRING)")
        cur.execute(f"LOAD DATA LOCAL INPATH '{src}/a.txt' INTO TABLE load_db.p PARTITION (dt='d1')")
        assert rows(cur, "SELECT id, dt FROM load_db.p ORDER BY id") == [(1, "d1"), (2, "d1")]
        assert rows(cur, "SHOW PARTITIONS load_db.p") == [("dt=d1",)]
        with pytest.raises(Exception, match="Need to specify partition columns"):
            cur.execute(f"LOAD DATA LOCAL INPATH '{src}/a.txt' INTO TABLE load_db.p")
        with pytest.raises(Exception, match="Table is not partitioned but partition spec exists"):
            cur.execute(f"LOAD DATA LOCAL INPATH '{src}/a.txt' INTO TABLE load_db.t PARTITION (dt='x')")
        with pytest.raises(Exception, match="No files matching path"):
            cur.execute(f"LOAD DATA LOCAL INPATH '{src}/missing' INTO TABLE load_db.t")
        assert os.path.exists(os.path.join(src, "a.txt")), "LOCAL load keeps the source"
    finally:
        cur.execute("DROP DATABASE load_db CASCADE")
