"""Benchmark (prints figures, asserts nothing): SELECT 1 round trips through impyla, rows/s
fetching 1M rows (bigint, string, double) through impyla, PyHive and the Hive JDBC driver, and
server RSS.

Usage: APIARY_BIN=target/release/apiary python bench/hs2_bench.py [ROWS] [ROUND_TRIPS]
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import pyspark

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
TRIPS = int(sys.argv[2]) if len(sys.argv) > 2 else 500
QUERY = f"SELECT value AS id, concat('row-', CAST(value AS STRING)) AS s, CAST(value AS DOUBLE) / 3 AS d FROM range({ROWS})"


def fetch_rate(conn, batch=10_000):
    cur = conn.cursor()
    cur.arraysize = batch
    start = time.perf_counter()
    cur.execute(QUERY)
    n = 0
    while True:
        rows = cur.fetchmany(batch)
        if not rows:
            break
        n += len(rows)
    elapsed = time.perf_counter() - start
    assert n == ROWS
    return n / elapsed


def jdbc_rate(srv, batch=10_000):
    """Rows/s through the Hive JDBC driver (bench/JdbcFetchBench.java, compiled here)."""
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "JdbcFetchBench.java")
    out = tempfile.mkdtemp(prefix="apiary-bench-")
    subprocess.run(["javac", "-cp", jars, "-d", out, src], check=True)
    url = f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default"
    r = subprocess.run(["java", "-cp", f"{out}:{jars}", "JdbcFetchBench", url, QUERY, str(batch)],
                       capture_output=True, text=True, check=True)
    m = re.search(r"rows=(\d+) seconds=[\d.]+ rate=(\d+)", r.stdout)
    assert m and int(m.group(1)) == ROWS, r.stdout + r.stderr
    return float(m.group(2))


def main():
    srv = Server()
    try:
        print(f"server idle RSS: {srv.rss_kib() / 1024:.1f} MiB")
        conn = clients.impyla_plain(srv)
        cur = conn.cursor()
        times = []
        for _ in range(TRIPS):
            t = time.perf_counter()
            cur.execute("SELECT 1")
            cur.fetchall()
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"SELECT 1 via impyla: p50 {statistics.median(times):.2f} ms, "
              f"p99 {times[int(len(times) * 0.99) - 1]:.2f} ms ({TRIPS} round trips)")
        for name in ["impyla_plain", "pyhive_none"]:
            c = getattr(clients, name)(srv)
            rate = fetch_rate(c)
            c.close()
            print(f"{ROWS} rows (bigint, string, double) via {name}: {rate / 1e6:.3f} M rows/s; "
                  f"server RSS after: {srv.rss_kib() / 1024:.1f} MiB")
        rate = jdbc_rate(srv)
        print(f"{ROWS} rows (bigint, string, double) via hive-jdbc 2.3: {rate / 1e6:.3f} M rows/s; "
              f"server RSS after: {srv.rss_kib() / 1024:.1f} MiB")
        conn.close()
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
