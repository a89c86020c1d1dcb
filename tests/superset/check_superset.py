"""Superset's own Hive code against Apiary, without its web server: the SQL Lab function list
(HiveEngineSpec.get_function_names) and every time grain of HiveEngineSpec applied, as Explore
applies it, to a TIMESTAMP, a DATE and a STRING column of a table (SqlaTable.query, which
formats the SQL with Superset's sqlglot dialect and runs it through SQLAlchemy and PyHive).

    SUPERSET_CONFIG_PATH=<config> python check_superset.py <port> <table>

Prints one JSON object: {"functions": [...], "grains": {"<grain> <column>": [values] | "error"}}.
"""

import json
import sys

from superset.app import create_app

port, table_name = int(sys.argv[1]), sys.argv[2]
app = create_app()
with app.app_context():
    from flask_appbuilder import Model
    from superset import db
    from superset.connectors.sqla.models import SqlaTable
    from superset.models.core import Database

    # Superset's metadata tables in the configured SQLite file (what `superset db upgrade`
    # makes, without its migrations).
    Model.metadata.create_all(db.engine)
    database = Database(database_name="apiary")
    database.set_sqlalchemy_uri(f"hive://superset@127.0.0.1:{port}/default")
    db.session.add(database)
    spec = database.db_engine_spec
    result = {"spec": spec.__name__, "functions": spec.get_function_names(database), "grains": {}}
    table = SqlaTable(table_name=table_name, schema="default", database=database)
    db.session.add(table)
    table.fetch_metadata()
    for column in table.columns:
        column.is_dttm = True
    for grain in [g for g in spec.get_time_grain_expressions() if g]:
        for column in ("ts", "d", "s"):
            res = table.query({
                "columns": [{"timeGrain": grain, "columnType": "BASE_AXIS", "sqlExpression": column,
                             "label": column, "expressionType": "SQL"}],
                "metrics": [{"expressionType": "SQL", "sqlExpression": "COUNT(*)", "label": "n"}],
                "is_timeseries": False, "row_limit": 100, "extras": {}, "filter": [],
            })
            key = f"{grain} {column}"
            if res.status != "success" or res.df is None:
                result["grains"][key] = f"error: {res.error_message} in {res.query}"
            else:
                result["grains"][key] = sorted(str(v) for v in res.df[column].tolist())
    db.session.rollback()
print(json.dumps(result))
