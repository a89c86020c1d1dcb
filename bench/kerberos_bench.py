"""Benchmark (prints figures, asserts nothing): what a Kerberos login costs under
hive.server2.authentication=KERBEROS against a real MIT KDC (tests/clients/kdc.py), beside a
server with authentication NONE.

1. CONNECTIONS binary connections through impyla, each opening a session and running
   `SELECT 1` (SASL GSSAPI with a ticket the client already holds, against SASL PLAIN).
2. STATEMENTS `SELECT 1` through impyla over HTTP: SPNEGO with Hive's login cookie (the
   default) and without it (hive.server2.thrift.http.cookie.auth.enabled=false); the logins
   the server accepted are counted from its audit log.
3. The server's side of one HTTP login: REQUESTS POSTs on one keep-alive connection, each
   carrying a fresh SPNEGO token made beforehand (a token is good once: the server's replay
   cache refuses it again), and each carrying the cookie instead; each request is refused
   after its login (a one-byte body), so the login is most of what is timed.

Usage: APIARY_BIN=$CARGO_TARGET_DIR/<profile>/apiary python bench/kerberos_bench.py
[CONNECTIONS] (a build with --features kerberos; krb5-kdc and the `kerberos` module as the tests
use them).
"""

import base64
import http.client
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
import kerberos  # noqa: E402
from impala import dbapi as impyla  # noqa: E402

from conftest import Server  # noqa: E402
from kdc import REALM, Kdc  # noqa: E402

CONNECTIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
STATEMENTS = 200
REQUESTS = 500


def accepted_logins(srv):
    time.sleep(0.5)  # the audit log is written behind the request
    with open(os.path.join(srv.data, "d", "audit.log")) as f:
        return sum(1 for line in f
                   if (e := json.loads(line))["event"] == "login" and e["outcome"] == "accepted")


def select_one(conn):
    cur = conn.cursor(user="alice")
    cur.execute("SELECT 1")
    cur.fetchall()
    cur.close()


def binary_connections(srv, **kw):
    t = time.perf_counter()
    for _ in range(CONNECTIONS):
        conn = impyla.connect(host="localhost", port=srv.binary_port, **kw)
        select_one(conn)
        conn.close()
    return (time.perf_counter() - t) * 1000 / CONNECTIONS


def http_statements(srv):
    conn = impyla.connect(host="localhost", port=srv.http_port, auth_mechanism="GSSAPI",
                          kerberos_service_name="HTTP", use_http_transport=True, http_path="cliservice")
    cur = conn.cursor(user="alice")
    before = accepted_logins(srv)
    t = time.perf_counter()
    for _ in range(STATEMENTS):
        cur.execute("SELECT 1")
        cur.fetchall()
    ms = (time.perf_counter() - t) * 1000 / STATEMENTS
    conn.close()
    return ms, accepted_logins(srv) - before


def spnego_token():
    _, ctx = kerberos.authGSSClientInit("HTTP@localhost")
    kerberos.authGSSClientStep(ctx, "")
    return kerberos.authGSSClientResponse(ctx)


def server_side(srv):
    tokens = [spnego_token() for _ in range(REQUESTS + 1)]
    c = http.client.HTTPConnection("127.0.0.1", srv.http_port)
    c.request("POST", "/cliservice", body=b"x", headers={"Authorization": "Negotiate " + tokens.pop()})
    r = c.getresponse()
    r.read()
    cookie = r.getheader("Set-Cookie").split(";")[0]
    out = {}
    for name, headers in (("SPNEGO token (GSS accept)", [{"Authorization": "Negotiate " + t} for t in tokens]),
                          ("hive.server2.auth cookie (HMAC check)", [{"Cookie": cookie}] * REQUESTS)):
        t = time.perf_counter()
        for h in headers:
            c.request("POST", "/cliservice", body=b"x", headers=h)
            c.getresponse().read()
        out[name] = (time.perf_counter() - t) * 1000 / REQUESTS
    c.close()
    return out


def main():
    kdc = Kdc()
    env = kdc.kinit("alice")
    for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5RCACHEDIR"):
        os.environ[k] = env[k]
    krb = [*kdc.server_settings(),
           "--hiveconf", f"hive.server2.authentication.spnego.principal=HTTP/localhost@{REALM}",
           "--hiveconf", f"hive.server2.authentication.spnego.keytab={kdc.keytab}"]
    servers = []
    try:
        none = Server()
        servers.append(none)
        with_cookie = Server(*krb, env=kdc.env)
        servers.append(with_cookie)
        no_cookie = Server(*krb, "--hiveconf", "hive.server2.thrift.http.cookie.auth.enabled=false", env=kdc.env)
        servers.append(no_cookie)
        print(f"binary, {CONNECTIONS} connections (session + SELECT 1 each), ms/connection:")
        print(f"  NONE (SASL PLAIN)      {binary_connections(none, auth_mechanism='PLAIN', user='alice', password='x'):.2f}")
        print(f"  KERBEROS (SASL GSSAPI) {binary_connections(with_cookie, auth_mechanism='GSSAPI', kerberos_service_name='hive'):.2f}")
        print(f"HTTP, {STATEMENTS} statements through impyla: ms/statement, logins")
        for name, srv in (("SPNEGO, login cookie", with_cookie), ("SPNEGO, no cookie", no_cookie)):
            ms, logins = http_statements(srv)
            print(f"  {name:<22} {ms:.2f}  {logins}")
        print(f"HTTP, server's login alone, {REQUESTS} requests on one connection: ms/request")
        for name, ms in server_side(with_cookie).items():
            print(f"  {name:<38} {ms:.3f}")
    finally:
        for s in servers:
            s.stop()
        kdc.stop()


if __name__ == "__main__":
    main()
