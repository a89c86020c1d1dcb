"""Benchmark (prints figures, asserts nothing): a function-heavy query over ROWS rows (string,
date and JSON functions), each Hive function alone, side by side with DataFusion's own
function for the same work where it has one, as rows/s through HiveServer2. A Hive-compatible
function much slower than DataFusion's shows here.

Each measured query is `SELECT sum(coalesce(length(CAST(<expr> AS STRING)), 0)) FROM fb.t`: one row comes
back, so the figure is the server's work, not the fetch. The table is Parquet, written once.
Aggregates (the exact percentiles) are measured as `SELECT <aggregate> FROM fb.t`.

Usage: APIARY_BIN=$CARGO_TARGET_DIR/<profile>/apiary python bench/function_bench.py [ROWS] [RUNS] [aggregates]
(`aggregates` measures the aggregates only)
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

# (family, Hive's expression, DataFusion's expression for the same work or None)
CASES = [
    ("string", "upper(s)", None),
    ("string", "substr(s, 2, 5)", "substring(s, 2, 5)"),
    ("string", "concat_ws('-', s, 'x', s)", None),
    ("string", "lpad(s, 20, '*')", None),
    ("string", "regexp_extract(s, 'row-([0-9]+)', 1)", "regexp_match(s, 'row-([0-9]+)')[0]"),
    ("string", "regexp_replace(s, '[0-9]', '#')", None),
    ("string", "split(s, '-')[1]", None),
    ("string", "translate(s, '0123', 'abcd')", None),
    ("string", "format_number(d, 2)", None),
    ("string", "md5(s)", None),
    ("date", "date_format(ts, 'yyyy-MM-dd HH:mm')", "to_char(ts, '%Y-%m-%d %H:%M')"),
    ("date", "from_unixtime(secs)", None),
    ("date", "unix_timestamp(dt, 'yyyy-MM-dd')", None),
    ("date", "datediff(dt, '2020-01-01')", None),
    ("date", "date_add(dt, 7)", None),
    ("date", "add_months(dt, 1)", None),
    ("date", "year(dt)", "date_part('year', CAST(dt AS DATE))"),
    ("date", "trunc(dt, 'MM')", "CAST(date_trunc('month', CAST(dt AS DATE)) AS DATE)"),
    ("json", "get_json_object(j, '$.a')", None),
    ("json", "get_json_object(j, '$.b[1].c')", None),
    ("number", "round(d, 2)", None),
    ("number", "pmod(id, 7)", "((id % 7) + 7) % 7"),
]

# (Hive's aggregate, DataFusion's for the same work or None), each measured as
# `SELECT <aggregate> FROM fb.t`.
AGGREGATES = [
    ("percentile(id, 0.5)", "percentile_cont(CAST(id AS DOUBLE), 0.5)"),
    ("percentile_disc(id, 0.5)", None),
]


def measure(expr):
    """The measured aggregate over an expression."""
    return f"coalesce(length(CAST({expr} AS STRING)), 0)"


def sql_rate(cur, sql):
    """Median rows/s of `sql` over fb.t, and its answer (to compare two forms)."""
    answer = []

    def run():
        cur.execute(sql)
        answer[:] = cur.fetchall()

    p50, _, _ = timed(run, RUNS)
    return ROWS / (p50 / 1000), answer[0][0] if answer else None


def rate(cur, *exprs):
    """Median rows/s of the aggregate over `exprs`, and the answer."""
    return sql_rate(cur, f"SELECT sum({' + '.join(measure(e) for e in exprs)}) FROM fb.t")


def aggregate_rate(cur, agg):
    """Median rows/s of `SELECT agg FROM fb.t`, and the answer."""
    return sql_rate(cur, f"SELECT {agg} FROM fb.t")


def compare(cur, label, hive, native, measured):
    """Prints Hive's form and, if any, DataFusion's beside it, measured by `measured`."""
    hive_rate, hive_answer = measured(cur, hive)
    line = f"{label:7} {hive:40} {hive_rate / 1e6:9.2f}"
    if native:
        native_rate, native_answer = measured(cur, native)
        same = "" if native_answer == hive_answer else "  (answers differ)"
        line += f"   {native:40} {native_rate / 1e6:9.2f}{same}"
    print(line, flush=True)


def main():
    srv = Server()
    try:
        cur = clients.pyhive_none(srv).cursor()
        cur.execute("CREATE DATABASE fb")
        t = time.perf_counter()
        cur.execute(
            "CREATE TABLE fb.t STORED AS PARQUET AS SELECT value AS id, "
            "concat('row-', CAST(value AS STRING), '-', CAST(value % 97 AS STRING)) AS s, "
            "CAST(value AS DOUBLE) / 7 AS d, "
            "1500000000 + value * 37 AS secs, "
            "CAST(from_unixtime(1500000000 + value * 37) AS TIMESTAMP) AS ts, "
            "to_date(from_unixtime(1500000000 + value * 37)) AS dt, "
            "concat('{\"a\":', CAST(value AS STRING), ',\"b\":[{\"c\":1},{\"c\":\"', "
            "CAST(value % 13 AS STRING), '\"}]}') AS j "
            f"FROM range({ROWS})")
        print(f"wrote {ROWS} rows in {time.perf_counter() - t:.1f} s")
        print(f"{'family':7} {'Hive expression':40} {'M rows/s':>9}   {'DataFusion expression':40} {'M rows/s':>9}")
        only_aggregates = len(sys.argv) > 3 and sys.argv[3] == "aggregates"
        for family, hive, native in [] if only_aggregates else CASES:
            compare(cur, family, hive, native, rate)
        if not only_aggregates:
            whole, _ = rate(cur, *(h for _, h, _ in CASES))
            print(f"all {len(CASES)} Hive expressions in one query: {whole / 1e6:.2f} M rows/s")
        for hive, native in AGGREGATES:
            compare(cur, "agg", hive, native, aggregate_rate)
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
