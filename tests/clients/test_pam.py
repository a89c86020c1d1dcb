"""Hive's PAM mode (hive.server2.authentication=PAM) through the machine's real libpam: PAM
services this test writes into /etc/pam.d (removed at the end) check passwords with
pam_pwdfile against a password file of crypt(3) hashes. A login must pass every listed
service, account management included; right and wrong passwords through PyHive, impyla over
HTTP, beeline and Flight SQL."""

import concurrent.futures
import os
import subprocess
import tempfile
import uuid

import pytest
from impala import dbapi as impyla
from pyhive import hive

import flight
from conftest import Server
from test_authentication import beeline

PAM_DIR = "/etc/pam.d"


def _hash(password):
    return subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password, text=True,
                          capture_output=True, check=True).stdout.strip()


class PamServices:
    """PAM services named apiary-test-<random>-<name>, each checking a password file."""

    def __init__(self):
        if not os.access(PAM_DIR, os.W_OK):
            pytest.fail(f"the PAM tests write their services into {PAM_DIR}: run them as root")
        self.dir = tempfile.mkdtemp(prefix="apiary-pam-")
        self.tag = uuid.uuid4().hex[:8]
        self.files = []

    def service(self, name, users, account="pam_permit.so"):
        pwdfile = os.path.join(self.dir, f"{name}.passwd")
        with open(pwdfile, "w") as f:
            for user, password in users.items():
                f.write(f"{user}:{_hash(password)}\n")
        service = f"apiary-test-{self.tag}-{name}"
        path = os.path.join(PAM_DIR, service)
        with open(path, "w") as f:
            f.write(f"auth required pam_pwdfile.so pwdfile={pwdfile}\naccount required {account}\n")
        self.files.append(path)
        return service

    def remove(self):
        for path in self.files:
            os.unlink(path)


@pytest.fixture(scope="module")
def pam():
    services = PamServices()
    services.main = services.service("main", {"alice": "wonderland", "bob": "builder", "dave": "diver"})
    services.second = services.service("second", {"alice": "wonderland", "dave": "diver"})
    services.locked = services.service("locked", {"dave": "diver"}, account="pam_deny.so")
    yield services
    services.remove()


def _server(*names):
    return Server("--hiveconf", "hive.server2.authentication=PAM",
                  "--hiveconf", "hive.server2.authentication.pam.services=" + ",".join(names))


@pytest.fixture(scope="module")
def pam_server(pam):
    srv = _server(pam.main)
    yield srv
    srv.stop()


def _whoami(conn, **kw):
    cur = conn.cursor(**kw)
    cur.execute("SELECT current_user()")
    return cur.fetchall()[0][0]


def _pyhive(srv, user, password):
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username=user, password=password, auth="LDAP")


def test_right_and_wrong_passwords_on_every_front_end(pam, pam_server):
    assert _whoami(_pyhive(pam_server, "alice", "wonderland")) == "alice"
    with pytest.raises(Exception, match="Error validating the login"):
        _pyhive(pam_server, "alice", "wrong")
    with pytest.raises(Exception, match="Error validating the login"):
        _pyhive(pam_server, "nobody", "wonderland")
    http = impyla.connect(host="127.0.0.1", port=pam_server.http_port, auth_mechanism="PLAIN", user="bob",
                          password="builder", use_http_transport=True, http_path="cliservice")
    assert _whoami(http, user="bob") == "bob"
    with pytest.raises(Exception, match="401"):
        impyla.connect(host="127.0.0.1", port=pam_server.http_port, auth_mechanism="PLAIN", user="bob",
                       password="wrong", use_http_transport=True, http_path="cliservice").cursor()
    out = beeline(pam_server, "SELECT current_user()", "bob", "builder")
    assert "\nbob\n" in out, out
    out = beeline(pam_server, "SELECT current_user()", "bob", "wrong")
    assert "Error validating the login" in out and "\nbob\n" not in out, out
    flight.adbc_connect(pam_server, user="alice", password="wonderland").close()
    with pytest.raises(Exception):
        flight.adbc_connect(pam_server, user="alice", password="wrong").cursor().execute("SELECT 1")
    # The reason stays in the server's log, naming the service; never the password.
    log = pam_server.server_log()
    assert "Error authenticating with the PAM service: " + pam.main in log
    assert "wonderland" not in log and "builder" not in log


def test_every_service_must_pass_and_account_checks_count(pam):
    srv = _server(pam.main, pam.second)
    try:
        assert _whoami(_pyhive(srv, "alice", "wonderland")) == "alice"
        with pytest.raises(Exception, match="Error validating the login"):
            _pyhive(srv, "bob", "builder")  # in main, not in second
        assert f"Error authenticating with the PAM service: {pam.second}" in srv.server_log()
    finally:
        srv.stop()
    srv = _server(pam.locked)
    try:
        with pytest.raises(Exception, match="Error validating the login"):
            _pyhive(srv, "dave", "diver")  # the password is right, the account is refused
    finally:
        srv.stop()


def test_parallel_wrong_guesses_and_a_huge_password_leave_the_server_serving(pam_server):
    def guess(i):
        try:
            _pyhive(pam_server, "alice", f"guess-{i}")
            return "accepted"
        except Exception:
            return "refused"

    with concurrent.futures.ThreadPoolExecutor(40) as pool:
        assert set(pool.map(guess, range(40))) == {"refused"}
    with pytest.raises(Exception):
        _pyhive(pam_server, "alice", "x" * (1 << 20))
    assert _whoami(_pyhive(pam_server, "alice", "wonderland")) == "alice"
    assert pam_server.alive()


def test_startup_refuses_pam_without_services_and_with_ldap():
    with pytest.raises(RuntimeError, match="needs hive.server2.authentication.pam.services"):
        Server("--hiveconf", "hive.server2.authentication=PAM")
    with pytest.raises(RuntimeError, match="one password mode"):
        Server("--hiveconf", "hive.server2.authentication=LDAP,PAM")
    with pytest.raises(RuntimeError, match="is not a PAM service name"):
        Server("--hiveconf", "hive.server2.authentication=PAM",
               "--hiveconf", "hive.server2.authentication.pam.services=../etc/passwd")
