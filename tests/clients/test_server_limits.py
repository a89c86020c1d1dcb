"""What a statement may reach and change on the server, through real clients: the folders
of apiary.fs.allowed.paths (with `..`, symbolic links and file: URLs), the hosts of
apiary.jdbc.allowed.hosts, Hive's restricted and hidden configuration keys (SET, OpenSession's
configuration, the JDBC URL, a statement's confOverlay, Flight SQL) and the built-in function
lists."""

import os
import shutil
import tempfile

import pytest
from impala.error import HiveServer2Error
from pyhive.exc import OperationalError

import clients
from clients import rows
import flight
from conftest import Server
from test_jdbc_beeline import beeline

DENIED = "apiary.fs.allowed.paths"


def status_of(exc):
    """The TStatus PyHive's OperationalError carries."""
    return exc.value.args[0].status


def refused(cur, sql, *words):
    with pytest.raises(OperationalError) as e:
        cur.execute(sql)
    status = status_of(e)
    for w in words:
        assert w in status.errorMessage, status.errorMessage
    return status


@pytest.fixture(scope="module")
def fenced():
    """A server whose statements may use only `allowed/` (and the warehouse); `outside/`
    holds a data file and `allowed/link` points at it."""
    root = tempfile.mkdtemp(prefix="apiary-fence-")
    allowed = os.path.join(root, "allowed")
    outside = os.path.join(root, "outside")
    os.makedirs(allowed)
    os.makedirs(outside)
    for folder in (allowed, outside):
        with open(os.path.join(folder, "rows.txt"), "w") as f:
            f.write("1\n2\n3\n")
    os.symlink(outside, os.path.join(allowed, "link"))
    srv = Server("--hiveconf", f"apiary.fs.allowed.paths={allowed}")
    yield srv, allowed, outside
    srv.stop()
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(srv.data, ignore_errors=True)


def test_load_data_reads_only_allowed_folders(fenced):
    srv, allowed, outside = fenced
    cur = clients.pyhive_none(srv).cursor()
    cur.execute("CREATE TABLE loaded (n INT)")
    for path in (os.path.join(outside, "rows.txt"),
                 os.path.join(allowed, "..", "outside", "rows.txt"),
                 os.path.join(allowed, "link", "rows.txt"),
                 "file://" + os.path.join(outside, "rows.txt"),
                 "File:" + os.path.join(outside, "rows.txt"),
                 f"file://{allowed}/x#/../../outside/rows.txt",
                 f"file://{allowed}/link/../outside/rows.txt",
                 "/etc/passwd"):
        for local in ("LOCAL ", ""):
            st = refused(cur, f"LOAD DATA {local}INPATH '{path}' INTO TABLE loaded",
                         "Permission denied", DENIED, path)
            assert st.errorCode == 40000 and st.sqlState == "42000"
            # The error names the path, never what the file holds.
            assert "root:" not in st.errorMessage
    assert rows(cur, "SELECT count(*) FROM loaded") == [(0,)]
    cur.execute(f"LOAD DATA LOCAL INPATH '{os.path.join(allowed, 'rows.txt')}' INTO TABLE loaded")
    assert rows(cur, "SELECT sum(n) FROM loaded") == [(6,)]
    cur.execute("DROP TABLE loaded")


def test_locations_stay_inside_allowed_folders(fenced):
    srv, allowed, outside = fenced
    cur = clients.pyhive_none(srv).cursor()
    target = os.path.join(outside, "new_table")
    for sql in (f"CREATE EXTERNAL TABLE ext_out (n INT) LOCATION '{target}'",
                f"CREATE TABLE ctas_out LOCATION '{target}' AS SELECT 1 AS n",
                f"CREATE EXTERNAL TABLE ext_link (n INT) LOCATION '{os.path.join(allowed, 'link', 'x')}'",
                f"CREATE DATABASE db_out LOCATION '{target}'"):
        refused(cur, sql, "Permission denied", DENIED)
    assert not os.path.exists(target)
    tables = [r[0] for r in rows(cur, "SHOW TABLES")]
    assert not {"ext_out", "ctas_out", "ext_link"} & set(tables)
    assert "db_out" not in [r[0] for r in rows(cur, "SHOW DATABASES")]

    # Inside the allowed folder (and in the warehouse) tables work as before.
    inside = os.path.join(allowed, "ext_in")
    cur.execute(f"CREATE EXTERNAL TABLE ext_in (n INT) LOCATION 'file://{inside}'")
    cur.execute("INSERT INTO ext_in VALUES (7)")
    assert rows(cur, "SELECT n FROM ext_in") == [(7,)]
    cur.execute("CREATE TABLE managed_in (n INT) PARTITIONED BY (k INT)")
    cur.execute("INSERT INTO managed_in PARTITION (k=1) VALUES (1)")

    # ALTER .. SET LOCATION and ADD PARTITION .. LOCATION are held to the same folders.
    refused(cur, f"ALTER TABLE ext_in SET LOCATION '{target}'", DENIED)
    refused(cur, f"ALTER TABLE managed_in ADD PARTITION (k=2) LOCATION '{target}'", DENIED)
    refused(cur, f"ALTER TABLE managed_in PARTITION (k=1) SET LOCATION '{target}'", DENIED)
    assert rows(cur, "SHOW PARTITIONS managed_in") == [("k=1",)]
    assert rows(cur, "SELECT n FROM ext_in") == [(7,)]
    assert not os.path.exists(target)
    cur.execute("DROP TABLE ext_in")
    cur.execute("DROP TABLE managed_in")


def test_datafusion_paths_and_sqlite_files_are_checked(fenced):
    srv, allowed, outside = fenced
    cur = clients.pyhive_none(srv).cursor()
    # DataFusion's own ways to name a file: not served, whatever the path.
    for sql in (f"SELECT * FROM '{os.path.join(outside, 'rows.txt')}'",
                f"COPY (SELECT 1 AS n) TO '{os.path.join(outside, 'copied.csv')}'"):
        with pytest.raises(OperationalError) as e:
            cur.execute(sql)
        assert "1\n2\n3" not in status_of(e).errorMessage
    # DataFusion's CREATE EXTERNAL TABLE form, and Hive's INSERT OVERWRITE [LOCAL] DIRECTORY
    # (not supported, but its path is checked first).
    refused(cur, f"CREATE EXTERNAL TABLE df_out STORED AS CSV LOCATION '{outside}/'", DENIED)
    for local in ("LOCAL ", ""):
        refused(cur, f"INSERT OVERWRITE {local}DIRECTORY '{os.path.join(outside, 'dir')}' SELECT 1",
                "Permission denied", DENIED)
    refused(cur, f"INSERT OVERWRITE LOCAL DIRECTORY '{os.path.join(allowed, 'dir')}' SELECT 1",
            "INSERT OVERWRITE [LOCAL] DIRECTORY is not supported")
    assert sorted(os.listdir(outside)) == ["rows.txt"]
    # A jdbc:sqlite: URL names a file the server opens.
    db = os.path.join(outside, "remote.db")
    refused(cur, "CREATE TABLE lite_out (id INT) STORED BY JDBC TBLPROPERTIES ("
                 f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{db}', "
                 "'hive.sql.table'='lite')", DENIED)
    assert not os.path.exists(db)
    inside = os.path.join(allowed, "remote.db")
    cur.execute("CREATE TABLE lite_in (id INT) STORED BY JDBC TBLPROPERTIES ("
                f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{inside}', "
                "'hive.sql.table'='lite')")
    cur.execute("INSERT INTO lite_in VALUES (5)")
    assert rows(cur, "SELECT id FROM lite_in") == [(5,)]
    cur.execute("DROP TABLE lite_in")


def test_jdbc_tables_reach_only_allowed_hosts():
    srv = Server("--hiveconf", "apiary.jdbc.allowed.hosts=127.0.0.1:1")
    try:
        cur = clients.pyhive_none(srv).cursor()
        props = ("TBLPROPERTIES ('hive.sql.database.type'='POSTGRES', "
                 "'hive.sql.jdbc.url'='jdbc:postgresql://{}/db', 'hive.sql.table'='t')")
        # Not on the list: refused before any connection (an address that would hang).
        st = refused(cur, "CREATE EXTERNAL TABLE far (id INT) STORED BY JDBC " + props.format("10.255.255.1:5432"),
                     "host 10.255.255.1:5432 is not among the hosts", "apiary.jdbc.allowed.hosts")
        assert "cannot connect" not in st.errorMessage.lower()
        refused(cur, "CREATE EXTERNAL TABLE far (id INT) STORED BY JDBC " + props.format("127.0.0.1:2"),
                "apiary.jdbc.allowed.hosts")
        # On the list: the server tries it (nothing listens there).
        st = refused(cur, "CREATE EXTERNAL TABLE near (id INT) STORED BY JDBC " + props.format("127.0.0.1:1"))
        assert "apiary.jdbc.allowed.hosts" not in st.errorMessage
        assert "connect" in st.errorMessage.lower(), st.errorMessage
        assert [r for r in rows(cur, "SHOW TABLES") if r[0] in ("far", "near")] == []
    finally:
        srv.stop()


RESTRICTED = "at runtime. It is in the list of parameters that can't be modified at runtime or is prefixed by a restricted variable"


@pytest.fixture(scope="module")
def secret_server():
    srv = Server("--hiveconf", "javax.jdo.option.ConnectionPassword=topsecret-1",
                 "--hiveconf", "fs.s3a.secret.key=topsecret-2",
                 "--hiveconf", "hive.conf.hidden.list=javax.jdo.option.ConnectionPassword,fs.s3a.")
    yield srv
    srv.stop()
    shutil.rmtree(srv.data, ignore_errors=True)


def test_restricted_keys_are_refused_by_set(secret_server):
    cur = clients.pyhive_none(secret_server).cursor()
    for key in ("hive.security.authorization.enabled", "hive.server2.authentication",
                "hive.server2.authentication.ldap.url", "hive.conf.restricted.list",
                "hive.conf.hidden.list", "apiary.fs.allowed.paths", "apiary.memory.pool.size",
                "hive.metastore.warehouse.dir", "javax.jdo.option.ConnectionPassword",
                "hive.server2.builtin.udf.blacklist", "datafusion.runtime.memory_limit"):
        st = refused(cur, f"SET {key}=x", f"Error while processing statement: Cannot modify {key} {RESTRICTED}")
        assert st.errorCode == 1 and st.sqlState == "42000"
        refused(cur, f"SET hiveconf:{key}=x", f"Cannot modify {key} ")
    # Ordinary keys stay settable.
    cur.execute("SET hive.exec.dynamic.partition.mode=nonstrict")
    assert rows(cur, "SET hive.exec.dynamic.partition.mode") == [("hive.exec.dynamic.partition.mode=nonstrict",)]
    cur.execute("SET hive.query.timeout.seconds=30")


def test_restricted_keys_are_refused_at_open_session_and_in_overlays(secret_server):
    srv = secret_server
    with pytest.raises(OperationalError) as e:
        clients.pyhive_none(srv, configuration={"hive.security.authorization.enabled": "false"})
    assert ("Failed to open new session: java.lang.IllegalArgumentException: Cannot modify "
            f"hive.security.authorization.enabled {RESTRICTED}") in str(e.value)
    with pytest.raises(Exception) as e:
        clients.impyla_http(srv).cursor(configuration={"apiary.fs.allowed.paths": "/"})
    assert "Cannot modify apiary.fs.allowed.paths" in str(e.value)
    # A statement's confOverlay (impyla sends a cursor's configuration so).
    cur = clients.impyla_plain(srv).cursor()
    with pytest.raises(HiveServer2Error) as e:
        cur.execute("SELECT 1", configuration={"hive.users.in.admin.role": "bob"})
    assert "Error applying statement specific settings: Cannot modify hive.users.in.admin.role" in str(e.value)
    cur.execute("SELECT 1", configuration={"hive.query.timeout.seconds": "30"})
    assert cur.fetchall() == [(1,)]
    # The JDBC URL's ?key=value part.
    r = beeline(f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default?hive.security.authorization.enabled=false",
                "-e", "SELECT 1")
    assert "Cannot modify hive.security.authorization.enabled" in r.stdout + r.stderr
    # Flight SQL sessions obey the same list.
    with flight.adbc_connect(srv) as conn, conn.cursor() as fcur:
        with pytest.raises(Exception) as e:
            fcur.execute("SET apiary.flightsql.port=1")
        assert "Cannot modify apiary.flightsql.port" in str(e.value)


def test_hidden_keys_are_never_shown(secret_server):
    cur = clients.pyhive_none(secret_server).cursor()
    everything = rows(cur, "SET") + rows(cur, "SET -v")
    assert everything, "SET lists the session's configuration"
    assert rows(cur, "SET javax.jdo.option.ConnectionPassword") == \
        [("javax.jdo.option.ConnectionPassword is a hidden config",)]
    assert rows(cur, "SET hiveconf:fs.s3a.secret.key") == [("hiveconf:fs.s3a.secret.key is a hidden config",)]
    substituted = rows(cur, "SELECT '${hiveconf:javax.jdo.option.ConnectionPassword}', '${hiveconf:fs.s3a.secret.key}'")
    text = repr(everything + substituted)
    assert "topsecret" not in text
    assert not [line for line in everything if line[0].startswith(("javax.jdo.option.ConnectionPassword", "fs.s3a."))]
    # Setting a hidden key is refused like a restricted one.
    refused(cur, "SET fs.s3a.secret.key=mine", "Cannot modify fs.s3a.secret.key")


def test_builtin_function_lists():
    black = Server("--hiveconf", "hive.server2.builtin.udf.blacklist=md5,upper,size")
    white = Server("--hiveconf", "hive.server2.builtin.udf.whitelist=abs,count,concat")
    try:
        cur = clients.pyhive_none(black).cursor()
        st = refused(cur, "SELECT md5('a')", "Error while compiling statement: FAILED: SemanticException UDF md5 is not allowed")
        assert st.errorCode == 40000 and st.sqlState == "42000"
        refused(cur, "SELECT n FROM (SELECT 1 AS n) t WHERE upper('a') = 'A'", "UDF upper is not allowed")
        refused(cur, "SELECT * FROM (SELECT 1 AS n) t WHERE n IN (SELECT length(md5('x')))", "UDF md5 is not allowed")
        refused(cur, "CREATE VIEW shouting AS SELECT upper('a') AS u", "UDF upper is not allowed")
        # Hive's names as written, whatever Apiary rewrites them to.
        refused(cur, "SELECT size(array(1, 2))", "UDF size is not allowed")
        assert rows(cur, "SELECT lower('A'), length('abc')") == [("a", 3)]
        cur = clients.pyhive_none(white).cursor()
        assert rows(cur, "SELECT abs(-2), concat('a', 'b'), count(*) FROM (SELECT 1) t") == [(2, "ab", 1)]
        refused(cur, "SELECT lower('A')", "UDF lower is not allowed")
        # Casts and literals are no functions, whatever they are planned as.
        assert rows(cur, "SELECT CAST('abc' AS VARCHAR(2)), abs(-1)") == [("ab", 1)]
    finally:
        black.stop()
        white.stop()


def test_without_authentication_any_user_may_be_acted_as(secret_server):
    """With auth NONE, Hive substitutes hive.server2.proxy.user without a rule."""
    conn = clients.pyhive_none(secret_server, configuration={"hive.server2.proxy.user": "dora"})
    assert rows(conn.cursor(), "SELECT current_user()") == [("dora",)]
    conn.close()
