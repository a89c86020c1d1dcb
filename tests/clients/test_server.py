"""The server process itself: configuration sources, transport modes, limits, timeouts, expiry
and graceful shutdown."""

import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import clients
from conftest import BIN, Server


def test_help_documents_every_option():
    out = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    for opt in ["--data-dir", "--bind", "--port", "--http-port", "--config", "--hiveconf"]:
        assert opt in out
    keys = subprocess.run([BIN, "keys"], capture_output=True, text=True, check=True).stdout
    assert "hive.server2.transport.mode (default all)" in keys


def test_config_file_and_transport_mode():
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write('[hiveconf]\n"hive.server2.transport.mode" = "binary"\n')
    srv = Server("--config", f.name, "--hiveconf", "hive.server2.transport.mode=binary")
    try:
        assert srv.binary_port and srv.http_port is None
    finally:
        srv.stop()
    srv = Server("--config", f.name, "--hiveconf", "hive.server2.transport.mode=http")
    try:
        assert srv.http_port and srv.binary_port is None
        conn = clients.pyhive_http(srv)
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
    finally:
        srv.stop()


def test_bad_configuration_is_refused():
    r = subprocess.run([BIN, "serve", "--port", "0", "--hiveconf", "hive.server2.authentication=KERBEROS"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "hive.server2.authentication" in r.stderr


def test_graceful_shutdown_on_sigterm():
    srv = Server()
    conn = clients.pyhive_none(srv)
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(20) == 0
    assert "stopped" in srv.server_log()
    conn._transport.close()


def test_connection_limit():
    # At the limit a new client waits for a slot (up to twice the login timeout) instead of being
    # refused; clients that hold a slot without a session are closed after that long.
    srv = Server("--hiveconf", "hive.server2.thrift.max.worker.threads=2",
                 "--hiveconf", "hive.server2.thrift.login.timeout=2s")
    try:
        busy = [clients.pyhive_none(srv) for _ in range(2)]
        extra = socket.create_connection(("127.0.0.1", srv.binary_port))
        extra.sendall(b"\x01")  # starts a SASL handshake and then says nothing
        extra.settimeout(10)
        # The extra connection waits for a slot, then the login timeout closes it.
        try:
            assert extra.recv(10) == b""
        except ConnectionResetError:
            pass  # closed with the byte it sent unread
        assert "no connection slot freed within the login timeout" in srv.server_log()
        busy[0].close()
        time.sleep(0.3)
        conn = clients.pyhive_none(srv)
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
    finally:
        srv.stop()


def test_handshake_timeout():
    srv = Server("--hiveconf", "hive.server2.thrift.login.timeout=1s")
    try:
        s = socket.create_connection(("127.0.0.1", srv.binary_port))
        s.settimeout(10)
        start = time.time()
        assert s.recv(10) == b""
        assert time.time() - start < 5
        time.sleep(0.2)
        assert "handshake timed out" in srv.server_log()
    finally:
        srv.stop()


def test_idle_sessions_expire():
    srv = Server("--hiveconf", "hive.server2.idle.session.timeout=1s",
                 "--hiveconf", "hive.server2.session.check.interval=200ms")
    try:
        conn = clients.pyhive_none(srv)
        cur = conn.cursor()
        cur.execute("SELECT 1")
        time.sleep(2.5)
        with pytest.raises(Exception) as e:
            conn.cursor().execute("SELECT 1")
        assert "Invalid SessionHandle" in str(e.value)
        assert "closed idle sessions" in srv.server_log()
    finally:
        srv.stop()
