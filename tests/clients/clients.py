"""Connection factories for every Python client and transport the tests cover."""

from impala import dbapi as impyla
from pyhive import hive


def rows(cur, sql):
    """Runs `sql` and returns its rows."""
    cur.execute(sql)
    return cur.fetchall()


def fetch_count(cur, size):
    """Fetches a cursor's rows to the end, `size` at a time; returns how many there were."""
    n = 0
    while True:
        rows = cur.fetchmany(size)
        if not rows:
            return n
        n += len(rows)


def pyhive_none(srv, **kw):
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username="alice", auth="NONE", **kw)


def pyhive_nosasl(srv, **kw):
    return hive.connect(host="127.0.0.1", port=srv.binary_port, username="alice", auth="NOSASL", **kw)


def pyhive_http(srv, **kw):
    return hive.connect(host="127.0.0.1", port=srv.http_port, scheme="http", username="alice", **kw)


def impyla_plain(srv, **kw):
    return impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="PLAIN", user="bob", password="x", **kw)


def impyla_nosasl(srv, **kw):
    return impyla.connect(host="127.0.0.1", port=srv.binary_port, auth_mechanism="NOSASL", **kw)


def impyla_http(srv, **kw):
    return impyla.connect(
        host="127.0.0.1", port=srv.http_port, auth_mechanism="PLAIN", user="bob", password="x",
        use_http_transport=True, http_path="cliservice", **kw,
    )


ALL = {
    "pyhive-none": pyhive_none,
    "pyhive-nosasl": pyhive_nosasl,
    "pyhive-http": pyhive_http,
    "impyla-plain": impyla_plain,
    "impyla-nosasl": impyla_nosasl,
    "impyla-http": impyla_http,
}
