"""Arrow Flight SQL, the second front end on the same gateway, through real clients: ADBC's
Flight SQL driver (DB-API cursors, Arrow tables, object listings, bulk parameters) and a bare
pyarrow.flight client. Values are checked one by one against what a HiveServer2 client gets
for the same query; DDL and INSERT cross between the two front ends; errors carry the SQLSTATE
and Hive error code HiveServer2 gives them; cancel, refused tokens and vanished clients leave
the server as it was."""

import socket
import threading
import time

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import clients
import flight
import hive_types
from conftest import Server
from test_operations import ENDLESS, cpu_drops, execute


@pytest.fixture
def conn(server):
    c = flight.adbc_connect(server)
    yield c
    c.close()


def test_every_hive_type_matches_what_hs2_clients_get(server, conn):
    cur = conn.cursor()
    cur.execute(hive_types.query())
    table = cur.fetch_arrow_table()
    hs2 = clients.pyhive_none(server).cursor()
    hs2.execute(hive_types.query())
    hs2_rows = hs2.fetchall()
    assert table.num_rows == 2
    assert table.column("id").to_pylist() == [1, 2]
    for i, (name, _expr, _type, expected) in enumerate(hive_types.COLUMNS, start=1):
        values = table.column(name).to_pylist()
        # The same text as the HiveServer2 client's value, and as Hive's.
        assert flight.hive_text(values[0]) == hive_types.normalize(hs2_rows[0][i]) == expected, \
            (name, values[0], hs2_rows[0][i])
        assert values[1] is None and hs2_rows[1][i] is None, name


def test_hive_types_keep_their_meaning_in_arrow(conn):
    cur = conn.cursor()
    cur.execute(hive_types.query())
    schema = cur.fetch_arrow_table().schema
    t = {f.name: f.type for f in schema}
    assert t["c_tinyint"] == pa.int8() and t["c_smallint"] == pa.int16()
    assert t["c_int"] == pa.int32() and t["c_bigint"] == pa.int64()
    assert t["c_float"] == pa.float32() and t["c_double"] == pa.float64()
    assert t["c_decimal"] == pa.decimal128(10, 2)
    assert t["c_date"] == pa.date32()
    assert t["c_timestamp"] == pa.timestamp("us")
    assert pa.types.is_binary(t["c_binary"]) or pa.types.is_large_binary(t["c_binary"])
    assert pa.types.is_list(t["c_array"]) and t["c_array"].value_type == pa.int32()
    assert pa.types.is_map(t["c_map"])
    assert pa.types.is_struct(t["c_struct"])
    assert t["c_interval_ym"] == pa.month_day_nano_interval()
    assert t["c_interval_dt"] == pa.month_day_nano_interval()
    assert meta_of(schema, "c_interval_ym")["ARROW:FLIGHT:SQL:TYPE_NAME"] == "INTERVAL_YEAR_MONTH"
    meta = {f.name: {k.decode(): v.decode() for k, v in (f.metadata or {}).items()} for f in schema}
    assert meta["c_varchar"]["ARROW:FLIGHT:SQL:TYPE_NAME"] == "VARCHAR"
    assert meta["c_varchar"]["ARROW:FLIGHT:SQL:PRECISION"] == "10"
    assert meta["c_char"]["ARROW:FLIGHT:SQL:TYPE_NAME"] == "CHAR"
    assert meta["c_char"]["ARROW:FLIGHT:SQL:PRECISION"] == "5"
    assert meta["c_decimal"]["ARROW:FLIGHT:SQL:PRECISION"] == "10"
    assert meta["c_decimal"]["ARROW:FLIGHT:SQL:SCALE"] == "2"


def meta_of(schema, name):
    return {k.decode(): v.decode() for k, v in (schema.field(name).metadata or {}).items()}


def test_ddl_and_insert_cross_between_front_ends(server, conn):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS fx_cross")
    cur.execute("CREATE TABLE fx_cross (id INT, name STRING) STORED AS PARQUET")
    cur.execute("INSERT INTO fx_cross VALUES (1, 'from flight')")
    hs2 = clients.pyhive_none(server).cursor()
    hs2.execute("SELECT id, name FROM fx_cross")
    assert hs2.fetchall() == [(1, "from flight")]
    hs2.execute("INSERT INTO fx_cross VALUES (2, 'from hs2')")
    cur.execute("SELECT id, name FROM fx_cross ORDER BY id")
    assert cur.fetchall() == [(1, "from flight"), (2, "from hs2")]
    hs2.execute("CREATE TABLE fx_made_by_hs2 (x BIGINT)")
    cur.execute("SHOW TABLES")
    names = [r[0] for r in cur.fetchall()]
    assert "fx_cross" in names and "fx_made_by_hs2" in names
    cur.execute("DROP TABLE fx_made_by_hs2")
    hs2.execute("SHOW TABLES")
    assert "fx_made_by_hs2" not in [r[0] for r in hs2.fetchall()]
    cur.execute("DROP TABLE fx_cross")


def test_errors_have_hive_texts(conn):
    cur = conn.cursor()
    with pytest.raises(Exception) as e:
        cur.execute("SELECT * FROM no_such_table")
    assert "Table not found 'no_such_table'" in str(e.value)
    with pytest.raises(Exception) as e:
        cur.execute("CREATE TABLE bad (a INT, a STRING)")
    assert "Duplicate column name" in str(e.value) or "10036" in str(e.value)
    # The session still works.
    cur.execute("SELECT 2")
    assert cur.fetchall() == [(2,)]


class HeaderRecorder(fl.ClientMiddlewareFactory):
    """pyarrow.flight client middleware keeping, call by call, the metadata the server sent:
    the reply's headers, or its trailers when there were none (gRPC puts a failed call's status
    and its metadata in the trailers, and pyarrow hands those to the middleware)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def start_call(self, info):
        seen = {}
        self.calls.append(seen)
        return _Recorded(seen)


class _Recorded(fl.ClientMiddleware):
    """One call's metadata, as {key: [values]}."""

    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def received_headers(self, headers):
        for key, values in headers.items():
            self.seen.setdefault(key, []).extend(values)


def test_errors_carry_the_sqlstate_and_hive_code_hs2_gives(server):
    """A failed call's status carries the SQLSTATE and Hive's error code in its metadata
    (x-hive-sqlstate, x-hive-error-code): for a failing statement the same ones HiveServer2's
    TStatus has, for a refused token those of a refused login."""
    sql = "SELECT * FROM no_such_table"
    hs2 = clients.pyhive_none(server)
    st = execute(hs2._client, hs2._sessionHandle, sql, run_async=False).status
    hs2.close()
    assert (st.sqlState, st.errorCode) == ("42S02", 10001), st

    recorder = HeaderRecorder()
    client = fl.FlightClient(f"grpc://127.0.0.1:{server.flight_port}", middleware=[recorder])
    options = fl.FlightCallOptions(headers=[client.authenticate_basic_token("carol", "pw")])
    with pytest.raises(Exception) as e:  # pyarrow raises ArrowInvalid for INVALID_ARGUMENT
        info = client.get_flight_info(flight.statement_query(sql), options)
        client.do_get(info.endpoints[0].ticket, options).read_all()
    assert "Table not found 'no_such_table'" in str(e.value)
    failed = recorder.calls[-1]
    assert failed.get("x-hive-sqlstate") == [st.sqlState], failed
    assert failed.get("x-hive-error-code") == [str(st.errorCode)], failed

    # A forged bearer token, and none at all: Unauthenticated, with a refused login's SQLSTATE.
    forged = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + b"ab" * 32)])
    for call_options in (forged, fl.FlightCallOptions()):
        with pytest.raises(fl.FlightUnauthenticatedError):
            client.get_flight_info(flight.statement_query("SELECT 1"), call_options)
        refused = recorder.calls[-1]
        assert refused.get("x-hive-sqlstate") == ["08S01"], refused
        assert refused.get("x-hive-error-code") == ["0"], refused
    client.close()

    # ADBC's Flight SQL driver hands the status's metadata on as the error's details.
    conn = flight.adbc_connect(server)
    try:
        cur = conn.cursor()
        with pytest.raises(Exception) as e:
            cur.execute(sql)
            cur.fetchall()
        details = {
            (k.decode() if isinstance(k, bytes) else k): v
            for k, v in (getattr(e.value, "details", None) or [])
        }
        assert details.get("x-hive-sqlstate") == st.sqlState.encode(), e.value
        assert details.get("x-hive-error-code") == str(st.errorCode).encode(), e.value
    finally:
        conn.close()


def test_set_and_use_belong_to_the_session(server, conn):
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS fx_db")
    cur.execute("USE fx_db")
    cur.execute("CREATE TABLE here (a INT)")
    cur.execute("SET hivevar:n=41")
    cur.execute("SELECT ${hivevar:n} + 1 AS v")
    assert cur.fetchall() == [(42,)]
    cur.execute("SET my.flight.key=abc")
    cur.execute("SET my.flight.key")
    assert cur.fetchall() == [("my.flight.key=abc",)]
    cur.execute("SHOW TABLES")
    assert cur.fetchall() == [("here",)]
    # Another Flight connection is another session: its own database and variables.
    other = flight.adbc_connect(server)
    c2 = other.cursor()
    c2.execute("SET my.flight.key")
    assert c2.fetchall() != [("my.flight.key=abc",)]
    other.close()
    cur.execute("DROP DATABASE fx_db CASCADE")


def test_catalog_calls(server, conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE IF NOT EXISTS fx_cat (id BIGINT, v VARCHAR(12), d DECIMAL(8,3))")
    cur.execute("CREATE VIEW IF NOT EXISTS fx_cat_v AS SELECT id FROM fx_cat")
    types = conn.adbc_get_table_types()
    assert "TABLE" in types and "VIEW" in types
    schema = conn.adbc_get_table_schema("fx_cat", db_schema_filter="default")
    assert schema.names == ["id", "v", "d"]
    assert schema.field("id").type == pa.int64()
    assert schema.field("d").type == pa.decimal128(8, 3)
    objects = conn.adbc_get_objects(depth="all", table_name_filter="fx_cat%").read_all().to_pylist()
    found = {}
    for catalog in objects:
        for db in catalog["catalog_db_schemas"] or []:
            for t in db["db_schema_tables"] or []:
                found[(catalog["catalog_name"], db["db_schema_name"], t["table_name"])] = (
                    t["table_type"], [c["column_name"] for c in t["table_columns"] or []])
    assert found[("hive", "default", "fx_cat")] == ("TABLE", ["id", "v", "d"])
    assert found[("hive", "default", "fx_cat_v")][0] == "VIEW"
    dbs = conn.adbc_get_objects(depth="db_schemas").read_all().to_pylist()
    assert "default" in [d["db_schema_name"] for c in dbs for d in c["catalog_db_schemas"]]
    info = conn.adbc_get_info()
    assert "Apiary" in str(info.get("vendor_name", "")) or "Hive" in str(info.get("vendor_name", ""))
    cur.execute("DROP VIEW fx_cat_v")
    cur.execute("DROP TABLE fx_cat")


def test_bulk_and_bound_parameters(conn):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS fx_params")
    cur.execute("CREATE TABLE fx_params (id INT, name STRING, amount DOUBLE)")
    rows = [(i, f"n'{i}", i * 1.5) for i in range(5)]
    cur.executemany("INSERT INTO fx_params VALUES (?, ?, ?)", rows)
    cur.execute("SELECT id, name, amount FROM fx_params ORDER BY id")
    assert cur.fetchall() == rows
    cur.execute("SELECT name FROM fx_params WHERE id = ?", (3,))
    assert cur.fetchall() == [("n'3",)]
    cur.execute("DROP TABLE fx_params")


def test_get_flight_info_returns_promptly_and_cancel_stops_the_work(server):
    client, options = flight.flight_client(server)
    started = time.time()
    info = client.get_flight_info(flight.statement_query(ENDLESS), options)
    assert time.time() - started < 10, "GetFlightInfo waited for the query"
    assert info.schema.names == ["s"]
    reader = client.do_get(info.endpoints[0].ticket, options)
    got = {}

    def read():
        try:
            got["table"] = reader.read_all()
        except Exception as e:  # the cancel ends the stream with an error
            got["error"] = e

    t = threading.Thread(target=read)
    t.start()
    time.sleep(2.0)
    assert flight.cancel_flight_info(client, options, info) == 1
    t.join(30)
    assert not t.is_alive()
    assert "table" not in got or got["table"].num_rows == 0
    assert cpu_drops(server.proc.pid), "CPU still busy after CancelFlightInfo"
    client.close()


def test_adbc_cancel_of_a_long_query(server, conn):
    cur = conn.cursor()
    failure = {}

    def run():
        try:
            cur.execute(ENDLESS)
            cur.fetchall()
        except Exception as e:
            failure["error"] = e

    t = threading.Thread(target=run)
    t.start()
    time.sleep(2.0)
    cur.adbc_cancel()
    t.join(30)
    assert not t.is_alive() and "error" in failure
    assert cpu_drops(server.proc.pid), "CPU still busy after the ADBC cancel"
    cur2 = conn.cursor()
    cur2.execute("SELECT 1")
    assert cur2.fetchall() == [(1,)]


def test_tokens_are_checked(server):
    client = fl.FlightClient(f"grpc://127.0.0.1:{server.flight_port}")
    with pytest.raises(fl.FlightUnauthenticatedError):
        client.get_flight_info(flight.statement_query("SELECT 1"))
    forged = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + b"ab" * 32)])
    with pytest.raises(fl.FlightUnauthenticatedError):
        client.get_flight_info(flight.statement_query("SELECT 1"), forged)
    # A ticket of another session is not this session's to read.
    a, a_opts = flight.flight_client(server, user="a1")
    b, b_opts = flight.flight_client(server, user="b1")
    info = a.get_flight_info(flight.statement_query("SELECT 7 AS x"), a_opts)
    with pytest.raises(Exception) as e:
        b.do_get(info.endpoints[0].ticket, b_opts).read_all()
    assert "Invalid OperationHandle" in str(e.value)
    assert a.do_get(info.endpoints[0].ticket, a_opts).read_all().to_pylist() == [{"x": 7}]
    client.close()
    a.close()
    b.close()


def test_a_client_vanishing_mid_stream_leaves_nothing_behind():
    # Two open operations at most per session: leaked operations would refuse the next query.
    srv = Server("--hiveconf", "apiary.session.max.operations=2")
    try:
        client, options = flight.flight_client(srv)
        for _ in range(4):
            # Another connection carrying the same token.
            sub = fl.FlightClient(f"grpc://127.0.0.1:{srv.flight_port}")
            info = client.get_flight_info(
                flight.statement_query("SELECT value, CAST(value AS STRING) AS s FROM range(50000000)"),
                options)
            reader = sub.do_get(info.endpoints[0].ticket, options)
            reader.read_chunk()
            sub.close()  # the client goes away in the middle of the stream
            time.sleep(0.5)
        assert cpu_drops(srv.proc.pid), "work of vanished streams still running"
        info = client.get_flight_info(flight.statement_query("SELECT 42 AS v"), options)
        assert client.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"v": 42}]
        client.close()
        assert srv.alive()
    finally:
        srv.stop()


def test_flight_sql_can_be_turned_off():
    srv = Server("--hiveconf", "apiary.flightsql.enabled=false")
    try:
        assert srv.flight_port is None
        assert "Flight SQL endpoint" not in srv.server_log()
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
    finally:
        srv.stop()


def test_closing_a_connection_closes_its_session():
    # Two sessions per user at most: ADBC's CloseSession must free each one.
    srv = Server("--hiveconf", "hive.server2.limit.connections.per.user=2")
    try:
        for i in range(5):
            conn = flight.adbc_connect(srv, user="eve")
            cur = conn.cursor()
            cur.execute(f"SELECT {i} AS i")
            assert cur.fetchall() == [(i,)]
            cur.close()
            conn.close()
        # A bare client's token stops working once its session is closed.
        client, options = flight.flight_client(srv, user="eve")
        list(client.do_action(fl.Action("CloseSession", b""), options))
        with pytest.raises(fl.FlightUnauthenticatedError):
            client.get_flight_info(flight.statement_query("SELECT 1"), options)
        client.close()
    finally:
        srv.stop()


def test_connection_cap_and_silent_sockets():
    """Past the port's connection limit a new client is refused and the server goes on; a
    socket that never speaks loses its slot at the login timeout; a live client idle longer
    than the idle timeout keeps working (the server's pings, or a reconnect with its token)."""
    srv = Server("--hiveconf", "hive.server2.thrift.max.worker.threads=2",
                 "--hiveconf", "hive.server2.thrift.login.timeout=2s",
                 "--hiveconf", "apiary.connection.idle.timeout=3s")
    try:
        silent = [socket.create_connection(("127.0.0.1", srv.flight_port)) for _ in range(2)]
        time.sleep(0.3)
        with pytest.raises(fl.FlightError):
            client = fl.FlightClient(f"grpc://127.0.0.1:{srv.flight_port}")
            client.authenticate_basic_token("carol", "pw", fl.FlightCallOptions(timeout=5))
        # The silent sockets are closed by the server once the login timeout has passed.
        # (The server's HTTP/2 preface, SETTINGS, arrives first.)
        for s in silent:
            s.settimeout(10)
            while s.recv(4096):
                pass
            s.close()
        conn = flight.adbc_connect(srv)
        cur = conn.cursor()
        cur.execute("SELECT 1 AS one")
        assert cur.fetchall() == [(1,)]
        time.sleep(5)  # longer than the idle timeout, with nothing to send
        cur.execute("SELECT 2 AS two")
        assert cur.fetchall() == [(2,)]
        conn.close()
        assert srv.alive()
    finally:
        srv.stop()


def test_statements_without_rows_can_be_fetched(server, conn):
    # Generic tools (pandas, BI tools over ADBC) fetch after every statement: DDL, USE and
    # INSERT through CommandStatementQuery answer an empty result, and run exactly once
    # whether or not the client fetches.
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS fx_fetch_db")
    assert cur.fetch_arrow_table().num_rows == 0
    cur.execute("USE fx_fetch_db")
    assert cur.fetch_arrow_table().num_rows == 0
    cur.execute("CREATE TABLE src (id INT, name STRING)")
    assert cur.fetchall() == []
    cur.execute("INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    assert cur.fetch_arrow_table().num_rows == 0
    cur.execute("CREATE TABLE t2 STORED AS ORC AS SELECT id, name FROM src WHERE id > 1")
    table = cur.fetch_arrow_table()
    assert table.num_rows == 0
    cur.execute("INSERT INTO src VALUES (4, 'd')")  # not fetched
    cur.execute("SELECT count(*) FROM src")
    assert cur.fetchall() == [(4,)]
    cur.execute("SELECT id, name FROM t2 ORDER BY id")
    assert cur.fetchall() == [(2, "b"), (3, "c")]
    # The session's database is the one USE chose: HiveServer2 sees the same tables there.
    hs2 = clients.pyhive_none(server).cursor()
    hs2.execute("SELECT count(*) FROM fx_fetch_db.src")
    assert hs2.fetchall() == [(4,)]
    # A failed DDL is the execute's error, and nothing is left to fetch.
    with pytest.raises(Exception) as e:
        cur.execute("CREATE TABLE t2 (x INT)")
        cur.fetch_arrow_table()
    assert "already exists" in str(e.value)
    cur.execute("USE default")
    cur.fetch_arrow_table()
    cur.execute("DROP DATABASE fx_fetch_db CASCADE")
    assert cur.fetch_arrow_table().num_rows == 0


def test_pandas_read_sql_after_ddl(server):
    import pandas as pd
    conn = flight.adbc_connect(server)
    try:
        frame = pd.read_sql("CREATE TABLE IF NOT EXISTS fx_pandas (a INT)", conn)
        assert len(frame) == 0
        pd.read_sql("INSERT INTO fx_pandas VALUES (7)", conn)
        assert pd.read_sql("SELECT a FROM fx_pandas", conn)["a"].tolist() == [7]
        pd.read_sql("DROP TABLE fx_pandas", conn)
    finally:
        conn.close()


def test_command_statement_update_runs_ddl_and_dml(server):
    client, options = flight.flight_client(server)

    def update(sql):
        descriptor = fl.FlightDescriptor.for_command(flight.command("CommandStatementUpdate", (1, sql)))
        writer, reader = client.do_put(descriptor, pa.schema([]), options)
        writer.done_writing()
        reply = reader.read()
        writer.close()
        return reply

    update("CREATE TABLE fx_upd (id INT)")
    update("INSERT INTO fx_upd VALUES (1), (2)")
    hs2 = clients.pyhive_none(server).cursor()
    hs2.execute("SELECT count(*) FROM fx_upd")
    assert hs2.fetchall() == [(2,)]
    with pytest.raises(Exception) as e:  # pyarrow raises ArrowInvalid for INVALID_ARGUMENT
        update("CREATE TABLE fx_upd (id INT)")
    assert "AlreadyExistsException(message:Table hive.default.fx_upd already exists)" in str(e.value)
    update("DROP TABLE fx_upd")
    client.close()
