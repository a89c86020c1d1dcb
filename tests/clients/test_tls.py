"""TLS (hive.server2.use.SSL) with real clients on the binary, HTTP and Flight SQL ports: a CA
and a server certificate made here with openssl, the keystore as PKCS#12 (and as PEM), JDBC
with a keytool truststore. A client trusting another CA is refused, TLS 1.0/1.1 are refused,
a plain-text client fails fast and the server goes on serving."""

import base64
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
from impala import dbapi as impyla
from pyhive import hive
from thrift.transport import THttpClient

import flight
from conftest import Server
from test_jdbc_beeline import beeline

PASSWORD = "changeit"


def run(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-subj", f"/CN=Apiary test {name}", cwd=d)
    return os.path.join(d, f"{name}.pem")


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="apiary-tls-")
    ca = make_ca(d, "ca")
    other_ca = make_ca(d, "other")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
                "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
        "-out", "server.csr", "-subj", "/CN=localhost", cwd=d)
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "server.pem", "-extfile", "ext.cnf", cwd=d)
    run("openssl", "pkcs12", "-export", "-inkey", "server.key", "-in", "server.pem",
        "-certfile", "ca.pem", "-out", "server.p12", "-passout", f"pass:{PASSWORD}", cwd=d)
    with open(os.path.join(d, "combined.pem"), "w") as f:
        for part in ("server.pem", "ca.pem", "server.key"):
            f.write(open(os.path.join(d, part)).read())
    run("keytool", "-importcert", "-noprompt", "-alias", "apiary-ca", "-file", "ca.pem",
        "-keystore", "trust.jks", "-storepass", PASSWORD, cwd=d)
    yield {"dir": d, "ca": ca, "other_ca": other_ca, "p12": os.path.join(d, "server.p12"),
           "pem": os.path.join(d, "combined.pem"), "truststore": os.path.join(d, "trust.jks")}
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def tls_server(certs):
    srv = Server("--hiveconf", "hive.server2.use.SSL=true",
                 "--hiveconf", f"hive.server2.keystore.path={certs['p12']}",
                 "--hiveconf", f"hive.server2.keystore.password={PASSWORD}",
                 "--hiveconf", "hive.server2.thrift.login.timeout=3s")
    yield srv
    assert srv.alive(), srv.server_log()[-3000:]
    srv.stop()
    shutil.rmtree(srv.data, ignore_errors=True)


def one(cur, sql="SELECT 40 + 2"):
    cur.execute(sql)
    return cur.fetchall()


def test_impyla_binary_and_http(tls_server, certs):
    conn = impyla.connect(host="127.0.0.1", port=tls_server.binary_port, auth_mechanism="PLAIN",
                          user="bob", password="x", use_ssl=True, ca_cert=certs["ca"])
    assert one(conn.cursor()) == [(42,)]
    conn.close()
    conn = impyla.connect(host="127.0.0.1", port=tls_server.http_port, auth_mechanism="PLAIN",
                          user="bob", password="x", use_ssl=True, ca_cert=certs["ca"],
                          use_http_transport=True, http_path="cliservice")
    assert one(conn.cursor()) == [(42,)]
    conn.close()


def test_pyhive_over_https(tls_server, certs):
    ctx = ssl.create_default_context(cafile=certs["ca"])
    transport = THttpClient.THttpClient(f"https://localhost:{tls_server.http_port}/cliservice",
                                        ssl_context=ctx)
    transport.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(b"alice:x").decode()})
    conn = hive.connect(thrift_transport=transport)
    assert one(conn.cursor()) == [(42,)]
    conn.close()


@pytest.mark.parametrize("mode", ["binary", "http"])
def test_beeline_with_a_truststore(tls_server, certs, mode):
    port = tls_server.binary_port if mode == "binary" else tls_server.http_port
    extra = ";transportMode=http;httpPath=cliservice" if mode == "http" else ""
    url = (f"jdbc:hive2://localhost:{port}/default;ssl=true;sslTrustStore={certs['truststore']};"
           f"trustStorePassword={PASSWORD}{extra}")
    r = beeline(url, "--outputformat=csv2", "-e", "SELECT 40 + 2 AS answer")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "42" in r.stdout.splitlines()


NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node")


@pytest.mark.parametrize("mode", ["plain", "http"])
def test_hive_driver_over_tls(tls_server, certs, mode):
    port = tls_server.http_port if mode == "http" else tls_server.binary_port
    env = dict(os.environ, NODE_PATH=os.environ.get("APIARY_NODE_MODULES", os.path.join(NODE_DIR, "node_modules")))

    def login(ca):
        return subprocess.run(["node", os.path.join(NODE_DIR, "login_test.js"), mode, "localhost", str(port),
                               "dora", "x", ca], capture_output=True, text=True, timeout=60, env=env)

    r = login(certs["ca"])
    assert r.stdout.strip() == "USER dora", r.stdout + r.stderr
    # Trusting another CA, the client refuses the server's certificate (hive-driver raises
    # it as an unhandled error event).
    r = login(certs["other_ca"])
    assert r.returncode != 0 and "USER" not in r.stdout, r.stdout + r.stderr
    assert "certificate" in r.stdout + r.stderr


def test_flight_sql_over_tls(tls_server, certs):
    with open(certs["ca"]) as f:
        root = f.read()
    conn = flight.adbc.connect(
        f"grpc+tls://localhost:{tls_server.flight_port}",
        db_kwargs={"username": "carol", "password": "pw",
                   "adbc.flight.sql.client_option.tls_root_certs": root},
        autocommit=True,
    )
    with conn.cursor() as cur:
        cur.execute("SELECT 40 + 2 AS answer")
        assert cur.fetchall() == [(42,)]
    conn.close()


def test_clients_trusting_another_ca_are_refused(tls_server, certs):
    with pytest.raises(Exception):
        impyla.connect(host="127.0.0.1", port=tls_server.binary_port, auth_mechanism="PLAIN",
                       user="bob", password="x", use_ssl=True, ca_cert=certs["other_ca"]).cursor()
    ctx = ssl.create_default_context(cafile=certs["other_ca"])
    with pytest.raises(ssl.SSLCertVerificationError):
        with socket.create_connection(("127.0.0.1", tls_server.binary_port), timeout=10) as s:
            ctx.wrap_socket(s, server_hostname="localhost")


def handshake(port, ca, low, high):
    ctx = ssl.create_default_context(cafile=ca)
    ctx.minimum_version, ctx.maximum_version = low, high
    # OpenSSL 3 keeps TLS 1.0/1.1 off below security level 0: turn them on, so that the
    # refusal seen is the server's.
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            return t.version()


def test_only_tls_1_2_and_1_3(tls_server, certs):
    V = ssl.TLSVersion
    for port in (tls_server.binary_port, tls_server.http_port, tls_server.flight_port):
        assert handshake(port, certs["ca"], V.TLSv1_3, V.TLSv1_3) == "TLSv1.3"
        assert handshake(port, certs["ca"], V.TLSv1_2, V.TLSv1_2) == "TLSv1.2"
        for old in (V.TLSv1, V.TLSv1_1):
            with pytest.raises(ssl.SSLError):
                handshake(port, certs["ca"], old, old)


def test_plain_clients_fail_fast_and_the_server_keeps_serving(tls_server, certs):
    started = time.time()
    with pytest.raises(Exception):
        conn = hive.connect(host="127.0.0.1", port=tls_server.binary_port, username="alice", auth="NONE")
        conn.cursor().execute("SELECT 1")
    with pytest.raises(Exception):
        impyla.connect(host="127.0.0.1", port=tls_server.http_port, auth_mechanism="PLAIN", user="bob",
                       password="x", use_http_transport=True, http_path="cliservice").cursor()
    assert time.time() - started < 10
    # A client that connects and says nothing is closed after the login timeout (3 s here).
    s = socket.create_connection(("127.0.0.1", tls_server.binary_port), timeout=15)
    began = time.time()
    assert s.recv(1) == b""
    assert time.time() - began < 10
    s.close()
    conn = impyla.connect(host="127.0.0.1", port=tls_server.binary_port, auth_mechanism="PLAIN",
                          user="bob", password="x", use_ssl=True, ca_cert=certs["ca"])
    assert one(conn.cursor()) == [(42,)]
    conn.close()


def test_pem_keystore_and_bad_keystores(certs):
    srv = Server("--hiveconf", "hive.server2.use.SSL=true",
                 "--hiveconf", f"hive.server2.keystore.path={certs['pem']}")
    try:
        conn = impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="PLAIN",
                              user="bob", password="x", use_ssl=True, ca_cert=certs["ca"])
        assert one(conn.cursor()) == [(42,)]
        conn.close()
    finally:
        srv.stop()
    # A wrong password, or TLS without a keystore, stops the server at start with a reason.
    for extra, words in ((("--hiveconf", f"hive.server2.keystore.path={certs['p12']}",
                           "--hiveconf", "hive.server2.keystore.password=wrong"), "password"),
                         ((), "no keystore is named")):
        with pytest.raises(RuntimeError) as e:
            Server("--hiveconf", "hive.server2.use.SSL=true", *extra)
        assert words in str(e.value)
