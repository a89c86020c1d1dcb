"""Hive's own golden queries (`../shared/hive-golden`, beside the repository) against a server
this test starts: the pass rate is printed, and the test fails when it drops below the floor in
`tests/hive_golden_floor.txt`. The queries in `tests/hive_golden_known.tsv` are reported apart:
those whose answer a deliberate Hive 3/4 change moved are left out of the second rate printed,
and a listed query whose result no longer fits its kind fails the test (the list must stay
true)."""

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
KNOWN_FILE = os.path.join(ROOT, "tests", "hive_golden_known.tsv")


def known():
    """(file, seq) -> (kind, reference, reason) from the list of queries answered apart."""
    out = {}
    with open(KNOWN_FILE) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, seq, kind, reference, reason = line.rstrip("\n").split("\t")
            assert kind in ("hive-change", "refused"), line
            out[(name, int(seq))] = (kind, reference, reason)
    return out


def floor():
    """The floor: the one line of the floor file that is not a comment."""
    with open(FLOOR_FILE) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    return float(lines[0])


def test_hive_golden_queries_pass_at_least_the_floor(capsys):
    if not os.path.exists(os.path.join(GOLDEN, "run.py")):
        pytest.fail(f"Hive's golden queries are not at {GOLDEN}")
    srv = Server()
    try:
        with tempfile.TemporaryDirectory(prefix="apiary-golden-") as tmp:
            details = os.path.join(tmp, "details.jsonl")
            run = subprocess.run(
                # Hive's test harness recorded the answers in America/Los_Angeles (its qtests
                # run with user.timezone set so): unix_timestamp and from_unixtime read and
                # write local times in the session's zone.
                [sys.executable, os.path.join(GOLDEN, "run.py"), "--port", str(srv.binary_port),
                 "--details", details, "--set", "hive.local.time.zone=America/Los_Angeles"],
                capture_output=True, text=True, timeout=900)
            summary = None
            for line in run.stdout.splitlines():
                if line.startswith("{") and '"pass_rate"' in line:
                    summary = json.loads(line)
            assert summary is not None, f"the runner printed no summary:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
            report = []
            report.append(f"\nHive golden queries: {summary['passed']} of {summary['queries']} pass "
                  f"({summary['pass_rate']:.1%}); {summary['failed']} wrong, {summary['errors']} errors; "
                  f"floor {floor():.1%}")
            assert summary["queries"] > 0
            listed = known()
            with open(details) as f:
                results = [json.loads(l) for l in f if l.strip()]
            status = {(r["file"], r["seq"]): r["status"] for r in results}
            changed = [k for k, v in listed.items() if v[0] == "hive-change"]
            passed = sum(1 for k, v in status.items() if v == "pass" and k not in listed)
            counted = summary["queries"] - len(changed)
            unlisted = [k for k, v in status.items() if v != "pass" and k not in listed]
            report.append(f"Without the {len(changed)} answers deliberate Hive 3/4 changes moved "
                  f"(tests/hive_golden_known.tsv): {passed} of {counted} pass ({passed / counted:.1%}); "
                  f"{sum(1 for k, v in listed.items() if v[0] == 'refused')} refused on purpose; "
                  f"{len(unlisted)} other failures")
            # The issue asks to leave the PTFs of Hive's test suite out (they are no built-ins):
            # the rate without them too.
            test_only = [k for k, v in listed.items() if v[1] == "test-only PTF"]
            report.append(f"Also without the {len(test_only)} queries of Hive's test-only table "
                  f"functions: {passed} of {counted - len(test_only)} pass "
                  f"({passed / (counted - len(test_only)):.1%})")
            # In the run's output even when pytest captures it (CI runs it quietly).
            with capsys.disabled():
                print("\n".join(report))
            stale = [f"{k[0]} {k[1]}: listed {listed[k][0]} ({listed[k][1]}) but {status.get(k)}"
                     for k in listed
                     if status.get(k) is None
                     or (listed[k][0] == "refused" and status[k] == "pass")
                     or (listed[k][0] == "hive-change" and status[k] == "error")]
            assert not stale, "tests/hive_golden_known.tsv is out of date:\n" + "\n".join(stale)
            assert summary["pass_rate"] >= floor(), (
                f"pass rate {summary['pass_rate']:.3f} below the floor {floor():.3f}:\n"
                + "\n".join(run.stdout.splitlines()[-40:]))
        assert srv.alive(), "the server died during the golden queries:\n" + srv.server_log()[-3000:]
    finally:
        srv.stop()
        shutil.rmtree(srv.data, ignore_errors=True)
