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


def server_cpu(srv):
    """CPU seconds (user + system) the server process has used so far."""
    with open(f"/proc/{srv.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fetch_rate(conn, srv, batch=10_000):
    """Rows/s, and the shares of the wall time the client and the server spent on CPU."""
    cur = conn.cursor()
    cur.arraysize = batch
    cpu0, srv0 = time.process_time(), server_cpu(srv)
    start = time.perf_counter()
    cur.execute(QUERY)
    n = 0
    while True:
        rows = cur.fetchmany(batch)
        if not rows:
            break
        n += len(rows)
    elapsed = time.perf_counter() - start
    client, server = time.process_time() - cpu0, server_cpu(srv) - srv0
    assert n == ROWS
    return n / elapsed, client / elapsed, server / elapsed


def jdbc_rate(srv, batch=10_000):
    """Rows/s through the Hive JDBC driver (bench/JdbcFetchBench.java, compiled here)."""
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "JdbcFetchBench.java")
    out = tempfile.mkdtemp(prefix="apiary-bench-")
    subprocess.run(["javac", "-cp", jars, "-d", out, src], check=True)
    url = f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default"
    srv0, child0 = server_cpu(srv), os.times()
    r = subprocess.run(["java", "-cp", f"{out}:{jars}", "JdbcFetchBench", url, QUERY, str(batch)],
                       capture_output=True, text=True, check=True)
    child1 = os.times()
    server = server_cpu(srv) - srv0
    m = re.search(r"rows=(\d+) seconds=([\d.]+) rate=(\d+)", r.stdout)
    assert m and int(m.group(1)) == ROWS, r.stdout + r.stderr
    # The JVM's CPU includes its start-up and compilation, so its share is an upper bound.
    client = (child1.children_user + child1.children_system
              - child0.children_user - child0.children_system)
    secs = float(m.group(2))
    return float(m.group(3)), client / secs, server / secs


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
            rate, client, server = fetch_rate(c, srv)
            c.close()
            print(f"{ROWS} rows (bigint, string, double) via {name}: {rate / 1e6:.3f} M rows/s; "
                  f"CPU / wall: client {client:.0%}, server {server:.0%}; "
                  f"server RSS after: {srv.rss_kib() / 1024:.1f} MiB")
        rate, client, server = jdbc_rate(srv)
        print(f"{ROWS} rows (bigint, string, double) via hive-jdbc 2.3: {rate / 1e6:.3f} M rows/s; "
              f"CPU / wall: client (JVM, incl. start-up) {client:.0%}, server {server:.0%}; "
              f"server RSS after: {srv.rss_kib() / 1024:.1f} MiB")
        cur.close()
        conn.close()
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
