"""Soak: 64 concurrent clients mixing queries, DDL, cancels, vanishing clients and big fetches
for a bounded time (APIARY_SOAK_SECONDS, default 40). Every failure a client sees must be one
it asked for (a cancel); the server's RSS must stay flat. Prints queries per second, p99
latency and RSS at start and end (recorded in docs/benchmarks.md)."""

import os
import random
import socket
import struct
import threading
import time

from pyhive import hive
from TCLIService.ttypes import TOperationState

import clients
from conftest import Server

CLIENTS = 64
SECONDS = float(os.environ.get("APIARY_SOAK_SECONDS", "40"))


def connect(srv, user):
    if random.random() < 0.25:
        return hive.connect(host="127.0.0.1", port=srv.http_port, scheme="http", username=user)
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username=user)


def vanish(srv, user):
    """Opens a session and starts a big query over a raw SASL socket, then drops the socket."""
    conn = hive.connect(host="127.0.0.1", port=srv.binary_port, username=user)
    cur = conn.cursor()
    cur.execute("SELECT id, repeat('v', 100) FROM range(500000) t(id)")
    cur.fetchmany(10)
    # Gone without CloseOperation or CloseSession: the server must free both.
    conn._transport._trans.handle.setsockopt(
        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn._transport.close()


def worker(srv, n, deadline, latencies, failures, counts):
    rnd = random.Random(n)
    user = f"soak{n % 16}"
    conn = connect(srv, user)
    cur = conn.cursor()
    table = f"soak_t{n}"
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    while time.time() < deadline:
        kind = rnd.choices(["query", "ddl", "cancel", "vanish", "big"], [60, 15, 10, 5, 10])[0]
        start = time.time()
        try:
            if kind == "query":
                cur.execute(f"SELECT count(*), sum(id) FROM range({rnd.randint(1, 20000)}) t(id) WHERE id % 3 = 0")
                cur.fetchall()
            elif kind == "ddl":
                cur.execute(f"CREATE TABLE IF NOT EXISTS {table} (a INT, b STRING)")
                cur.execute(f"INSERT INTO {table} VALUES ({n}, 'x')")
                cur.execute(f"SELECT count(*) FROM {table}")
                cur.fetchall()
                cur.execute(f"DROP TABLE {table}")
            elif kind == "cancel":
                cur.execute("SELECT count(*) FROM range(200000000) t(id) WHERE id % 7 = 1", async_=True)
                time.sleep(rnd.uniform(0.0, 0.3))
                cur.cancel()
                state = cur.poll().operationState
                assert state in (TOperationState.CANCELED_STATE, TOperationState.FINISHED_STATE), state
                cur.close()
                cur = conn.cursor()
            elif kind == "vanish":
                vanish(srv, user)
            else:
                cur.execute("SELECT id, repeat('b', 50) FROM range(100000) t(id)")
                rows = clients.fetch_count(cur, 5000)
                assert rows == 100000, rows
            latencies.append((kind, time.time() - start))
            counts[kind] = counts.get(kind, 0) + 1
        except Exception as e:  # every failure here is a server fault: none was asked for
            failures.append(f"{kind}: {e}")
            try:
                conn.close()
            except Exception:
                pass
            conn = connect(srv, user)
            cur = conn.cursor()
    conn.close()


def test_soak_64_clients():
    srv = Server("--hiveconf", "apiary.memory.pool.size=1g")
    try:
        warm = hive.connect(host="127.0.0.1", port=srv.binary_port, username="warm").cursor()
        warm.execute("SELECT count(*) FROM range(1000) t(id)")
        warm.fetchall()
        rss_start = srv.rss_kib()
        deadline = time.time() + SECONDS
        latencies, failures, counts = [], [], {}
        threads = [threading.Thread(target=worker, args=(srv, i, deadline, latencies, failures, counts))
                   for i in range(CLIENTS)]
        started = time.time()
        for t in threads:
            t.start()
        rss_mid = None
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            if rss_mid is None and time.time() - started > SECONDS / 3:
                rss_mid = srv.rss_kib()
        elapsed = time.time() - started
        time.sleep(2)
        rss_end = srv.rss_kib()
        lat = sorted(t for _, t in latencies)
        by_kind = {}
        for k, t in latencies:
            by_kind.setdefault(k, []).append(t)
        for k, ts in sorted(by_kind.items()):
            ts.sort()
            print(f"  {k}: {len(ts)} done, p50 {ts[len(ts) // 2] * 1000:.0f} ms, "
                  f"p99 {ts[int(len(ts) * 0.99)] * 1000:.0f} ms, max {ts[-1] * 1000:.0f} ms")
        p99 = lat[int(len(lat) * 0.99)] if lat else float("nan")
        p50 = lat[len(lat) // 2] if lat else float("nan")
        print(f"\nsoak: {CLIENTS} clients, {elapsed:.0f} s, {len(lat)} statements "
              f"({len(lat) / elapsed:.1f}/s), mix {dict(sorted(counts.items()))}, "
              f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
              f"RSS start {rss_start // 1024} MiB, after a third {(rss_mid or 0) // 1024} MiB, "
              f"end {rss_end // 1024} MiB, failures {len(failures)}")
        assert not failures, failures[:10]
        assert srv.alive()
        # Flat: after warming up (caches, allocator arenas), RSS does not keep growing.
        assert rss_end < (rss_mid or rss_start) * 1.5 + 100 * 1024, (rss_start, rss_mid, rss_end)
        c = hive.connect(host="127.0.0.1", port=srv.binary_port, username="after").cursor()
        c.execute("SELECT 1")
        assert c.fetchall() == [(1,)]
    finally:
        srv.stop()
