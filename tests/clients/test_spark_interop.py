"""Hive-format data across engines: tables Spark (with Hive support) writes are read by Apiary
as EXTERNAL tables with the same rows, and files Apiary writes are read back by Spark."""

import json
import os
import subprocess
import sys
import tempfile

import pyspark
import pytest

import clients

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = "id INT, name STRING, amount DECIMAL(10,2), ratio DOUBLE, flag BOOLEAN, born DATE, seen TIMESTAMP"


def spark(*args):
    env = dict(os.environ, SPARK_HOME=os.path.dirname(pyspark.__file__), TZ="UTC")
    # Spark's embedded Derby writes derby.log into the working folder: keep it out of the tree.
    r = subprocess.run([sys.executable, os.path.join(HERE, "spark_side.py"), *args],
                       capture_output=True, text=True, timeout=600, env=env,
                       cwd=tempfile.gettempdir())
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def as_text(rows):
    """Rows as Spark prints them: Python values to the same strings."""
    out = []
    for r in rows:
        out.append([None if v is None else str(v) for v in r])
    return out


@pytest.fixture(scope="module")
def work():
    return tempfile.mkdtemp(prefix="apiary-interop-")


def test_apiary_reads_what_spark_wrote(server, work):
    written = spark("write", work)
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS interop")
    for name, fmt in [("spark_textfile", "TEXTFILE"), ("spark_parquet", "PARQUET"),
                      ("spark_orc", "ORC"), ("spark_avro", "AVRO")]:
        t = written[name]
        cur.execute(f"CREATE EXTERNAL TABLE interop.{name} ({COLUMNS}) "
                    f"PARTITIONED BY (region STRING) STORED AS {fmt} LOCATION '{t['location']}'")
        cur.execute(f"MSCK REPAIR TABLE interop.{name}")
        try:
            cur.execute(f"SELECT * FROM interop.{name} ORDER BY region, id")
        except Exception as e:  # noqa: BLE001 - name the table that failed
            pytest.fail(f"{name}: {e}")
        got = as_text(cur.fetchall())
        assert got == t["rows"], f"{name}:\n apiary {got}\n spark  {t['rows']}"
        cur.execute(f"SELECT count(*) FROM interop.{name} WHERE region = 'us'")
        assert cur.fetchall() == [(3,)]
        # Partition column alone, before the data columns, and in a filter with one.
        cur.execute(f"SELECT region, name FROM interop.{name} WHERE region = 'eu' AND id > 1 ORDER BY id")
        assert cur.fetchall() == [("eu", None), ("eu", "gamma")]
        cur.execute(f"SELECT DISTINCT region FROM interop.{name} ORDER BY region")
        assert cur.fetchall() == [("eu",), ("us",)]
        # Pruning: the plan reads only the 'us' directory.
        cur.execute(f"EXPLAIN SELECT id FROM interop.{name} WHERE region = 'us'")
        plan = "\n".join(str(r[-1]) for r in cur.fetchall())
        assert "region=us" in plan and "region=eu" not in plan, plan


def test_spark_reads_what_apiary_wrote(server, work):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS interop")
    rows = ("(1, 'alpha', 10.50, 0.25, true, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05'), "
            "(2, NULL, NULL, NULL, NULL, NULL, NULL)")
    tables = {}
    for fmt in ["TEXTFILE", "PARQUET", "ORC", "AVRO"]:
        name = f"apiary_{fmt.lower()}"
        # Apiary's ORC writer has no DECIMAL column yet.
        columns = COLUMNS if fmt != "ORC" else COLUMNS.replace("amount DECIMAL(10,2)", "amount DOUBLE")
        loc = os.path.join(work, name)
        part = "PARTITIONED BY (region STRING)"
        cur.execute(f"CREATE EXTERNAL TABLE interop.{name} ({columns}) {part} "
                    f"STORED AS {fmt} LOCATION '{loc}'")
        cur.execute(f"INSERT INTO interop.{name} PARTITION (region='eu') VALUES {rows}")
        cur.execute(f"INSERT INTO interop.{name} PARTITION (region) "
                    f"SELECT id + 10, name, amount, ratio, flag, born, seen, 'us' FROM interop.{name}")
        cur.execute(f"SELECT * FROM interop.{name} ORDER BY id")
        tables[name] = {"columns": columns, "partitioned": part,
                        "format": fmt, "location": loc, "order": "id", "apiary": as_text(cur.fetchall())}
        assert len(tables[name]["apiary"]) == 4
    spec = os.path.join(work, "spec.json")
    with open(spec, "w") as f:
        json.dump({"work": os.path.join(work, "reader"), "tables": tables}, f)
    os.makedirs(os.path.join(work, "reader"), exist_ok=True)
    read = spark("read", spec)
    for name, t in tables.items():
        assert read[name] == t["apiary"], f"{name}:\n spark  {read[name]}\n apiary {t['apiary']}"
