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
    """Rows as Spark prints them: Python values to the same strings (bytes as 0x and hex)."""
    out = []
    for r in rows:
        out.append([None if v is None else "0x" + bytes(v).hex() if isinstance(v, (bytes, bytearray))
                    else str(v) for v in r])
    return out


def spark_run(work, statements, queries):
    """Runs `statements` in Spark (Hive support, its own metastore under `work`), then returns
    the rows of each query of `queries` (a name to SQL)."""
    os.makedirs(work, exist_ok=True)
    spec = os.path.join(work, "run.json")
    with open(spec, "w") as f:
        json.dump({"work": work, "statements": statements, "queries": queries}, f)
    return spark("run", spec)


# Bytes that exercise the text form: a field delimiter, a newline, a NUL, 0xff, and text that
# is itself Base64. (An empty value is left out: DataFusion's CSV reader reads every empty field
# as NULL, for STRING columns too, where Hive reads an empty string.)
BINARY_VALUES = ["313233", "01020a00ff", "00", "4d54497a"]


def test_binary_in_text_tables_crosses_both_ways(server, work):
    """BINARY in a TEXTFILE (LazySimpleSerDe) table is Base64 in the file, as Hive writes it:
    Spark reads what Apiary wrote and Apiary reads what Spark wrote, byte for byte; with
    hive.serialization.decode.binary.as.base64=false the text is read as it is."""
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS interop")
    apiary_loc = os.path.join(work, "apiary_bin")
    spark_loc = os.path.join(work, "spark_bin")
    cur.execute(f"CREATE EXTERNAL TABLE interop.apiary_bin (id INT, b BINARY) STORED AS TEXTFILE "
                f"LOCATION '{apiary_loc}'")
    values = ", ".join(f"({i}, unhex('{h}'))" for i, h in enumerate(BINARY_VALUES))
    cur.execute(f"INSERT INTO interop.apiary_bin VALUES {values}, (9, NULL)")
    expected = [[str(i), "0x" + h] for i, h in enumerate(BINARY_VALUES)] + [["9", None]]
    cur.execute("SELECT id, b FROM interop.apiary_bin ORDER BY id")
    assert as_text(cur.fetchall()) == expected
    # What the file holds: Base64, as Hive writes it ("123" is MTIz).
    data = b"".join(open(os.path.join(apiary_loc, f), "rb").read() for f in sorted(os.listdir(apiary_loc))
                    if not f.startswith("."))
    assert b"0\x01MTIz\n" in data, data
    spark_values = ", ".join(f"({i}, unhex('{h}'))" for i, h in enumerate(BINARY_VALUES))
    got = spark_run(os.path.join(work, "spark-bin"), [
        f"CREATE EXTERNAL TABLE apiary_bin (id INT, b BINARY) STORED AS TEXTFILE LOCATION '{apiary_loc}'",
        f"CREATE EXTERNAL TABLE spark_bin (id INT, b BINARY) STORED AS TEXTFILE LOCATION '{spark_loc}'",
        f"INSERT INTO spark_bin VALUES {spark_values}, (9, NULL)",
    ], {"apiary": "SELECT id, b FROM apiary_bin ORDER BY id",
        "spark": "SELECT id, b FROM spark_bin ORDER BY id"})
    assert got["apiary"] == expected, got["apiary"]
    assert got["spark"] == expected, got["spark"]
    cur.execute(f"CREATE EXTERNAL TABLE interop.spark_bin (id INT, b BINARY) STORED AS TEXTFILE "
                f"LOCATION '{spark_loc}'")
    cur.execute("SELECT id, b FROM interop.spark_bin ORDER BY id")
    assert as_text(cur.fetchall()) == expected
    # Decoding off: the Base64 text itself.
    cur.execute(f"CREATE EXTERNAL TABLE interop.spark_bin_raw (id INT, b BINARY) STORED AS TEXTFILE "
                f"LOCATION '{spark_loc}' TBLPROPERTIES ('hive.serialization.decode.binary.as.base64'='false')")
    cur.execute("SELECT id, b FROM interop.spark_bin_raw WHERE id = 0")
    assert cur.fetchall() == [(0, b"MTIz")]
    # Writing BINARY there would read back other bytes than were written: refused.
    with pytest.raises(Exception) as e:
        cur.execute("INSERT INTO interop.spark_bin_raw VALUES (5, unhex('00ff'))")
    assert "hive.serialization.decode.binary.as.base64=false" in str(e.value), str(e.value)
    cur.execute("SELECT count(*) FROM interop.spark_bin_raw")
    assert cur.fetchall() == [(len(BINARY_VALUES) + 1,)]


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
        columns = COLUMNS
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


def test_spark_reads_decimal_and_complex_orc_columns_apiary_wrote(server, work):
    """ORC files Apiary writes hold DECIMAL (to 38 digits, negative, NULL) and ARRAY, MAP and
    STRUCT columns, nested, that Spark's ORC reader reads back value for value."""
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS interop")
    loc = os.path.join(work, "apiary_orc_rich")
    columns = ("id INT, dec DECIMAL(10,3), big DECIMAL(38,10), arr ARRAY<INT>, "
               "m MAP<STRING,DECIMAL(5,2)>, st STRUCT<a:INT,b:STRING,c:ARRAY<DECIMAL(4,1)>>")
    cur.execute(f"CREATE EXTERNAL TABLE interop.orc_rich ({columns}) STORED AS ORC LOCATION '{loc}'")
    for values in [
            "1, 1234567.891, 1234567890123456789012345678.0123456789, array(1, 2, 3), "
            "map('k', 1.25, 'z', -0.5), named_struct('a', 7, 'b', 'x', 'c', array(1.5, -2.5))",
            "2, -0.001, -99999999999999999999999999.9999999999, array(4), map('k', -0.5), "
            "named_struct('a', CAST(NULL AS INT), 'b', CAST(NULL AS STRING), 'c', array(CAST(NULL AS DECIMAL(4,1))))",
            "3, NULL, NULL, NULL, NULL, NULL",
            # (Java writes a DECIMAL zero at scale 10 as 0E-10: 1 prints alike in both.)
            "4, 0, 1, array(CAST(NULL AS INT), 5), map('n', CAST(NULL AS DECIMAL(5,2))), "
            "named_struct('a', -1, 'b', '', 'c', array(0.5))"]:
        cur.execute(f"INSERT INTO interop.orc_rich SELECT {values}")
    query = ("SELECT id, CAST(dec AS STRING), CAST(big AS STRING), "
             "CASE WHEN arr IS NULL THEN 'none' ELSE CAST(size(arr) AS STRING) END, "
             "CAST(arr[1] AS STRING), CAST(m['k'] AS STRING), CAST(m['n'] AS STRING), "
             "CAST(st.a AS STRING), st.b, CAST(st.c[0] AS STRING) FROM {t} ORDER BY id")
    cur.execute(query.format(t="interop.orc_rich"))
    apiary = as_text(cur.fetchall())
    assert len(apiary) == 4
    assert apiary[0][:3] == ["1", "1234567.891", "1234567890123456789012345678.0123456789"], apiary[0]
    got = spark_run(os.path.join(work, "spark-orc-rich"), [
        # Hive's answers for a missing array index or map key (NULL), not ANSI's errors.
        "SET spark.sql.ansi.enabled=false",
        f"CREATE EXTERNAL TABLE orc_rich ({columns}) STORED AS ORC LOCATION '{loc}'",
    ], {"rows": query.format(t="orc_rich")})
    assert got["rows"] == apiary, f"\n spark  {got['rows']}\n apiary {apiary}"
