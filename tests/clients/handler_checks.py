"""What the storage-handler tests share: running a statement for its rows or its error, and
reading the server's catalog (through SHOW TABLES, and directly in its SQLite metastore)."""

import os
import sqlite3

import pytest

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
