"""Non-native tables through the JDBC storage handler, against a real PostgreSQL (and SQLite):
the four table kinds end to end over PyHive, checked on both sides (psql for the remote
database, the server's catalog for the metastore), the rejected DDL with their error texts,
and crash tests at every fail point of CREATE and DROP."""

import os
import sqlite3

import pytest

import clients
from handler_checks import (CREATE_POINTS, DROP_POINTS, SETTLE_CASES, crash_at, ddl_settles_without_a_restart,
                            error_of, metastore, rows, tables_in_catalog)
from conftest import MariaDB, Postgres, Server

CLASS = "org.apache.hive.storage.jdbc.JdbcStorageHandler"


@pytest.fixture(scope="module")
def pg():
    # pg_stat_statements: the remote server's own count of the rows each query returned.
    p = Postgres("shared_preload_libraries=pg_stat_statements")
    p.psql("CREATE DATABASE remote")
    p.psql("CREATE EXTENSION pg_stat_statements", db="remote")
    yield p
    p.stop()


def props(pg, table, **extra):
    p = {
        "hive.sql.database.type": "POSTGRES",
        "hive.sql.jdbc.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/remote",
        "hive.sql.dbcp.username": "apiary",
        "hive.sql.dbcp.password": "s3cret-pw",
        "hive.sql.table": table,
    }
    p.update(extra)
    return "TBLPROPERTIES (" + ", ".join(f"'{k}'='{v}'" for k, v in p.items()) + ")"


def remote_tables(pg):
    return pg.psql("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
                   db="remote").split()


def test_managed_table_creates_writes_and_drops_the_remote_table(server, pg):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE orders (id INT, name STRING, amount DECIMAL(10,2), ok BOOLEAN, day DATE, "
                f"seen TIMESTAMP) STORED BY '{CLASS}' " + props(pg, "orders"))
    assert "orders" in remote_tables(pg)
    cols = pg.psql("SELECT column_name || ':' || data_type FROM information_schema.columns "
                   "WHERE table_name = 'orders' ORDER BY ordinal_position", db="remote").split("\n")
    assert cols[:6] == ["id:integer", "name:text", "amount:numeric", "ok:boolean", "day:date",
                        "seen:timestamp without time zone"]
    assert pg.psql("SELECT obj_description('orders'::regclass)", db="remote").startswith("apiary-op:")
    assert "orders" in tables_in_catalog(cur)
    tables, intents = metastore(server)
    assert "orders" in tables and intents == 0

    cur.execute("INSERT INTO orders VALUES (1, 'a\\'b', 1.50, true, DATE '2024-01-02', "
                "TIMESTAMP '2024-01-02 03:04:05.5'), (2, NULL, NULL, NULL, NULL, NULL)")
    assert pg.psql("SELECT id, name, amount, ok, day, seen FROM orders ORDER BY id", db="remote") == \
        "1|a'b|1.50|t|2024-01-02|2024-01-02 03:04:05.5\n2|||||\n"
    got = rows(cur, "SELECT id, name, amount, ok, day FROM orders ORDER BY id")
    assert [(r[0], r[1], str(r[2]) if r[2] is not None else None, r[3], r[4]) for r in got] == \
        [(1, "a'b", "1.50", True, "2024-01-02"), (2, None, None, None, None)]
    assert rows(cur, "SELECT count(*) FROM orders WHERE amount > 1") == [(1,)]

    cur.execute("INSERT OVERWRITE TABLE orders SELECT 7, 'seven', 7.00, false, NULL, NULL")
    assert pg.psql("SELECT id, name FROM orders", db="remote") == "7|seven\n"

    # The password is a secret: masked wherever the table is shown.
    formatted = "\n".join("\t".join(str(c) for c in r) for r in rows(cur, "DESCRIBE FORMATTED orders"))
    assert "s3cret-pw" not in formatted and "******" in formatted
    assert CLASS in formatted and "MANAGED_TABLE" in formatted
    create = "\n".join(r[0] for r in rows(cur, "SHOW CREATE TABLE orders"))
    assert "s3cret-pw" not in create
    assert f"STORED BY \n  '{CLASS}'" in create
    assert "'hive.sql.dbcp.password'='******'" in create
    assert "s3cret-pw" not in str(rows(cur, "SHOW TBLPROPERTIES orders"))

    cur.execute("DROP TABLE orders")
    assert "orders" not in remote_tables(pg)
    assert "orders" not in tables_in_catalog(cur)
    tables, intents = metastore(server)
    assert "orders" not in tables and intents == 0


def test_external_table_reads_an_existing_remote_table_and_drop_keeps_it(server, pg):
    pg.psql("CREATE TABLE people (id bigint, \"Name\" text, score double precision); "
            "INSERT INTO people VALUES (1, 'ann', 0.5), (2, 'bob', NULL), (3, 'cy', 2.25)", db="remote")
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE EXTERNAL TABLE people (id BIGINT, name STRING, score DOUBLE) STORED BY JDBC "
                + props(pg, "people"))
    assert rows(cur, "SELECT id, name, score FROM people ORDER BY id") == \
        [(1, "ann", 0.5), (2, "bob", None), (3, "cy", 2.25)]
    assert rows(cur, "SELECT name FROM people WHERE score IS NULL") == [("bob",)]
    # Filters and limit run in PostgreSQL: EXPLAIN shows the remote query.
    plan = "\n".join(r[-1] for r in rows(cur, "EXPLAIN SELECT name FROM people WHERE id >= 2 LIMIT 1"))
    assert "remote_query=SELECT" in plan and "WHERE" in plan and "id" in plan, plan
    # Aggregates run in PostgreSQL too: only the groups travel.
    assert rows(cur, "SELECT name, count(*), max(id) FROM people GROUP BY name ORDER BY name") == \
        [("ann", 1, 1), ("bob", 1, 2), ("cy", 1, 3)]
    assert rows(cur, "SELECT count(*), sum(score), min(name), max(id), avg(score) FROM people WHERE id > 1") == \
        [(2, 2.25, "bob", 3, 2.25)]
    plan = "\n".join(r[-1] for r in rows(cur, "EXPLAIN SELECT name, count(*), max(score) FROM people "
                                             "WHERE id > 1 GROUP BY name"))
    assert "GROUP BY" in plan and "count(*)" in plan.lower() and "WHERE" in plan, plan
    # A join with a native table.
    cur.execute("CREATE TABLE bonus (id BIGINT, extra INT) STORED AS PARQUET")
    cur.execute("INSERT INTO bonus VALUES (1, 10), (3, 30)")
    assert rows(cur, "SELECT p.name, b.extra FROM people p JOIN bonus b ON p.id = b.id ORDER BY b.extra") == \
        [("ann", 10), ("cy", 30)]
    cur.execute("INSERT INTO people VALUES (4, 'dee', 1.0)")
    assert pg.psql("SELECT count(*) FROM people", db="remote") == "4\n"
    cur.execute("DROP TABLE people")
    assert "people" in remote_tables(pg)
    assert pg.psql("SELECT count(*) FROM people", db="remote") == "4\n"


def test_pushdown_transfers_only_the_result_rows(server, pg):
    pg.psql("CREATE TABLE big AS SELECT g::bigint AS id, g % 100 AS grp, (g % 1000)::double precision AS val "
            "FROM generate_series(1, 1000000) g", db="remote")
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE EXTERNAL TABLE big (id BIGINT, grp INT, val DOUBLE) STORED BY JDBC " + props(pg, "big"))
    cur.execute("CREATE EXTERNAL TABLE big_local (id BIGINT, grp INT, val DOUBLE) STORED BY JDBC "
                + props(pg, "big", **{"apiary.jdbc.pushdown": "false"}))
    query = "SELECT grp, count(*), sum(val) FROM {} WHERE id <= 500000 GROUP BY grp ORDER BY grp"
    pg.psql("SELECT pg_stat_statements_reset()", db="remote")
    pushed = rows(cur, query.format("big"))
    returned = pg.psql("SELECT sum(rows) FROM pg_stat_statements WHERE query LIKE '%FROM \"big\"%'", db="remote")
    assert len(pushed) == 100 and pushed[0] == (0, 5000, sum(float(g % 1000) for g in range(100, 500001, 100)))
    assert int(returned) == 100, returned
    pg.psql("SELECT pg_stat_statements_reset()", db="remote")
    local = rows(cur, query.format("big_local"))
    returned = pg.psql("SELECT sum(rows) FROM pg_stat_statements WHERE query LIKE '%FROM \"big\"%'", db="remote")
    assert local == pushed
    assert int(returned) == 1000000, returned
    cur.execute("DROP TABLE big")
    cur.execute("DROP TABLE big_local")


def test_rejected_ddl_has_hive_error_texts(server, pg):
    cur = clients.pyhive_none(server).cursor()
    p = props(pg, "nothing_here")
    e = error_of(cur, f"CREATE TABLE bad1 (a INT) STORED BY '{CLASS}' STORED AS ORC {p}")
    assert "STORED BY cannot be used with ROW FORMAT or STORED AS" in e
    e = error_of(cur, f"CREATE TABLE bad2 (a INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
                      f"STORED BY '{CLASS}' {p}")
    assert "STORED BY cannot be used with ROW FORMAT or STORED AS" in e
    e = error_of(cur, f"CREATE TABLE bad3 (a INT) STORED BY 'com.example.NoSuchHandler' {p}")
    assert "not recognized: 'com.example.NoSuchHandler'" in e and CLASS in e
    e = error_of(cur, f"CREATE EXTERNAL TABLE bad4 (a INT) STORED BY JDBC {p}")
    assert 'The remote table "nothing_here" does not exist in PostgreSQL' in e
    pg.psql("CREATE TABLE two_cols (x int, y text)", db="remote")
    e = error_of(cur, f"CREATE EXTERNAL TABLE bad5 (x INT) STORED BY JDBC " + props(pg, "two_cols"))
    assert ("Column numbers do not match. Remote table columns are [x, y] and declared table "
            "columns in Hive external table are [x]") in e
    # A managed table over an existing remote table is refused, and that table is untouched.
    e = error_of(cur, f"CREATE TABLE bad6 (x INT, y STRING) STORED BY JDBC " + props(pg, "two_cols"))
    assert "already exists" in e and "two_cols" in remote_tables(pg)
    assert not [t for t in tables_in_catalog(cur) if t.startswith("bad")]
    e = error_of(cur, "CREATE TABLE bad7 (a INT) STORED BY JDBC TBLPROPERTIES ('hive.sql.database.type'='POSTGRES')")
    assert "hive.sql.jdbc.url is required" in e

    cur.execute("CREATE EXTERNAL TABLE ok_ext (x INT, y STRING) STORED BY JDBC " + props(pg, "two_cols"))
    for sql in ["ALTER TABLE ok_ext RENAME TO other", "ALTER TABLE ok_ext SET LOCATION '/tmp/x'",
                "ALTER TABLE ok_ext CHANGE COLUMN x z INT", "ALTER TABLE ok_ext REPLACE COLUMNS (x INT)"]:
        e = error_of(cur, sql)
        assert "ALTER TABLE can only be used for [ADDPROPS, DROPPROPS, ADDCOLS] to a non-native table" in e, sql
    cur.execute("ALTER TABLE ok_ext SET TBLPROPERTIES ('note'='kept')")
    assert ("note", "kept") in rows(cur, "SHOW TBLPROPERTIES ok_ext")
    e = error_of(cur, "LOAD DATA LOCAL INPATH '/etc/hostname' INTO TABLE ok_ext")
    assert "A non-native table cannot be used as target for LOAD" in e
    e = error_of(cur, "TRUNCATE TABLE ok_ext")
    assert "Cannot truncate non-native table ok_ext" in e
    cur.execute("DROP TABLE ok_ext")
    assert "two_cols" in remote_tables(pg)


def test_sqlite_database(server, tmp_path):
    db = tmp_path / "remote.db"
    url = f"jdbc:sqlite:{db}"
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE lite (id INT, word STRING, ok BOOLEAN, price DOUBLE, raw BINARY) STORED BY JDBC TBLPROPERTIES ("
                f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='{url}', 'hive.sql.table'='lite')")
    cur.execute("INSERT INTO lite VALUES (1, 'one', true, 1.5, X'00ff'), (2, 'two', false, NULL, NULL)")
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT id, word, ok, price FROM lite ORDER BY id").fetchall() == \
            [(1, "one", 1, 1.5), (2, "two", 0, None)]
    assert rows(cur, "SELECT id, word, ok, price FROM lite WHERE id > 1") == [(2, "two", False, None)]
    # Binary values round-trip byte for byte.
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT raw FROM lite WHERE id = 1").fetchone() == (b"\x00\xff",)
    assert rows(cur, "SELECT hex(raw) FROM lite WHERE id = 1") == [("00FF",)]
    cur.execute("DROP TABLE lite")
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'lite'").fetchone() == (0,)


def create_sql(pg, name, remote, external):
    kind = "EXTERNAL TABLE" if external else "TABLE"
    return f"CREATE {kind} {name} (id INT, v STRING) STORED BY JDBC " + props(pg, remote)


def restart_with(data, *extra):
    return Server(*extra, data=data)


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", CREATE_POINTS)
def test_crash_during_create_leaves_both_sides_consistent(pg, point, external):
    remote = f"crash_c_{CREATE_POINTS.index(point)}_{int(external)}"
    if external:
        pg.psql(f"CREATE TABLE {remote} (id int, v text); INSERT INTO {remote} VALUES (1, 'x')", db="remote")
    data = crash_at(point, create_sql(pg, "t", remote, external))
    srv = restart_with(data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        in_catalog = "t" in tables_in_catalog(cur)
        in_remote = remote in remote_tables(pg)
        decided = point in ("create.after_catalog", "create.after_commit_hook")
        assert in_catalog == decided, (point, in_catalog)
        # The metastore itself: the row as decided, and recovery left no unfinished intent.
        assert metastore(srv) == (["t"] if decided else [], 0)
        # Managed: the remote table exists exactly when the catalog has the table (no orphan,
        # no row without its object). External: the remote table was there before and stays.
        assert in_remote == (decided or external), (point, in_remote)
        if external:
            assert pg.psql(f"SELECT count(*) FROM {remote}", db="remote") == "1\n"
        if decided:
            assert rows(cur, "SELECT count(*) FROM t") == [(1 if external else 0,)]
            cur.execute("DROP TABLE t")
        # The same DDL can be run again.
        cur.execute(create_sql(pg, "t", remote, external))
        assert "t" in tables_in_catalog(cur) and remote in remote_tables(pg)
        cur.execute("DROP TABLE t")
        assert (remote in remote_tables(pg)) == external
    finally:
        srv.stop()


@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
@pytest.mark.parametrize("point", DROP_POINTS)
def test_crash_during_drop_leaves_both_sides_consistent(pg, point, external):
    remote = f"crash_d_{DROP_POINTS.index(point)}_{int(external)}"
    if external:
        pg.psql(f"CREATE TABLE {remote} (id int, v text)", db="remote")
    srv = Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(create_sql(pg, "t", remote, external))
        cur.execute("INSERT INTO t VALUES (1, 'one')")
    finally:
        srv.stop()
    crash_at(point, "DROP TABLE t", data)
    srv = restart_with(data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        dropped = point != "drop.after_intent"
        assert ("t" in tables_in_catalog(cur)) == (not dropped), point
        assert metastore(srv) == ([] if dropped else ["t"], 0)
        in_remote = remote in remote_tables(pg)
        # Managed: the object goes with the table; external: it always stays.
        assert in_remote == (external or not dropped), (point, in_remote)
        if not dropped:
            assert rows(cur, "SELECT v FROM t") == [("one",)]
        cur.execute("DROP TABLE IF EXISTS t")
        assert "t" not in tables_in_catalog(cur)
        assert (remote in remote_tables(pg)) == external
        cur.execute(create_sql(pg, "t", remote, external))
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()


@pytest.mark.parametrize("case", SETTLE_CASES)
def test_interrupted_or_failing_ddl_settles_without_a_restart(pg, case):
    ddl_settles_without_a_restart(case, create_sql(pg, "t", "settled_remote", False),
                                  lambda: "settled_remote" in remote_tables(pg))


def test_failing_hook_leaves_both_sides_as_they_were(pg):
    srv = Server("--hiveconf", "apiary.failpoints=create.after_object=error")
    try:
        cur = clients.pyhive_none(srv).cursor()
        e = error_of(cur, create_sql(pg, "t", "hook_fails", False))
        assert "injected failure at fail point create.after_object" in e
        assert "t" not in tables_in_catalog(cur)
        assert "hook_fails" not in remote_tables(pg)
        assert srv.alive()
    finally:
        srv.stop()
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute(create_sql(pg, "t", "hook_fails", False))
        assert "hook_fails" in remote_tables(pg)
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()


def test_drop_database_cascade_runs_each_tables_hooks(server, pg):
    cur = clients.pyhive_none(server).cursor()
    pg.psql("CREATE TABLE cascade_ext (id int, v text)", db="remote")
    cur.execute("CREATE DATABASE handlers_db")
    cur.execute("CREATE TABLE handlers_db.m (id INT, v STRING) STORED BY JDBC " + props(pg, "cascade_managed"))
    cur.execute("CREATE EXTERNAL TABLE handlers_db.e (id INT, v STRING) STORED BY JDBC " + props(pg, "cascade_ext"))
    assert "cascade_managed" in remote_tables(pg)
    cur.execute("DROP DATABASE handlers_db CASCADE")
    assert "cascade_managed" not in remote_tables(pg)
    assert "cascade_ext" in remote_tables(pg)


@pytest.fixture(scope="module")
def maria():
    m = MariaDB()
    m.sql("CREATE DATABASE remote")
    yield m
    m.stop()


def maria_props(m, table, **extra):
    p = {
        "hive.sql.database.type": "MYSQL",
        "hive.sql.jdbc.url": f"jdbc:mysql://127.0.0.1:{m.port}/remote",
        "hive.sql.dbcp.username": "root",
        "hive.sql.dbcp.password": "unused-pw",
        "hive.sql.table": table,
    }
    p.update(extra)
    return "TBLPROPERTIES (" + ", ".join(f"'{k}'='{v}'" for k, v in p.items()) + ")"


def maria_tables(m):
    return m.sql("SHOW TABLES", db="remote").split()


def test_mariadb_managed_and_external_tables(server, maria):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE TABLE m_orders (id INT, name STRING, amount DECIMAL(10,2), ok BOOLEAN, day DATE) "
                "STORED BY JDBC " + maria_props(maria, "m_orders"))
    assert "m_orders" in maria_tables(maria)
    assert maria.sql("SELECT table_comment FROM information_schema.tables WHERE table_name = 'm_orders'") \
        .startswith("apiary-op:")
    # A backslash (MySQL reads it as an escape in literals unless it is doubled).
    cur.execute("INSERT INTO m_orders VALUES (1, concat('back', chr(92), 'slash'), 1.50, true, DATE '2024-01-02'), "
                "(2, 'it\\'s', NULL, false, NULL), (3, NULL, 3.25, NULL, NULL)")
    assert maria.sql("SELECT id, name, amount, ok, day FROM m_orders ORDER BY id", db="remote") == \
        "1\tback\\\\slash\t1.50\t1\t2024-01-02\n2\tit's\tNULL\t0\tNULL\n3\tNULL\t3.25\tNULL\tNULL\n"
    got = rows(cur, "SELECT id, name, ok, day FROM m_orders ORDER BY id")
    assert got == [(1, "back\\slash", True, "2024-01-02"), (2, "it's", False, None), (3, None, None, None)]
    assert rows(cur, "SELECT count(*), max(id) FROM m_orders WHERE id >= 2") == [(2, 3)]
    plan = "\n".join(r[-1] for r in rows(cur, "EXPLAIN SELECT count(*) FROM m_orders WHERE id >= 2"))
    assert "database=MySQL" in plan and "WHERE" in plan and "COUNT(*)" in plan, plan
    # Strings compare case-insensitively in MySQL: such filters are applied here instead.
    assert rows(cur, "SELECT id FROM m_orders WHERE name = 'IT\\'S'") == []
    cur.execute("INSERT OVERWRITE TABLE m_orders SELECT 9, 'nine', 9.00, true, NULL")
    assert maria.sql("SELECT id, name FROM m_orders", db="remote") == "9\tnine\n"
    cur.execute("DROP TABLE m_orders")
    assert "m_orders" not in maria_tables(maria)

    maria.sql("CREATE TABLE m_existing (k INT, v VARCHAR(10)); INSERT INTO m_existing VALUES (1, 'a'), (2, 'b')",
              db="remote")
    e = error_of(cur, "CREATE EXTERNAL TABLE m_ext (k INT) STORED BY JDBC " + maria_props(maria, "m_existing"))
    assert "Column numbers do not match. Remote table columns are [k, v]" in e
    cur.execute("CREATE EXTERNAL TABLE m_ext (k INT, v STRING) STORED BY JDBC " + maria_props(maria, "m_existing"))
    assert rows(cur, "SELECT k, v FROM m_ext ORDER BY k") == [(1, "a"), (2, "b")]
    cur.execute("DROP TABLE m_ext")
    assert "m_existing" in maria_tables(maria)


@pytest.mark.parametrize("point", ["create.after_object", "drop.after_catalog"])
def test_mariadb_crash_during_ddl_is_recovered(maria, point):
    remote = "m_crash_" + point.replace(".", "_")
    srv = Server("--hiveconf", f"apiary.failpoints={point}=abort") if point.startswith("create") else Server()
    data = srv.data
    try:
        cur = clients.pyhive_none(srv).cursor()
        sql = "CREATE TABLE t (id INT) STORED BY JDBC " + maria_props(maria, remote)
        if point.startswith("create"):
            with pytest.raises(Exception):
                cur.execute(sql)
            srv.proc.wait(10)
        else:
            cur.execute(sql)
    finally:
        srv.stop()
    if point.startswith("drop"):
        srv = Server("--hiveconf", f"apiary.failpoints={point}=abort", data=data)
        try:
            with pytest.raises(Exception):
                clients.pyhive_none(srv).cursor().execute("DROP TABLE t")
            srv.proc.wait(10)
        finally:
            srv.stop()
    srv = Server(data=data)
    try:
        cur = clients.pyhive_none(srv).cursor()
        # Either way the operation did not leave a remote table without its catalog entry.
        assert "t" not in tables_in_catalog(cur)
        assert remote not in maria_tables(maria)
        cur.execute("CREATE TABLE t (id INT) STORED BY JDBC " + maria_props(maria, remote))
        cur.execute("DROP TABLE t")
    finally:
        srv.stop()


def test_handler_secrets_are_sealed_at_rest(tmp_path):
    """A JDBC password is in no file the server writes (metastore, journal, audit and server
    logs); a restart opens it with the key file the first start made."""
    srv = Server()
    secret = "at-rest-secret-9"
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE TABLE sealed_t (id INT) STORED BY JDBC TBLPROPERTIES ("
                    f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{tmp_path / 'r.db'}', "
                    f"'hive.sql.table'='sealed_t', 'hive.sql.dbcp.password'='{secret}')")
        cur.execute("INSERT INTO sealed_t VALUES (1)")
        key = os.path.join(srv.data, "d", "secrets.key")
        assert os.stat(key).st_mode & 0o777 == 0o600 and os.path.getsize(key) == 32
        srv.stop()
        written = 0
        for root, _, files in os.walk(srv.data):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    assert secret.encode() not in f.read(), os.path.join(root, name)
                written += 1
        assert written >= 3
        srv = Server(data=srv.data)
        cur = clients.pyhive_none(srv).cursor()
        assert rows(cur, "SELECT id FROM sealed_t") == [(1,)]
        shown = rows(cur, "SHOW CREATE TABLE sealed_t")
        assert secret not in repr(shown)
        cur.execute("DROP TABLE sealed_t")
    finally:
        srv.stop()


def test_create_table_as_select_creates_and_fills_the_remote_table(server, pg):
    cur = clients.pyhive_none(server).cursor()
    cur.execute(f"CREATE TABLE ctas_jdbc STORED BY '{CLASS}' " + props(pg, "ctas_jdbc")
                + " AS SELECT 1 AS id, 'x' AS v UNION ALL SELECT 2, 'y'")
    try:
        assert pg.psql("SELECT id, v FROM ctas_jdbc ORDER BY id", db="remote").split() == ["1|x", "2|y"]
        assert rows(cur, "SELECT count(*) FROM ctas_jdbc") == [(2,)]
    finally:
        cur.execute("DROP TABLE ctas_jdbc")
    assert "ctas_jdbc" not in remote_tables(pg)
