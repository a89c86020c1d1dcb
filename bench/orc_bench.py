"""Benchmark (prints figures, asserts nothing): Apiary's ORC writer against its Parquet writer
(arrow-rs) on the same rows, with and without DECIMAL and complex columns: the time of one
INSERT, the bytes written, and a full scan of what was written. Starts its own Apiary.

Usage: APIARY_BIN=target/.../apiary python bench/orc_bench.py [ROWS] [RUNS]
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

SHAPES = {
    "primitive": ("(id BIGINT, grp INT, val DOUBLE, name STRING, ts TIMESTAMP)",
                  "SELECT value, CAST(value % 100 AS INT), CAST(value % 1000 AS DOUBLE), "
                  "concat('n', CAST(value % 5000 AS STRING)), CAST(value * 1000 AS TIMESTAMP) FROM range({n})",
                  "SELECT count(*), sum(grp), sum(val), count(DISTINCT name), max(ts) FROM {t}"),
    "decimal+complex": ("(id BIGINT, amount DECIMAL(12,2), tags ARRAY<INT>, attrs STRUCT<a:INT,b:STRING>)",
                        "SELECT value, CAST(value % 100000 AS DECIMAL(12,2)) / 100, array(CAST(value % 7 AS INT), 1), "
                        "named_struct('a', CAST(value % 3 AS INT), 'b', 'x') FROM range({n})",
                        "SELECT count(*), sum(amount), sum(size(tags)), sum(attrs.a) FROM {t}"),
}


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        warehouse = os.path.join(srv.data, "d", "warehouse")
        print(f"{ROWS} rows; scans: {RUNS} runs each, p50 / min / max in ms")
        for shape, (cols, source, scan) in SHAPES.items():
            answers = []
            for fmt in ["ORC", "PARQUET"]:
                table = f"{fmt.lower()}_{shape.replace('+', '_')}"
                cur.execute(f"CREATE TABLE {table} {cols} STORED AS {fmt}")
                t = time.perf_counter()
                cur.execute(f"INSERT INTO {table} {source.format(n=ROWS)}")
                load = time.perf_counter() - t
                size = folder_bytes(os.path.join(warehouse, table))

                def run():
                    cur.execute(scan.format(t=table))
                    return cur.fetchall()
                answers.append(run())
                p50, best, worst = timed(run, RUNS)
                print(f"{shape:16s} {fmt:8s} load {load:6.1f} s  {size / 2**20:8.1f} MiB  "
                      f"scan {p50:8.1f} {best:8.1f} {worst:8.1f}")
            same = "same answer" if answers[0] == answers[1] else f"ANSWERS DIFFER: {answers}"
            print(f"{shape:16s} ({same})")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
