"""Benchmark (prints figures, asserts nothing): an HBase table on Google's Bigtable emulator
through the HBASE storage handler: a query whose row-key condition becomes a row range against
the same query with a condition no key range holds (a full scan), and the load through
Apiary's INSERT. Starts its own emulator and Apiary.

Usage: APIARY_BIN=target/.../apiary python bench/hbase_bench.py [ROWS] [RUNS]
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import BigtableEmulator, Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def main():
    emulator = BigtableEmulator()
    srv = Server(env=emulator.env())
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE TABLE h (k STRING, grp INT, val DOUBLE) STORED BY HBASE WITH SERDEPROPERTIES "
                    "('hbase.columns.mapping' = ':key,cf:grp,cf:val') TBLPROPERTIES "
                    "('google.bigtable.project.id' = 'p', 'google.bigtable.instance.id' = 'i')")
        t = time.perf_counter()
        # Keys k0000000 .. in order; 1000 rows are 0.1% of a million.
        cur.execute(f"INSERT INTO h SELECT concat('k', lpad(CAST(value AS STRING), 7, '0')), "
                    f"CAST(value % 100 AS INT), CAST(value % 1000 AS DOUBLE) FROM range({ROWS})")
        print(f"load: {ROWS} rows in {time.perf_counter() - t:.1f} s")
        lo = ROWS // 2
        lo_key, hi_key = f"k{lo:07d}", f"k{lo + 999:07d}"
        queries = [
            ("key range", f"SELECT count(*), sum(val) FROM h WHERE k BETWEEN '{lo_key}' AND '{hi_key}'"),
            # The same rows, chosen by a value no row range holds: every row is read.
            ("full scan", f"SELECT count(*), sum(val) FROM h WHERE substr(k, 2) BETWEEN '{lo_key[1:]}' "
                          f"AND '{hi_key[1:]}'"),
        ]
        print(f"{ROWS} rows; {RUNS} runs each; p50 / min / max in ms")
        answers = []
        for label, q in queries:
            def run():
                cur.execute(q)
                return cur.fetchall()
            answers.append(run())  # warm-up, and the answer both must give
            p50, best, worst = timed(run, RUNS)
            print(f"{label:12s} {p50:9.1f} {best:9.1f} {worst:9.1f}")
        print("same answer" if answers[0] == answers[1] else f"ANSWERS DIFFER: {answers}")
    finally:
        srv.stop()
        emulator.stop()


if __name__ == "__main__":
    main()
