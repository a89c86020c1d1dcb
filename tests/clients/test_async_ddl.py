"""DDL as operations, through PyHive's TCLIService client: a `CREATE TABLE .. STORED BY JDBC`
whose remote CREATE waits on a lock that another PostgreSQL session holds runs asynchronously
(RUNNING while it waits), and CancelOperation or the query timeout end it undone on both sides;
the same DDL then succeeds. A native CTAS over a long query is cancelled as well."""

import os
import subprocess
import time

import pytest
from TCLIService import ttypes as T

import clients
from test_jdbc_handler import (  # noqa: F401 (pg and maria are fixtures)
    maria, maria_props, maria_tables, metastore, pg, props, remote_tables, rows, tables_in_catalog)
from conftest import Server
from test_operations import ENDLESS, execute, fetch, state, wait_for


class Held:
    """A psql session on the remote database that has run `statement` in an open transaction,
    once `check` (a count query) says it holds what it took; `release` rolls it back."""

    def __init__(self, pg, statement, check, db=None):
        self.proc = subprocess.Popen(
            ["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "apiary", "-d", "remote", "-q"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.proc.stdin.write(f"BEGIN;\n{statement};\n")
        self.proc.stdin.flush()
        deadline = time.time() + 10
        while time.time() < deadline:
            held = pg.psql(check, db=db) if db else pg.psql(check)
            if held.strip() != "0":
                return
            time.sleep(0.1)
        raise AssertionError(f"{statement} did not take hold")

    def release(self):
        if self.proc.poll() is None:
            self.proc.stdin.write("ROLLBACK;\n\\q\n")
            self.proc.stdin.flush()
            self.proc.wait(10)


def Blocker(pg, name):
    """An uncommitted CREATE TABLE of `name`: another session's CREATE of the same name waits
    on it until this one ends."""
    return Held(pg, f"CREATE TABLE {name} (held int)",
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                f"WHERE a.query LIKE 'CREATE TABLE {name}%' AND a.state = 'idle in transaction'")


def TableLock(pg, name):
    """`LOCK TABLE name IN ACCESS EXCLUSIVE MODE`: every other session's statement on the table
    (DROP included) waits until this one ends."""
    return Held(pg, f"LOCK TABLE {name} IN ACCESS EXCLUSIVE MODE",
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                f"WHERE c.relname = '{name}' AND l.mode = 'AccessExclusiveLock' AND l.granted",
                db="remote")


def waiting_backends(pg, name):
    """PostgreSQL backends waiting on a lock while creating `name`."""
    return int(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       f"AND query ILIKE '%CREATE TABLE%{name}%'").strip() or 0)


@pytest.fixture
def raw(server):
    conn = clients.pyhive_none(server)
    yield conn._client, conn._sessionHandle, conn
    conn.close()


def ddl(pg, table, remote):
    return f"CREATE TABLE {table} (id INT, v STRING) STORED BY JDBC " + props(pg, remote)


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_blocked_jdbc_create_runs_async_and_ends_undone(server, pg, raw, how):
    client, session, conn = raw
    remote = f"blocked_{how}"
    table = f"async_{how}"
    blocker = Blocker(pg, remote)
    try:
        timeout = 6 if how == "timeout" else 0
        resp = execute(client, session, ddl(pg, table, remote), timeout=timeout)
        assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
        op = resp.operationHandle
        # The RPC came back while the remote CREATE waits on the lock; a poll says RUNNING.
        time.sleep(1.0)
        assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
        deadline = time.time() + 10
        while waiting_backends(pg, remote) == 0 and time.time() < deadline:
            time.sleep(0.1)
        assert waiting_backends(pg, remote) == 1, "the remote CREATE is not waiting on the lock"
        if how == "cancel":
            r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
            assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
            assert state(client, op).operationState == T.TOperationState.CANCELED_STATE
        else:
            st = wait_for(client, op, [T.TOperationState.TIMEDOUT_STATE], limit=40)
            assert "timed out" in st.errorMessage
        client.CloseOperation(T.TCloseOperationReq(operationHandle=op))
        cur = conn.cursor()
        # The catalog has no row for it and the journal holds no unfinished intent.
        assert table not in tables_in_catalog(cur)
        tables, intents = metastore(server)
        assert table not in tables and intents == 0
    finally:
        blocker.release()
    # Once the lock is gone, the abandoned remote transaction does not come back to life.
    time.sleep(1.0)
    assert remote not in remote_tables(pg)
    assert waiting_backends(pg, remote) == 0
    # The same DDL now succeeds, and both sides have the table.
    cur = conn.cursor()
    cur.execute(ddl(pg, table, remote))
    assert table in tables_in_catalog(cur) and remote in remote_tables(pg)
    assert rows(cur, f"SELECT count(*) FROM {table}") == [(0,)]
    cur.execute(f"DROP TABLE {table}")
    assert remote not in remote_tables(pg)


def waiting_on(pg, words):
    """PostgreSQL backends waiting on a lock whose statement holds `words`."""
    return int(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       f"AND query ILIKE '%{words}%'", db="remote").strip() or 0)


def agree_soon(srv, cur, pg, table, remote, limit=30):
    """Waits until the catalog and PostgreSQL agree on whether the table exists and the journal
    is empty; returns (in the catalog, in PostgreSQL)."""
    deadline = time.time() + limit
    while True:
        in_catalog = table in tables_in_catalog(cur)
        in_remote = remote in remote_tables(pg)
        _, intents = metastore(srv)
        if (in_catalog == in_remote and intents == 0) or time.time() > deadline:
            return in_catalog, in_remote, intents
        time.sleep(0.5)


@pytest.mark.parametrize("how", ["cancel", "timeout"])
@pytest.mark.parametrize("held", ["briefly", "past the settle time"])
def test_interrupted_jdbc_drop_ends_with_both_catalogs_agreeing(pg, how, held):
    """A DROP of a managed JDBC table whose remote DROP waits on a table lock, cancelled (or
    timed out) while it waits: once the lock goes, the catalog and PostgreSQL agree, without a
    restart, whether the lock is released at once or only after the DDL's time to settle."""
    srv = Server("--hiveconf", "apiary.ddl.settle.timeout=3s")
    try:
        conn = clients.pyhive_none(srv)
        client, session = conn._client, conn._sessionHandle
        cur = conn.cursor()
        table, remote = "dropped", "dropped_remote"
        cur.execute(ddl(pg, table, remote))
        assert remote in remote_tables(pg)
        lock = TableLock(pg, remote)
        try:
            resp = execute(client, session, f"DROP TABLE {table}", timeout=5 if how == "timeout" else 0)
            assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
            op = resp.operationHandle
            deadline = time.time() + 10
            while waiting_on(pg, f"DROP TABLE%{remote}") == 0 and time.time() < deadline:
                time.sleep(0.1)
            assert waiting_on(pg, f"DROP TABLE%{remote}") == 1, "the remote DROP is not waiting"
            assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
            if how == "cancel":
                # It returns once the DROP's settle time has passed, the lock still held.
                r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
                assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
            if held == "past the settle time" or how == "timeout":
                time.sleep(5 + 3 + 1)
        finally:
            lock.release()
        # The catalog had committed the DROP: it finishes once the lock goes, on both sides.
        in_catalog, in_remote, intents = agree_soon(srv, cur, pg, table, remote)
        assert (in_catalog, in_remote, intents) == (False, False, 0)
        # The operation says it finished (past its commit), with a WARN line saying why.
        wait_for(client, op, [T.TOperationState.FINISHED_STATE])
        lines = fetch(client, op, 100, fetch_type=1).results.columns[0].stringVal.values
        assert any("had committed when the interruption reached it" in l for l in lines), lines
        assert srv.alive()
        conn.close()
    finally:
        srv.stop()


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_interrupted_jdbc_create_whose_undo_waits_ends_with_both_catalogs_agreeing(pg, how):
    """A CREATE of a managed JDBC table interrupted while its remote CREATE waits, whose undo
    then has to wait as well (the lock is held past the time to settle): the catalog and
    PostgreSQL agree once the lock goes, without a restart."""
    srv = Server("--hiveconf", "apiary.ddl.settle.timeout=2s")
    table, remote = "made_late", "made_late_remote"
    try:
        conn = clients.pyhive_none(srv)
        client, session = conn._client, conn._sessionHandle
        cur = conn.cursor()
        blocker = Blocker(pg, remote)
        try:
            resp = execute(client, session, ddl(pg, table, remote), timeout=3 if how == "timeout" else 0)
            op = resp.operationHandle
            deadline = time.time() + 10
            while waiting_backends(pg, remote) == 0 and time.time() < deadline:
                time.sleep(0.1)
            assert waiting_backends(pg, remote) == 1
            if how == "cancel":
                client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
            wait_for(client, op, [T.TOperationState.CANCELED_STATE, T.TOperationState.TIMEDOUT_STATE])
            time.sleep(4)
        finally:
            blocker.release()
        in_catalog, in_remote, intents = agree_soon(srv, cur, pg, table, remote)
        assert (in_catalog, in_remote, intents) == (False, False, 0)
        cur.execute(ddl(pg, table, remote))
        cur.execute(f"DROP TABLE {table}")
        assert remote not in remote_tables(pg)
        conn.close()
    finally:
        srv.stop()


def test_native_ctas_over_a_long_query_is_cancelled(server, raw):
    client, session, conn = raw
    op = execute(client, session, f"CREATE TABLE ctas_cancelled AS {ENDLESS}").operationHandle
    wait_for(client, op, [T.TOperationState.RUNNING_STATE])
    time.sleep(1.5)
    assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
    r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
    assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
    assert state(client, op).operationState == T.TOperationState.CANCELED_STATE
    cur = conn.cursor()
    assert "ctas_cancelled" not in tables_in_catalog(cur)
    warehouse = os.path.join(server.data, "d", "warehouse")
    assert not any(name.startswith("ctas_cancelled") for name in os.listdir(warehouse))
    # The same CTAS over a short query then works.
    cur.execute("CREATE TABLE ctas_cancelled AS SELECT 1 AS one")
    assert rows(cur, "SELECT one FROM ctas_cancelled") == [(1,)]
    cur.execute("DROP TABLE ctas_cancelled")


def test_ddl_with_run_async_reports_its_error_on_poll(raw):
    client, session, _ = raw
    # The DDL runs as its operation: ExecuteStatement returns at once, the poll has the error.
    resp = execute(client, session, "CREATE TABLE bad_async (a INT, a STRING)")
    assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
    st = wait_for(client, resp.operationHandle, [T.TOperationState.ERROR_STATE])
    assert "Duplicate column name: a" in st.errorMessage
    assert st.errorCode == 10036 and st.sqlState == "42000"


class MariaGlobalLock:
    """A mariadb client session holding FLUSH TABLES WITH READ LOCK: every other session's DDL
    waits on it until this session ends."""

    def __init__(self, m):
        self.m = m
        self.proc = subprocess.Popen(m._client() + ["remote"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.proc.stdin.write("FLUSH TABLES WITH READ LOCK;\nSELECT SLEEP(120);\n")
        self.proc.stdin.flush()
        deadline = time.time() + 10
        while time.time() < deadline:
            if "SLEEP(120)" in m.sql("SELECT info FROM information_schema.processlist"):
                return
            time.sleep(0.1)
        raise AssertionError("the global read lock was not taken")

    def release(self):
        self.proc.kill()
        self.proc.wait(10)


def maria_waiting(m, name):
    """MariaDB threads whose statement creates `name`."""
    return int(m.sql("SELECT count(*) FROM information_schema.processlist "
                     f"WHERE info LIKE 'CREATE TABLE%{name}%'").strip() or 0)


def test_cancelled_mariadb_create_leaves_no_remote_table(server, raw, maria):
    """MySQL commits DDL by itself, so a cancelled CREATE must be stopped on the server before
    it is undone; otherwise it would complete once the lock goes, after the undo, and leave a
    remote table no catalog row or journal entry knows of."""
    client, session, conn = raw
    table, remote = "maria_async", "maria_async_remote"
    lock = MariaGlobalLock(maria)
    try:
        sql = f"CREATE TABLE {table} (id INT, v STRING) STORED BY JDBC " + maria_props(maria, remote)
        op = execute(client, session, sql).operationHandle
        deadline = time.time() + 10
        while maria_waiting(maria, remote) == 0 and time.time() < deadline:
            time.sleep(0.1)
        assert maria_waiting(maria, remote) == 1, "the remote CREATE is not waiting on the lock"
        assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
        r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
        assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
        assert state(client, op).operationState == T.TOperationState.CANCELED_STATE
        client.CloseOperation(T.TCloseOperationReq(operationHandle=op))
        assert maria_waiting(maria, remote) == 0, "the remote CREATE still runs after the cancel"
        cur = conn.cursor()
        assert table not in tables_in_catalog(cur)
        tables, intents = metastore(server)
        assert table not in tables and intents == 0
    finally:
        lock.release()
    time.sleep(1.0)
    assert remote not in maria_tables(maria)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INT, v STRING) STORED BY JDBC " + maria_props(maria, remote))
    assert table in tables_in_catalog(cur) and remote in maria_tables(maria)
    cur.execute(f"DROP TABLE {table}")
    assert remote not in maria_tables(maria)


def test_msck_runs_async_and_returns_its_lines(server, raw):
    """MSCK REPAIR TABLE is an operation like other DDL (runAsync, a state to poll) whose
    result set is the lines naming the partitions it added."""
    client, session, conn = raw
    cur = conn.cursor()
    cur.execute("CREATE TABLE msck_async (a INT) PARTITIONED BY (p STRING)")
    table_dir = os.path.join(server.data, "d", "warehouse", "msck_async")
    for p in ("one", "two"):
        os.makedirs(os.path.join(table_dir, f"p={p}"))
    op = execute(client, session, "MSCK REPAIR TABLE msck_async").operationHandle
    assert op.hasResultSet
    wait_for(client, op, [T.TOperationState.FINISHED_STATE])
    r = client.FetchResults(T.TFetchResultsReq(operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT,
                                               maxRows=10))
    lines = r.results.columns[0].stringVal.values
    assert [v.decode() if isinstance(v, bytes) else v for v in lines] == [
        "Repair: Added partition to metastore default.msck_async:p=one",
        "Repair: Added partition to metastore default.msck_async:p=two"]
    client.CloseOperation(T.TCloseOperationReq(operationHandle=op))
    assert rows(cur, "SHOW PARTITIONS msck_async") == [("p=one",), ("p=two",)]
    cur.execute("DROP TABLE msck_async")
