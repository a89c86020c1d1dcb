"""HBase-style tables through the HBASE storage handler on Google's Bigtable emulator, checked
with an independent client (Python's google-cloud-bigtable): the cells Apiary writes are the
cells Hive writes (text and binary encodings, family maps, timestamps), rows written outside
Apiary read back, conditions on the row key become row ranges (EXPLAIN, and the rows the
emulator returned), the rejected DDL with their texts, and crash tests at every fail point of
CREATE and DROP."""

import datetime
import decimal
import os
import re
import shutil
import sqlite3
import struct
import tempfile

import pytest
from google.cloud import bigtable
from google.cloud.bigtable import column_family

import clients
from conftest import BigtableEmulator, Server
from handler_checks import (CREATE_POINTS, DROP_POINTS, SETTLE_CASES, crash_at, ddl_settles_without_a_restart,
                            error_of, metastore, rows, tables_in_catalog)

CLASS = "org.apache.hadoop.hive.hbase.HBaseStorageHandler"
WHERE = "TBLPROPERTIES ('google.bigtable.project.id' = 'p', 'google.bigtable.instance.id' = 'i')"
UTC = datetime.timezone.utc


@pytest.fixture(scope="module")
def emulator():
    e = BigtableEmulator()
    yield e
    e.stop()


@pytest.fixture(scope="module")
def bt(emulator):
    """The emulator's instance, through Google's own client."""
    os.environ["BIGTABLE_EMULATOR_HOST"] = emulator.host
    try:
        yield bigtable.Client(project="p", admin=True).instance("i")
    finally:
        os.environ.pop("BIGTABLE_EMULATOR_HOST", None)


@pytest.fixture(scope="module")
def srv(emulator):
    s = Server(env=emulator.env())
    yield s
    assert s.alive(), "server died during the tests:\n" + s.server_log()[-3000:]
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


@pytest.fixture()
def cur(srv):
    return clients.pyhive_none(srv).cursor()


def families(bt, name):
    t = bt.table(name)
    return sorted(t.list_column_families()) if t.exists() else None


def cells(bt, name, key):
    """Every cell of a row: {(family, qualifier): value} (newest version)."""
    row = bt.table(name).read_row(key)
    return {(f, q): cs[0].value for f, qs in row.cells.items() for q, cs in qs.items()} if row else {}


def make_table(bt, name, fams):
    t = bt.table(name)
    if t.exists():
        t.delete()
    t.create(column_families={f: column_family.MaxVersionsGCRule(1) for f in fams})
    return t


def put(table, key, values, ts=None):
    r = table.direct_row(key)
    for (f, q), v in values.items():
        r.set_cell(f, q, v, timestamp=ts)
    r.commit()


def test_managed_table_writes_the_cells_hive_writes(cur, bt):
    cur.execute(
        "CREATE TABLE hw (k STRING, s STRING, i INT, bi INT, d DOUBLE, ok BOOLEAN, f FLOAT, m MAP<STRING,INT>, "
        "p MAP<STRING,STRING>, arr ARRAY<STRING>, ts TIMESTAMP, dec DECIMAL(10,2), bin BINARY, dt DATE) "
        f"STORED BY '{CLASS}' WITH SERDEPROPERTIES ('hbase.columns.mapping' = "
        "':key,cf:s,cf:i,cf:bi#b,cf:d#b,cf:ok#b,cf:f,mf:,cf:p_.*,cf:arr,cf:ts,cf:dec,cf:bin,cf:dt') " + WHERE)
    try:
        fams = families(bt, "hw")
        # One family per mapped family, and the tag naming the CREATE.
        assert [f for f in fams if not f.startswith("apiary-op-")] == ["cf", "mf"]
        assert len([f for f in fams if f.startswith("apiary-op-")]) == 1
        cur.execute("INSERT INTO hw VALUES ('r1', 'one', 7, -2, 1.5, true, 0.25, map('a', 1, 'b', 2), "
                    "map('p_x', 'X'), array('a', 'b'), CAST('2026-12-01 10:00:00.5' AS TIMESTAMP), 12.3, "
                    "CAST('hi' AS BINARY), DATE '2026-12-01'), "
                    "('r2', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DATE '1999-01-02')")
        got = cells(bt, "hw", b"r1")
        assert got == {
            ("cf", b"s"): b"one",
            ("cf", b"i"): b"7",                                 # text: the value as Hive prints it
            ("cf", b"bi"): struct.pack(">i", -2),               # #b: Bytes.toBytes(int)
            ("cf", b"d"): struct.pack(">d", 1.5),
            ("cf", b"ok"): b"\x01",                             # a binary boolean is one byte, 1
            ("cf", b"f"): b"0.25",
            ("mf", b"a"): b"1",                                 # a family map: one cell per entry
            ("mf", b"b"): b"2",
            ("cf", b"p_x"): b"X",
            ("cf", b"arr"): b"a\x02b",                          # LazySimpleSerDe's separators
            ("cf", b"ts"): b"2026-12-01 10:00:00.5",
            ("cf", b"dec"): b"12.30",
            ("cf", b"bin"): b"aGk=",                            # binary as text: Base64
            ("cf", b"dt"): b"2026-12-01",
        }
        # NULLs are no cells.
        assert cells(bt, "hw", b"r2") == {("cf", b"dt"): b"1999-01-02"}
        assert rows(cur, "SELECT * FROM hw ORDER BY k") == [
            ("r1", "one", 7, -2, 1.5, True, 0.25, '{"a":1,"b":2}', '{"p_x":"X"}', '["a","b"]',
             datetime.datetime(2026, 12, 1, 10, 0, 0, 500000), decimal.Decimal("12.30"), b"hi", "2026-12-01"),
            ("r2", None, None, None, None, None, None, "{}", "{}", None, None, None, None, "1999-01-02"),
        ]
    finally:
        cur.execute("DROP TABLE hw")
    assert families(bt, "hw") is None


def test_binary_keys_and_the_table_default_storage(cur, bt):
    cur.execute(f"CREATE TABLE hb (k BIGINT, n INT, s STRING, m MAP<INT,DOUBLE>) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:n#s,cf:s,cf2:', "
                "'hbase.table.default.storage.type' = 'binary') " + WHERE)
    try:
        cur.execute("INSERT INTO hb VALUES (5, 42, 'x', map(1, 0.5)), (-1, NULL, 'y', NULL)")
        assert cells(bt, "hb", struct.pack(">q", 5)) == {
            ("cf", b"n"): b"42",                      # #s beats the table default
            ("cf", b"s"): b"x",                       # strings are text whatever the default
            ("cf2", struct.pack(">i", 1)): struct.pack(">d", 0.5),
        }
        assert cells(bt, "hb", struct.pack(">q", -1)) == {("cf", b"s"): b"y"}
        # Binary keys sort as bytes: -1 (0xff..) after 5, as HBase orders them.
        assert [r[0] for r in rows(cur, "SELECT k FROM hb")] == [5, -1]
        assert rows(cur, "SELECT k, n, s, m FROM hb WHERE k = 5") == [(5, 42, "x", '{1:0.5}')]
    finally:
        cur.execute("DROP TABLE hb")


def test_cells_take_the_rows_timestamp(cur, bt):
    cur.execute(f"CREATE TABLE timed (k STRING, v STRING, w STRING, ts BIGINT) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v,cf:w,:timestamp') " + WHERE)
    fixed = None
    try:
        before = datetime.datetime.now(UTC) - datetime.timedelta(seconds=5)
        cur.execute("INSERT INTO timed VALUES ('a', 'x', 'y', 1764583200123), ('b', 'z', NULL, NULL)")
        row = bt.table("timed").read_row(b"a")
        # The :timestamp value (HBase's milliseconds) is every cell's time; it is no cell.
        stamps = {q: cs[0].timestamp for q, cs in row.cells["cf"].items()}
        assert stamps == {b"v": datetime.datetime(2025, 12, 1, 10, 0, 0, 123000, tzinfo=UTC),
                          b"w": datetime.datetime(2025, 12, 1, 10, 0, 0, 123000, tzinfo=UTC)}
        # NULL: the server's time.
        assert bt.table("timed").read_row(b"b").cells["cf"][b"v"][0].timestamp >= before
        assert rows(cur, "SELECT k, ts FROM timed WHERE k = 'a'") == [("a", 1764583200123)]
        # hbase.put.timestamp gives every cell of the INSERT its time.
        cur.execute(f"CREATE TABLE fixed (k STRING, v STRING) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
                    "('hbase.columns.mapping' = ':key,cf:v', 'hbase.put.timestamp' = '1000') " + WHERE)
        fixed = "fixed"
        cur.execute("INSERT INTO fixed VALUES ('a', 'x')")
        assert bt.table("fixed").read_row(b"a").cells["cf"][b"v"][0].timestamp == \
            datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)
    finally:
        cur.execute("DROP TABLE timed")
        if fixed:
            cur.execute("DROP TABLE fixed")


def test_rows_written_outside_are_read_back(cur, bt):
    t = make_table(bt, "outside", ["cf", "tags", "other"])
    t1 = datetime.datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
    t2 = datetime.datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)
    put(t, b"a", {("cf", b"n"): b"12", ("cf", b"d"): struct.pack(">d", 2.5), ("tags", b"x"): b"1",
                  ("tags", b"y"): b"2", ("cf", b"pre_1"): b"p1", ("cf", b"pre_2"): b"p2",
                  ("other", b"z"): b"ignored"}, ts=t1)
    put(t, b"a", {("cf", b"n"): b"13"}, ts=t2)                       # a newer version
    put(t, b"b", {("cf", b"n"): b"not a number", ("tags", b"bad"): b"x"}, ts=t1)
    put(t, b"c", {("other", b"z"): b"only a family no column maps"}, ts=t1)
    cur.execute(f"CREATE EXTERNAL TABLE outside (k STRING, n INT, d DOUBLE, tags MAP<STRING,INT>, "
                f"pre MAP<STRING,STRING>, ts BIGINT, tt TIMESTAMP) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
                "('hbase.columns.mapping' = ':key,cf:n,cf:d#b,tags:,cf:pre_.*,:timestamp,:timestamp', "
                "'hbase.columns.mapping.prefix.hide' = 'true') " + WHERE)
    try:
        ms1, ms2 = int(t1.timestamp() * 1000), int(t2.timestamp() * 1000)
        assert rows(cur, "SELECT * FROM outside ORDER BY k") == [
            # The newest version; a map entry that is no INT is NULL; the prefix is hidden; the
            # timestamp is the newest of the row's mapped cells.
            ("a", 13, 2.5, '{"x":1,"y":2}', '{"1":"p1","2":"p2"}', ms2, datetime.datetime(2026, 12, 2, 10, 0)),
            ("b", None, None, '{"bad":null}', "{}", ms1, datetime.datetime(2026, 12, 1, 10, 0)),
            # A row none of whose cells is mapped is still a row.
            ("c", None, None, "{}", "{}", None, None),
        ]
        assert rows(cur, "SELECT count(*) FROM outside") == [(3,)]
        assert rows(cur, "SELECT k FROM outside WHERE n IS NULL ORDER BY k") == [("b",), ("c",)]
        # Rows added outside are seen at once.
        put(t, b"d", {("cf", b"n"): b"4"})
        assert rows(cur, "SELECT n FROM outside WHERE k = 'd'") == [(4,)]
        cur.execute("DROP TABLE outside")
        assert families(bt, "outside") == ["cf", "other", "tags"]      # external: kept
    finally:
        cur.execute("DROP TABLE IF EXISTS outside")
        t.delete()


def test_keys_that_are_no_text_and_hidden_prefixes(cur, bt):
    t = make_table(bt, "raw", ["cf"])
    put(t, b"\x80\x01", {("cf", b"v"): b"1"})
    put(t, b"ok", {("cf", b"v"): b"2"})
    cur.execute(f"CREATE EXTERNAL TABLE raw_text (k STRING, v INT) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
                "('hbase.columns.mapping' = ':key,cf:v', 'hbase.table.name' = 'raw') " + WHERE)
    cur.execute(f"CREATE EXTERNAL TABLE raw_bytes (k BINARY, v INT) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
                "('hbase.columns.mapping' = ':key#b,cf:v', 'hbase.table.name' = 'raw') " + WHERE)
    try:
        # A STRING key whose bytes are no UTF-8 text is an error, not a key read differently
        # from the byte ranges its conditions became; as BINARY it reads byte for byte.
        assert "is not UTF-8 text: declare the key column k BINARY" in error_of(cur, "SELECT * FROM raw_text")
        assert rows(cur, "SELECT hex(k), v FROM raw_bytes ORDER BY v") == [("8001", 1), ("6F6B", 2)]
    finally:
        cur.execute("DROP TABLE raw_text")
        cur.execute("DROP TABLE raw_bytes")
        t.delete()
    # A hidden prefix is put back on write, so what is written reads back under its column.
    cur.execute(f"CREATE TABLE hidden (k STRING, p MAP<STRING,STRING>) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
                "('hbase.columns.mapping' = ':key,cf:tag_.*', 'hbase.columns.mapping.prefix.hide' = 'true') " + WHERE)
    try:
        cur.execute("INSERT INTO hidden VALUES ('a', map('x', '1', 'y', '2'))")
        assert cells(bt, "hidden", b"a") == {("cf", b"tag_x"): b"1", ("cf", b"tag_y"): b"2"}
        assert rows(cur, "SELECT p FROM hidden") == [('{"x":"1","y":"2"}',)]
    finally:
        cur.execute("DROP TABLE hidden")


def scan_rows(srv, cur, sql):
    """The plan of `sql` (EXPLAIN ANALYZE: its HBase scan's metrics) and the number of rows its
    scan read from the emulator (the server logs it exactly; the metrics round)."""
    done = re.compile(r"HBase scan read its rows table=\S+ rows=(\d+)")

    def log():
        return re.sub(r"\x1b\[[0-9;]*m", "", srv.server_log())

    before = len(done.findall(log()))
    plan = "\n".join(r[-1] for r in rows(cur, "EXPLAIN ANALYZE " + sql))
    assert re.search(r"HBaseScan:[^\n]*metrics=\[output_rows=", plan), plan
    found = done.findall(log())
    assert len(found) == before + 1, found
    return plan, int(found[-1])


def test_key_conditions_become_row_ranges(srv, cur, bt):
    t = make_table(bt, "keyed", ["cf"])
    rws = []
    for i in range(1000):
        r = t.direct_row(f"r{i:04d}".encode())
        r.set_cell("cf", b"v", str(i).encode())
        rws.append(r)
    t.mutate_rows(rws)
    cur.execute(f"CREATE EXTERNAL TABLE keyed (k STRING, v INT) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') " + WHERE)
    try:
        plan = "\n".join(r[-1] for r in rows(cur, "EXPLAIN SELECT v FROM keyed WHERE k BETWEEN 'r0100' AND 'r0199'"))
        assert "row_ranges=[[r0100, r0199]]" in plan, plan
        cases = [
            ("k BETWEEN 'r0100' AND 'r0199'", 100, "row_ranges=[[r0100, r0199]]"),
            ("k >= 'r0990'", 10, "row_ranges=[[r0990, +inf)]"),
            ("k < 'r0005'", 5, "row_ranges=[(-inf, r0005)]"),
            ("k IN ('r0001', 'r0500', 'zzz')", 2, "row_keys=[r0001, r0500, zzz]"),
            ("k = 'r0042' AND v > 0", 1, "row_keys=[r0042]"),
            ("k LIKE 'r01%'", 100, "row_ranges=[[r01, r02)]"),
            ("k > 'r0500' AND k <= 'r0510' OR k = 'r0001'", 11, "row_keys=[r0001] row_ranges=[(r0500, r0510]]"),
            ("v < 10", 1000, "rows=all"),
            ("k < 'a' AND k > 'b'", 0, "rows=none"),
        ]
        for where, read, shown in cases:
            plan, n = scan_rows(srv, cur, f"SELECT count(*) FROM keyed WHERE {where}")
            assert shown in plan, (where, plan)
            assert n == read, (where, plan)
        # The answers are those of the same conditions over every row.
        for where, _, _ in cases:
            expect = sorted(i for i in range(1000) if eval_where(where, f"r{i:04d}", i))
            assert [r[0] for r in rows(cur, f"SELECT v FROM keyed WHERE {where} ORDER BY v")] == expect, where
        # Only the projected cells are read.
        plan, _ = scan_rows(srv, cur, "SELECT k FROM keyed WHERE k = 'r0001'")
        assert "columns=[]" in plan, plan
        # A LIMIT with no condition left above the scan is Bigtable's rows limit; with one, it
        # is not (the rows the condition keeps are not known before they are read).
        plan, n = scan_rows(srv, cur, "SELECT k FROM keyed LIMIT 5")
        assert "limit=5" in plan and n == 5, plan
        plan, n = scan_rows(srv, cur, "SELECT k FROM keyed WHERE v >= 990 LIMIT 5")
        assert "limit=" not in plan.split("HBaseScan:")[1] and n == 1000, plan
        assert len(rows(cur, "SELECT k FROM keyed WHERE v >= 990 LIMIT 5")) == 5
        assert rows(cur, "SELECT k FROM keyed LIMIT 0") == []
    finally:
        cur.execute("DROP TABLE keyed")
        t.delete()


def eval_where(where, k, v):
    """`where` (SQL over k and v) as Python, for the expected answers."""
    py = where.replace(" AND ", " and ").replace(" OR ", " or ").replace("=", "==").replace(">==", ">=") \
        .replace("<==", "<=").replace(" IN ", " in ")
    m = re.match(r"k BETWEEN '(\w+)' and '(\w+)'", py)
    if m:
        return m.group(1) <= k <= m.group(2)
    m = re.match(r"k LIKE '(\w+)%'", py)
    if m:
        return k.startswith(m.group(1))
    return eval(py, {}, {"k": k, "v": v})


def test_rejected_ddl_and_writes_have_hives_texts(cur, bt):
    make_table(bt, "exists_already", ["cf"])
    mapping = "WITH SERDEPROPERTIES ('hbase.columns.mapping' = '{}')"

    def create(cols, m, extra="", external=False, where=WHERE):
        return error_of(cur, f"CREATE {'EXTERNAL ' if external else ''}TABLE bad ({cols}) STORED BY '{CLASS}' "
                             f"{mapping.format(m) if m is not None else ''} {extra} {where}")

    serde = "org.apache.hadoop.hive.hbase.HBaseSerDe"
    cases = [
        (create("k STRING, v STRING", ":key,cf:v", extra="LOCATION '/tmp/x'"), "LOCATION may not be specified for HBase."),
        (create("k STRING, v STRING", None), "Error: hbase.columns.mapping missing for this HBase table."),
        (create("k STRING", ":key"), "Error: hbase.columns.mapping specifies only the HBase table row key. A valid "
                                     "Hive-HBase table must specify at least one additional column."),
        (create("k STRING, v STRING", ":key,cfv"), "Error: the HBase columns mapping contains a badly formed column "
                                                   "family, column qualifier specification."),
        # With no :key, the key is an implicit first column, which the count includes.
        (create("v STRING, w STRING", "cf:v,cf:w"), f"{serde}: columns has 2 elements while hbase.columns.mapping "
                                                    "has 3 elements (counting the key if implicit)"),
        (create("k STRING, v STRING, w STRING", ":key,:key,cf:w"), "names the row key :key 2 times"),
        (create("k STRING, m STRING", ":key,cf:"), f"{serde}: hbase column family 'cf' should be mapped to "
                                                   "Map<? extends LazyPrimitive<?, ?>,?>, that is the Key for the map "
                                                   "should be of primitive type, but is mapped to string"),
        (create("k STRING, t STRING", ":key,:timestamp"), f"{serde}: timestamp columns should be of timestamp or "
                                                          "bigint type, but is mapped to string"),
        (create("k STRING, v INT", ":key,cf:v#x"), "Error: A column storage specification is one of the following: "
                                                   "'-', a prefix of 'string', or a prefix of 'binary'. x is not a valid "
                                                   "storage option specification for v"),
        (create("k STRING, v STRING", ":key,cf:v", external=True), "HBase table bad doesn't exist while the table is "
                                                                  "declared as an external table."),
        (create("k STRING, v STRING", ":key,cf:v", where=""), "google.bigtable.project.id must be set"),
        (create("k STRING, v STRING", ":key,cf:v", extra="PARTITIONED BY (p STRING)"),
         f"PARTITIONED BY cannot be used with a table stored by {CLASS}"),
    ]
    for got, want in cases:
        assert want in got, (want, got)
    assert "'text' is not a valid specification for this table/serdes property." in error_of(
        cur, f"CREATE TABLE bad (k STRING, v INT) STORED BY '{CLASS}' WITH SERDEPROPERTIES "
             "('hbase.columns.mapping' = ':key,cf:v', 'hbase.table.default.storage.type' = 'text') " + WHERE)
    assert "Table exists_already already exists within HBase; use CREATE EXTERNAL TABLE instead to register it " \
           "in Hive." in error_of(cur, f"CREATE TABLE exists_already (k STRING, v STRING) STORED BY '{CLASS}' "
                                       "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') " + WHERE)
    assert "Column Family nope is not defined in hbase table exists_already" in error_of(
        cur, f"CREATE EXTERNAL TABLE exists_already (k STRING, v STRING) STORED BY '{CLASS}' "
             "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,nope:v') " + WHERE)
    # Nothing was created on either side.
    assert "bad" not in tables_in_catalog(cur) and "exists_already" not in tables_in_catalog(cur)
    assert families(bt, "bad") is None and families(bt, "exists_already") == ["cf"]
    # Writes.
    cur.execute(f"CREATE TABLE w (k STRING, v STRING) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') " + WHERE)
    try:
        assert "HBase row key cannot be NULL" in error_of(cur, "INSERT INTO w VALUES (NULL, 'x')")
        assert "INSERT OVERWRITE is not supported for a table stored by " + CLASS in error_of(
            cur, "INSERT OVERWRITE TABLE w VALUES ('a', 'x')")
        assert "No columns to insert" in error_of(cur, "INSERT INTO w VALUES ('a', NULL)")
        assert rows(cur, "SELECT count(*) FROM w") == [(0,)]
    finally:
        cur.execute("DROP TABLE w")
    bt.table("exists_already").delete()


def test_drop_deletes_only_the_table_its_create_made(cur, bt):
    cur.execute(f"CREATE TABLE mine (k STRING, v STRING) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') " + WHERE)
    # Someone replaces the Bigtable table behind the catalog's back: DROP keeps theirs.
    bt.table("mine").delete()
    t = make_table(bt, "mine", ["cf"])
    put(t, b"theirs", {("cf", b"v"): b"1"})
    cur.execute("DROP TABLE mine")
    assert families(bt, "mine") == ["cf"] and cells(bt, "mine", b"theirs") == {("cf", b"v"): b"1"}
    t.delete()
    # hbase.table.name names the Bigtable table; DESCRIBE FORMATTED shows it and its families.
    cur.execute(f"CREATE TABLE named (k STRING, v STRING) STORED BY '{CLASS}' "
                "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') "
                "TBLPROPERTIES ('hbase.table.name' = 'Elsewhere', 'google.bigtable.project.id' = 'p', "
                "'google.bigtable.instance.id' = 'i')")
    try:
        assert families(bt, "Elsewhere") is not None
        described = {(r[1] or "").strip(): (r[2] or "").strip() for r in rows(cur, "DESCRIBE FORMATTED named")}
        assert described["bigtable.table"] == "projects/p/instances/i/tables/Elsewhere"
        assert described["bigtable.column.families"].startswith("apiary-op-")
        # SHOW CREATE TABLE round-trips.
        text = "\n".join(r[0] for r in rows(cur, "SHOW CREATE TABLE named"))
        assert f"'{CLASS}'" in text and "'hbase.columns.mapping'=':key,cf:v'" in text, text
        cur.execute("DROP TABLE named")
        assert families(bt, "Elsewhere") is None
        cur.execute(text)
        again = "\n".join(r[0] for r in rows(cur, "SHOW CREATE TABLE named"))
        same = [line for line in text.splitlines() if "transient_lastDdlTime" not in line]
        assert [line for line in again.splitlines() if "transient_lastDdlTime" not in line] == same
        assert [f for f in families(bt, "Elsewhere") if not f.startswith("apiary-op-")] == ["cf"]
    finally:
        cur.execute("DROP TABLE named")
    assert families(bt, "Elsewhere") is None


def test_joins_across_hbase_delta_jdbc_and_native_tables(cur, bt):
    from deltalake import write_deltalake
    import pyarrow as pa

    folder = tempfile.mkdtemp(prefix="apiary-join-")
    try:
        write_deltalake(os.path.join(folder, "delta"), pa.table({"id": pa.array([1, 2, 3], pa.int32()),
                                                                 "city": ["Oslo", "Lima", "Pune"]}))
        db = os.path.join(folder, "remote.db")
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE prices (id INTEGER, price REAL)")
            c.executemany("INSERT INTO prices VALUES (?, ?)", [(1, 9.5), (2, 3.25), (3, 1.0)])
        t = make_table(bt, "people", ["cf"])
        for k, name in [(b"1", b"ann"), (b"2", b"bob"), (b"3", b"cy")]:
            put(t, k, {("cf", b"name"): name})
        cur.execute(f"CREATE EXTERNAL TABLE people (id STRING, name STRING) STORED BY '{CLASS}' "
                    "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:name') " + WHERE)
        cur.execute(f"CREATE EXTERNAL TABLE cities (id INT, city STRING) STORED BY DELTA "
                    f"LOCATION '{os.path.join(folder, 'delta')}'")
        cur.execute("CREATE EXTERNAL TABLE prices (id INT, price DOUBLE) STORED BY JDBC TBLPROPERTIES "
                    f"('hive.sql.database.type' = 'SQLITE', 'hive.sql.jdbc.url' = 'jdbc:sqlite:{db}', "
                    "'hive.sql.table' = 'prices')")
        cur.execute("CREATE TABLE visits (id INT, n INT) STORED AS PARQUET")
        cur.execute("INSERT INTO visits VALUES (1, 10), (2, 20), (3, 30)")
        assert rows(cur, "SELECT p.name, c.city, pr.price, v.n FROM people p "
                         "JOIN cities c ON CAST(p.id AS INT) = c.id JOIN prices pr ON pr.id = c.id "
                         "JOIN visits v ON v.id = pr.id WHERE p.id <= '2' ORDER BY p.name") == [
            ("ann", "Oslo", 9.5, 10), ("bob", "Lima", 3.25, 20)]
    finally:
        for name in ["people", "cities", "prices", "visits"]:
            cur.execute(f"DROP TABLE IF EXISTS {name}")
        if bt.table("people").exists():
            bt.table("people").delete()
        shutil.rmtree(folder, ignore_errors=True)


def create_sql(external):
    return (f"CREATE {'EXTERNAL ' if external else ''}TABLE t (k STRING, v STRING) STORED BY '{CLASS}' "
            "WITH SERDEPROPERTIES ('hbase.columns.mapping' = ':key,cf:v') " + WHERE)


@pytest.mark.parametrize("case", SETTLE_CASES)
def test_interrupted_or_failing_ddl_settles_without_a_restart(emulator, bt, case):
    try:
        ddl_settles_without_a_restart(case, create_sql(False), lambda: bt.table("t").exists(),
                                      env=emulator.env())
    finally:
        if bt.table("t").exists():
            bt.table("t").delete()


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", CREATE_POINTS)
def test_crash_during_create_leaves_both_sides_consistent(emulator, bt, point, external):
    if external:
        put(make_table(bt, "t", ["cf"]), b"there", {("cf", b"v"): b"before"})
    data = crash_at(point, create_sql(external), env=emulator.env())
    srv = Server(data=data, env=emulator.env())
    try:
        cur = clients.pyhive_none(srv).cursor()
        decided = point in ("create.after_catalog", "create.after_commit_hook")
        assert ("t" in tables_in_catalog(cur)) == decided, point
        assert metastore(srv) == (["t"] if decided else [], 0)
        # Managed: the Bigtable table exists exactly when the catalog has the table. External:
        # it was there before and stays, untouched.
        assert (families(bt, "t") is not None) == (decided or external), point
        if external:
            assert cells(bt, "t", b"there") == {("cf", b"v"): b"before"}
        if decided:
            assert rows(cur, "SELECT count(*) FROM t") == [(1 if external else 0,)]
            cur.execute("DROP TABLE t")
        cur.execute(create_sql(external))
        assert "t" in tables_in_catalog(cur) and families(bt, "t") is not None
        cur.execute("DROP TABLE t")
        assert (families(bt, "t") is not None) == external
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)
        if bt.table("t").exists():
            bt.table("t").delete()


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", DROP_POINTS)
def test_crash_during_drop_leaves_both_sides_consistent(emulator, bt, point, external):
    if external:
        make_table(bt, "t", ["cf"])
    srv = Server(env=emulator.env())
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(create_sql(external))
        cur.execute("INSERT INTO t VALUES ('a', 'one')")
    finally:
        srv.stop()
    crash_at(point, "DROP TABLE t", data, env=emulator.env())
    srv = Server(data=data, env=emulator.env())
    try:
        cur = clients.pyhive_none(srv).cursor()
        dropped = point != "drop.after_intent"
        assert ("t" in tables_in_catalog(cur)) == (not dropped), point
        assert metastore(srv) == ([] if dropped else ["t"], 0)
        assert (families(bt, "t") is not None) == (external or not dropped), point
        if not dropped:
            assert rows(cur, "SELECT v FROM t") == [("one",)]
        if external:
            assert cells(bt, "t", b"a") == {("cf", b"v"): b"one"}
        cur.execute("DROP TABLE IF EXISTS t")
        assert (families(bt, "t") is not None) == external
        cur.execute(create_sql(external))
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)
        if bt.table("t").exists():
            bt.table("t").delete()
