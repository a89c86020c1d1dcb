"""Benchmark (prints figures, asserts nothing): a Delta table through the DELTA storage handler
against the same rows in a native Parquet table: a full scan, a query the partition values
prune, and one the files' statistics skip (ids are written in order, so each file holds one id
range). Starts its own Apiary; both tables are written by Apiary's INSERT.

Usage: APIARY_BIN=target/.../apiary python bench/delta_bench.py [ROWS] [RUNS]
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
PARTS = 10


def main():
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        per_part = ROWS // PARTS
        source = (f"SELECT value AS id, CAST(value % 100 AS INT) AS grp, CAST(value % 1000 AS DOUBLE) AS val, "
                  f"concat('p', CAST(value DIV {per_part} AS STRING)) AS part FROM range({ROWS})")
        cols = "(id BIGINT, grp INT, val DOUBLE) PARTITIONED BY (part STRING)"
        cur.execute(f"CREATE TABLE d {cols} STORED BY DELTA")
        cur.execute(f"CREATE TABLE p {cols} STORED AS PARQUET")
        for table, insert in [("d", f"INSERT INTO d {source}"),
                              ("p", f"INSERT INTO p PARTITION (part) {source}")]:
            t = time.perf_counter()
            cur.execute(insert)
            print(f"load {table}: {ROWS} rows in {time.perf_counter() - t:.1f} s")
        lo = per_part * 3 + 1000
        queries = [
            ("full scan", "SELECT count(*), sum(val) FROM {}"),
            ("partition-pruned", "SELECT count(*), sum(val) FROM {} WHERE part = 'p3'"),
            ("statistics-skipped", f"SELECT count(*), sum(val) FROM {{}} WHERE id BETWEEN {lo} AND {lo + 1000}"),
        ]
        print(f"{ROWS} rows in {PARTS} partitions; {RUNS} runs each; p50 / min / max in ms")
        for label, q in queries:
            line = [f"{label:20s}"]
            answers = []
            for table, name in [("d", "delta"), ("p", "parquet")]:
                def run():
                    cur.execute(q.format(table))
                    return cur.fetchall()
                answers.append(run())  # warm-up, and the answer both must give
                p50, best, worst = timed(run, RUNS)
                line.append(f"{name} {p50:8.1f} {best:8.1f} {worst:8.1f}")
            same = "same answer" if answers[0] == answers[1] else f"ANSWERS DIFFER: {answers}"
            print("  ".join(line) + f"  ({same})")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
