"""The server log: plain text when it goes to a file, colour only on a terminal (and never with
NO_COLOR), and JSON lines with apiary.log.format=json."""

import json
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import time

from pyhive import hive

from conftest import BIN, Server

ESC = b"\x1b["


def run_a_statement(s):
    conn = hive.connect(host="127.0.0.1", port=s.binary_port, username="alice", auth="NONE")
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == [(1,)]
    conn.close()


def test_a_log_file_holds_no_escape_codes():
    s = Server()
    try:
        run_a_statement(s)
        s.stop()
        data = open(s.log_path, "rb").read()
        assert b"listening" in data or b"INFO" in data, data[:500]
        assert ESC not in data, data[:500]
    finally:
        s.stop()
        shutil.rmtree(s.data, ignore_errors=True)


def test_json_lines_for_log_shippers():
    s = Server("--hiveconf", "apiary.log.format=json")
    try:
        run_a_statement(s)
        s.stop()
        lines = [l for l in open(s.log_path, "rb").read().splitlines() if l.strip()]
        assert lines
        events = [json.loads(l) for l in lines]
        assert all({"timestamp", "level"} <= set(e) for e in events), events[:3]
        assert any(e.get("level") == "INFO" for e in events), events[:3]
        assert not any(ESC in l for l in lines)
    finally:
        s.stop()
        shutil.rmtree(s.data, ignore_errors=True)


def test_a_wrong_log_format_is_refused():
    data = tempfile.mkdtemp(prefix="apiary-test-")
    try:
        r = subprocess.run([BIN, "serve", "--data-dir", data, "--port", "0", "--http-port", "0",
                            "--flightsql-port", "0", "--hiveconf", "apiary.log.format=xml"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
        assert "apiary.log.format: 'xml' is not text or json" in r.stderr, r.stderr
    finally:
        shutil.rmtree(data, ignore_errors=True)


def log_on_a_terminal(env):
    """Starts a server whose standard error is a terminal, returns what it wrote there until
    it logged its query runtime (an INFO line of every start)."""
    data = tempfile.mkdtemp(prefix="apiary-test-")
    master, slave = pty.openpty()
    proc = subprocess.Popen([BIN, "serve", "--data-dir", data, "--port", "0", "--http-port", "0",
                             "--flightsql-port", "0"], stdout=subprocess.DEVNULL, stderr=slave,
                            env=env)
    os.close(slave)
    out = b""
    try:
        deadline = time.time() + 60
        while time.time() < deadline and b"query runtime" not in out:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
    finally:
        proc.terminate()
        proc.wait(15)
        os.close(master)
        shutil.rmtree(data, ignore_errors=True)
    return out


def test_colour_only_on_a_terminal_and_never_with_no_color():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    coloured = log_on_a_terminal(env)
    assert b"query runtime" in coloured and ESC in coloured, coloured[:500]
    plain = log_on_a_terminal({**env, "NO_COLOR": "1"})
    assert b"query runtime" in plain, plain[:500]
    assert ESC not in plain, plain[:500]
