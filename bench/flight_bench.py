"""Benchmark (prints figures, asserts nothing): ROWS rows (bigint, string, double) fetched
through Arrow Flight SQL with ADBC into an Arrow table, through impyla over HiveServer2, and
read in process from the same gateway operation with no wire (the collect_bench example), side
by side in one run; with the server's peak RSS while each client streams.

Usage: APIARY_BIN=$CARGO_TARGET_DIR/<profile>/apiary python bench/flight_bench.py [ROWS] [RUNS]
The in-process reader is $CARGO_TARGET_DIR/<profile>/examples/collect_bench (built by
`cargo build -p apiary-gateway --example collect_bench`, same profile as the server).
"""

import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import BIN, Server  # noqa: E402
import clients  # noqa: E402
import flight  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
QUERY = (f"SELECT value AS id, concat('row-', CAST(value AS STRING)) AS s, "
         f"CAST(value AS DOUBLE) / 3 AS d FROM range({ROWS})")


class PeakRss:
    """Samples the server's RSS every 50 ms while in a `with` block."""

    def __init__(self, srv):
        self.srv, self.peak, self.stop = srv, 0, threading.Event()

    def __enter__(self):
        def sample():
            while not self.stop.is_set():
                self.peak = max(self.peak, self.srv.rss_kib())
                time.sleep(0.05)

        self.thread = threading.Thread(target=sample)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def server_cpu(srv):
    """CPU seconds (user + system) the server process has used so far."""
    with open(f"/proc/{srv.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def adbc_rate(srv):
    """Rows/s, peak server RSS, and the client's and server's CPU shares of the wall time."""
    conn = flight.adbc_connect(srv)
    cur = conn.cursor()
    with PeakRss(srv) as rss:
        cpu0, srv0 = time.process_time(), server_cpu(srv)
        start = time.perf_counter()
        cur.execute(QUERY)
        table = cur.fetch_arrow_table()
        elapsed = time.perf_counter() - start
        client, server = time.process_time() - cpu0, server_cpu(srv) - srv0
    assert table.num_rows == ROWS
    cur.close()
    conn.close()
    return ROWS / elapsed, rss.peak, client / elapsed, server / elapsed


def impyla_rate(srv, batch=10_000):
    conn = clients.impyla_plain(srv)
    cur = conn.cursor()
    cur.arraysize = batch
    with PeakRss(srv) as rss:
        start = time.perf_counter()
        cur.execute(QUERY)
        n = clients.fetch_count(cur, batch)
        elapsed = time.perf_counter() - start
    assert n == ROWS
    cur.close()
    conn.close()
    return ROWS / elapsed, rss.peak


def in_process_rates():
    exe = os.path.join(os.path.dirname(BIN), "examples", "collect_bench")
    r = subprocess.run([exe, QUERY, str(RUNS)], capture_output=True, text=True, check=True)
    rates = [float(m.group(2)) for m in re.finditer(r"rows=(\d+) seconds=[\d.]+ rate=(\d+)", r.stdout)]
    assert rates, r.stdout + r.stderr
    return rates


def main():
    srv = Server()
    try:
        print(f"rows: {ROWS:,}  query: {QUERY}")
        print(f"server idle RSS: {srv.rss_kib() / 1024:.1f} MiB")
        adbc, impyla = [], []
        for run in range(RUNS):
            a, a_rss, a_client, a_server = adbc_rate(srv)
            i, i_rss = impyla_rate(srv)
            adbc.append(a)
            impyla.append(i)
            print(f"run {run + 1}: Flight SQL (ADBC, fetch_arrow_table) {a / 1e6:.3f} M rows/s "
                  f"(server peak RSS {a_rss / 1024:.1f} MiB; CPU / wall: client {a_client:.0%}, "
                  f"server {a_server:.0%}); impyla {i / 1e6:.3f} M rows/s "
                  f"(peak RSS {i_rss / 1024:.1f} MiB)")
        local = in_process_rates()
        for n, rate in enumerate(local, start=1):
            print(f"in process, run {n}: {rate / 1e6:.3f} M rows/s")
        print(f"best runs: Flight SQL / impyla = {max(adbc) / max(impyla):.1f}x; "
              f"in process / Flight SQL = {max(local) / max(adbc):.2f}x")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
