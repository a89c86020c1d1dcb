"""Benchmark (prints figures, asserts nothing): a filtered, aggregated query over a remote
PostgreSQL table through the JDBC storage handler, with pushdown (the filter and the GROUP BY
run in PostgreSQL; only the groups travel) and without (`apiary.jdbc.pushdown`='false': every
row travels and Apiary filters and aggregates). Starts its own PostgreSQL and Apiary.

Usage: APIARY_BIN=target/.../apiary python bench/jdbc_pushdown_bench.py [ROWS] [RUNS]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Postgres, Server  # noqa: E402
import clients  # noqa: E402
from benchlib import timed  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def main():
    pg = Postgres("shared_preload_libraries=pg_stat_statements")
    srv = None
    try:
        pg.psql("CREATE DATABASE remote")
        pg.psql("CREATE EXTENSION pg_stat_statements", db="remote")
        pg.psql(f"CREATE TABLE big AS SELECT g::bigint AS id, g % 100 AS grp, (g % 1000)::double precision AS val "
                f"FROM generate_series(1, {ROWS}) g", db="remote")
        srv = Server()
        cur = clients.pyhive_none(srv).cursor()
        base = (f"'hive.sql.database.type'='POSTGRES', 'hive.sql.jdbc.url'='jdbc:postgresql://127.0.0.1:{pg.port}/remote', "
                "'hive.sql.dbcp.username'='apiary', 'hive.sql.table'='big'")
        cur.execute(f"CREATE EXTERNAL TABLE big (id BIGINT, grp INT, val DOUBLE) STORED BY JDBC TBLPROPERTIES ({base})")
        cur.execute("CREATE EXTERNAL TABLE big_nopush (id BIGINT, grp INT, val DOUBLE) STORED BY JDBC "
                    f"TBLPROPERTIES ({base}, 'apiary.jdbc.pushdown'='false')")
        query = f"SELECT grp, count(*), sum(val) FROM {{}} WHERE id <= {ROWS // 2} GROUP BY grp"

        def run(table):
            cur.execute(query.format(table))
            return cur.fetchall()

        print(f"remote table: {ROWS} rows; query: {query.format('<t>')}; {RUNS} runs each")
        for table, label in [("big", "pushdown"), ("big_nopush", "no pushdown")]:
            run(table)  # warm-up
            pg.psql("SELECT pg_stat_statements_reset()", db="remote")
            p50, best, worst = timed(lambda: run(table), RUNS)
            sent = pg.psql("SELECT sum(rows) FROM pg_stat_statements WHERE query LIKE '%FROM \"big\"%'",
                           db="remote").strip()
            print(f"{label:12s} p50 {p50:8.1f} ms  min {best:8.1f}  max {worst:8.1f}  "
                  f"rows sent by PostgreSQL per query: {int(sent) // RUNS}")
    finally:
        if srv:
            srv.stop()
        pg.stop()


if __name__ == "__main__":
    main()
