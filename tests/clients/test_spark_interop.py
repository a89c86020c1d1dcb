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
        partitioned = fmt in ("TEXTFILE", "PARQUET")
        cur.execute(f"CREATE EXTERNAL TABLE interop.{name} ({COLUMNS}) "
                    + ("PARTITIONED BY (region STRING) " if partitioned else "")
                    + f"STORED AS {fmt} LOCATION '{t['location']}'")
        if partitioned:
            cur.execute(f"MSCK REPAIR TABLE interop.{name}")
        try:
            cur.execute(f"SELECT * FROM interop.{name} ORDER BY " + ("region, id" if partitioned else "id"))
        except Exception as e:  # noqa: BLE001 - name the table that failed
            pytest.fail(f"{name}: {e}")
        got = as_text(cur.fetchall())
        assert got == t["rows"], f"{name}:\n apiary {got}\n spark  {t['rows']}"
        if partitioned:
            cur.execute(f"SELECT count(*) FROM interop.{name} WHERE region = 'us'")
            assert cur.fetchall() == [(3,)]


def test_spark_reads_what_apiary_wrote(server, work):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS interop")
    rows = ("(1, 'alpha', 10.50, 0.25, true, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05'), "
            "(2, NULL, NULL, NULL, NULL, NULL, NULL)")
    tables = {}
    for fmt in ["TEXTFILE", "PARQUET", "ORC"]:
        name = f"apiary_{fmt.lower()}"
        columns = COLUMNS if fmt != "ORC" else COLUMNS.replace("amount DECIMAL(10,2)", "amount DOUBLE")
        partitioned = fmt != "ORC"
        loc = os.path.join(work, name)
        part = "PARTITIONED BY (region STRING)" if partitioned else ""
        cur.execute(f"CREATE EXTERNAL TABLE interop.{name} ({columns}) {part} "
                    f"STORED AS {fmt} LOCATION '{loc}'")
        cur.execute(f"INSERT INTO interop.{name} " + ("PARTITION (region='eu') " if partitioned else "")
                    + f"VALUES {rows}")
        cur.execute(f"SELECT * FROM interop.{name} ORDER BY id")
        tables[name] = {"columns": columns, "partitioned": part,
                        "format": fmt, "location": loc, "order": "id", "apiary": as_text(cur.fetchall())}
    spec = os.path.join(work, "spec.json")
    with open(spec, "w") as f:
        json.dump({"work": os.path.join(work, "reader"), "tables": tables}, f)
    os.makedirs(os.path.join(work, "reader"), exist_ok=True)
    read = spark("read", spec)
    for name, t in tables.items():
        assert read[name] == t["apiary"], f"{name}:\n spark  {read[name]}\n apiary {t['apiary']}"
