"""Benchmark (prints figures, asserts nothing): a full scan of a TEXTFILE table against the same
rows in Parquet, through HiveServer2: rows/s of an aggregate over every column (one row comes
back, so the figure is the scan and the decoding of each field, not the fetch). Starts its own
Apiary.

Usage: APIARY_BIN=target/.../apiary python bench/text_bench.py [ROWS] [RUNS]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

COLUMNS = "(id BIGINT, grp INT, val DOUBLE, name STRING, note STRING, ts TIMESTAMP)"
SOURCE = ("SELECT value, CAST(value % 100 AS INT), CAST(value % 1000 AS DOUBLE) / 7, "
          "concat('n', CAST(value % 5000 AS STRING)), IF(value % 3 = 0, '', 'some text'), "
          "CAST(value * 1000 AS TIMESTAMP) FROM range({n})")
SCAN = ("SELECT count(*), sum(grp), sum(val), count(DISTINCT name), sum(length(note)), max(ts) "
        "FROM {t}")


def main():
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        print(f"{ROWS} rows; {RUNS} runs each; p50 / min / max in ms, and M rows/s at p50")
        answers = []
        for fmt in ["TEXTFILE", "PARQUET"]:
            table = f"t_{fmt.lower()}"
            cur.execute(f"CREATE TABLE {table} {COLUMNS} STORED AS {fmt}")
            cur.execute(f"INSERT INTO {table} {SOURCE.format(n=ROWS)}")

            def run():
                cur.execute(SCAN.format(t=table))
                return cur.fetchall()
            answers.append(run())
            p50, best, worst = timed(run, RUNS)
            print(f"{fmt:9s} scan {p50:8.1f} {best:8.1f} {worst:8.1f}  {ROWS / p50 / 1000:6.2f} M rows/s")
        same = "same answer" if answers[0] == answers[1] else f"ANSWERS DIFFER: {answers}"
        print(f"({same})")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
