"""The Spark side of the interoperability test, run as its own process (a JVM with Hive support):

    spark_side.py write DIR      writes partitioned TEXTFILE, Parquet, ORC and Avro Hive tables under DIR
                                 and prints their rows as JSON
    spark_side.py read SPEC.json reads the locations Apiary wrote, as Hive tables, and prints rows
    spark_side.py run SPEC.json  runs SPEC's "statements" in order, then prints the rows of each of
                                 its "queries" (a name to SQL) as JSON
"""

import json
import os
import sys

from pyspark.sql import SparkSession


def session(work):
    return (SparkSession.builder.master("local[1]").appName("apiary-interop")
            .config("spark.sql.warehouse.dir", os.path.join(work, "spark-warehouse"))
            .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                    f"jdbc:derby:;databaseName={os.path.join(work, 'metastore_db')};create=true")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
            .config("hive.exec.dynamic.partition.mode", "nonstrict")
            .enableHiveSupport().getOrCreate())


COLUMNS = "id INT, name STRING, amount DECIMAL(10,2), ratio DOUBLE, flag BOOLEAN, born DATE, seen TIMESTAMP"
ROWS = ("(1, 'alpha', 10.50, 0.25, true, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05'), "
        "(2, NULL, NULL, NULL, NULL, NULL, NULL), "
        "(3, 'gamma', -7.00, 1e10, false, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59.123456')")


def plain(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    return str(v)


def write(work):
    spark = session(work)
    out = {}
    for fmt in ["TEXTFILE", "PARQUET", "ORC", "AVRO"]:
        name = f"spark_{fmt.lower()}"
        loc = os.path.join(work, name)
        partitioned = True
        spark.sql(f"CREATE TABLE {name} ({COLUMNS}) "
                  + ("PARTITIONED BY (region STRING) " if partitioned else "")
                  + f"STORED AS {fmt} LOCATION '{loc}'")
        if partitioned:
            spark.sql(f"INSERT INTO {name} PARTITION (region='eu') VALUES {ROWS}")
            spark.sql(f"INSERT INTO {name} PARTITION (region='us') VALUES {ROWS}")
        else:
            spark.sql(f"INSERT INTO {name} VALUES {ROWS}")
        rows = spark.sql(f"SELECT * FROM {name} ORDER BY " + ("region, id" if partitioned else "id")).collect()
        out[name] = {"location": loc, "rows": [[plain(v) for v in r] for r in rows]}
    print("RESULT " + json.dumps(out))
    spark.stop()


def read(spec_path):
    spec = json.load(open(spec_path))
    spark = session(spec["work"])
    out = {}
    for name, t in spec["tables"].items():
        spark.sql(f"CREATE EXTERNAL TABLE {name} ({t['columns']}) {t['partitioned']} "
                  f"STORED AS {t['format']} LOCATION '{t['location']}'")
        if t["partitioned"]:
            spark.sql(f"MSCK REPAIR TABLE {name}")
        rows = spark.sql(f"SELECT * FROM {name} ORDER BY {t['order']}").collect()
        out[name] = [[plain(v) for v in r] for r in rows]
    print("RESULT " + json.dumps(out))
    spark.stop()


def run(spec_path):
    spec = json.load(open(spec_path))
    spark = session(spec["work"])
    for sql in spec.get("statements", []):
        spark.sql(sql)
    out = {name: [[plain(v) for v in r] for r in spark.sql(sql).collect()]
           for name, sql in spec.get("queries", {}).items()}
    print("RESULT " + json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    {"write": write, "read": read, "run": run}[sys.argv[1]](sys.argv[2])
