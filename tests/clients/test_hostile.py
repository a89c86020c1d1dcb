"""Hostile input on raw sockets: the server answers or closes that one connection, keeps
serving everyone else, and its memory stays bounded."""

import os
import random
import socket
import struct
import time

import pytest

import clients
from conftest import Server


def still_serves(srv):
    conn = clients.pyhive_none(srv)
    cur = conn.cursor()
    cur.execute("SELECT 40 + 2")
    assert cur.fetchall() == [(42,)]
    conn.close()


def closed_by_server(sock, limit=10.0):
    sock.settimeout(limit)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def connect(srv):
    return socket.create_connection(("127.0.0.1", srv.binary_port), timeout=10)


def test_random_bytes(server):
    # Seeded, so a failure can be replayed. Garbage that happens to start a plausible frame
    # is closed when the login timeout (20 s) ends, hence the longer wait.
    for seed in range(8):
        s = connect(server)
        s.sendall(random.Random(seed).randbytes(4096 + seed))
        assert closed_by_server(s, limit=30.0), f"seed {seed}"
        s.close()
    still_serves(server)
    assert server.alive()


def test_four_gib_length_prefix_after_sasl(server):
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 5) + b"PLAIN")
    payload = b"\x00u\x00p"
    s.sendall(b"\x05" + struct.pack(">I", len(payload)) + payload)
    s.settimeout(5)
    assert s.recv(5)[0] == 5  # COMPLETE
    rss_before = server.rss_kib()
    s.sendall(b"\xff\xff\xff\xff" + b"x" * 100)
    assert closed_by_server(s)
    assert server.rss_kib() - rss_before < 50_000
    still_serves(server)


def test_huge_nosasl_string_length(server):
    s = connect(server)
    # Strict header, then a method name claiming 2 GiB.
    s.sendall(struct.pack(">I", 0x80010001) + struct.pack(">i", 0x7FFFFFF0) + b"Open")
    s.close()
    s = connect(server)
    # A list header claiming a billion structs inside OpenSession's args.
    name = b"OpenSession"
    msg = struct.pack(">I", 0x80010001) + struct.pack(">i", len(name)) + name + struct.pack(">i", 1)
    msg += b"\x0c" + struct.pack(">h", 1) + b"\x0d" + struct.pack(">h", 4) + b"\x0b\x0b" + struct.pack(">i", 1_000_000_000)
    rss_before = server.rss_kib()
    s.sendall(msg)
    time.sleep(0.5)
    assert server.rss_kib() - rss_before < 50_000
    s.close()
    still_serves(server)


def test_truncated_frames(server):
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 5) + b"PLA")
    s.close()
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 5) + b"PLAIN")
    payload = b"\x00u\x00p"
    s.sendall(b"\x05" + struct.pack(">I", len(payload)) + payload)
    s.recv(5)
    s.sendall(struct.pack(">I", 1000) + b"\x80\x01\x00\x01")
    s.close()
    still_serves(server)


def test_bad_sasl_exchanges(server):
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 6) + b"GSSAPI")
    s.settimeout(5)
    head = s.recv(5)
    assert head[0] == 3  # BAD
    n = struct.unpack(">I", head[1:5])[0]
    assert b"Unsupported mechanism" in s.recv(n)
    assert closed_by_server(s)
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 5) + b"PLAIN")
    s.sendall(b"\x05" + struct.pack(">I", 3) + b"abc")
    head = s.recv(5)
    assert head[0] == 4  # ERROR: malformed PLAIN response
    assert closed_by_server(s)
    s = connect(server)
    s.sendall(b"\x01" + struct.pack(">I", 0xFFFFFFFF))
    assert closed_by_server(s)
    still_serves(server)


def test_unknown_method_gets_an_exception_reply(server):
    s = connect(server)
    name = b"NoSuchMethod"
    msg = struct.pack(">I", 0x80010001) + struct.pack(">i", len(name)) + name + struct.pack(">i", 7) + b"\x00"
    s.sendall(msg)
    s.settimeout(5)
    reply = s.recv(4096)
    # Strict header with message type 3 (exception) and the same seqid.
    assert struct.unpack(">I", reply[:4])[0] == 0x80010003
    assert b"Invalid method name" in reply
    s.close()
    still_serves(server)


def test_client_vanishing_mid_fetch_frees_its_session(server):
    conn = clients.pyhive_none(server)
    cur = conn.cursor()
    cur.execute("SELECT value FROM range(10000000)")
    cur.fetchmany(10)
    # Drop the socket without closing the operation or the session.
    conn._transport.close()
    time.sleep(1.0)
    still_serves(server)
    assert "closed session left open by a vanished client" in server.server_log()


def test_http_garbage(server):
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    s.sendall(b"POST /cliservice HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789")
    reply = s.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400")
    s.close()
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    s.sendall(b"GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n")
    assert s.recv(4096).startswith(b"HTTP/1.1 404")
    s.close()
    still_serves(server)


def test_nosasl_server_names_the_mismatch(nosasl_server):
    s = socket.create_connection(("127.0.0.1", nosasl_server.binary_port), timeout=10)
    s.sendall(b"\x01" + struct.pack(">I", 5) + b"PLAIN")
    assert closed_by_server(s)
    time.sleep(0.2)
    assert "configured for NOSASL" in nosasl_server.server_log()
    conn = clients.pyhive_nosasl(nosasl_server)
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == [(1,)]


def test_the_server_environment_is_not_substituted_unless_allowed(monkeypatch):
    """`${env:NAME}` reads the server's environment only for names the server allows."""
    monkeypatch.setenv("APIARY_TEST_SECRET", "s3cret")
    monkeypatch.setenv("APIARY_TEST_VISIBLE", "shown")
    srv = Server("--hiveconf", "apiary.substitute.env.allowed=APIARY_TEST_VISIBLE")
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("SELECT '${env:APIARY_TEST_SECRET}' AS a, '${env:APIARY_TEST_VISIBLE}' AS b")
        assert cur.fetchall() == [("${env:APIARY_TEST_SECRET}", "shown")]
        # A session cannot widen the list: it is the server's setting.
        with pytest.raises(Exception, match="Cannot modify apiary.substitute.env.allowed at runtime"):
            cur.execute("SET apiary.substitute.env.allowed=APIARY_TEST_SECRET")
        cur.execute("SELECT '${env:APIARY_TEST_SECRET}' AS a")
        assert cur.fetchall() == [("${env:APIARY_TEST_SECRET}",)]
    finally:
        srv.stop()
