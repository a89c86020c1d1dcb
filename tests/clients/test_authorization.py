"""SQL-standard authorization (hive.security.authorization.enabled=true) through real clients:
owners, GRANT / REVOKE to users and roles, role membership and SET ROLE, the admin role, Hive's
denial text (PyHive, beeline's JDBC driver), SHOW TABLES / GetTables / Flight SQL listings
filtered to what a user may use, and the same grants enforced by a second server sharing the
PostgreSQL metastore."""

import os
import shutil
import subprocess
import time

import pytest
from impala import dbapi as impyla
from pyhive import hive

import flight
from clients import rows
from conftest import Server
from test_jdbc_beeline import SPARK_HOME

AUTHZ = ["--hiveconf", "hive.security.authorization.enabled=true",
         "--hiveconf", "hive.users.in.admin.role=root"]


def denial(user, operation, *objects):
    """Hive's words for a statement lacking privileges: `objects` are (privileges, type, name)."""
    listed = ", ".join(f"[{p}] on Object [type={t}, name={n}]" for p, t, n in objects)
    return (f"Permission denied: Principal [name={user}, type=USER] does not have following "
            f"privileges for operation {operation} [{listed}]")


def as_user(srv, user):
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username=user, auth="NONE").cursor()


def refused(cur, sql):
    with pytest.raises(Exception) as e:
        cur.execute(sql)
        cur.fetchall()
    return str(e.value)


@pytest.fixture(scope="module")
def srv():
    s = Server(*AUTHZ)
    yield s
    assert s.alive(), s.server_log()[-3000:]
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


def test_owner_grant_revoke_and_denials(srv):
    alice, bob = as_user(srv, "alice"), as_user(srv, "bob")
    alice.execute("CREATE TABLE sales (id INT, amount DOUBLE)")
    alice.execute("INSERT INTO sales VALUES (1, 9.5), (2, 3.0)")
    assert rows(alice, "SELECT count(*) FROM sales") == [(2,)]
    select = ("SELECT", "TABLE_OR_VIEW", "default.sales")
    text = refused(bob, "SELECT * FROM sales")
    assert denial("bob", "QUERY", select) in text, text
    assert "HiveAccessControlException" in text
    # Inside a subquery and a CTE too; a CTE's own name is not a table.
    assert denial("bob", "QUERY", select) in refused(
        bob, "WITH s AS (SELECT * FROM default.sales) SELECT count(*) FROM s")
    assert rows(bob, "WITH sales AS (SELECT 1 AS x) SELECT x FROM sales") == [(1,)]
    # How names are read is the server's: a session cannot turn normalization off.
    assert "Cannot modify datafusion.sql_parser.enable_ident_normalization" in refused(
        bob, "SET datafusion.sql_parser.enable_ident_normalization=false")
    # A WITH name does not hide the table from its own definition, from a query beside it,
    # or under another spelling.
    for sql in ["WITH sales AS (SELECT * FROM sales) SELECT * FROM sales",
                "WITH `SALES` AS (SELECT 1 AS x) SELECT * FROM sales",
                "SELECT * FROM sales, (WITH sales AS (SELECT 1 AS x) SELECT * FROM sales) s",
                "WITH a AS (SELECT * FROM sales), sales AS (SELECT 1 AS x) SELECT * FROM a",
                "WITH RECURSIVE sales AS (SELECT * FROM sales) SELECT * FROM sales"]:
        assert denial("bob", "QUERY", select) in refused(bob, sql), sql
    assert denial("bob", "DESCTABLE", select) in refused(bob, "DESCRIBE sales")

    alice.execute("GRANT SELECT ON TABLE sales TO USER bob")
    assert rows(bob, "SELECT id FROM sales ORDER BY id") == [(1,), (2,)]
    assert denial("bob", "QUERY", ("INSERT", "TABLE_OR_VIEW", "default.sales")) in refused(
        bob, "INSERT INTO sales VALUES (3, 1.0)")
    assert denial("bob", "QUERY", ("INSERT, DELETE", "TABLE_OR_VIEW", "default.sales")) in refused(
        bob, "INSERT OVERWRITE TABLE sales SELECT * FROM sales")
    owner = ("OBJECT OWNERSHIP", "TABLE_OR_VIEW", "default.sales")
    assert denial("bob", "DROPTABLE", owner) in refused(bob, "DROP TABLE sales")
    assert denial("bob", "TRUNCATETABLE", owner) in refused(bob, "TRUNCATE TABLE sales")
    assert denial("bob", "ALTERTABLE_RENAME", owner) in refused(bob, "ALTER TABLE sales RENAME TO s2")
    # bob cannot pass on what he holds without the grant option.
    assert denial("bob", "GRANT_PRIVILEGE", ("SELECT with grant", "TABLE_OR_VIEW", "default.sales")) in refused(
        bob, "GRANT SELECT ON sales TO USER carol")
    # Nothing changed: the table and its rows are there.
    assert rows(alice, "SELECT count(*) FROM sales") == [(2,)]

    alice.execute("REVOKE SELECT ON TABLE sales FROM USER bob")
    assert denial("bob", "QUERY", select) in refused(bob, "SELECT * FROM sales")
    text = refused(alice, "REVOKE SELECT ON sales FROM USER bob")
    assert "Cannot find privilege Privilege [name=SELECT, columns=null] for Principal [name=bob, type=USER]" in text, text
    # A REVOKE is all or nothing: INSERT stays when SELECT (not held) fails it.
    alice.execute("GRANT INSERT ON sales TO USER bob")
    assert "Cannot find privilege" in refused(alice, "REVOKE SELECT, INSERT ON sales FROM USER bob")
    bob.execute("INSERT INTO sales VALUES (9, 9.0)")
    alice.execute("REVOKE INSERT ON sales FROM USER bob")
    alice.execute("TRUNCATE TABLE sales")
    alice.execute("INSERT INTO sales VALUES (1, 9.5), (2, 3.0)")

    # With the grant option bob may grant to others, and INSERT lets him write.
    alice.execute("GRANT SELECT, INSERT ON sales TO USER bob WITH GRANT OPTION")
    bob.execute("INSERT INTO sales VALUES (3, 1.0)")
    bob.execute("GRANT SELECT ON sales TO USER carol")
    assert rows(as_user(srv, "carol"), "SELECT count(*) FROM sales") == [(3,)]


def test_show_grant_and_listings(srv):
    alice, dave = as_user(srv, "alice"), as_user(srv, "dave")
    alice.execute("CREATE TABLE listed (a INT)")
    alice.execute("CREATE TABLE unlisted (a INT)")
    alice.execute("GRANT SELECT ON listed TO USER dave")
    assert ("listed",) in rows(dave, "SHOW TABLES")
    assert ("unlisted",) not in rows(dave, "SHOW TABLES")
    assert {("listed",), ("unlisted",)} <= set(rows(alice, "SHOW TABLES"))
    # SHOW GRANT: Hive's ten columns; the owner's privileges and dave's grant. Only an admin
    # sees everyone's; others name themselves or a role of theirs.
    root = as_user(srv, "root")
    root.execute("SET ROLE ADMIN")
    root.execute("SHOW GRANT ON TABLE listed")
    names = [d[0] for d in root.description]
    assert names == ["database", "table", "partition", "column", "principal_name", "principal_type",
                     "privilege", "grant_option", "grant_time", "grantor"], names
    grants = {(r[4], r[5], r[6], r[7], r[9]) for r in root.fetchall()}
    assert "has to specify a user name or role in the show grant" in refused(alice, "SHOW GRANT ON TABLE listed")
    assert "is not allowed check privileges of another user : alice" in refused(dave, "SHOW GRANT USER alice ON ALL")
    assert ("dave", "USER", "SELECT", "false", "alice") in grants
    assert ("alice", "USER", "DELETE", "true", "alice") in grants
    assert {(r[4], r[6]) for r in rows(dave, "SHOW GRANT USER dave ON ALL")} >= {("dave", "SELECT")}
    # GetTables (impyla) and Flight SQL's catalog list only what dave may use.
    conn = impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="PLAIN",
                          user="dave", password="x")
    cur = conn.cursor(user="dave")  # impyla names the OS user in OpenSession otherwise
    cur.get_tables(database_name="default")
    tables = {r[2] for r in cur.fetchall()}
    assert "listed" in tables and "unlisted" not in tables, tables
    conn.close()
    fl = flight.adbc_connect(srv, user="dave", password="x")
    objects = fl.adbc_get_objects(depth="tables", db_schema_filter="default").read_all().to_pylist()
    listed = {t["table_name"] for c in objects for s in c["catalog_db_schemas"]
              for t in (s["db_schema_tables"] or [])}
    fl.close()
    assert "listed" in listed and "unlisted" not in listed, listed
    # DataFusion's information_schema would list every table: admins only. What names no
    # table is anyone's.
    assert "ADMIN PRIVILEGE" in refused(dave, "SELECT table_name FROM information_schema.tables")
    assert rows(dave, "SELECT count(*) FROM range(3)") == [(3,)]
    assert any(r[0] == "upper" for r in rows(dave, "SHOW FUNCTIONS"))
    assert rows(dave, "EXPLAIN SELECT 1")


def test_roles_and_the_admin_role(srv):
    root, alice, carol = as_user(srv, "root"), as_user(srv, "alice"), as_user(srv, "carol")
    text = refused(carol, "CREATE ROLE analysts")
    assert "Current user : carol is not allowed to add roles. User has to belong to ADMIN role" in text
    # root is an admin, but only after SET ROLE ADMIN.
    assert rows(root, "SHOW CURRENT ROLES") == [("public",)]
    assert "not allowed to add roles" in refused(root, "CREATE ROLE analysts")
    assert "doesn't belong to role admin" in refused(carol, "SET ROLE ADMIN")
    root.execute("SET ROLE ADMIN")
    assert rows(root, "SHOW CURRENT ROLES") == [("admin",)]
    root.execute("CREATE ROLE analysts")
    assert "already exists" in refused(root, "CREATE ROLE analysts")
    root.execute("GRANT analysts TO USER carol")
    assert ("analysts",) in rows(root, "SHOW ROLES")
    assert [r[0] for r in rows(root, "SHOW PRINCIPALS analysts")] == ["carol"]

    alice.execute("CREATE TABLE metrics (v INT)")
    alice.execute("INSERT INTO metrics VALUES (7)")
    select = ("SELECT", "TABLE_OR_VIEW", "default.metrics")
    assert denial("carol", "QUERY", select) in refused(carol, "SELECT * FROM metrics")
    alice.execute("GRANT SELECT ON metrics TO ROLE analysts")
    assert rows(carol, "SELECT v FROM metrics") == [(7,)]
    assert set(rows(carol, "SHOW CURRENT ROLES")) == {("analysts",), ("public",)}
    assert ("analysts", "false") in [(r[0], r[1]) for r in rows(carol, "SHOW ROLE GRANT USER carol")]
    carol.execute("SET ROLE NONE")
    assert denial("carol", "QUERY", select) in refused(carol, "SELECT * FROM metrics")
    carol.execute("SET ROLE analysts")
    assert rows(carol, "SELECT v FROM metrics") == [(7,)]
    carol.execute("SET ROLE ALL")
    # An admin may do anything; revoking the membership takes the privilege away.
    assert rows(root, "SELECT v FROM metrics") == [(7,)]
    root.execute("REVOKE analysts FROM USER carol")
    assert denial("carol", "QUERY", select) in refused(carol, "SELECT * FROM metrics")
    # A role set with SET ROLE counts only while it is granted.
    root.execute("GRANT analysts TO USER carol")
    carol.execute("SET ROLE analysts")
    assert rows(carol, "SELECT v FROM metrics") == [(7,)]
    root.execute("REVOKE analysts FROM USER carol")
    assert denial("carol", "QUERY", select) in refused(carol, "SELECT * FROM metrics")
    carol.execute("SET ROLE ALL")
    # Dropping a role drops its grants.
    root.execute("GRANT analysts TO USER carol")
    root.execute("DROP ROLE analysts")
    assert denial("carol", "QUERY", select) in refused(carol, "SELECT * FROM metrics")
    assert "does not exist" in refused(root, "DROP ROLE analysts")
    # public is everyone's role; admin can be granted.
    alice.execute("GRANT SELECT ON metrics TO ROLE public")
    assert rows(carol, "SELECT v FROM metrics") == [(7,)]
    alice.execute("REVOKE SELECT ON metrics FROM ROLE public")
    root.execute("GRANT admin TO USER carol")
    carol.execute("SET ROLE ADMIN")
    assert ("admin",) in rows(carol, "SHOW ROLES")
    root.execute("REVOKE admin FROM USER carol")
    assert "not allowed to list roles" in refused(carol, "SHOW ROLES")


def test_views_databases_and_renames(srv):
    alice, erin = as_user(srv, "alice"), as_user(srv, "erin")
    alice.execute("CREATE TABLE base (k INT, secret STRING)")
    alice.execute("INSERT INTO base VALUES (1, 'x')")
    alice.execute("CREATE VIEW keys_only AS SELECT k FROM base")
    alice.execute("GRANT SELECT ON keys_only TO USER erin")
    # The view's grant is enough to read through it, not to read its table.
    assert rows(erin, "SELECT k FROM keys_only") == [(1,)]
    assert "default.base" in refused(erin, "SELECT * FROM base")
    # A view over a table erin cannot grant from is refused.
    text = refused(erin, "CREATE VIEW mine AS SELECT * FROM keys_only")
    assert denial("erin", "CREATEVIEW", ("SELECT with grant", "TABLE_OR_VIEW", "default.keys_only")) in text
    # A database belongs to its creator; others cannot create tables in it or drop it.
    alice.execute("CREATE DATABASE alice_db")
    db_owner = ("OBJECT OWNERSHIP", "DATABASE", "alice_db")
    assert denial("erin", "CREATETABLE", db_owner) in refused(erin, "CREATE TABLE alice_db.t (a INT)")
    assert denial("erin", "DROPDATABASE", db_owner) in refused(erin, "DROP DATABASE alice_db")
    # Naming a path (LOCATION, LOAD DATA) is for admins: it could name another table's files.
    warehouse_path = os.path.join(srv.data, "d", "warehouse", "base")
    for sql, kind in [
        (f"CREATE EXTERNAL TABLE peek (k INT) LOCATION '{warehouse_path}'", "DFS_URI"),
        (f"LOAD DATA LOCAL INPATH '{warehouse_path}' INTO TABLE mine", "LOCAL_URI"),
        (f"CREATE DATABASE sneaky LOCATION '{warehouse_path}'", "DFS_URI"),
    ]:
        text = refused(erin, sql)
        assert f"[ADMIN PRIVILEGE] on Object [type={kind}, name={warehouse_path}]" in text, (sql, text)
    # DROP DATABASE .. CASCADE needs every table's ownership, not just the database's.
    erin.execute("CREATE DATABASE erin_db")
    root = as_user(srv, "root")
    root.execute("SET ROLE ADMIN")
    root.execute("CREATE TABLE erin_db.roots (a INT)")
    text = refused(erin, "DROP DATABASE erin_db CASCADE")
    assert denial("erin", "DROPDATABASE", ("OBJECT OWNERSHIP", "TABLE_OR_VIEW", "erin_db.roots")) in text, text
    assert rows(root, "SHOW TABLES IN erin_db") == [("roots",)]
    # Privileges follow a renamed table.
    alice.execute("CREATE TABLE old_name (a INT)")
    alice.execute("GRANT SELECT ON old_name TO USER erin")
    alice.execute("ALTER TABLE old_name RENAME TO new_name")
    assert rows(erin, "SELECT count(*) FROM new_name") == [(0,)]
    # Dropping a table drops its grants: a new table of that name starts with none.
    alice.execute("DROP TABLE new_name")
    alice.execute("CREATE TABLE new_name (a INT)")
    assert "default.new_name" in refused(erin, "SELECT * FROM new_name")


def test_what_reaches_around_the_grants_is_refused(srv, tmp_path):
    """Forms that would reach past a table's grants: a handler URL naming a file, LIKE of
    another system's table, a rename into someone else's database, DataFusion's writes under
    SELECT .. INTO and EXPLAIN ANALYZE, ALTER DATABASE, role cycles, owner roles."""
    alice, frank = as_user(srv, "alice"), as_user(srv, "frank")
    db_file = str(tmp_path / "x.db")
    jdbc = ("STORED BY 'org.apache.hive.storage.jdbc.JdbcStorageHandler' TBLPROPERTIES ("
            "'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{}', 'hive.sql.table'='t')")
    text = refused(frank, f"CREATE TABLE f_sqlite (a INT) {jdbc.format(db_file)}")
    assert f"[ADMIN PRIVILEGE] on Object [type=STORAGEHANDLER_URI, name={db_file}]" in text, text
    assert not os.path.exists(db_file)
    root = as_user(srv, "root")
    root.execute("SET ROLE ADMIN")
    root.execute(f"CREATE TABLE jdbc_src (a INT) {jdbc.format(db_file)}")
    root.execute("GRANT SELECT ON jdbc_src TO USER frank")
    assert rows(frank, "SELECT count(*) FROM jdbc_src") == [(0,)]
    # A copy would be frank's, with the URL (and any password) of root's table.
    text = refused(frank, "CREATE TABLE f_copy LIKE jdbc_src")
    assert denial("frank", "CREATETABLE", ("OBJECT OWNERSHIP", "TABLE_OR_VIEW", "default.jdbc_src"),
                  ("ADMIN PRIVILEGE", "STORAGEHANDLER_URI", db_file)) in text, text
    alice.execute("CREATE TABLE native_src (a INT)")
    alice.execute("GRANT SELECT ON native_src TO USER frank")
    frank.execute("CREATE TABLE f_native_copy LIKE native_src")
    frank.execute("CREATE TABLE f_own (a INT)")
    # A handler named in TBLPROPERTIES would skip all of that: refused for everyone.
    handler_prop = "'storage_handler'='org.apache.hive.storage.jdbc.JdbcStorageHandler'"
    for sql in [f"CREATE TABLE f_fake (a INT) TBLPROPERTIES ({handler_prop}, "
                f"'hive.sql.jdbc.url'='jdbc:sqlite:{db_file}')",
                f"ALTER TABLE f_own SET TBLPROPERTIES ({handler_prop})"]:
        for who in (frank, root):
            assert "is set by STORED BY" in refused(who, sql), sql
    # (Hive's own rule already keeps a handler's table from dropping its handler.)
    assert "to a non-native table" in refused(root, "ALTER TABLE jdbc_src UNSET TBLPROPERTIES ('storage_handler')")
    # The owner of a handler's table pointing it at a file, or a copy's TBLPROPERTIES doing so.
    frank_file = str(tmp_path / "frank.db")
    root.execute(f"CREATE TABLE jdbc_frank (a INT) {jdbc.format(frank_file)}")
    root.execute("GRANT ALL ON jdbc_frank TO USER frank")
    for sql in [f"ALTER TABLE jdbc_frank SET TBLPROPERTIES ('hive.sql.jdbc.url'='jdbc:sqlite:{db_file}')",
                f"CREATE TABLE f_like LIKE jdbc_src TBLPROPERTIES ('hive.sql.jdbc.url'='jdbc:sqlite:{db_file}')"]:
        text = refused(frank, sql)
        assert "[ADMIN PRIVILEGE] on Object [type=" in text, (sql, text)
    # Renaming one's own table into another's database needs that database.
    alice.execute("CREATE DATABASE alice_only")
    text = refused(frank, "ALTER TABLE f_own RENAME TO alice_only.f_own")
    assert denial("frank", "ALTERTABLE_RENAME", ("OBJECT OWNERSHIP", "DATABASE", "alice_only")) in text, text
    assert rows(root, "SHOW TABLES IN alice_only") == []
    # DataFusion's writes under other forms.
    for sql in ["SELECT 1 AS a INTO f_into", "EXPLAIN ANALYZE SELECT 1 AS a INTO f_into"]:
        text = refused(frank, sql)
        assert "[ADMIN PRIVILEGE] on Object [type=COMMAND_PARAMS" in text, (sql, text)
    out = str(tmp_path / "copied")
    # (DataFusion plans no EXPLAIN of a COPY; whatever refuses it, nothing is written.)
    refused(frank, f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{out}.csv'")
    assert not os.path.exists(out + ".csv")
    # ALTER DATABASE is for admins in Hive's SQL-standard mode, even for the owner.
    frank.execute("CREATE DATABASE frank_db")
    text = refused(frank, "ALTER DATABASE frank_db SET DBPROPERTIES ('k'='v')")
    assert denial("frank", "ALTERDATABASE", ("ADMIN PRIVILEGE", "DATABASE", "frank_db")) in text, text
    assert "databases are owned by users here" in refused(root, "ALTER DATABASE frank_db SET OWNER ROLE public")
    # Role cycles, direct or through a chain, are refused as Hive refuses them.
    for r in ("cyc1", "cyc2", "cyc3"):
        root.execute(f"CREATE ROLE {r}")
    root.execute("GRANT ROLE cyc1 TO ROLE cyc2")
    root.execute("GRANT ROLE cyc2 TO ROLE cyc3")
    text = refused(root, "GRANT ROLE cyc3 TO ROLE cyc1")
    assert "Cannot grant role cyc1 to cyc3 as cyc3 already belongs to the role cyc1. (no cycles allowed)" in text, text
    assert "no cycles allowed" in refused(root, "GRANT ROLE cyc1 TO ROLE cyc1")


def test_get_columns_lists_only_tables_one_may_read(srv):
    alice = as_user(srv, "alice")
    alice.execute("CREATE TABLE cols_open (a INT)")
    alice.execute("CREATE TABLE cols_insert_only (b INT)")
    alice.execute("GRANT SELECT ON cols_open TO USER gina")
    alice.execute("GRANT INSERT ON cols_insert_only TO USER gina")
    cur = impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="PLAIN", user="gina",
                         password="x").cursor(user="gina")
    assert cur.get_table_schema("cols_open", "default") == [("a", "INT")]
    # The table itself is listed (a privilege is held), its columns are not.
    with pytest.raises(Exception, match="no schema results"):
        cur.get_table_schema("cols_insert_only", "default")
    cur.get_tables(database_name="default")
    listed = {r[2] for r in cur.fetchall()}
    assert {"cols_insert_only", "cols_open"} <= listed


def test_beeline_shows_hives_denial(srv):
    as_user(srv, "alice").execute("CREATE TABLE for_jdbc (a INT)")
    env = dict(os.environ, SPARK_HOME=SPARK_HOME)
    r = subprocess.run(
        [os.path.join(SPARK_HOME, "bin", "beeline"), "-u",
         f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default", "-n", "bob", "-e",
         "SELECT * FROM for_jdbc"],
        capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert ("Error: Error while compiling statement: FAILED: HiveAccessControlException "
            + denial("bob", "QUERY", ("SELECT", "TABLE_OR_VIEW", "default.for_jdbc"))
            + " (state=42000,code=40000)") in out, out[-2000:]


def test_grant_statements_need_authorization_on():
    s = Server()
    try:
        text = refused(as_user(s, "alice"), "CREATE ROLE r")
        assert "hive.security.authorization.enabled" in text
    finally:
        s.stop()
        shutil.rmtree(s.data, ignore_errors=True)


def test_two_servers_on_one_postgresql_metastore_enforce_the_same_grants(postgres):
    conf, warehouse = postgres.shared_catalog("apiary_authz")
    a, b = Server(*conf, *AUTHZ), Server(*conf, *AUTHZ)
    try:
        a_alice, b_bob, b_root = as_user(a, "alice"), as_user(b, "bob"), as_user(b, "root")
        a_alice.execute("CREATE TABLE shared_t (a INT)")
        a_alice.execute("INSERT INTO shared_t VALUES (1)")
        select = ("SELECT", "TABLE_OR_VIEW", "default.shared_t")
        assert denial("bob", "QUERY", select) in refused(b_bob, "SELECT * FROM shared_t")
        a_alice.execute("GRANT SELECT ON shared_t TO USER bob")
        assert rows(b_bob, "SELECT a FROM shared_t") == [(1,)]
        # A role made on server b, granted on a, is honoured on both.
        b_root.execute("SET ROLE ADMIN")
        b_root.execute("CREATE ROLE readers")
        a_root = as_user(a, "root")
        a_root.execute("SET ROLE ADMIN")
        a_root.execute("GRANT readers TO USER frank")
        a_alice.execute("GRANT SELECT ON shared_t TO ROLE readers")
        assert rows(as_user(b, "frank"), "SELECT a FROM shared_t") == [(1,)]
        a_alice.execute("REVOKE SELECT ON shared_t FROM USER bob")
        assert denial("bob", "QUERY", select) in refused(b_bob, "SELECT * FROM shared_t")
        grants = postgres.psql("SELECT object, principal, privilege FROM apiary_grants ORDER BY 1, 2, 3",
                               "apiary_authz").split()
        assert "table:default.shared_t|ROLE:readers|SELECT" in grants, grants
    finally:
        a.stop()
        b.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


def test_time_travel_reads_need_the_tables_grants(srv):
    """An earlier version of a table is the table: reading it needs SELECT on it, however the
    version is written (Hive's syntax, or the name it is planned under)."""
    alice, frank = as_user(srv, "alice"), as_user(srv, "frank")
    alice.execute("CREATE TABLE versioned (a INT) STORED BY DELTA")
    alice.execute("INSERT INTO versioned VALUES (1)")
    assert rows(alice, "SELECT a FROM versioned FOR SYSTEM_VERSION AS OF 1") == [(1,)]
    for sql in ["SELECT * FROM versioned FOR SYSTEM_VERSION AS OF 1", "SELECT * FROM `versioned@v1`",
                "SELECT * FROM default.`versioned@t99999999999999`"]:
        text = refused(frank, sql)
        assert "Permission denied" in text and "default.versioned" in text, (sql, text)
    alice.execute("GRANT SELECT ON versioned TO USER frank")
    assert rows(frank, "SELECT a FROM versioned FOR SYSTEM_VERSION AS OF 1") == [(1,)]
    alice.execute("DROP TABLE versioned")


def test_grant_and_roles_run_as_operations():
    """GRANT, REVOKE and the role statements are operations: with runAsync the RPC returns at
    once and a poll says how they ended; a query timeout or a cancel that comes before their one
    metastore change leaves the grants as they were."""
    from TCLIService import ttypes as T

    from test_operations import execute, state, wait_for
    s = Server(*AUTHZ, "--hiveconf", "apiary.failpoints=authz.before_change=sleep(3000)")
    try:
        alice = as_user(s, "alice")
        alice.execute("CREATE TABLE granted (id INT)")
        conn = hive.connect(host="127.0.0.1", port=s.binary_port, username="alice", auth="NONE")
        client, session = conn._client, conn._sessionHandle
        bob = as_user(s, "bob")
        # Timed out in the slow step before its change: nothing granted.
        resp = execute(client, session, "GRANT SELECT ON TABLE granted TO USER bob", timeout=1)
        op = resp.operationHandle
        assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
        st = wait_for(client, op, [T.TOperationState.TIMEDOUT_STATE], limit=20)
        assert "timed out" in st.errorMessage
        time.sleep(3)
        assert "Permission denied" in refused(bob, "SELECT * FROM granted")
        # Cancelled there: nothing granted either.
        op = execute(client, session, "GRANT SELECT ON TABLE granted TO USER bob").operationHandle
        r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
        assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
        assert state(client, op).operationState == T.TOperationState.CANCELED_STATE
        time.sleep(3)
        assert "Permission denied" in refused(bob, "SELECT * FROM granted")
        # Polled to its end: granted.
        op = execute(client, session, "GRANT SELECT ON TABLE granted TO USER bob").operationHandle
        assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
        wait_for(client, op, [T.TOperationState.FINISHED_STATE], limit=20)
        assert rows(bob, "SELECT count(*) FROM granted") == [(0,)]
        # A role statement's error is the poll's.
        op = execute(client, session, "CREATE ROLE analysts").operationHandle
        st = wait_for(client, op, [T.TOperationState.ERROR_STATE], limit=20)
        assert "alice is not allowed to add roles" in st.errorMessage, st.errorMessage
        conn.close()
    finally:
        s.stop()
        shutil.rmtree(s.data, ignore_errors=True)
