"""Password authentication (hive.server2.authentication=LDAP) against a real OpenLDAP server,
through every front end: HiveServer2 binary (PyHive, impyla, beeline's JDBC driver), HTTP,
and Arrow Flight SQL (ADBC, pyarrow.flight). A wrong password is refused with Hive's words,
the right one opens a session whose user is the authenticated one, and a refused login leaves
nothing behind."""

import base64
import json
from concurrent.futures import ThreadPoolExecutor
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from impala import dbapi as impyla
from pyhive import hive

import flight
from conftest import Server
from test_jdbc_beeline import SPARK_HOME
from test_tls import certs  # noqa: F401 - the certs fixture

BASE = "dc=apiary,dc=test"
PEOPLE = f"ou=people,{BASE}"
USERS = {"alice": "wonderland", "bob": "builder", "carol": "singer"}
GROUPS = f"ou=groups,{BASE}"
GROUP_MEMBERS = {"analysts": ["alice", "carol"], "builders": ["bob"]}


def pyhive(srv, user, password, auth="LDAP", **kw):
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username=user, password=password,
                        auth=auth, **kw)


def impyla_binary(srv, user, password):
    return impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="LDAP",
                          user=user, password=password)


def impyla_http(srv, user, password):
    return impyla.connect(host="127.0.0.1", port=srv.http_port, auth_mechanism="LDAP", user=user,
                          password=password, use_http_transport=True, http_path="cliservice")


def beeline(srv, sql, user, password, http=False):
    env = dict(os.environ, SPARK_HOME=SPARK_HOME)
    url = (f"jdbc:hive2://127.0.0.1:{srv.http_port}/default;transportMode=http;httpPath=cliservice"
           if http else f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default")
    r = subprocess.run(
        [os.path.join(SPARK_HOME, "bin", "beeline"), "-u", url, "-n", user, "-p", password,
         "--outputformat=csv2", "-e", sql],
        capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slapd:
    """A throwaway OpenLDAP server on a free loopback port, in its own folder, holding the
    users of USERS under ou=people. With `tls` (the paths test_tls's certs fixture makes) it
    also serves ldaps:// on a second port, with the server certificate signed by its CA."""

    def __init__(self, tls=None):
        slapd = shutil.which("slapd") or "/usr/sbin/slapd"
        slapadd = shutil.which("slapadd") or "/usr/sbin/slapadd"
        if not os.path.exists(slapd):
            raise RuntimeError("slapd is not installed (scripts/test.sh installs it)")
        self.dir = tempfile.mkdtemp(prefix="apiary-slapd-")
        db = os.path.join(self.dir, "db")
        os.mkdir(db)
        conf = os.path.join(self.dir, "slapd.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "include /etc/ldap/schema/core.schema",
                "include /etc/ldap/schema/cosine.schema",
                "include /etc/ldap/schema/inetorgperson.schema",
                f"pidfile {self.dir}/slapd.pid",
                "modulepath /usr/lib/ldap",
                "moduleload back_mdb",
                "database mdb",
                f"suffix \"{BASE}\"",
                f"rootdn \"cn=admin,{BASE}\"",
                "rootpw admin-secret",
                f"directory {db}",
                "maxsize 10485760",
                "access to attrs=userPassword by anonymous auth by * none",
                "access to * by * read",
                *([f"TLSCertificateFile {tls['dir']}/server.pem",
                   f"TLSCertificateKeyFile {tls['dir']}/server.key",
                   f"TLSCACertificateFile {tls['ca']}"] if tls else []),
                "",
            ]))
        entries = [f"dn: {BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: apiary\no: apiary\n",
                   f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n"]
        for user, password in USERS.items():
            entries.append(f"dn: uid={user},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: {user}\n"
                           f"cn: {user}\nsn: {user}\nuserPassword: {password}\n")
        entries.append(f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n")
        for group, members in GROUP_MEMBERS.items():
            entries.append(f"dn: cn={group},{GROUPS}\nobjectClass: groupOfNames\ncn: {group}\n"
                           + "".join(f"member: uid={m},{PEOPLE}\n" for m in members))
        ldif = os.path.join(self.dir, "init.ldif")
        with open(ldif, "w") as f:
            f.write("\n".join(entries))
        subprocess.run([slapadd, "-f", conf, "-l", ldif], check=True, capture_output=True)
        self.port = _free_port()
        self.url = f"ldap://127.0.0.1:{self.port}"
        listen = self.url + "/"
        if tls:
            self.ldaps_port = _free_port()
            self.ldaps_url = f"ldaps://127.0.0.1:{self.ldaps_port}"
            listen += " " + self.ldaps_url + "/"
        self.proc = subprocess.Popen([slapd, "-f", conf, "-h", listen, "-d", "0"],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "slapd.log"), "w"))
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("slapd did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def ldap():
    d = Slapd()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def ldap_server(ldap):
    s = Server("--hiveconf", "hive.server2.authentication=LDAP",
               "--hiveconf", f"hive.server2.authentication.ldap.url={ldap.url}",
               "--hiveconf", f"hive.server2.authentication.ldap.baseDN={PEOPLE}",
               "--hiveconf", "hive.server2.limit.connections.per.user=2")
    yield s
    assert s.alive(), s.server_log()[-3000:]
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


def test_flight_sql_refuses_a_wrong_password_and_serves_the_right_one(ldap_server):
    with pytest.raises(Exception) as refused:
        conn = flight.adbc_connect(ldap_server, user="alice", password="not-her-password")
        conn.cursor().execute("SELECT 1")
    assert "Error validating the login" in str(refused.value)
    assert "not-her-password" not in str(refused.value)
    with pytest.raises(Exception) as unknown:
        flight.flight_client(ldap_server, user="mallory", password="wonderland")
    assert "Error validating the login" in str(unknown.value)

    conn = flight.adbc_connect(ldap_server, user="alice", password="wonderland")
    try:
        cur = conn.cursor()
        cur.execute("SELECT current_user()")
        assert cur.fetchall() == [("alice",)]
    finally:
        conn.close()
    client, options = flight.flight_client(ldap_server, user="bob", password="builder")
    client.close()


def test_hiveserver2_binary_refuses_a_wrong_password(ldap_server):
    for connect in (pyhive, impyla_binary):
        with pytest.raises(Exception) as refused:
            connect(ldap_server, "alice", "wrong").cursor().execute("SELECT 1")
        assert "Error validating the login" in str(refused.value), connect.__name__
        # A blank password is refused before the directory is asked (an empty simple bind
        # would be an anonymous bind there).
        with pytest.raises(Exception):
            connect(ldap_server, "alice", " ").cursor().execute("SELECT 1")
    conn = pyhive(ldap_server, "bob", "builder")
    cur = conn.cursor()
    cur.execute("SELECT current_user()")
    assert cur.fetchall() == [("bob",)]
    conn.close()


@pytest.mark.parametrize("http", [False, True], ids=["binary", "http"])
def test_beeline_jdbc_refuses_a_wrong_password(ldap_server, http):
    out = beeline(ldap_server, "SELECT current_user()", "alice", "wrong", http)
    # Binary: the SASL refusal's words; HTTP: the 401 the driver reports.
    assert ("Error validating the login" if not http else "401") in out, out[-2000:]
    out = beeline(ldap_server, "SELECT current_user()", "alice", "wonderland", http)
    assert "\nalice\n" in out and "Error" not in out, out[-2000:]


def test_a_nosasl_client_is_refused_on_a_password_port(ldap_server):
    with pytest.raises(Exception):
        conn = pyhive(ldap_server, "alice", None, auth="NOSASL")
        conn.cursor().execute("SELECT 1")
    assert ldap_server.alive()


def _http_post(server, user, password, cookie=None, headers=False):
    """POSTs a (truncated) Thrift message; answers the status and body, and the headers too
    when `headers` is set. A truncated message is a 400 after the login and a 401 before."""
    req = urllib.request.Request(f"http://127.0.0.1:{server.http_port}/cliservice", data=b"\x80",
                                 method="POST", headers={"Content-Type": "application/x-thrift"})
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    if cookie is not None:
        req.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            out = r.status, r.read().decode(errors="replace"), r.headers
    except urllib.error.HTTPError as e:
        out = e.code, e.read().decode(errors="replace"), e.headers
    return out if headers else out[:2]


def _logins(srv, user):
    return sum(1 for e in _audit(srv)[1] if e["event"] == "login" and e["user"] == user
               and e["outcome"] == "accepted")


def test_http_login_cookie(ldap, ldap_server):
    """A checked HTTP login sets Hive's signed hive.server2.auth cookie; a request carrying it
    needs no credentials (and asks no directory); a changed cookie counts for nothing."""
    status, _, headers = _http_post(ldap_server, "carol", "singer", headers=True)
    assert status == 400  # logged in; the one-byte message itself is refused
    set_cookie = headers["Set-Cookie"]
    name_value, *attrs = [p.strip() for p in set_cookie.split(";")]
    assert name_value.startswith("hive.server2.auth=cu=carol&rn="), set_cookie
    assert "Max-Age=86400" in attrs and "HttpOnly" in attrs and "Secure" not in attrs, set_cookie
    before = _logins(ldap_server, "carol")
    assert _http_post(ldap_server, None, None, cookie=name_value)[0] == 400
    # The cookie wins over wrong credentials, as in Hive.
    assert _http_post(ldap_server, "carol", "wrong", cookie=name_value)[0] == 400
    assert _logins(ldap_server, "carol") == before
    forged = name_value.replace("cu=carol", "cu=alice")
    status, body = _http_post(ldap_server, None, None, cookie=forged)
    assert status == 401 and body.startswith("Authentication Error"), (status, body)
    assert _http_post(ldap_server, None, None, cookie=name_value + "x")[0] == 401
    # Another server's cookie (another key) is worthless here, and the reverse.
    other = _server_with(ldap)
    try:
        assert _http_post(other, None, None, cookie=name_value)[0] == 401
    finally:
        other.stop()


def test_http_clients_keep_the_cookie_and_log_in_once(ldap_server):
    """impyla and the Hive JDBC driver keep the cookie: a connection running many statements
    is one directory login, where without cookies each request was one."""
    before = _logins(ldap_server, "carol")
    conn = impyla_http(ldap_server, "carol", "singer")
    cur = conn.cursor()
    for i in range(10):
        cur.execute(f"SELECT {i}")
        assert cur.fetchall() == [(i,)]
    conn.close()
    assert _logins(ldap_server, "carol") - before == 1
    before = _logins(ldap_server, "carol")
    out = beeline(ldap_server, "SELECT 1; SELECT 2; SELECT 3; SELECT current_user()", "carol",
                  "singer", http=True)
    assert "carol" in out, out[-2000:]
    assert _logins(ldap_server, "carol") - before == 1, out[-2000:]


def test_http_transport_answers_401_without_valid_credentials(ldap_server):
    status, body = _http_post(ldap_server, "alice", "wrong")
    assert status == 401 and body.startswith("Authentication Error"), (status, body)
    status, _ = _http_post(ldap_server, None, None)
    assert status == 401
    # bob: impyla over HTTP leaves its session to the idle timeout (HTTP sessions outlive
    # connections), and alice's quota is counted in the last test.
    conn = impyla_http(ldap_server, "bob", "builder")
    cur = conn.cursor()
    cur.execute("SELECT current_user()")
    assert cur.fetchall() == [("bob",)]
    conn.close()


def test_refused_logins_hold_nothing(ldap_server):
    """Refused logins open no session: with two sessions allowed per user, alice still gets
    both after many refusals, and the log names the refusals without the password."""
    for _ in range(5):
        with pytest.raises(Exception):
            flight.flight_client(ldap_server, user="alice", password="wrong-pw-123")
        with pytest.raises(Exception):
            pyhive(ldap_server, "alice", "wrong-pw-123")
    first = flight.adbc_connect(ldap_server, user="alice", password="wonderland")
    second = pyhive(ldap_server, "alice", "wonderland")
    try:
        cur = first.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
        cur = second.cursor()
        cur.execute("SELECT 2")
        assert cur.fetchall() == [(2,)]
    finally:
        first.close()
        second.close()
    log = ldap_server.server_log()
    assert "login refused" in log
    assert "wrong-pw-123" not in log
    assert ldap_server.alive()


def test_handles_belong_to_their_user(ldap_server):
    """With a password mode, a session or operation is usable only by the user who opened it:
    another user gets the answer an unknown handle gets, and nothing is done."""
    from TCLIService import ttypes as T

    alice = pyhive(ldap_server, "alice", "wonderland")
    bob = pyhive(ldap_server, "carol", "singer")
    try:
        a_client, a_session = alice._client, alice._sessionHandle
        b_client = bob._client
        op = a_client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=a_session, statement="SELECT 7 AS seven", runAsync=False)).operationHandle
        # carol, on her own authenticated connection, with alice's handles:
        r = b_client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=a_session, statement="SELECT 1"))
        assert r.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        assert "Invalid SessionHandle" in r.status.errorMessage
        fetched = b_client.FetchResults(T.TFetchResultsReq(
            operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert fetched.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        assert "Invalid OperationHandle" in fetched.status.errorMessage
        cancelled = b_client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
        assert cancelled.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        log = b_client.GetLog(T.TGetLogReq(operationHandle=op))
        assert log.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        status = b_client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=op))
        assert status.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        closed = b_client.CloseOperation(T.TCloseOperationReq(operationHandle=op))
        assert closed.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        r = b_client.CloseSession(T.TCloseSessionReq(sessionHandle=a_session))
        assert r.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        # Nothing was done: alice's operation and session still work.
        fetched = a_client.FetchResults(T.TFetchResultsReq(
            operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert fetched.status.statusCode == T.TStatusCode.SUCCESS_STATUS
        assert list(fetched.results.columns[0].i32Val.values) == [7]
        cur = alice.cursor()
        cur.execute("SELECT current_user()")
        assert cur.fetchall() == [("alice",)]
    finally:
        alice.close()
        bob.close()


def test_handles_belong_to_their_user_over_http(ldap_server):
    """The same over the HTTP transport, where every request names its user."""
    from TCLIService import TCLIService
    from TCLIService import ttypes as T
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import THttpClient

    alice = pyhive(ldap_server, "alice", "wonderland")
    try:
        op = alice._client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=alice._sessionHandle, statement="SELECT 8 AS eight",
            runAsync=False)).operationHandle
        transport = THttpClient.THttpClient(f"http://127.0.0.1:{ldap_server.http_port}/cliservice")
        token = base64.b64encode(b"carol:singer").decode()
        transport.setCustomHeaders({"Authorization": f"Basic {token}"})
        http = TCLIService.Client(TBinaryProtocol.TBinaryProtocol(transport))
        transport.open()
        fetched = http.FetchResults(T.TFetchResultsReq(
            operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert fetched.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        cancelled = http.CancelOperation(T.TCancelOperationReq(operationHandle=op))
        assert cancelled.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        log = http.GetLog(T.TGetLogReq(operationHandle=op))
        assert log.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        closed = http.CloseOperation(T.TCloseOperationReq(operationHandle=op))
        assert closed.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
        transport.close()
        fetched = alice._client.FetchResults(T.TFetchResultsReq(
            operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert list(fetched.results.columns[0].i32Val.values) == [8]
    finally:
        alice.close()


def _server_with(ldap, *settings):
    return Server("--hiveconf", "hive.server2.authentication=LDAP",
                  "--hiveconf", f"hive.server2.authentication.ldap.url={ldap.url}",
                  "--hiveconf", f"hive.server2.authentication.ldap.baseDN={PEOPLE}",
                  *[a for kv in settings for a in ("--hiveconf", kv)])


def _login(srv, user, password):
    try:
        pyhive(srv, user, password).close()
        return True
    except Exception as e:  # noqa: BLE001 - any refusal
        # (A NUL inside the user name breaks SASL PLAIN's framing: refused as malformed.)
        assert "Error validating the login" in str(e) or "Invalid PLAIN message" in str(e), e
        return False


def test_group_and_user_filters(ldap):
    by_base = _server_with(ldap, "hive.server2.authentication.ldap.groupFilter=analysts")
    by_pattern = _server_with(ldap, "hive.server2.authentication.ldap.groupFilter=builders,nobody",
                              f"hive.server2.authentication.ldap.groupDNPattern=cn=%s,{GROUPS}")
    users = _server_with(ldap, "hive.server2.authentication.ldap.userFilter=bob, carol")
    try:
        # Members and non-members of a group named through groupDNPattern are told apart.
        assert _login(by_pattern, "bob", "builder")
        assert not _login(by_pattern, "alice", "wonderland")
        assert not _login(by_pattern, "bob", "wrong")
        assert _login(users, "bob", "builder") and _login(users, "carol", "singer")
        assert not _login(users, "alice", "wonderland")
        # Groups are looked for under baseDN (ou=people here), where there are none.
        assert not _login(by_base, "alice", "wonderland")
    finally:
        for srv in (by_base, by_pattern, users):
            srv.stop()
            shutil.rmtree(srv.data, ignore_errors=True)


def test_injection_and_hostile_logins_are_refused_and_the_server_goes_on(ldap_server):
    for user in ["*", "alice)(uid=*", "alice*", "uid=*", "alice\\", "alice,ou=people", "\u0000alice"]:
        assert not _login(ldap_server, user, "wonderland"), user
    # A 1 MiB password: past the handshake's frame limit, the connection is dropped unread.
    with pytest.raises(Exception):
        pyhive(ldap_server, "alice", "x" * (1 << 20))
    # 40 wrong guesses at once.
    with ThreadPoolExecutor(40) as pool:
        results = list(pool.map(lambda i: _login(ldap_server, "alice", f"guess-{i}"), range(40)))
    assert not any(results)
    assert _login(ldap_server, "alice", "wonderland")
    assert ldap_server.alive()


def test_search_mode_finds_users_anywhere_under_the_base(ldap):
    """With binddn/bindpw a service account finds the user's entry under baseDN (here the
    whole tree) before the user's own bind; without it, the bind name built from the same
    baseDN names no entry."""
    search = _server_with(ldap, f"hive.server2.authentication.ldap.baseDN={BASE}",
                          f"hive.server2.authentication.ldap.binddn=cn=admin,{BASE}",
                          "hive.server2.authentication.ldap.bindpw=admin-secret")
    direct = _server_with(ldap, f"hive.server2.authentication.ldap.baseDN={BASE}")
    wrong_service = _server_with(ldap, f"hive.server2.authentication.ldap.baseDN={BASE}",
                                 f"hive.server2.authentication.ldap.binddn=cn=admin,{BASE}",
                                 "hive.server2.authentication.ldap.bindpw=not-it")
    try:
        assert _login(search, "alice", "wonderland")
        assert not _login(search, "alice", "builder")
        assert not _login(search, "nobody", "wonderland")
        assert not _login(search, "*", "wonderland")
        assert not _login(direct, "alice", "wonderland")
        assert not _login(wrong_service, "alice", "wonderland")
        assert "could not bind" in wrong_service.server_log()
        assert "admin-secret" not in search.server_log() and "not-it" not in wrong_service.server_log()
        # Nor can a client read the service account's password back from its session.
        conn = pyhive(search, "alice", "wonderland")
        cur = conn.cursor()
        cur.execute("SET hive.server2.authentication.ldap.bindpw")
        shown = cur.fetchall()
        cur.execute("SET")
        everything = cur.fetchall()
        cur.execute("SELECT '${hiveconf:hive.server2.authentication.ldap.bindpw}'")
        substituted = cur.fetchall()
        conn.close()
        assert "admin-secret" not in repr(shown + everything + substituted)
    finally:
        for srv in (search, direct, wrong_service):
            srv.stop()
            shutil.rmtree(srv.data, ignore_errors=True)


def _node_login(srv, mode, user, password):
    node_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node")
    modules = os.environ.get("APIARY_NODE_MODULES", os.path.join(node_dir, "node_modules"))
    port = srv.http_port if mode == "http" else srv.binary_port
    r = subprocess.run(["node", os.path.join(node_dir, "login_test.js"), mode, "127.0.0.1", str(port),
                        user, password], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, NODE_PATH=modules))
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("mode", ["plain", "http"])
def test_hive_driver_logins(ldap_server, mode):
    rc, out = _node_login(ldap_server, mode, "carol", "singer")
    assert rc == 0 and "USER carol" in out, out
    rc, out = _node_login(ldap_server, mode, "carol", "wrong")
    # Over binary the login fails with Hive's words; over HTTP node's thrift raises the 401.
    assert rc != 0 and "USER" not in out, out
    assert ("Error validating the login" if mode == "plain" else "401") in out, out


def _audit(srv):
    with open(os.path.join(srv.data, "d", "audit.log")) as f:
        text = f.read()
    return text, [json.loads(line) for line in text.splitlines()]


def test_audit_log_records_logins_sessions_and_statements(ldap_server):
    """One JSON line per login (with the address), session and statement, secrets masked."""
    with pytest.raises(Exception):
        pyhive(ldap_server, "alice", "audit-wrong-pw").cursor().execute("SELECT 1")
    conn = pyhive(ldap_server, "alice", "wonderland")
    cur = conn.cursor()
    cur.execute("SELECT 'audited' AS a")
    assert cur.fetchall() == [("audited",)]
    with pytest.raises(Exception):
        cur.execute("CREATE TABLE audited_jdbc (a INT) STORED BY JDBC TBLPROPERTIES ("
                    "'hive.sql.database.type'='NOPE', 'hive.sql.dbcp.password'='pg-secret-77', "
                    "'hive.sql.jdbc.url'='jdbc:postgresql://u:url-secret-88@127.0.0.1:1/db', 'hive.sql.table'='t')")
    conn.close()
    flight.adbc_connect(ldap_server, user="bob", password="builder").close()
    time.sleep(0.5)
    text, events = _audit(ldap_server)
    for secret in ("audit-wrong-pw", "wonderland", "builder", "pg-secret-77", "url-secret-88"):
        assert secret not in text
    logins = [(e["user"], e["outcome"], e.get("address")) for e in events if e["event"] == "login"]
    assert ("alice", "refused", "127.0.0.1") in logins
    assert ("alice", "accepted", "127.0.0.1") in logins
    assert ("bob", "accepted", "127.0.0.1") in logins
    statements = {e["statement"]: e for e in events if e["event"] == "statement" and e["user"] == "alice"}
    assert statements["SELECT 'audited' AS a"]["outcome"] == "FINISHED"
    failed = [e for s, e in statements.items() if s.startswith("CREATE TABLE audited_jdbc")]
    assert failed and failed[0]["outcome"] == "ERROR" and "'hive.sql.dbcp.password'='******'" in failed[0]["statement"]
    opened = [e["session"] for e in events if e["event"] == "session_open" and e["user"] == "alice" and e["outcome"] == "opened"]
    closed = [e["session"] for e in events if e["event"] == "session_close" and e["user"] == "alice"]
    assert statements["SELECT 'audited' AS a"]["session"] in opened
    assert statements["SELECT 'audited' AS a"]["session"] in closed
    assert oct(os.stat(os.path.join(ldap_server.data, "d", "audit.log")).st_mode & 0o777) == "0o600"


def _whoami(conn):
    cur = conn.cursor()
    cur.execute("SELECT current_user()")
    return cur.fetchall()[0][0]


def _http_as(srv, user, password, do_as):
    from thrift.transport import THttpClient
    t = THttpClient.THttpClient(f"http://127.0.0.1:{srv.http_port}/cliservice?doAs={do_as}")
    t.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()})
    return hive.connect(thrift_transport=t)


def test_impersonation_follows_the_proxyuser_rules(ldap):
    """hive.server2.proxy.user (and doAs over HTTP) acts as another user only as
    hadoop.proxyuser.<user>.hosts/.users allow, with Hive's error otherwise."""
    srv = _server_with(ldap, "hadoop.proxyuser.alice.hosts=127.0.0.1",
                       "hadoop.proxyuser.alice.users=bob")
    off = _server_with(ldap, "hive.server2.allow.user.substitution=false")
    try:
        conn = pyhive(srv, "alice", "wonderland", configuration={"hive.server2.proxy.user": "bob"})
        assert _whoami(conn) == "bob"
        # Her own handles stay hers: she keeps using the session she opened as bob.
        assert _whoami(conn) == "bob"
        conn.close()
        for user, password, proxy in (("alice", "wonderland", "carol"), ("carol", "singer", "bob")):
            with pytest.raises(Exception) as e:
                pyhive(srv, user, password, configuration={"hive.server2.proxy.user": proxy})
            assert f"Failed to validate proxy privilege of {user} for {proxy}" in str(e.value)
        # JDBC's ;hive.server2.proxy.user=bob session variable.
        url = f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default;hive.server2.proxy.user=bob"
        r = subprocess.run([os.path.join(SPARK_HOME, "bin", "beeline"), "-u", url, "-n", "alice", "-p", "wonderland",
                            "--outputformat=csv2", "-e", "SELECT current_user() AS u"],
                           capture_output=True, text=True, timeout=180,
                           env=dict(os.environ, SPARK_HOME=SPARK_HOME), stdin=subprocess.DEVNULL)
        assert "bob" in r.stdout.splitlines(), r.stdout + r.stderr[-2000:]
        # doAs over HTTP.
        assert _whoami(_http_as(srv, "alice", "wonderland", "bob")) == "bob"
        with pytest.raises(Exception) as e:
            _whoami(_http_as(srv, "alice", "wonderland", "carol"))
        assert "Failed to validate proxy privilege of alice for carol" in str(e.value)
        # Substitution switched off.
        with pytest.raises(Exception) as e:
            pyhive(off, "alice", "wonderland", configuration={"hive.server2.proxy.user": "bob"})
        assert "Proxy user substitution is not allowed" in str(e.value)
        # Acting as oneself is no substitution.
        assert _whoami(pyhive(off, "alice", "wonderland", configuration={"hive.server2.proxy.user": "alice"})) == "alice"
    finally:
        srv.stop()
        off.stop()


def test_impersonation_by_group_membership(ldap):
    """hadoop.proxyuser.<u>.groups: alice may act as members of `builders` (bob, in the
    directory's groupOfNames), not as carol (in `analysts`)."""
    srv = _server_with(ldap, "hadoop.proxyuser.alice.hosts=*",
                       "hadoop.proxyuser.alice.groups=builders",
                       f"hive.server2.authentication.ldap.groupDNPattern=cn=%s,{GROUPS}")
    try:
        conn = pyhive(srv, "alice", "wonderland", configuration={"hive.server2.proxy.user": "bob"})
        assert _whoami(conn) == "bob"
        conn.close()
        with pytest.raises(Exception) as e:
            pyhive(srv, "alice", "wonderland", configuration={"hive.server2.proxy.user": "carol"})
        assert "Failed to validate proxy privilege of alice for carol" in str(e.value)
        # A name that could break out of the search filter finds no group.
        with pytest.raises(Exception) as e:
            pyhive(srv, "alice", "wonderland", configuration={"hive.server2.proxy.user": "*)(cn=*"})
        assert "Failed to validate proxy privilege" in str(e.value)
        assert _whoami(_http_as(srv, "alice", "wonderland", "bob")) == "bob"
    finally:
        srv.stop()


def test_ldaps_to_the_directory(certs):  # noqa: F811 - the certs fixture
    """hive.server2.authentication.ldap.url=ldaps://: the directory's certificate is checked
    against apiary.authentication.ldap.ca.file; a directory signed by another CA gets no
    password."""
    d = Slapd(tls=certs)
    try:
        for ca, accepted in [(certs["ca"], True), (certs["other_ca"], False)]:
            srv = _server_with_url(d.ldaps_url, f"apiary.authentication.ldap.ca.file={ca}")
            try:
                assert _login(srv, "alice", "wonderland") is accepted
                assert not _login(srv, "alice", "wrong")
                if not accepted:
                    assert "certificate" in srv.server_log().lower(), srv.server_log()[-2000:]
            finally:
                srv.stop()
                shutil.rmtree(srv.data, ignore_errors=True)
        with pytest.raises(RuntimeError) as failed:
            _server_with_url(d.ldaps_url, "apiary.authentication.ldap.ca.file=/nonexistent/ca.pem")
        assert "apiary.authentication.ldap.ca.file" in str(failed.value)
    finally:
        d.stop()


def _server_with_url(url, *settings):
    return Server("--hiveconf", "hive.server2.authentication=LDAP",
                  "--hiveconf", f"hive.server2.authentication.ldap.url={url}",
                  "--hiveconf", f"hive.server2.authentication.ldap.baseDN={PEOPLE}",
                  *[a for kv in settings for a in ("--hiveconf", kv)])
