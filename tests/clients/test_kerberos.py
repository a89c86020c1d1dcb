"""Hive's KERBEROS mode against a real MIT KDC (kdc.py): SASL GSSAPI on the binary port and
SPNEGO `Negotiate` over HTTP, with tickets `kinit` got. impyla, PyHive and beeline's JDBC
driver (`principal=`) log in as the ticket's user whatever user they claim; no ticket, a
ticket for a principal the server has no key for, passwords and NOSASL are refused, and each
login is audited."""

import base64
import json
import os
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request

import kerberos
import pytest
from impala import dbapi as impyla
from pyhive import hive

import flight
from conftest import Server
from kdc import REALM, Kdc
from test_jdbc_beeline import SPARK_HOME


@pytest.fixture(scope="module")
def kdc():
    k = Kdc(services=("hive/localhost", "HTTP/localhost", "other/localhost"),
            users={"alice": "wonderland", "bob": "builder", "alice/admin": "root-of-trust"})
    # A keytab with only `other`, for a server that holds no key for the clients' tickets.
    k.other_keytab = os.path.join(k.dir, "other.keytab")
    k.kadmin(f"ktadd -k {k.other_keytab} -norandkey other/localhost")
    yield k
    k.stop()


@pytest.fixture(scope="module")
def krb_server(kdc):
    srv = Server(*kdc.server_settings(),
                 "--hiveconf", f"hive.server2.authentication.spnego.principal=HTTP/localhost@{REALM}",
                 "--hiveconf", f"hive.server2.authentication.spnego.keytab={kdc.keytab}",
                 "--hiveconf", "hadoop.proxyuser.bob.users=carol",
                 "--hiveconf", "hadoop.proxyuser.bob.hosts=*",
                 env=kdc.env)
    yield srv
    srv.stop()


@pytest.fixture
def as_alice(kdc, monkeypatch):
    """The test process holds alice's ticket (the Python clients read KRB5CCNAME)."""
    env = kdc.kinit("alice")
    for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5RCACHEDIR"):
        monkeypatch.setenv(k, env[k])
    return env


def _whoami(conn, **cursor_kw):
    cur = conn.cursor(**cursor_kw)
    cur.execute("SELECT current_user()")
    return cur.fetchall()[0][0]


def _impyla_binary(srv, **kw):
    return impyla.connect(host="localhost", port=srv.binary_port, auth_mechanism="GSSAPI",
                          kerberos_service_name="hive", timeout=30, **kw)


def _impyla_http(srv, **kw):
    return impyla.connect(host="localhost", port=srv.http_port, auth_mechanism="GSSAPI",
                          kerberos_service_name="HTTP", use_http_transport=True, http_path="cliservice",
                          timeout=30, **kw)


def test_python_clients_log_in_with_a_ticket_on_both_transports(krb_server, as_alice):
    # impyla claims the OS user (or the one named) in OpenSession: the ticket decides.
    assert _whoami(_impyla_binary(krb_server), user="mallory") == "alice"
    assert _whoami(hive.connect(host="localhost", port=krb_server.binary_port, auth="KERBEROS",
                                kerberos_service_name="hive", username="mallory")) == "alice"
    assert _whoami(_impyla_http(krb_server)) == "alice"


def _beeline(kdc, env, url, sql="SELECT current_user()"):
    jenv = dict(env, JAVA_TOOL_OPTIONS=f"-Djava.security.krb5.conf={kdc.krb5_conf} "
                "-Djavax.security.auth.useSubjectCredsOnly=false")
    r = subprocess.run([os.path.join(SPARK_HOME, "bin", "beeline"), "-u", url, "-n", "mallory", "-e", sql],
                       env=jenv, capture_output=True, text=True, timeout=180)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("http", [False, True], ids=["binary", "http"])
def test_beeline_jdbc_logs_in_with_principal_and_a_kinit_ticket(kdc, krb_server, http):
    env = kdc.kinit("bob")
    if http:
        url = (f"jdbc:hive2://localhost:{krb_server.http_port}/default;transportMode=http;"
               f"httpPath=cliservice;principal=HTTP/_HOST@{REALM}")
    else:
        url = f"jdbc:hive2://localhost:{krb_server.binary_port}/default;principal=hive/_HOST@{REALM}"
    rc, out = _beeline(kdc, env, url)
    assert rc == 0 and "| bob " in out, out
    # Impersonation rules apply to the ticket's user: bob may act as carol, not as alice.
    rc, out = _beeline(kdc, env, url + ";hive.server2.proxy.user=carol")
    assert rc == 0 and "| carol " in out, out
    rc, out = _beeline(kdc, env, url + ";hive.server2.proxy.user=alice")
    assert rc != 0 and "Failed to validate proxy privilege of bob for alice" in out, out


def test_without_a_ticket_nothing_is_let_in(kdc, krb_server, monkeypatch):
    monkeypatch.setenv("KRB5_CONFIG", kdc.krb5_conf)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{kdc.dir}/no-such-cache")
    with pytest.raises(Exception):
        _whoami(_impyla_binary(krb_server))
    rc, out = _beeline(kdc, dict(kdc.env, KRB5CCNAME=f"FILE:{kdc.dir}/no-such-cache"),
                       f"jdbc:hive2://localhost:{krb_server.binary_port}/default;principal=hive/localhost@{REALM}")
    assert rc != 0 and "| " not in out, out
    assert krb_server.alive()


def test_passwords_and_nosasl_are_refused_on_a_kerberos_port(krb_server):
    # PyHive's PLAIN login: the port offers only GSSAPI, as Hive's does in KERBEROS mode.
    with pytest.raises(Exception, match="Unsupported mechanism type PLAIN"):
        hive.connect(host="127.0.0.1", port=krb_server.binary_port, username="alice", password="wonderland",
                     auth="LDAP")
    with pytest.raises(Exception):
        _whoami(hive.connect(host="127.0.0.1", port=krb_server.binary_port, auth="NOSASL"))
    # HTTP Basic: 401, and the answer asks for Negotiate.
    for headers in ({"Authorization": "Basic " + base64.b64encode(b"alice:wonderland").decode()}, {}):
        req = urllib.request.Request(f"http://127.0.0.1:{krb_server.http_port}/cliservice", data=b"x",
                                     headers=headers, method="POST")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 401
        assert e.value.headers.get("WWW-Authenticate") == "Negotiate"
    # A garbage token is refused with Hive's words, not the library's.
    req = urllib.request.Request(f"http://127.0.0.1:{krb_server.http_port}/cliservice", data=b"x",
                                 headers={"Authorization": "Negotiate " + base64.b64encode(b"\x60\x03junk").decode()},
                                 method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 401 and e.value.read() == b"Authentication Error: Error validating the login"
    # Flight SQL carries passwords only.
    with pytest.raises(Exception):
        flight.adbc_connect(krb_server, user="alice", password="wonderland").cursor().execute("SELECT 1")
    assert krb_server.alive()


def test_garbage_gssapi_tokens_are_refused_and_the_server_goes_on(krb_server):
    for token in (b"\x00" * 10, b"\x60\x82\xff\xff" + b"A" * 100, os.urandom(4000)):
        with socket.create_connection(("127.0.0.1", krb_server.binary_port), timeout=10) as s:
            s.sendall(b"\x01" + struct.pack(">I", 6) + b"GSSAPI")
            s.sendall(b"\x02" + struct.pack(">I", len(token)) + token)
            status = s.recv(1)
            assert status in (b"\x03", b"\x04"), status  # BAD or ERROR
    assert krb_server.alive()


def test_a_server_without_the_key_refuses_the_ticket(kdc, as_alice):
    srv = Server(*kdc.server_settings(principal="other/localhost", keytab=kdc.other_keytab), env=kdc.env)
    try:
        with pytest.raises(Exception):
            _whoami(_impyla_binary(srv))
        assert "Kerberos ticket refused" in srv.server_log()
        assert srv.alive()
    finally:
        srv.stop()


def test_startup_refuses_a_missing_keytab_and_security_layers(kdc):
    for settings, words in (
            (kdc.server_settings(keytab=os.path.join(kdc.dir, "missing.keytab")), "is not a readable file"),
            ([*kdc.server_settings(), "--hiveconf", "hive.server2.thrift.sasl.qop=auth-conf"],
             "hive.server2.thrift.sasl.qop"),
            (["--hiveconf", "hive.server2.authentication=KERBEROS"], "needs the server's principal and keytab")):
        with pytest.raises(RuntimeError, match=words):
            Server(*settings, env=kdc.env)


def test_kerberos_logins_are_audited(kdc, krb_server, as_alice):
    _whoami(_impyla_binary(krb_server))
    _whoami(_impyla_http(krb_server))
    req = urllib.request.Request(f"http://127.0.0.1:{krb_server.http_port}/cliservice", data=b"x",
                                 headers={"Authorization": "Negotiate " + base64.b64encode(b"junk").decode()},
                                 method="POST")
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(req, timeout=10)
    time.sleep(0.3)
    with open(os.path.join(krb_server.data, "d", "audit.log")) as f:
        events = [json.loads(line) for line in f]
    logins = [(e["user"], e["outcome"], e.get("method")) for e in events if e["event"] == "login"]
    assert ("alice", "accepted", "KERBEROS") in logins
    assert ("", "refused", "KERBEROS") in logins


def test_an_instance_principal_logs_in_as_its_first_component(kdc, krb_server, monkeypatch):
    env = kdc.kinit("alice/admin")
    for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5RCACHEDIR"):
        monkeypatch.setenv(k, env[k])
    assert _whoami(_impyla_binary(krb_server)) == "alice"


def _negotiate_token(service="HTTP@localhost"):
    _, ctx = kerberos.authGSSClientInit(service)
    kerberos.authGSSClientStep(ctx, "")
    return kerberos.authGSSClientResponse(ctx)


def _post(srv, headers):
    req = urllib.request.Request(f"http://127.0.0.1:{srv.http_port}/cliservice", data=b"x",
                                 headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_negotiate_sets_the_login_cookie_and_a_token_is_good_once(krb_server, as_alice):
    token = _negotiate_token()
    # Past the login, the one-byte body is refused as a bad message (400), not a 401.
    status, headers, _ = _post(krb_server, {"Authorization": "Negotiate " + token})
    assert status == 400, status
    cookie = headers.get("Set-Cookie", "").split(";")[0]
    assert cookie.startswith("hive.server2.auth="), headers
    assert headers.get("WWW-Authenticate", "").startswith("Negotiate "), headers
    status, _, _ = _post(krb_server, {"Cookie": cookie})
    assert status == 400, status
    # The same token again is a replay: the server's replay cache refuses it.
    status, _, body = _post(krb_server, {"Authorization": "Negotiate " + token})
    assert status == 401 and body == b"Authentication Error: Error validating the login", (status, body)
