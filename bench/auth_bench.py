"""Benchmark (prints figures, asserts nothing): what an HTTP login costs per statement under
hive.server2.authentication=LDAP, with Hive's login cookie (the default) and without it
(hive.server2.thrift.http.cookie.auth.enabled=false), against a real OpenLDAP server; the
binary transport, which logs in once per connection, alongside. Counts the directory logins
from the audit log and times STATEMENTS `SELECT 1` round trips through impyla; then times the
server's side alone: REQUESTS HTTP requests on one keep-alive connection (http.client), each
past the login, with Basic credentials and with the cookie. Last, what SQL-standard
authorization costs a statement: STATEMENTS `SELECT count(*) FROM t` through PyHive (binary,
NONE) by the table's owner, by a user granted SELECT through a role, and with authorization
off.

Usage: APIARY_BIN=$CARGO_TARGET_DIR/<profile>/apiary python bench/auth_bench.py [STATEMENTS]
(slapd from Debian's package, as the tests use it).
"""

import base64
import http.client
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
from test_authentication import PEOPLE, Slapd, impyla_binary, impyla_http  # noqa: E402

STATEMENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
REQUESTS = 2000


def logins(srv):
    time.sleep(0.5)  # the audit log is written behind the request
    with open(os.path.join(srv.data, "d", "audit.log")) as f:
        return sum(1 for line in f if json.loads(line)["event"] == "login")


def run(srv, connect):
    before = logins(srv)
    t = time.perf_counter()
    conn = connect(srv, "alice", "wonderland")
    cur = conn.cursor()
    for _ in range(STATEMENTS):
        cur.execute("SELECT 1")
        cur.fetchall()
    conn.close()
    elapsed = time.perf_counter() - t
    return elapsed * 1000 / STATEMENTS, logins(srv) - before


def per_request(srv):
    """Milliseconds per request with Basic credentials, then with the login cookie. The body is
    one byte, which the server refuses (400) after the login: the login is what is timed."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.http_port)
    basic = {"Authorization": "Basic " + base64.b64encode(b"alice:wonderland").decode()}

    def post(headers):
        conn.request("POST", "/cliservice", body=b"\x80", headers=headers)
        r = conn.getresponse()
        r.read()
        return r

    cookie = {"Cookie": post(basic).getheader("Set-Cookie").split(";")[0]}
    out = []
    for headers in (basic, cookie):
        t = time.perf_counter()
        for _ in range(REQUESTS):
            post(headers)
        out.append((time.perf_counter() - t) * 1000 / REQUESTS)
    conn.close()
    return out


def authorization_cost():
    """ms/statement of a one-table query with authorization off, by the owner, and through a
    role."""
    from pyhive import hive

    def cursor(srv, user):
        return hive.connect(host="127.0.0.1", port=srv.binary_port, username=user,
                            auth="NONE").cursor()

    def timed(cur):
        cur.execute("SELECT count(*) FROM t")
        cur.fetchall()
        t = time.perf_counter()
        for _ in range(STATEMENTS):
            cur.execute("SELECT count(*) FROM t")
            cur.fetchall()
        return (time.perf_counter() - t) * 1000 / STATEMENTS

    out = []
    for enabled in ("false", "true"):
        srv = Server("--hiveconf", f"hive.security.authorization.enabled={enabled}",
                     "--hiveconf", "hive.users.in.admin.role=root")
        try:
            owner = cursor(srv, "alice")
            owner.execute("CREATE TABLE t (a INT)")
            owner.execute("INSERT INTO t VALUES (1), (2)")
            if enabled == "false":
                out.append(("authorization off", timed(owner)))
                continue
            root = cursor(srv, "root")
            root.execute("SET ROLE ADMIN")
            root.execute("CREATE ROLE readers")
            root.execute("GRANT readers TO USER bob")
            owner.execute("GRANT SELECT ON t TO ROLE readers")
            out.append(("on, the owner", timed(owner)))
            out.append(("on, SELECT through a role", timed(cursor(srv, "bob"))))
        finally:
            srv.stop()
            shutil.rmtree(srv.data, ignore_errors=True)
    return out


def main():
    ldap = Slapd()
    try:
        print(f"{STATEMENTS} x SELECT 1 through impyla, LDAP authentication (slapd on loopback)")
        print(f"{'transport':<28} {'ms/statement':>12} {'directory logins':>17}")
        for label, cookie, connect in [
            ("HTTP, login cookie", "true", impyla_http),
            ("HTTP, no cookie", "false", impyla_http),
            ("binary", "true", impyla_binary),
        ]:
            srv = Server("--hiveconf", "hive.server2.authentication=LDAP",
                         "--hiveconf", f"hive.server2.authentication.ldap.url={ldap.url}",
                         "--hiveconf", f"hive.server2.authentication.ldap.baseDN={PEOPLE}",
                         "--hiveconf", f"hive.server2.thrift.http.cookie.auth.enabled={cookie}")
            try:
                run(srv, connect)  # warm-up
                ms, n = run(srv, connect)
                print(f"{label:<28} {ms:>12.2f} {n:>17}")
                if connect is impyla_http and cookie == "true":
                    timing = per_request(srv)
            finally:
                srv.stop()
                shutil.rmtree(srv.data, ignore_errors=True)
        print(f"\n{REQUESTS} HTTP requests on one connection (http.client), server's login only")
        print(f"{'Basic credentials (LDAP bind)':<32} {timing[0]:.3f} ms/request")
        print(f"{'hive.server2.auth cookie':<32} {timing[1]:.3f} ms/request")
    finally:
        ldap.stop()
    print(f"\n{STATEMENTS} x SELECT count(*) FROM t through PyHive (binary), SQL-standard authorization")
    for label, ms in authorization_cost():
        print(f"{label:<32} {ms:.2f} ms/statement")


if __name__ == "__main__":
    main()
