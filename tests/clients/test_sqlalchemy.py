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
