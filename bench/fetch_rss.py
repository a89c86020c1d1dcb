"""Benchmark (prints figures, asserts nothing): a client fetching a huge result while the
server's RSS is sampled, to show results stream with bounded memory.

Usage: APIARY_BIN=.../apiary python bench/fetch_rss.py [ROWS] [ROWS_PER_FETCH]
Fetches `SELECT value, value * 2 FROM range(ROWS)` with PyHive's Thrift client (SASL PLAIN,
protocol V6 columns), discarding rows as they arrive.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "clients"))
from conftest import Server  # noqa: E402
import clients  # noqa: E402
from TCLIService import ttypes as T  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
PER_FETCH = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000


def main():
    srv = Server()
    peak = [srv.rss_kib()]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], srv.rss_kib())
            time.sleep(0.05)

    try:
        idle = srv.rss_kib()
        conn = clients.pyhive_none(srv)
        client, session = conn._client, conn._sessionHandle
        threading.Thread(target=sample, daemon=True).start()
        start = time.perf_counter()
        op = client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=session, statement=f"SELECT value, value * 2 AS twice FROM range({ROWS})",
            runAsync=False)).operationHandle
        n = 0
        while True:
            r = client.FetchResults(T.TFetchResultsReq(
                operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=PER_FETCH))
            got = len(r.results.columns[0].i64Val.values)
            n += got
            if got == 0 or not r.hasMoreRows:
                break
        elapsed = time.perf_counter() - start
        done.set()
        print(f"fetched {n} rows (2 bigint columns) in {elapsed:.1f} s ({n / elapsed / 1e6:.2f} M rows/s), "
              f"{PER_FETCH} rows per FetchResults")
        print(f"server RSS: idle {idle / 1024:.1f} MiB, peak while fetching {peak[0] / 1024:.1f} MiB, "
              f"after {srv.rss_kib() / 1024:.1f} MiB")
        conn.close()
    finally:
        done.set()
        srv.stop()


if __name__ == "__main__":
    main()
