"""Benchmark (prints figures, asserts nothing): catalog RPC latency with many tables, and scan
throughput of a partitioned Parquet table with and without partition pruning.

Usage: APIARY_BIN=target/.../apiary python bench/catalog_bench.py [TABLES] [ROWS] [PARTITIONS]
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

TABLES = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
PARTS = int(sys.argv[3]) if len(sys.argv) > 3 else 100


def main():
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE DATABASE many")
        t = time.perf_counter()
        for i in range(TABLES):
            cur.execute(f"CREATE TABLE many.t{i:05d} (id BIGINT COMMENT 'key', name STRING, "
                        f"amount DECIMAL(10,2)) PARTITIONED BY (dt STRING) STORED AS PARQUET")
        print(f"created {TABLES} tables in {time.perf_counter() - t:.1f} s")
        imp = clients.impyla_plain(srv).cursor()
        p50, _, worst = timed(lambda: imp.get_tables(database_name="many"), 5)
        print(f"GetTables over {TABLES} tables (impyla get_tables): p50 {p50:.0f} ms, max {worst:.0f} ms")
        p50, _, worst = timed(lambda: imp.get_table_schema("t04242" if TABLES > 4242 else "t00000", "many"), 20)
        print(f"GetColumns of one table among {TABLES} (impyla get_table_schema): p50 {p50:.1f} ms, max {worst:.1f} ms")

        cur.execute(f"CREATE TABLE scan (v BIGINT, s STRING) PARTITIONED BY (p INT) STORED AS PARQUET")
        t = time.perf_counter()
        cur.execute(f"INSERT INTO scan PARTITION (p) SELECT value, concat('row ', CAST(value AS STRING)), "
                    f"CAST(value % {PARTS} AS INT) FROM range({ROWS})")
        print(f"wrote {ROWS} rows into {PARTS} partitions in {time.perf_counter() - t:.1f} s")

        def scan(where):
            cur.execute(f"SELECT count(*), sum(v), max(length(s)) FROM scan {where}")
            return cur.fetchall()

        scan("")  # warm the file cache
        p50, _, _ = timed(lambda: scan(""), 3)
        print(f"full scan: p50 {p50:.0f} ms, {ROWS / (p50 / 1000) / 1e6:.1f} M rows/s")
        p50, _, _ = timed(lambda: scan("WHERE p = 7"), 3)
        print(f"one partition of {PARTS} (pruned): p50 {p50:.0f} ms for {ROWS // PARTS} rows")
        p50, _, _ = timed(lambda: scan("WHERE v % {0} = 7".format(PARTS)), 3)
        print(f"same rows without pruning (filter on a data column): p50 {p50:.0f} ms")
        cur.execute("EXPLAIN SELECT count(*) FROM scan WHERE p = 7")
        plan = "\n".join(r[0] for r in cur.fetchall())
        dirs = sorted(set(re.findall(r"/p=(\d+)/", plan)))
        print(f"EXPLAIN with p = 7 scans files of partition(s) {dirs}")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
