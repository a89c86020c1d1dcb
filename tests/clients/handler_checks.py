"""What the storage-handler tests share: running a statement for its rows or its error, and
reading the server's catalog (through SHOW TABLES, and directly in its SQLite metastore)."""

import os
import sqlite3
import time

import pytest
from TCLIService import ttypes as T

import clients
from clients import rows
from conftest import Server

# The fail points of CREATE and DROP of a non-native table, in the order they are reached.
CREATE_POINTS = ["create.after_intent", "create.after_object", "create.after_catalog",
                 "create.after_commit_hook"]
DROP_POINTS = ["drop.after_intent", "drop.after_catalog", "drop.after_object"]


def error_of(cur, sql):
    with pytest.raises(Exception) as e:
        cur.execute(sql)
    return str(e.value)


def tables_in_catalog(cur, db="default"):
    return [r[0] for r in rows(cur, f"SHOW TABLES IN {db}")]


def metastore(srv):
    """The server's embedded metastore, read directly: table rows and unfinished intents."""
    with sqlite3.connect(f"file:{os.path.join(srv.data, 'd', 'metastore.db')}?mode=ro", uri=True) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM tbls WHERE db = 'default' ORDER BY name")]
        intents = c.execute("SELECT count(*) FROM intents").fetchone()[0]
    return tables, intents


def crash_at(point, sql, data=None, env=None):
    """Starts a server (on the folder `data` of an earlier one, or a new one; in environment
    `env`) that the fail point `point` kills as `kill -9` would, runs `sql`, which must fail,
    and checks that the server died there. Returns the server's folder, for the restart."""
    srv = Server("--hiveconf", f"apiary.failpoints={point}=abort", data=data, env=env)
    try:
        cur = clients.pyhive_none(srv).cursor()
        with pytest.raises(Exception):
            cur.execute(sql)
        srv.proc.wait(10)
        assert not srv.alive()
    finally:
        srv.stop()
    return srv.data


# DDL interrupted or failing inside its steps, settled while the server runs: the fail point,
# its action, the statement, the state a cancel ends in (None: no cancel; a DDL past its
# catalog commit finishes, one before it is undone), and whether the table exists on both
# sides at the end.
SETTLE_CASES = {
    "drop cancelled in a slow step": ("drop.after_catalog", "sleep(5000)", "drop", "FINISHED", False),
    "drop failing after the catalog": ("drop.after_catalog", "error", "drop", None, False),
    "create cancelled in a slow step": ("create.after_object", "sleep(5000)", "create", "CANCELED", False),
    "create failing after the catalog": ("create.after_catalog", "error", "create", None, True),
}


def ddl_settles_without_a_restart(case, create_sql, exists, env=None):
    """Runs CREATE TABLE t (`create_sql`) or DROP TABLE t on a server whose fail point makes a
    step slow (the client cancels the DDL there, and the operation stops waiting for it after
    its settle time) or fail; then, with no restart, the catalog and the handler's system
    (`exists()`) agree within a few seconds, as SETTLE_CASES says, and the journal is empty."""
    point, action, which, cancel, expected = SETTLE_CASES[case]
    srv = Server("--hiveconf", f"apiary.failpoints={point}={action}",
                 "--hiveconf", "apiary.ddl.settle.timeout=1s",
                 "--hiveconf", "apiary.ddl.recovery.interval=1s", env=env)
    try:
        conn = clients.pyhive_none(srv)
        cur = conn.cursor()
        if which == "drop":
            cur.execute(create_sql)
            assert exists()
        sql = create_sql if which == "create" else "DROP TABLE t"
        if cancel:
            client, session = conn._client, conn._sessionHandle
            op = client.ExecuteStatement(T.TExecuteStatementReq(
                sessionHandle=session, statement=sql, runAsync=True)).operationHandle
            time.sleep(1.5)
            st = client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=op))
            assert st.operationState == T.TOperationState.RUNNING_STATE, st
            r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
            assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS, r.status
            st = client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=op))
            assert st.operationState == getattr(T.TOperationState, cancel + "_STATE"), st
        else:
            with pytest.raises(Exception):
                cur.execute(sql)
        deadline = time.time() + 20
        while True:
            in_catalog, there = "t" in tables_in_catalog(cur), exists()
            _, intents = metastore(srv)
            if (in_catalog == there == expected and intents == 0) or time.time() > deadline:
                break
            time.sleep(0.3)
        assert (in_catalog, there, intents) == (expected, expected, 0), case
        assert srv.alive()
        if in_catalog and which == "create":
            cur.execute("DROP TABLE t")
            assert not exists()
        conn.close()
    finally:
        srv.stop()
