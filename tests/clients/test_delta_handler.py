"""Delta Lake tables through the DELTA storage handler, checked with an independent reader
and writer (Python's `deltalake`): external tables over what `deltalake` wrote, managed tables
`deltalake` reads back row by row and type by type, the rejected DDL with their error texts,
and crash tests at every fail point of CREATE and DROP."""

import datetime
import decimal
import os
import shutil
import tempfile
import time

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import clients
from conftest import Server
from handler_checks import (CREATE_POINTS, DROP_POINTS, SETTLE_CASES, crash_at, ddl_settles_without_a_restart,
                            error_of, metastore, rows, tables_in_catalog)

CLASS = "io.delta.hive.DeltaStorageHandler"


def location_of(cur, table):
    for r in rows(cur, f"DESCRIBE FORMATTED {table}"):
        if r[0] and r[0].strip() == "Location:":
            return r[1].strip().removeprefix("file:")
    raise AssertionError(f"no location for {table}")


# Every Hive type Delta can hold, as `deltalake` writes it, and the Hive type it is declared as.
TYPED = pa.table({
    "b": pa.array([True, False, None], pa.bool_()),
    "ti": pa.array([1, -2, None], pa.int8()),
    "si": pa.array([300, -301, None], pa.int16()),
    "i": pa.array([70000, -70001, None], pa.int32()),
    "bi": pa.array([2**40, -(2**40), None], pa.int64()),
    "f": pa.array([1.5, -0.25, None], pa.float32()),
    "d": pa.array([2.5, 1e300, None], pa.float64()),
    "dec": pa.array([decimal.Decimal("12.34"), decimal.Decimal("-0.01"), None], pa.decimal128(10, 2)),
    "s": pa.array(["a", "O'Neil", None], pa.string()),
    "bin": pa.array([b"\x00\x01", b"", None], pa.binary()),
    "dt": pa.array([datetime.date(2026, 12, 1), datetime.date(1970, 1, 1), None], pa.date32()),
    "ts": pa.array([datetime.datetime(2026, 12, 1, 10, 0, 0, 123456), datetime.datetime(1999, 12, 31, 23, 59, 59), None],
                   pa.timestamp("us")),
    "arr": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
    "m": pa.array([[("k", 1)], [], None], pa.map_(pa.string(), pa.int64())),
    "st": pa.array([{"x": 1, "y": "one"}, {"x": 2, "y": None}, None],
                   pa.struct([("x", pa.int32()), ("y", pa.string())])),
})
HIVE_COLUMNS = ("b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10,2), "
                "s STRING, bin BINARY, dt DATE, ts TIMESTAMP, arr ARRAY<INT>, m MAP<STRING,BIGINT>, "
                "st STRUCT<x:INT,y:STRING>")


@pytest.fixture()
def folder():
    d = tempfile.mkdtemp(prefix="apiary-delta-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_external_table_reads_every_type_deltalake_wrote(server, folder):
    path = os.path.join(folder, "typed")
    write_deltalake(path, TYPED)
    cur = clients.pyhive_none(server).cursor()
    cur.execute(f"CREATE EXTERNAL TABLE ext_typed ({HIVE_COLUMNS}) STORED BY '{CLASS}' LOCATION '{path}'")
    try:
        # (NULLs first, as Hive sorts them.)
        got = rows(cur, "SELECT * FROM ext_typed ORDER BY i")
        assert got[0] == (None,) * 15
        assert got[1][:10] == (False, -2, -301, -70001, -(2**40), -0.25, 1e300, decimal.Decimal("-0.01"),
                               "O'Neil", b"")
        assert got[2][:10] == (True, 1, 300, 70000, 2**40, 1.5, 2.5, decimal.Decimal("12.34"), "a", b"\x00\x01")
        assert got[2][10:12] == ("2026-12-01", datetime.datetime(2026, 12, 1, 10, 0, 0, 123456))
        assert got[2][12:] == ("[1,2]", '{"k":1}', '{"x":1,"y":"one"}')
        # The column types as Hive names them, over the wire.
        cur.execute("SELECT * FROM ext_typed LIMIT 0")
        assert [d[1] for d in cur.description] == [
            "BOOLEAN_TYPE", "TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE", "FLOAT_TYPE",
            "DOUBLE_TYPE", "DECIMAL_TYPE", "STRING_TYPE", "BINARY_TYPE", "DATE_TYPE", "TIMESTAMP_TYPE",
            "ARRAY_TYPE", "MAP_TYPE", "STRUCT_TYPE"]
    finally:
        cur.execute("DROP TABLE ext_typed")
    # DROP of an external table keeps the Delta table as it was.
    assert DeltaTable(path).to_pyarrow_table().num_rows == 3


def test_external_table_sees_partitions_versions_and_checkpoints(server, folder):
    path = os.path.join(folder, "events")
    for v in range(3):
        batch = pa.table({"id": pa.array([v * 10 + i for i in range(5)], pa.int64()),
                          "day": pa.array([f"2026-12-0{1 + i % 2}" for i in range(5)], pa.string())})
        write_deltalake(path, batch, mode="append", partition_by=["day"])
    DeltaTable(path).create_checkpoint()
    write_deltalake(path, pa.table({"id": pa.array([99], pa.int64()), "day": pa.array(["2026-12-03"])}),
                    mode="append", partition_by=["day"])
    cur = clients.pyhive_none(server).cursor()
    cur.execute(f"CREATE EXTERNAL TABLE events (id BIGINT, day STRING) STORED BY DELTA LOCATION '{path}'")
    try:
        expected = sorted(DeltaTable(path).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
        assert rows(cur, "SELECT id, day FROM events ORDER BY id") == [(r["id"], r["day"]) for r in expected]
        assert rows(cur, "SELECT count(*) FROM events WHERE day = '2026-12-02'") == [(6,)]
        # Rows appended outside Apiary are read at once.
        write_deltalake(path, pa.table({"id": pa.array([100], pa.int64()), "day": pa.array(["2026-12-03"])}),
                        mode="append", partition_by=["day"])
        assert rows(cur, "SELECT count(*), max(id) FROM events") == [(17, 100)]
        # The filter on the partition column goes into the Delta scan.
        plan = "\n".join(r[0] for r in rows(cur, "EXPLAIN SELECT id FROM events WHERE day = '2026-12-03'"))
        assert "DeltaScan" in plan or "delta" in plan.lower(), plan
    finally:
        cur.execute("DROP TABLE events")


def test_rejected_ddl_gets_hives_connector_errors(server, folder):
    path = os.path.join(folder, "small")
    write_deltalake(path, pa.table({"c1": pa.array([1], pa.int32()), "c2": pa.array(["x"])}))
    cur = clients.pyhive_none(server).cursor()
    cases = {
        "(c1 INT, c2 STRING, c3 BOOLEAN)": "Specified schema has additional field(s): c3",
        "(c1 INT, c3 STRING)": "Specified schema is missing field(s): c2",
        "(c2 STRING, c1 INT)": "Column order is different",
        "(c1 INT, c2 TINYINT)": "Specified type for c2 is different from existing schema",
    }
    for cols, expected in cases.items():
        e = error_of(cur, f"CREATE EXTERNAL TABLE bad {cols} STORED BY DELTA LOCATION '{path}'")
        assert "The Delta table schema is not the same as the Hive schema" in e, e
        assert expected in e, e
        assert "Please update your Hive table's schema to match the Delta table schema." in e, e
    e = error_of(cur, "CREATE EXTERNAL TABLE bad (c1 INT, c2 STRING) STORED BY DELTA")
    assert "table location should be set when creating a Delta table" in e, e
    missing = os.path.join(folder, "nothing_here")
    e = error_of(cur, f"CREATE EXTERNAL TABLE bad (c1 INT) STORED BY DELTA LOCATION '{missing}'")
    assert f"{missing} does not exist or it's not a Delta table" in e, e
    e = error_of(cur, f"CREATE EXTERNAL TABLE bad (c1 INT) PARTITIONED BY (c2 STRING) STORED BY DELTA "
                      f"LOCATION '{path}'")
    assert ("Found partition columns (c2) in table default:bad. The partition columns in a Delta table "
            "will be read from its own metadata and should not be set manually.") in e, e
    # A managed table needs a folder of its own: not an existing Delta table, not other files.
    e = error_of(cur, f"CREATE TABLE bad (c1 INT, c2 STRING) STORED BY DELTA LOCATION '{path}'")
    assert "A Delta table already exists at" in e and "declare the table EXTERNAL" in e, e
    assert "bad" not in tables_in_catalog(cur)
    assert DeltaTable(path).version() == 0


def test_managed_table_is_a_delta_table_deltalake_reads(server):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE sales (id INT, name STRING, amount DECIMAL(10,2), ok BOOLEAN, day DATE, "
                "seen TIMESTAMP, tags ARRAY<STRING>) PARTITIONED BY (region STRING) STORED BY DELTA")
    path = location_of(cur, "sales")
    try:
        dt = DeltaTable(path)
        assert dt.version() == 0
        assert dt.metadata().partition_columns == ["region"]
        assert dt.metadata().configuration.get("apiary.handler.op")
        assert [f.name for f in dt.schema().fields] == ["id", "name", "amount", "ok", "day", "seen", "tags",
                                                         "region"]
        cur.execute("INSERT INTO sales VALUES (1, 'a', 1.50, true, '2026-12-01', '2026-12-01 10:00:00', "
                    "array('x'), 'eu'), (2, 'O\\'Neil', -2.25, false, NULL, NULL, array(), 'us')")
        dt = DeltaTable(path)
        assert dt.version() == 1  # one INSERT, one commit
        got = sorted(dt.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
        assert got == [
            {"id": 1, "name": "a", "amount": decimal.Decimal("1.50"), "ok": True, "day": datetime.date(2026, 12, 1),
             "seen": datetime.datetime(2026, 12, 1, 10, 0), "tags": ["x"], "region": "eu"},
            {"id": 2, "name": "O'Neil", "amount": decimal.Decimal("-2.25"), "ok": False, "day": None,
             "seen": None, "tags": [], "region": "us"},
        ]
        # The Delta types of Hive's columns.
        types = {f.name: getattr(f.type, "type", None) for f in dt.schema().fields}
        assert types == {"id": "integer", "name": "string", "amount": "decimal(10,2)", "ok": "boolean",
                         "day": "date", "seen": "timestamp_ntz", "tags": "array", "region": "string"}
        assert dt.schema().fields[6].type.element_type.type == "string"
        # Rows `deltalake` appends are Apiary's to read.
        write_deltalake(path, pa.table({
            "id": pa.array([3], pa.int32()), "name": pa.array(["c"]),
            "amount": pa.array([decimal.Decimal("0.01")], pa.decimal128(10, 2)), "ok": pa.array([None], pa.bool_()),
            "day": pa.array([None], pa.date32()), "seen": pa.array([None], pa.timestamp("us")),
            "tags": pa.array([None], pa.list_(pa.string())), "region": pa.array(["eu"])}), mode="append")
        assert rows(cur, "SELECT id, region FROM sales WHERE region = 'eu' ORDER BY id") == [(1, "eu"), (3, "eu")]
        # OVERWRITE replaces every row in one more commit; time travel still finds the old ones.
        time.sleep(0.05)  # versions 2 and 3 apart in time, for FOR SYSTEM_TIME AS OF below
        cur.execute("INSERT OVERWRITE TABLE sales SELECT id + 10, name, amount, ok, day, seen, tags, region "
                    "FROM sales WHERE id < 3")
        dt = DeltaTable(path)
        assert dt.version() == 3
        assert sorted(r["id"] for r in dt.to_pyarrow_table().to_pylist()) == [11, 12]
        assert sorted(r["id"] for r in DeltaTable(path, version=2).to_pyarrow_table().to_pylist()) == [1, 2, 3]
        assert rows(cur, "SELECT count(*) FROM sales") == [(2,)]
        # Time travel, Hive's syntax: the same rows as `deltalake`'s `version=`.
        for v in range(4):
            expected = sorted(r["id"] for r in DeltaTable(path, version=v).to_pyarrow_table().to_pylist())
            got = [r[0] for r in rows(cur, f"SELECT id FROM sales FOR SYSTEM_VERSION AS OF {v} ORDER BY id")]
            assert got == expected, v
        assert rows(cur, "SELECT sales.id FROM sales FOR SYSTEM_VERSION AS OF 1 WHERE sales.region = 'us'") == [(2,)]
        # A view keeps reading the version its text names.
        cur.execute("CREATE VIEW sales_v1 AS SELECT id FROM sales FOR SYSTEM_VERSION AS OF 1")
        try:
            expected = sorted(r["id"] for r in DeltaTable(path, version=1).to_pyarrow_table().to_pylist())
            assert [r[0] for r in rows(cur, "SELECT id FROM sales_v1 ORDER BY id")] == expected
        finally:
            cur.execute("DROP VIEW sales_v1")
        # FOR SYSTEM_TIME AS OF: the last commit at or before the time (UTC).
        commits = {c["version"]: c["timestamp"] for c in DeltaTable(path).history()}
        # A time between the commits of versions 2 and 3, whichever clock dates a commit (the
        # writer's timestamp in the log, or the commit file's modification time).
        def dated(v):
            mtime = os.stat(os.path.join(path, "_delta_log", f"{v:020d}.json")).st_mtime_ns
            return [commits[v], mtime // 1_000_000, -(-mtime // 1_000_000)]
        ms = (max(dated(2)) + min(dated(3))) // 2
        assert max(dated(2)) < ms < min(dated(3)), (dated(2), dated(3))
        at = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc).replace(
            microsecond=(ms % 1000) * 1000)
        text = at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        got = [r[0] for r in rows(cur, f"SELECT id FROM sales FOR SYSTEM_TIME AS OF '{text}' ORDER BY id")]
        assert got == [1, 2, 3]
        # The text is read in the session's time zone (hive.local.time.zone).
        from zoneinfo import ZoneInfo
        cur.execute("SET hive.local.time.zone=Asia/Tokyo")
        tokyo = at.astimezone(ZoneInfo("Asia/Tokyo")).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        got = [r[0] for r in rows(cur, f"SELECT id FROM sales FOR SYSTEM_TIME AS OF '{tokyo}' ORDER BY id")]
        assert got == [1, 2, 3]
        # The UTC text, read in Tokyo, is nine hours before the first commit.
        assert "has no version at or before" in error_of(
            cur, f"SELECT id FROM sales FOR SYSTEM_TIME AS OF '{text}'")
        cur.execute("SET hive.local.time.zone=LOCAL")
        e = error_of(cur, "SELECT * FROM sales FOR SYSTEM_VERSION AS OF 9")
        assert "9" in e, e
        # Before the first commit there is no state to read (deltalake alone would give version 0).
        e = error_of(cur, "SELECT * FROM sales FOR SYSTEM_TIME AS OF '2000-01-01 00:00:00'")
        assert "has no version at or before 2000-01-01 00:00:00.000" in e, e
        # A value that does not fit its column is NULL, as its CAST is (Hive's rule for INSERT).
        cur.execute("INSERT INTO sales SELECT 5, 'x', 123456789012.5, true, NULL, NULL, NULL, 'eu'")
        assert DeltaTable(path).version() == 4
        assert rows(cur, "SELECT amount, CAST(123456789012.5 AS DECIMAL(10,2)) FROM sales WHERE id = 5") == [
            (None, None)]
        # A failing row fails the INSERT, and it commits nothing.
        e = error_of(cur, "INSERT INTO sales SELECT 6, 'x', 1.5, assert_true(false), NULL, NULL, NULL, 'eu'")
        assert e
        assert DeltaTable(path).version() == 4
    finally:
        cur.execute("DROP TABLE sales")
    # DROP of the managed table deletes the Delta table it created.
    assert not os.path.exists(path)


def test_insert_into_partitions_static_and_dynamic(server):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE parts (id INT, v STRING) PARTITIONED BY (region STRING) STORED BY DELTA")
    path = location_of(cur, "parts")
    try:
        cur.execute("INSERT INTO parts PARTITION (region = 'eu') VALUES (1, 'a'), (2, 'b')")
        cur.execute("INSERT INTO parts PARTITION (region) VALUES (3, 'c', 'us'), (4, 'd', 'apac')")
        cur.execute("INSERT INTO parts VALUES (5, 'e', 'us')")
        assert rows(cur, "SELECT region, count(*) FROM parts GROUP BY region ORDER BY region") == [
            ("apac", 1), ("eu", 2), ("us", 2)]
        # OVERWRITE of one partition replaces its rows only, in one commit.
        before = DeltaTable(path).version()
        cur.execute("INSERT OVERWRITE TABLE parts PARTITION (region = 'eu') SELECT 10, 'z'")
        assert DeltaTable(path).version() == before + 1
        assert rows(cur, "SELECT id, region FROM parts ORDER BY id") == [
            (3, "us"), (4, "apac"), (5, "us"), (10, "eu")]
        # Dynamic: the partitions the rows fall in are replaced, the others kept.
        cur.execute("INSERT OVERWRITE TABLE parts PARTITION (region) SELECT 20, 'y', 'us'")
        assert rows(cur, "SELECT id, region FROM parts ORDER BY id") == [(4, "apac"), (10, "eu"), (20, "us")]
        # `deltalake` reads the same rows.
        got = sorted((r["id"], r["region"]) for r in DeltaTable(path).to_pyarrow_table().to_pylist())
        assert got == [(4, "apac"), (10, "eu"), (20, "us")]
        e = error_of(cur, "INSERT INTO parts PARTITION (v = 'x') SELECT 1, 'eu'")
        assert "v" in e, e
    finally:
        cur.execute("DROP TABLE parts")


def test_create_table_as_select(server):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE ctas PARTITIONED BY (region) STORED BY DELTA AS "
                "SELECT 1 AS id, 'eu' AS region, 2.5 AS amount UNION ALL SELECT 2, 'us', 3.5")
    path = location_of(cur, "ctas")
    try:
        assert [(r[0], r[1]) for r in rows(cur, "DESCRIBE ctas")] == [
            ("id", "int"), ("amount", "decimal(2,1)"), ("region", "string")]
        dt = DeltaTable(path)
        assert dt.metadata().partition_columns == ["region"]
        assert dt.version() == 1  # the CREATE, then the rows in one commit
        assert sorted((r["id"], r["region"]) for r in dt.to_pyarrow_table().to_pylist()) == [(1, "eu"), (2, "us")]
    finally:
        cur.execute("DROP TABLE ctas")
    # A CTAS whose rows fail leaves no table and no Delta table behind.
    e = error_of(cur, "CREATE TABLE ctas_bad STORED BY DELTA AS SELECT assert_true(false) AS x")
    assert e
    assert "ctas_bad" not in tables_in_catalog(cur)
    assert not os.path.exists(path.replace("/ctas", "/ctas_bad"))
    e = error_of(cur, "CREATE EXTERNAL TABLE ctas_ext STORED BY DELTA LOCATION '/tmp/x' AS SELECT 1 AS id")
    assert "CREATE-TABLE-AS-SELECT" in e.upper() or "10071" in e or "external" in e.lower(), e


def test_show_create_table_round_trips(server):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE rt (id INT, name STRING) PARTITIONED BY (region STRING) STORED BY DELTA")
    ddl = "\n".join(r[0] for r in rows(cur, "SHOW CREATE TABLE rt"))
    assert "PARTITIONED BY ( \n  `region` string)" in ddl, ddl
    assert "apiary.partition.columns" not in ddl, ddl
    described = [r for r in rows(cur, "DESCRIBE FORMATTED rt") if r[1] and r[1].strip().startswith("delta.")]
    assert [(r[1].strip(), r[2].strip()) for r in described] == [("delta.partitionColumns", "region"),
                                                                 ("delta.version", "0")]
    cur.execute("DROP TABLE rt")
    cur.execute(ddl)
    again = "\n".join(r[0] for r in rows(cur, "SHOW CREATE TABLE rt"))
    drop_volatile = lambda d: [l for l in d.split("\n") if "apiary.handler.op" not in l and "transient" not in l]
    assert drop_volatile(again) == drop_volatile(ddl)
    cur.execute("DROP TABLE rt")


def test_drop_keeps_a_delta_table_the_table_did_not_create(server, folder):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE owned (id INT) STORED BY DELTA")
    path = location_of(cur, "owned")
    # Someone replaces the folder with another Delta table: DROP must not delete it.
    shutil.rmtree(path)
    write_deltalake(path, pa.table({"id": pa.array([7], pa.int32())}))
    cur.execute("DROP TABLE owned")
    assert DeltaTable(path).to_pyarrow_table().to_pylist() == [{"id": 7}]
    shutil.rmtree(path)


def create_sql(external, path):
    kind = "EXTERNAL TABLE" if external else "TABLE"
    return f"CREATE {kind} t (id INT, v STRING) STORED BY DELTA LOCATION '{path}'"


def is_delta(path):
    return os.path.isdir(os.path.join(path, "_delta_log"))


@pytest.mark.parametrize("case", SETTLE_CASES)
def test_interrupted_or_failing_ddl_settles_without_a_restart(folder, case):
    path = os.path.join(folder, "t")
    ddl_settles_without_a_restart(case, create_sql(False, path), lambda: is_delta(path))


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", CREATE_POINTS)
def test_crash_during_create_leaves_both_sides_consistent(folder, point, external):
    path = os.path.join(folder, "t")
    if external:
        write_deltalake(path, pa.table({"id": pa.array([1], pa.int32()), "v": pa.array(["x"])}))
    data = crash_at(point, create_sql(external, path))
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        decided = point in ("create.after_catalog", "create.after_commit_hook")
        assert ("t" in tables_in_catalog(cur)) == decided, point
        assert metastore(srv) == (["t"] if decided else [], 0)
        # Managed: the Delta table exists exactly when the catalog has the table. External:
        # it was there before and stays, untouched.
        assert is_delta(path) == (decided or external), point
        if external:
            assert DeltaTable(path).version() == 0
        if decided:
            assert rows(cur, "SELECT count(*) FROM t") == [(1 if external else 0,)]
            cur.execute("DROP TABLE t")
        cur.execute(create_sql(external, path))
        assert "t" in tables_in_catalog(cur) and is_delta(path)
        cur.execute("DROP TABLE t")
        assert is_delta(path) == external
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", DROP_POINTS)
def test_crash_during_drop_leaves_both_sides_consistent(folder, point, external):
    path = os.path.join(folder, "t")
    if external:
        write_deltalake(path, pa.table({"id": pa.array([], pa.int32()), "v": pa.array([], pa.string())}))
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(create_sql(external, path))
        cur.execute("INSERT INTO t VALUES (1, 'one')")
    finally:
        srv.stop()
    crash_at(point, "DROP TABLE t", data)
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        dropped = point != "drop.after_intent"
        assert ("t" in tables_in_catalog(cur)) == (not dropped), point
        assert metastore(srv) == ([] if dropped else ["t"], 0)
        assert is_delta(path) == (external or not dropped), point
        if not dropped:
            assert rows(cur, "SELECT v FROM t") == [("one",)]
        if external:
            assert DeltaTable(path).to_pyarrow_table().to_pylist() == [{"id": 1, "v": "one"}]
        cur.execute("DROP TABLE IF EXISTS t")
        assert is_delta(path) == external
        # Nothing the drop renamed away is left beside the folder.
        assert [n for n in os.listdir(folder) if n.startswith(".apiary-dropped-")] == []
        cur.execute(create_sql(external, path))
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)


def test_kill_during_insert_leaves_the_old_rows_and_the_retry_adds_the_new_once(folder):
    path = os.path.join(folder, "t")
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(f"CREATE TABLE t (id INT, v STRING) STORED BY DELTA LOCATION '{path}'")
        cur.execute("INSERT INTO t VALUES (1, 'old'), (2, 'old')")
    finally:
        srv.stop()
    # Every row went to the writer, its data files are written or being written: the server
    # dies before the commit.
    crash_at("insert.rows_sent", "INSERT INTO t SELECT id + 100, 'new' FROM t", data)
    assert DeltaTable(path).version() == 1
    assert sorted(r["id"] for r in DeltaTable(path).to_pyarrow_table().to_pylist()) == [1, 2]
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        assert rows(cur, "SELECT id, v FROM t ORDER BY id") == [(1, "old"), (2, "old")]
        cur.execute("INSERT INTO t SELECT id + 100, 'new' FROM t")
        assert rows(cur, "SELECT id FROM t ORDER BY id") == [(1,), (2,), (101,), (102,)]
        assert DeltaTable(path).version() == 2
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)


def txn_actions(path):
    """The application transactions (Delta `txn` actions) the table's log records."""
    import json
    log = os.path.join(path, "_delta_log")
    out = []
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        with open(os.path.join(log, name)) as f:
            out += [json.loads(line)["txn"] for line in f if '"txn"' in line]
    return out


def test_a_retried_insert_with_an_application_transaction_commits_once(folder):
    path = os.path.join(folder, "t")
    app = ["SET spark.databricks.delta.write.txnAppId=loader-7", "SET spark.databricks.delta.write.txnVersion=1"]
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(f"CREATE TABLE t (id INT, v STRING) STORED BY DELTA LOCATION '{path}'")
        for s in app:
            cur.execute(s)
        cur.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    finally:
        # The commit landed, and the server died before its client heard: kill -9.
        srv.proc.kill()
        srv.proc.wait(10)
        srv.stop()
    assert txn_actions(path) == [{"appId": "loader-7", "version": 1}]
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        for s in app:
            cur.execute(s)
        # The client runs the same INSERT again: nothing is committed twice.
        cur.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        assert DeltaTable(path).version() == 1
        assert sorted(r["id"] for r in DeltaTable(path).to_pyarrow_table().to_pylist()) == [1, 2]
        # The next transaction of the application commits.
        cur.execute("SET spark.databricks.delta.write.txnVersion=2")
        cur.execute("INSERT INTO t VALUES (3, 'c')")
        assert DeltaTable(path).version() == 2
        assert rows(cur, "SELECT id FROM t ORDER BY id") == [(1,), (2,), (3,)]
        assert txn_actions(path)[-1] == {"appId": "loader-7", "version": 2}
        # Half a transaction is an error, and writes nothing.
        cur.execute("SET spark.databricks.delta.write.txnVersion=")
        assert "spark.databricks.delta.write.txnAppId and spark.databricks.delta.write.txnVersion are set " \
               "together" in error_of(cur, "INSERT INTO t VALUES (4, 'd')")
        assert DeltaTable(path).version() == 2
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)


def test_apiary_and_deltalake_appending_at_once_lose_and_double_nothing(server, folder):
    import threading
    path = os.path.join(folder, "shared")
    cur = clients.pyhive_none(server).cursor()
    cur.execute(f"CREATE TABLE shared (id INT, who STRING) STORED BY DELTA LOCATION '{path}'")
    rounds = 8
    failures = []

    def outside():
        try:
            for i in range(rounds):
                write_deltalake(path, pa.table({"id": pa.array([1000 + i], pa.int32()),
                                                "who": pa.array(["deltalake"])}), mode="append")
        except Exception as e:  # reported below
            failures.append(e)

    writer = threading.Thread(target=outside)
    writer.start()
    for i in range(rounds):
        cur.execute(f"INSERT INTO shared VALUES ({i}, 'apiary')")
    writer.join()
    assert failures == []
    try:
        got = rows(cur, "SELECT who, count(*), count(DISTINCT id) FROM shared GROUP BY who ORDER BY who")
        assert got == [("apiary", rounds, rounds), ("deltalake", rounds, rounds)]
        assert DeltaTable(path).version() == 2 * rounds
    finally:
        cur.execute("DROP TABLE shared")


def test_a_conflicting_commit_is_a_clear_retryable_error(folder):
    import threading
    path = os.path.join(folder, "t")
    # The server pauses between sending the rows and committing, so an outside overwrite lands
    # in between: it removed the file Apiary's INSERT OVERWRITE read and would remove, so that
    # commit must not go through.
    srv = Server("--hiveconf", "apiary.failpoints=insert.rows_sent=sleep(1500)")
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(f"CREATE TABLE t (id INT, v STRING) STORED BY DELTA LOCATION '{path}'")
        cur.execute("INSERT INTO t VALUES (0, 'old')")
        result = {}

        def overwrite():
            try:
                clients.pyhive_none(srv).cursor().execute("INSERT OVERWRITE TABLE t SELECT 1, 'apiary'")
            except Exception as e:  # checked below
                result["error"] = str(e)

        t = threading.Thread(target=overwrite)
        t.start()
        import time
        time.sleep(0.5)
        write_deltalake(path, pa.table({"id": pa.array([2], pa.int32()), "v": pa.array(["outside"])}),
                        mode="overwrite")
        t.join()
        e = result.get("error", "")
        assert "this INSERT wrote nothing and can be run again" in e, e
        # The outside writer's rows are there, Apiary's are not: nothing half-written.
        assert rows(cur, "SELECT id, v FROM t") == [(2, "outside")]
        cur.execute("INSERT OVERWRITE TABLE t SELECT 1, 'apiary'")
        assert rows(cur, "SELECT id, v FROM t") == [(1, "apiary")]
    finally:
        srv.stop()
        shutil.rmtree(srv.data, ignore_errors=True)
