"""Two Apiary servers on one PostgreSQL metastore (and one warehouse) see each other's DDL;
conflicting DDL gets a clean error; the catalog rows are checked in PostgreSQL directly."""

import json
import os
import threading

import pytest

import clients
from conftest import Server


@pytest.fixture
def two_servers(postgres):
    db = "apiary_shared"
    conf, _ = postgres.shared_catalog(db)
    a = Server(*conf)
    b = Server(*conf)
    yield a, b, db
    a.stop()
    b.stop()


def test_ddl_through_one_server_is_seen_by_the_other(two_servers, postgres):
    a, b, db = two_servers
    ca = clients.pyhive_none(a).cursor()
    cb = clients.pyhive_none(b).cursor()
    ca.execute("CREATE DATABASE shared_db")
    ca.execute("CREATE TABLE shared_db.t (id INT, s STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    ca.execute("INSERT INTO shared_db.t PARTITION (p='x') VALUES (1, 'one')")
    cb.execute("SHOW TABLES IN shared_db")
    assert cb.fetchall() == [("t",)]
    cb.execute("SELECT id, s, p FROM shared_db.t")
    assert cb.fetchall() == [(1, "one", "x")]
    cb.execute("INSERT INTO shared_db.t PARTITION (p='y') VALUES (2, 'two')")
    ca.execute("SELECT count(*) FROM shared_db.t")
    assert ca.fetchall() == [(2,)]
    # The catalog rows are in PostgreSQL.
    definition = json.loads(postgres.psql(
        "SELECT definition FROM apiary_tbls WHERE db = 'shared_db' AND name = 't'", db).strip())
    assert definition["table_type"] == "MANAGED_TABLE"
    assert [c["name"] for c in definition["sd"]["columns"]] == ["id", "s"]
    assert postgres.psql("SELECT name FROM apiary_partitions WHERE tbl = 't' ORDER BY name", db).split() == ["p=x", "p=y"]
    # Conflicting DDL: the second CREATE of the same table fails cleanly.
    with pytest.raises(Exception, match="already exists"):
        cb.execute("CREATE TABLE shared_db.t (x INT)")
    cb.execute("DROP TABLE shared_db.t")
    with pytest.raises(Exception, match="Table not found"):
        ca.execute("SELECT * FROM shared_db.t")
    ca.execute("DROP DATABASE shared_db CASCADE")


def test_racing_creates_leave_one_table(two_servers, postgres):
    a, b, db = two_servers
    setup = clients.pyhive_none(a).cursor()
    setup.execute("CREATE DATABASE race_db")
    errors, done = [], []

    def create(srv, n):
        cur = clients.pyhive_none(srv).cursor()
        for i in range(15):
            try:
                cur.execute(f"CREATE TABLE race_db.t{i} (server INT)")
                done.append((i, n))
            except Exception as e:  # noqa: BLE001 - the loser's error is what is checked
                errors.append(str(e))

    threads = [threading.Thread(target=create, args=(s, n)) for n, s in enumerate((a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Every name was created exactly once; every failure says why.
    assert sorted(i for i, _ in done) == list(range(15)), done
    assert len(errors) == 15
    assert all("already exists" in e or "concurrent" in e for e in errors), errors
    assert postgres.psql("SELECT count(*) FROM apiary_tbls WHERE db = 'race_db'", db).strip() == "15"
    setup.execute("DROP DATABASE race_db CASCADE")
