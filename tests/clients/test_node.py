"""hive-driver from npm, over binary PLAIN, binary NOSASL and HTTP."""

import json
import os
import subprocess
import tempfile

import pytest

import hive_types

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node")
MODULES = os.environ.get("APIARY_NODE_MODULES", os.path.join(NODE_DIR, "node_modules"))


@pytest.mark.parametrize("mode", ["plain", "nosasl", "http"])
def test_hive_driver(server, mode):
    spec = {
        "query": hive_types.query(),
        "expected": [[n, v] for n, _e, _t, v in hive_types.COLUMNS if n != "c_bigint"],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    port = server.http_port if mode == "http" else server.binary_port
    env = dict(os.environ, NODE_PATH=MODULES)
    r = subprocess.run(
        ["node", os.path.join(NODE_DIR, "client_test.js"), mode, "127.0.0.1", str(port), f.name],
        capture_output=True, text=True, timeout=120, env=env,
    )
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ALL PASSED" in r.stdout
