"""Nothing a client sends crashes the server, exhausts it, or deletes what it does not own:
one test per case of the robustness issue, each through a real client (PyHive over the binary
or HTTP transport, or a raw socket where the case is about bytes on the wire)."""

import os
import re
import shutil
import socket
import sqlite3
import struct
import tempfile
import threading
import time

import pytest
from pyhive import hive

import clients
from conftest import Server


@pytest.fixture(scope="module")
def srv():
    s = Server()
    yield s
    assert s.alive(), "server died:\n" + s.server_log()[-3000:]
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


def cursor(s, user="alice", **kw):
    conn = hive.connect(host="127.0.0.1", port=s.binary_port, username=user, auth="NONE", **kw)
    c = conn.cursor()
    c.conn = conn
    return c


def error_of(cur, sql):
    with pytest.raises(Exception) as e:
        cur.execute(sql)
        cur.fetchall()
    return str(e.value)


def still_serves(s):
    c = cursor(s, user="carol")
    c.execute("SELECT 40 + 2")
    assert c.fetchall() == [(42,)]
    c.conn.close()


def data_dir(s):
    return os.path.join(s.data, "d")


def warehouse(s):
    return os.path.join(data_dir(s), "warehouse")


def files_under(path):
    out = set()
    for root, _, names in os.walk(path):
        for n in names:
            out.add(os.path.relpath(os.path.join(root, n), path))
    return out


# --- Names and paths ---------------------------------------------------------------------

def test_dot_dot_and_slash_names_are_refused_and_nothing_is_deleted(srv):
    cur = cursor(srv)
    before = set(os.listdir(data_dir(srv)))
    assert "Table or database name may not contain dot(.) character" in error_of(cur, "CREATE TABLE `..` (a INT)")
    assert "Table or database name may not contain dot(.) character" in error_of(cur, "DROP TABLE `..`")
    assert "Table or database name may not contain dot(.) character" in error_of(cur, "CREATE TABLE `../../x` (a INT)")
    assert "is not a valid object name" in error_of(cur, "CREATE TABLE `a/b` (a INT)")
    assert "is not a valid database name" in error_of(cur, "CREATE DATABASE `x/y`")
    assert "is not a valid object name" in error_of(cur, "CREATE TABLE `` (a INT)")
    cur.execute("CREATE TABLE ok_name (a INT)")
    assert "is not a valid object name" in error_of(cur, "ALTER TABLE ok_name RENAME TO `bad-name`")
    assert "[., :] can not be used in column name" in error_of(cur, "CREATE TABLE c1 (`a.b` INT)")
    assert "[., :] can not be used in column name" in error_of(cur, "CREATE TABLE c2 (`a:b` INT)")
    # The metastore, its WAL and the warehouse are all still there.
    assert before <= set(os.listdir(data_dir(srv)))
    assert not os.path.exists(os.path.join(srv.data, "x"))
    cur.execute("SHOW TABLES")
    assert ("ok_name",) in cur.fetchall()
    cur.execute("DROP TABLE ok_name")
    still_serves(srv)


def test_partition_keys_and_values_are_escaped_inside_the_table(srv):
    cur = cursor(srv)
    cur.execute("CREATE TABLE esc (a INT) PARTITIONED BY (`k/x` STRING)")
    cur.execute("INSERT INTO esc PARTITION (`k/x`='../../evil') VALUES (1)")
    cur.execute("INSERT INTO esc PARTITION (`k/x`='a=b:c') VALUES (2)")
    table = os.path.join(warehouse(srv), "esc")
    dirs = sorted(d for d in os.listdir(table) if not d.startswith("."))
    assert dirs == ["k%2Fx=..%2F..%2Fevil", "k%2Fx=a%3Db%3Ac"], dirs
    assert not os.path.exists(os.path.join(warehouse(srv), "evil"))
    cur.execute("SHOW PARTITIONS esc")
    assert sorted(r[0] for r in cur.fetchall()) == dirs
    cur.execute("SELECT a, `k/x` FROM esc ORDER BY a")
    assert cur.fetchall() == [(1, "../../evil"), (2, "a=b:c")]
    cur.execute("DROP TABLE esc")
    assert not os.path.exists(table)


# --- Apiary deletes only what it owns ----------------------------------------------------

def foreign_folder():
    d = tempfile.mkdtemp(prefix="apiary-foreign-")
    with open(os.path.join(d, "keep.txt"), "w") as f:
        f.write("1\n2\n")
    os.mkdir(os.path.join(d, "sub"))
    with open(os.path.join(d, "sub", "precious.bin"), "wb") as f:
        f.write(b"\x00" * 10)
    return d


def test_managed_table_on_a_foreign_location_keeps_its_files(srv):
    cur = cursor(srv)
    d = foreign_folder()
    before = files_under(d)
    cur.execute(f"CREATE TABLE foreign_m (a STRING) LOCATION '{d}'")
    cur.execute("SELECT count(*) FROM foreign_m")
    assert cur.fetchall() == [(2,)]
    err = error_of(cur, "TRUNCATE TABLE foreign_m")
    assert "Cannot truncate table default.foreign_m" in err and "does not delete" in err, err
    err = error_of(cur, "INSERT OVERWRITE TABLE foreign_m SELECT 'x'")
    assert "Cannot overwrite table default.foreign_m" in err, err
    assert files_under(d) == before
    cur.execute("DROP TABLE foreign_m")
    logs = "\n".join(cur.fetch_logs())
    assert "kept" in logs or "not delet" in logs, logs
    assert files_under(d) == before
    shutil.rmtree(d)


def test_external_table_flipped_to_managed_keeps_its_files(srv):
    cur = cursor(srv)
    d = foreign_folder()
    before = files_under(d)
    cur.execute(f"CREATE EXTERNAL TABLE flipped (a STRING) LOCATION '{d}'")
    cur.execute("ALTER TABLE flipped SET TBLPROPERTIES ('EXTERNAL'='FALSE')")
    assert "Cannot truncate table default.flipped" in error_of(cur, "TRUNCATE TABLE flipped")
    cur.execute("DROP TABLE flipped")
    assert files_under(d) == before
    shutil.rmtree(d)


def test_a_managed_table_apiary_created_is_deleted_whole(srv):
    cur = cursor(srv)
    cur.execute("CREATE TABLE mine (a INT)")
    cur.execute("INSERT INTO mine VALUES (1), (2)")
    path = os.path.join(warehouse(srv), "mine")
    assert os.path.exists(os.path.join(path, ".apiary-table"))
    cur.execute("TRUNCATE TABLE mine")
    cur.execute("SELECT count(*) FROM mine")
    assert cur.fetchall() == [(0,)]
    cur.execute("INSERT OVERWRITE TABLE mine SELECT 3")
    cur.execute("SELECT a FROM mine")
    assert cur.fetchall() == [(3,)]
    cur.execute("DROP TABLE mine")
    assert not os.path.exists(path)


# --- Depth and substitution --------------------------------------------------------------

def test_long_expressions_run_and_longer_ones_get_a_clear_error(srv):
    cur = cursor(srv)
    cur.execute("SELECT " + "+".join(["1"] * 2000))
    assert cur.fetchall() == [(2000,)]
    err = error_of(cur, "SELECT " + "+".join(["1"] * 200_000))
    assert "nest" in err.lower() or "too" in err.lower(), err
    err = error_of(cur, "SELECT " + "(" * 5000 + "1" + ")" * 5000)
    assert "deeper than" in err or "nest" in err.lower(), err
    still_serves(srv)


def test_recursive_substitution_stops_at_hives_depth(srv):
    cur = cursor(srv)
    cur.execute("SET hivevar:z=${z}")
    err = error_of(cur, "SELECT '${z}'")
    assert "Variable substitution depth is deeper than 40 for expression SELECT '${z}'" in err, err
    # A value that doubles on every pass hits the length bound long before 40 passes.
    cur.execute("SET hivevar:x=${x}${x}")
    err = error_of(cur, "SELECT '${x}'")
    assert "Variable substitution result is longer than 16777216 characters" in err, err
    cur.execute("SET hivevar:y=ab")
    cur.execute("SELECT '${y}${hivevar:y}'")
    assert cur.fetchall() == [("abab",)]
    still_serves(srv)


def test_union_of_double_and_bigint(srv):
    cur = cursor(srv)
    cur.execute("SELECT CAST(1 AS DOUBLE) AS v UNION ALL SELECT CAST(2 AS BIGINT) ORDER BY v")
    assert cur.fetchall() == [(1.0,), (2.0,)]
    cur.execute("SELECT 'a' AS s UNION ALL SELECT CAST(NULL AS STRING)")
    assert sorted(cur.fetchall(), key=str) == [("a",), (None,)]
    still_serves(srv)


# --- Failure containment -----------------------------------------------------------------

def test_a_panic_in_a_query_is_that_operations_error():
    s = Server("--hiveconf", "apiary.failpoints=query.batch=panic,task.run=panic")
    try:
        cur = cursor(s)
        err = error_of(cur, "SELECT 1")
        assert "panic" in err.lower(), err
        # Asynchronously: the operation ends in ERROR, it does not stay RUNNING.
        cur.execute("SELECT 2", async_=True)
        deadline = time.time() + 20
        from TCLIService.ttypes import TOperationState
        while time.time() < deadline:
            state = cur.poll().operationState
            if state not in (TOperationState.INITIALIZED_STATE, TOperationState.RUNNING_STATE,
                             TOperationState.PENDING_STATE):
                break
            time.sleep(0.1)
        assert state == TOperationState.ERROR_STATE
        cur.execute("CREATE TABLE p (a INT)")
        err = error_of(cur, "INSERT INTO p VALUES (1)")
        assert "panic" in err.lower(), err
        # The server and other sessions go on.
        assert s.alive()
        c2 = cursor(s, user="dave")
        c2.execute("USE default")
        c2.execute("CREATE TABLE q (a INT)")
    finally:
        s.stop()


def test_a_bad_table_at_start_up_is_marked_and_the_server_comes_up():
    s = Server()
    cur = cursor(s)
    cur.execute("CREATE TABLE good (a INT)")
    cur.execute("INSERT INTO good VALUES (7)")
    cur.execute("CREATE TABLE bad (a INT)")
    cur.conn.close()
    s.stop()
    db = sqlite3.connect(os.path.join(data_dir(s), "metastore.db"))
    db.execute("UPDATE tbls SET definition = '{not json' WHERE name = 'bad'")
    db.commit()
    db.close()
    # A staging folder of another server sharing this warehouse must survive our start-up.
    other = os.path.join(warehouse(s), "good", ".apiary-staging-0123456789ab-abc")
    os.makedirs(other)
    s2 = Server(data=s.data)
    try:
        cur = cursor(s2)
        cur.execute("SELECT a FROM good")
        assert cur.fetchall() == [(7,)]
        err = error_of(cur, "SELECT * FROM bad")
        assert "unavailable" in err or "bad" in err, err
        cur.execute("SHOW TABLES")
        assert ("good",) in cur.fetchall()
        assert os.path.isdir(other), "start-up recovery deleted another server's staging folder"
        assert "marked unavailable" in s2.server_log()
    finally:
        s2.stop()
        shutil.rmtree(s.data, ignore_errors=True)


# --- Gateway limits ----------------------------------------------------------------------

def test_per_user_session_quota_over_http_leaves_others_in():
    s = Server("--hiveconf", "hive.server2.limit.connections.per.user=5")
    try:
        held = [hive.connect(host="127.0.0.1", port=s.http_port, scheme="http", username="hog")
                for _ in range(5)]
        with pytest.raises(Exception) as e:
            hive.connect(host="127.0.0.1", port=s.http_port, scheme="http", username="hog")
        assert "Connection limit per user reached (user: hog limit: 5)" in str(e.value)
        with pytest.raises(Exception) as e:
            cursor(s, user="hog")
        assert "Connection limit per user reached (user: hog limit: 5)" in str(e.value)
        still_serves(s)
        held[0].close()
        cursor(s, user="hog").execute("SELECT 1")
    finally:
        s.stop()


def open_raw_http_session(s, user):
    """OpenSession over the HTTP transport with Thrift's own client, never closed: a client
    that goes away leaving its session. Returns the response's status."""
    import base64
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import THttpClient
    from TCLIService import TCLIService, ttypes
    transport = THttpClient.THttpClient(f"http://127.0.0.1:{s.http_port}/cliservice")
    token = base64.b64encode(f"{user}:x".encode()).decode()
    transport.setCustomHeaders({"Authorization": "Basic " + token})
    client = TCLIService.Client(TBinaryProtocol.TBinaryProtocol(transport))
    resp = client.OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username=user))
    return resp.status


def test_one_user_cannot_take_every_session_by_default():
    # Only the global cap is set: the per-user limit is derived from it (a tenth: 4 of 40).
    s = Server("--hiveconf", "apiary.max.sessions=40")
    try:
        statuses = [open_raw_http_session(s, "hog") for _ in range(40)]
        opened = [st for st in statuses if st.statusCode == 0]
        refused = [st for st in statuses if st.statusCode != 0]
        assert len(opened) == 4, [st.errorMessage for st in refused][:1]
        assert all("Connection limit per user reached (user: hog limit: 4)" in st.errorMessage
                   for st in refused), refused[0].errorMessage
        # Everyone else still gets in, over both transports.
        still_serves(s)
        other = [open_raw_http_session(s, f"user{i}") for i in range(30)]
        assert all(st.statusCode == 0 for st in other), other[0].errorMessage
        assert "lets one user hold all" not in s.server_log()
    finally:
        s.stop()


def test_a_per_user_limit_that_lets_one_user_take_all_is_warned_about():
    for value in ["0", "40", "100"]:
        s = Server("--hiveconf", "apiary.max.sessions=40",
                   "--hiveconf", f"hive.server2.limit.connections.per.user={value}")
        try:
            log = s.server_log()
            assert (f"hive.server2.limit.connections.per.user={value} lets one user hold all "
                    "apiary.max.sessions=40 sessions") in log, log[-2000:]
        finally:
            s.stop()
    import subprocess
    keys = subprocess.run([os.environ["APIARY_BIN"], "keys"], capture_output=True, text=True,
                          check=True).stdout
    line = next(l for l in keys.splitlines() if l.startswith("hive.server2.limit.connections.per.user "))
    assert "a tenth of apiary.max.sessions" in line, line


def test_per_address_session_quota():
    s = Server("--hiveconf", "hive.server2.limit.connections.per.ipaddress=2")
    try:
        a, b = cursor(s, user="u1"), cursor(s, user="u2")
        with pytest.raises(Exception) as e:
            cursor(s, user="u3")
        assert "Connection limit per ipaddress reached (ipaddress: 127.0.0.1 limit: 2)" in str(e.value)
        a.conn.close()
        cursor(s, user="u3").execute("SELECT 1")
    finally:
        s.stop()


def test_open_operations_are_capped_per_session():
    s = Server("--hiveconf", "apiary.session.max.operations=5")
    try:
        conn = hive.connect(host="127.0.0.1", port=s.binary_port, username="leaky")
        cursors = []
        for i in range(5):
            c = conn.cursor()
            c.execute(f"SELECT {i}")
            cursors.append(c)
        with pytest.raises(Exception) as e:
            conn.cursor().execute("SELECT 99")
        assert "Too many open operations in this session" in str(e.value)
        # Closing one frees a place; other sessions were never affected.
        cursors[0].close()
        c = conn.cursor()
        c.execute("SELECT 5")
        assert c.fetchall() == [(5,)]
        still_serves(s)
    finally:
        s.stop()


def test_unfetched_results_are_bounded_per_session_and_all_still_fetchable():
    s = Server("--hiveconf", "apiary.session.result.buffer.size=4m")
    try:
        conn = hive.connect(host="127.0.0.1", port=s.binary_port, username="hoarder")
        rss_before = s.rss_kib()
        cursors = []
        for _ in range(30):
            c = conn.cursor()
            c.execute("SELECT id, repeat('x', 200) FROM range(200000) t(id)")
            cursors.append(c)
        time.sleep(1.0)
        grown_mib = (s.rss_kib() - rss_before) / 1024
        # 30 operations x 200,000 rows x 200 bytes would be 1.2 GB if produced ahead of the
        # client; with a 4 MB budget each holds at most about one batch.
        assert grown_mib < 400, f"RSS grew {grown_mib:.0f} MiB"
        # No deadlock: the last and the first operation can both be read to the end.
        for c in (cursors[-1], cursors[0]):
            assert clients.fetch_count(c, 10000) == 200000
        still_serves(s)
    finally:
        s.stop()


def sasl_login(port, user=b"idle"):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"\x01" + struct.pack(">I", 5) + b"PLAIN")
    payload = b"\x00" + user + b"\x00pw"
    sock.sendall(b"\x05" + struct.pack(">I", len(payload)) + payload)
    assert sock.recv(5)[0] == 5
    return sock


def test_silent_logged_in_connections_do_not_starve_new_clients():
    s = Server("--hiveconf", "hive.server2.thrift.max.worker.threads=3",
               "--hiveconf", "hive.server2.thrift.login.timeout=2s")
    try:
        held = [sasl_login(s.binary_port) for _ in range(3)]
        start = time.time()
        # The new client waits for a slot; the silent ones are closed after the login timeout.
        cur = cursor(s, user="newcomer")
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
        assert time.time() - start < 15
        for h in held:
            h.settimeout(5)
            assert h.recv(10) == b""
        assert "no session opened and silent" in s.server_log()
        # Over HTTP, a connection silent before or between requests is closed just as soon.
        h = socket.create_connection(("127.0.0.1", s.http_port), timeout=10)
        h.sendall(b"POST /cliservice HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert h.recv(65536).startswith(b"HTTP/1.1")
        start = time.time()
        assert h.recv(100) == b""
        assert time.time() - start < 8
    finally:
        s.stop()


def thrift_string(b):
    return struct.pack(">i", len(b)) + b


def test_trickled_message_costs_linear_time(srv):
    # An OpenSession whose configuration carries 2 MiB, sent 2 KiB at a time over NOSASL.
    name = b"OpenSession"
    big = b"v" * (2 << 20)
    args = (b"\x0c" + struct.pack(">h", 1)
            + b"\x08" + struct.pack(">h", 1) + struct.pack(">i", 9)
            + b"\x0d" + struct.pack(">h", 4) + b"\x0b\x0b" + struct.pack(">i", 1)
            + thrift_string(b"set:hivevar:big") + thrift_string(big)
            + b"\x00" + b"\x00")
    msg = struct.pack(">I", 0x80010001) + thrift_string(name) + struct.pack(">i", 1) + args
    cpu_before = srv_cpu_seconds(srv)
    sock = socket.create_connection(("127.0.0.1", srv.binary_port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(0, len(msg), 2048):
        sock.sendall(msg[i:i + 2048])
        if i % (64 * 2048) == 0:
            time.sleep(0.001)
    reply = b""
    while len(reply) < 40:
        chunk = sock.recv(65536)
        assert chunk, "server closed the connection"
        reply += chunk
    assert b"OpenSession" in reply
    sock.close()
    used = srv_cpu_seconds(srv) - cpu_before
    # Re-decoding from the start on each of ~1,000 reads would walk about 1 GB; one walk is
    # 2 MiB. The bound is loose: it only tells linear from quadratic.
    assert used < 5.0, f"server used {used:.2f} s of CPU for one trickled 2 MiB message"
    still_serves(srv)


def srv_cpu_seconds(s):
    with open(f"/proc/{s.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- Memory ------------------------------------------------------------------------------

def test_a_query_bigger_than_the_memory_pool_spills_or_fails_cleanly():
    pool_mib = 512
    s = Server("--hiveconf", f"apiary.memory.pool.size={pool_mib}m")
    try:
        cur = cursor(s)
        peak = [s.rss_kib()]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], s.rss_kib())
                time.sleep(0.05)

        t = threading.Thread(target=sample)
        t.start()
        # 80M distinct keys: about 3.4 GB without a pool (50M took 2.1 GB when measured).
        n = 80_000_000
        try:
            cur.execute(f"SELECT count(*), sum(c) FROM (SELECT (id * 7919) % {n} AS k, count(*) AS c "
                        f"FROM range({n}) t(id) GROUP BY 1) g")
            result = cur.fetchall()
            assert result == [(n, n)], result
            outcome = "spilled"
        except Exception as e:  # a clean failure is allowed; a dead server is not
            assert "Resources exhausted" in str(e) or "resources exhausted" in str(e).lower(), str(e)
            outcome = "failed cleanly"
        finally:
            stop.set()
            t.join()
        peak_mib = peak[0] / 1024
        overhead_mib = peak_mib - pool_mib
        print(f"memory: {n:,} groups with a {pool_mib} MiB pool {outcome}; peak RSS {peak_mib:.0f} MiB "
              f"(pool + {overhead_mib:.0f} MiB)")
        # docs/operations.md documents the overhead above the pool: up to 512 MiB.
        assert peak_mib < pool_mib + 512, f"peak RSS {peak_mib:.0f} MiB"
        assert s.alive()
        still_serves(s)
    finally:
        s.stop()


def test_under_an_address_space_limit_a_big_group_by_leaves_the_server_up():
    """`ulimit -v` (RLIMIT_AS) sizes the default pool with the machine's and the cgroup's
    memory, minus the server's own threads and stacks, and the pool keeps room for a hash
    table's growth: a GROUP BY over more distinct keys than fit spills or fails with
    "Resources exhausted", and the server goes on serving everyone."""
    limit_mib = 3072
    s = Server(wrapper=["prlimit", f"--as={limit_mib << 20}", "--"])
    try:
        with open(f"/proc/{s.proc.pid}/limits") as f:
            assert any(l.startswith("Max address space") and str(limit_mib << 20) in l for l in f)
        log = s.server_log()
        pool = re.search(r"memory_pool=Some\((\d+)\)", log)
        assert pool, log[-2000:]
        pool_mib = int(pool.group(1)) >> 20
        assert 16 <= pool_mib < limit_mib // 2, pool_mib
        cur = cursor(s)
        # 60M distinct keys: a hash table of 2^27 buckets (2.2 GB) alone, more than the limit.
        n = 60_000_000
        try:
            cur.execute(f"SELECT count(*), sum(c) FROM (SELECT (id * 7919) % {n} AS k, count(*) AS c "
                        f"FROM range({n}) t(id) GROUP BY 1) g")
            assert cur.fetchall() == [(n, n)]
            outcome = "spilled"
        except Exception as e:  # a clean failure is allowed; a dead server is not
            assert "Resources exhausted" in str(e) or "resources exhausted" in str(e).lower(), str(e)
            outcome = "failed cleanly"
        print(f"memory: {n:,} groups under ulimit -v {limit_mib} MiB with the default pool "
              f"({pool_mib} MiB) {outcome}")
        assert s.alive(), s.server_log()[-3000:]
        still_serves(s)
    finally:
        s.stop()


# --- Two servers, one PostgreSQL metastore and one warehouse ----------------------------

def test_insert_in_progress_on_one_server_survives_restart_of_the_other(postgres):
    conf, wh = postgres.shared_catalog("apiary_restart")
    a = Server(*conf, "--hiveconf", "apiary.failpoints=insert.after_manifest=sleep(8000)")
    b = Server(*conf)
    try:
        ca = cursor(a)
        ca.execute("CREATE TABLE shared_t (a INT)")
        done = {}

        def insert():
            try:
                c = cursor(a, user="writer")
                c.execute("INSERT INTO shared_t SELECT CAST(id AS INT) FROM range(1000) t(id)")
                done["ok"] = True
            except Exception as e:  # reported below
                done["error"] = str(e)

        t = threading.Thread(target=insert)
        t.start()
        deadline = time.time() + 20
        table_dir = os.path.join(wh, "shared_t")
        while time.time() < deadline and not any(
                n.startswith(".apiary-staging-") for n in os.listdir(table_dir)):
            time.sleep(0.1)
        assert any(n.startswith(".apiary-staging-") for n in os.listdir(table_dir))
        # B restarts while A's INSERT sits between its commit decision and its rename.
        b.stop()
        b = Server(*conf, data=b.data)
        t.join(30)
        assert done.get("ok"), done
        cb = cursor(b)
        cb.execute("SELECT count(*) FROM shared_t")
        assert cb.fetchall() == [(1000,)]
        cb.execute("DROP TABLE shared_t")
    finally:
        a.stop()
        b.stop()
        shutil.rmtree(wh, ignore_errors=True)


# --- The hostile-SQL corpus --------------------------------------------------------------

def test_hostile_sql_corpus(srv):
    from hostile_sql import corpus
    cur = cursor(srv, user="mallory")
    outside = "/tmp/apiary-hostile"
    answered = failed = 0
    for sql in corpus():
        try:
            cur.execute(sql)
            if cur.description:
                cur.fetchmany(10)
            answered += 1
        except Exception as e:
            text = str(e)
            # An error must be a statement's error, not a dropped connection.
            assert "TStatus" in text or "Error" in text or "No result set" in text, (sql[:200], text[:500])
            failed += 1
        assert srv.alive(), f"server died on: {sql[:200]}\n" + srv.server_log()[-3000:]
        if not hasattr(cur, "_connection") or cur._connection is None:
            cur = cursor(srv, user="mallory")
    print(f"hostile corpus: {answered} answered, {failed} refused with an error")
    assert not os.path.exists(outside)
    assert not os.path.exists(os.path.join(data_dir(srv), "hostile_r"))
    still_serves(srv)


def test_a_cancelled_insert_leaves_no_staging_folder(srv):
    cur = cursor(srv)
    cur.execute("CREATE TABLE cancelled_ins (a BIGINT)")
    for delay in (0.0, 0.05, 0.3):
        cur.execute("INSERT INTO cancelled_ins SELECT id FROM range(50000000) t(id)", async_=True)
        time.sleep(delay)
        cur.cancel()
        cur.close()
        cur = cursor(srv)
    table = os.path.join(warehouse(srv), "cancelled_ins")
    deadline = time.time() + 30
    while time.time() < deadline and any(n.startswith(".apiary-staging-") for n in os.listdir(table)):
        time.sleep(0.2)
    assert not [n for n in os.listdir(table) if n.startswith(".apiary-staging-")]
    cur.execute("SELECT count(*) FROM cancelled_ins")
    assert cur.fetchall()[0][0] in (0, 50000000)
    cur.execute("DROP TABLE cancelled_ins")
