"""SQLAlchemy `hive://` URLs (PyHive's dialect) with text queries."""

import sqlalchemy as sa


def test_text_queries(server):
    engine = sa.create_engine(f"hive://alice@127.0.0.1:{server.binary_port}/default")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT 1 AS one")).scalar() == 1
        rows = conn.execute(sa.text("SELECT value, value * 2 AS twice FROM range(5000) ORDER BY value")).fetchall()
        assert len(rows) == 5000 and rows[-1] == (4999, 9998)
        names = sa.inspect(conn).get_schema_names()
        assert "default" in names
    engine.dispose()


def test_error_surfaces(server):
    engine = sa.create_engine(f"hive://alice@127.0.0.1:{server.binary_port}/default")
    with engine.connect() as conn:
        try:
            conn.execute(sa.text("SELECT nope FROM range(1)"))
            raise AssertionError("expected an error")
        except sa.exc.DBAPIError as e:
            assert "Invalid table alias or column reference" in str(e)
    engine.dispose()


def test_inspection_as_dbt_and_superset_use_it(server):
    """has_table reads Hive's "Table not found <name>" from DESCRIBE; columns come back
    unpadded (plain DESCRIBE pads nothing over HiveServer2); parameters with quotes and
    backslashes round-trip through PyHive's escaping."""
    engine = sa.create_engine(f"hive://alice@127.0.0.1:{server.binary_port}/default")
    with engine.connect() as conn:
        conn.execute(sa.text("CREATE TABLE sa_inspected (id INT, full_name STRING)"))
        insp = sa.inspect(conn)
        assert insp.has_table("sa_inspected")
        assert not insp.has_table("sa_no_such_table")
        assert [c["name"] for c in insp.get_columns("sa_inspected")] == ["id", "full_name"]
        raw = conn.connection.cursor()
        raw.execute("INSERT INTO sa_inspected VALUES (%(id)s, %(n)s)", {"id": 1, "n": "O'Neil \\ back"})
        raw.execute("SELECT full_name FROM sa_inspected WHERE full_name = %(n)s", {"n": "O'Neil \\ back"})
        assert raw.fetchall() == [("O'Neil \\ back",)]
        conn.execute(sa.text("DROP TABLE sa_inspected"))
    engine.dispose()
