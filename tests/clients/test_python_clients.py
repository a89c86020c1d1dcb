"""PyHive (NONE, NOSASL, HTTP) and impyla (PLAIN, NOSASL, HTTP) against a real server: a query,
a multi-batch fetch, every Hive type with NULLs checked value by value, and an error."""

import pytest

import clients
import hive_types


@pytest.fixture(params=sorted(clients.ALL))
def conn(request, server):
    c = clients.ALL[request.param](server)
    yield c
    c.close()


def test_simple_query(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one, 'a' AS s")
    assert cur.fetchall() == [(1, "a")]
    assert [d[0] for d in cur.description] == ["one", "s"]


def test_unnamed_columns_are_named_like_hive(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1, 2 + 3")
    assert [d[0] for d in cur.description] == ["_c0", "_c1"]
    assert cur.fetchall() == [(1, 5)]


def test_multi_batch_fetch(conn):
    cur = conn.cursor()
    cur.arraysize = 777
    cur.execute("SELECT value, CAST(value AS STRING) AS s FROM range(25000) ORDER BY value")
    rows = cur.fetchall()
    assert len(rows) == 25000
    assert rows[0] == (0, "0") and rows[-1] == (24999, "24999")
    assert all(r[0] == i for i, r in enumerate(rows))


def test_every_hive_type_with_nulls(conn):
    cur = conn.cursor()
    cur.execute(hive_types.query())
    rows = cur.fetchall()
    assert len(rows) == 2
    values, nulls = rows
    assert values[0] == 1 and nulls[0] == 2
    for i, (name, _expr, _type, expected) in enumerate(hive_types.COLUMNS, start=1):
        assert hive_types.normalize(values[i]) == expected, name
        assert nulls[i] is None, name


def test_type_names_in_metadata(conn):
    cur = conn.cursor()
    cur.execute(hive_types.query())
    types = [d[1] for d in cur.description][1:]
    # PyHive and impyla both open sessions at protocol V6 (intervals arrived in V8).
    version = 6
    expected = [hive_types.expected_type(t, version) for _n, _e, t, _v in hive_types.COLUMNS]
    # PyHive reports TTypeId names (e.g. DECIMAL_TYPE), impyla strips the suffix.
    assert [t.replace("_TYPE", "") for t in types] == expected
    cur.fetchall()


def test_error_has_hive_text_and_sqlstate(conn):
    cur = conn.cursor()
    with pytest.raises(Exception) as e:
        cur.execute("SELECT * FROM no_such_table")
    text = str(e.value)
    assert "Table not found 'no_such_table'" in text
    assert "42S02" in text or "10001" in text
    # The session still works after an error.
    cur.execute("SELECT 2")
    assert cur.fetchall() == [(2,)]


def test_syntax_error(conn):
    cur = conn.cursor()
    with pytest.raises(Exception) as e:
        cur.execute("SELEC 1")
    assert "ParseException" in str(e.value)


def test_session_statements(conn):
    cur = conn.cursor()
    cur.execute("SET hivevar:n=41")
    cur.execute("SELECT ${hivevar:n} + 1 AS v")
    assert cur.fetchall() == [(42,)]
    cur.execute("SET my.key=abc")
    cur.execute("SET my.key")
    assert cur.fetchall() == [("my.key=abc",)]
    cur.execute("SHOW DATABASES")
    assert ("default",) in cur.fetchall()
    cur.execute("USE default")
    with pytest.raises(Exception) as e:
        cur.execute("USE nope")
    assert "Database does not exist: nope" in str(e.value)
