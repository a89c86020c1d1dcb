"""Hive's own golden queries (`../shared/hive-golden`, beside the repository) against a server
this test starts: the pass rate is printed, and the test fails when it drops below the floor in
`tests/hive_golden_floor.txt`."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import Server

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "..", "shared", "hive-golden")
FLOOR_FILE = os.path.join(ROOT, "tests", "hive_golden_floor.txt")


def floor():
    """The floor: the one line of the floor file that is not a comment."""
    with open(FLOOR_FILE) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    return float(lines[0])


def test_hive_golden_queries_pass_at_least_the_floor():
    if not os.path.exists(os.path.join(GOLDEN, "run.py")):
        pytest.fail(f"Hive's golden queries are not at {GOLDEN}")
    srv = Server()
    try:
        with tempfile.TemporaryDirectory(prefix="apiary-golden-") as tmp:
            details = os.path.join(tmp, "details.jsonl")
            run = subprocess.run(
                [sys.executable, os.path.join(GOLDEN, "run.py"), "--port", str(srv.binary_port),
                 "--details", details],
                capture_output=True, text=True, timeout=900)
            summary = None
            for line in run.stdout.splitlines():
                if line.startswith("{") and '"pass_rate"' in line:
                    summary = json.loads(line)
            assert summary is not None, f"the runner printed no summary:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
            print(f"\nHive golden queries: {summary['passed']} of {summary['queries']} pass "
                  f"({summary['pass_rate']:.1%}); {summary['failed']} wrong, {summary['errors']} errors; "
                  f"floor {floor():.1%}")
            assert summary["queries"] > 0
            assert summary["pass_rate"] >= floor(), (
                f"pass rate {summary['pass_rate']:.3f} below the floor {floor():.3f}:\n"
                + "\n".join(run.stdout.splitlines()[-40:]))
        assert srv.alive(), "the server died during the golden queries:\n" + srv.server_log()[-3000:]
    finally:
        srv.stop()
        shutil.rmtree(srv.data, ignore_errors=True)
