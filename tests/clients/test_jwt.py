"""Hive's JWT mode over HTTP (hive.server2.authentication=JWT): tokens signed with keys this
test makes, whose public halves Apiary reads from a JWKS served over real HTTP at start-up.
impyla's JWT mechanism logs in with a valid token; expired tokens, tokens signed by another key
or with another algorithm, and tokens without a user are refused with a 401; the binary and
Flight SQL ports, which carry passwords, refuse every login."""

import base64
import hashlib
import hmac
import http.server
import json
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
import warnings

import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from impala import dbapi as impyla
from pyhive import hive

import flight
from conftest import Server
from test_tls import PASSWORD, certs  # noqa: F401 - the certs fixture


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_jwk(key, kid):
    n = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
            "n": b64url(n.n.to_bytes((n.n.bit_length() + 7) // 8, "big")),
            "e": b64url(n.e.to_bytes(3, "big"))}


def ec_jwk(key, kid):
    n = key.public_key().public_numbers()
    return {"kty": "EC", "kid": kid, "alg": "ES256", "crv": "P-256",
            "x": b64url(n.x.to_bytes(32, "big")), "y": b64url(n.y.to_bytes(32, "big"))}


class Keys:
    """Signing keys: an RSA key (kid rsa1) and an EC key (kid ec1) published in the JWKS, and an
    RSA key that is not."""

    def __init__(self):
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.jwks = {"keys": [rsa_jwk(self.rsa, "rsa1"), ec_jwk(self.ec, "ec1")]}

    def token(self, sub="alice", lifetime=600, key=None, kid="rsa1", alg="RS256", **claims):
        body = dict(claims)
        if sub is not None:
            body["sub"] = sub
        if lifetime is not None:
            body["exp"] = int(time.time()) + lifetime
        return pyjwt.encode(body, key or self.rsa, algorithm=alg, headers={"kid": kid})


class JwksSite:
    """A JWKS document served over HTTP on a loopback port; counts its requests."""

    def __init__(self, document):
        body = json.dumps(document).encode()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                site.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.requests = 0
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/keys.json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def keys():
    return Keys()


@pytest.fixture(scope="module")
def site(keys):
    s = JwksSite(keys.jwks)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def jwt_server(site):
    srv = Server("--hiveconf", "hive.server2.authentication=JWT",
                 "--hiveconf", f"hive.server2.authentication.jwt.jwks.url={site.url}")
    yield srv
    assert srv.alive(), srv.server_log()[-3000:]
    srv.stop()
    shutil.rmtree(srv.data, ignore_errors=True)


def connect(srv, token, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # impyla warns about JWT without TLS
        return impyla.connect(host="127.0.0.1", port=srv.http_port, auth_mechanism="JWT", jwt=token,
                              use_http_transport=True, http_path="cliservice", **kw)


def whoami(conn):
    cur = conn.cursor()
    cur.execute("SELECT current_user()")
    return cur.fetchall()[0][0]


def post(srv, token):
    req = urllib.request.Request(f"http://127.0.0.1:{srv.http_port}/cliservice", data=b"\x80",
                                 method="POST", headers={"Content-Type": "application/x-thrift",
                                                         "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def test_a_valid_token_logs_in_as_its_subject(jwt_server, keys, site):
    assert site.requests == 1  # read once, at start-up
    conn = connect(jwt_server, keys.token("alice"))
    assert whoami(conn) == "alice"
    conn.close()
    conn = connect(jwt_server, keys.token("bob", key=keys.ec, kid="ec1", alg="ES256"))
    assert whoami(conn) == "bob"
    conn.close()
    # No exp: accepted, as Hive does.
    conn = connect(jwt_server, keys.token("carol", lifetime=None))
    assert whoami(conn) == "carol"
    conn.close()
    assert site.requests == 1


def hs256_with(secret, kid, claims):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64url(sig)}"


def test_bad_tokens_are_refused(jwt_server, keys):
    exp = int(time.time()) + 600
    public_pem = keys.rsa.public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
    bad = {
        "expired": keys.token("alice", lifetime=-30),
        "another key": keys.token("alice", key=keys.stranger),
        "another key, no kid": pyjwt.encode({"sub": "alice", "exp": exp}, keys.stranger,
                                            algorithm="RS256"),
        "unknown kid": keys.token("alice", kid="rsa9"),
        "RSA key as an HMAC secret": hs256_with(public_pem, "rsa1", {"sub": "alice", "exp": exp}),
        "alg none": b64url(b'{"alg":"none","kid":"rsa1"}') + "."
        + b64url(json.dumps({"sub": "alice", "exp": exp}).encode()) + ".",
        "RS256 header on the EC key": keys.token("alice", kid="ec1"),
        "no sub": keys.token(None),
        "not a JWT": "hello",
    }
    for what, token in bad.items():
        status, body = post(jwt_server, token)
        assert status == 401, (what, status, body)
        assert body.startswith("Authentication Error"), (what, body)
    with pytest.raises(Exception) as refused:
        connect(jwt_server, keys.token("alice", lifetime=-30)).cursor().execute("SELECT 1")
    assert "401" in str(refused.value)
    # A well-signed token's user is served: the refusals held nothing.
    conn = connect(jwt_server, keys.token("dave"))
    assert whoami(conn) == "dave"
    conn.close()
    assert jwt_server.alive()


def test_password_ports_refuse_every_login(jwt_server):
    """With JWT alone the binary transport and Flight SQL have no password check: every login
    is refused in Hive's words, none is served as anonymous."""
    with pytest.raises(Exception) as refused:
        hive.connect(host="127.0.0.1", port=jwt_server.binary_port, username="alice",
                     password="anything", auth="LDAP")
    assert "Error validating the login" in str(refused.value)
    with pytest.raises(Exception):
        hive.connect(host="127.0.0.1", port=jwt_server.binary_port, username="alice",
                     auth="NOSASL").cursor().execute("SELECT 1")
    with pytest.raises(Exception) as refused:
        flight.adbc_connect(jwt_server, user="alice", password="anything").cursor().execute("SELECT 1")
    assert "Error validating the login" in str(refused.value)
    status, _ = post(jwt_server, "")
    assert status == 401


def test_audit_and_cookie_after_a_token(jwt_server, keys):
    """A JWT login is audited with its subject and method, and its answer sets the login cookie
    that later requests use instead of the token."""
    req = urllib.request.Request(f"http://127.0.0.1:{jwt_server.http_port}/cliservice", data=b"\x80",
                                 method="POST", headers={"Authorization": f"Bearer {keys.token('erin')}"})
    try:
        urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as e:
        assert e.code == 400
        cookie = e.headers["Set-Cookie"].split(";")[0]
    assert cookie.startswith("hive.server2.auth=cu=erin&")
    # The cookie ends when the token does.
    req = urllib.request.Request(f"http://127.0.0.1:{jwt_server.http_port}/cliservice", data=b"\x80",
                                 method="POST",
                                 headers={"Authorization": f"Bearer {keys.token('erin', lifetime=30)}"})
    with pytest.raises(urllib.error.HTTPError) as short:
        urllib.request.urlopen(req, timeout=10)
    max_age = int(short.value.headers["Set-Cookie"].split("Max-Age=")[1].split(";")[0])
    assert 0 < max_age <= 30, short.value.headers["Set-Cookie"]
    req = urllib.request.Request(f"http://127.0.0.1:{jwt_server.http_port}/cliservice", data=b"\x80",
                                 method="POST", headers={"Cookie": cookie})
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(req, timeout=10)
    assert answer.value.code == 400  # past the login
    with open(os.path.join(jwt_server.data, "d", "audit.log")) as f:
        events = [json.loads(line) for line in f]
    logins = [(e["user"], e["method"], e["outcome"]) for e in events if e["event"] == "login"]
    assert ("erin", "JWT", "accepted") in logins
    assert ("", "JWT", "refused") in logins
    assert logins.count(("erin", "JWT", "accepted")) == 2


def test_jwt_over_tls(site, keys, certs):  # noqa: F811 - the certs fixture
    """impyla's usual JWT set-up: HTTPS, with the CA the test made."""
    srv = Server("--hiveconf", "hive.server2.authentication=JWT",
                 "--hiveconf", f"hive.server2.authentication.jwt.jwks.url={site.url}",
                 "--hiveconf", "hive.server2.use.SSL=true",
                 "--hiveconf", f"hive.server2.keystore.path={certs['p12']}",
                 "--hiveconf", f"hive.server2.keystore.password={PASSWORD}")
    try:
        conn = impyla.connect(host="localhost", port=srv.http_port, auth_mechanism="JWT",
                              jwt=keys.token("alice"), use_http_transport=True,
                              http_path="cliservice", use_ssl=True, ca_cert=certs["ca"])
        assert whoami(conn) == "alice"
        conn.close()
    finally:
        srv.stop()
        shutil.rmtree(srv.data, ignore_errors=True)


def test_both_modes_and_start_up_checks(site, keys, tmp_path):
    """LDAP,JWT takes either over HTTP; a JWKS file works like a URL; a server whose JWKS cannot
    be read, or that would take JWT on the binary transport alone, does not start."""
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(keys.jwks))
    # An LDAP URL no directory answers: passwords are refused, tokens still work.
    srv = Server("--hiveconf", "hive.server2.authentication=LDAP,JWT",
                 "--hiveconf", "hive.server2.authentication.ldap.url=ldap://127.0.0.1:9",
                 "--hiveconf", "apiary.authentication.ldap.timeout=2s",
                 "--hiveconf", f"hive.server2.authentication.jwt.jwks.url={jwks}")
    try:
        conn = connect(srv, keys.token("frank"))
        assert whoami(conn) == "frank"
        conn.close()
        with pytest.raises(Exception) as refused:
            hive.connect(host="127.0.0.1", port=srv.binary_port, username="alice",
                         password="pw", auth="LDAP")
        assert "Error validating the login" in str(refused.value)
    finally:
        srv.stop()
        shutil.rmtree(srv.data, ignore_errors=True)
    for settings, expected in [
        (["hive.server2.authentication=JWT",
          "hive.server2.authentication.jwt.jwks.url=http://127.0.0.1:9/keys.json"],
         "hive.server2.authentication.jwt.jwks.url"),
        (["hive.server2.authentication=JWT"], "needs the URL of a JSON Web Key Set"),
        (["hive.server2.authentication=JWT", f"hive.server2.authentication.jwt.jwks.url={site.url}",
          "hive.server2.transport.mode=binary"], "only supported in HTTP transport mode"),
        (["hive.server2.authentication=NONE,JWT"], "hive.server2.authentication"),
    ]:
        with pytest.raises(RuntimeError) as failed:
            Server(*[a for kv in settings for a in ("--hiveconf", kv)])
        assert expected in str(failed.value), (settings, str(failed.value)[-500:])
