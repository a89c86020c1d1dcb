"""JDBC DatabaseMetaData (the Hive JDBC driver from pyspark's jars) over tables created in SQL."""

import os
import subprocess
import tempfile

import pyspark

import clients

JARS = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jdbc", "JdbcMetadataDump.java")


def sections(text):
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def test_database_metadata_sees_created_objects(server):
    cur = clients.pyhive_none(server).cursor()
    cur.execute("CREATE DATABASE jdbc_md")
    cur.execute("CREATE TABLE jdbc_md.orders (id BIGINT COMMENT 'order id', total DECIMAL(12,2), "
                "note VARCHAR(40), placed TIMESTAMP) COMMENT 'all orders' PARTITIONED BY (dt STRING)")
    cur.execute("CREATE TABLE jdbc_md.o_x (a INT)")
    cur.execute("CREATE TABLE jdbc_md.oyx (a INT)")
    cur.execute("CREATE EXTERNAL TABLE jdbc_md.ext (a INT) LOCATION '%s'" % tempfile.mkdtemp())
    cur.execute("CREATE VIEW jdbc_md.big AS SELECT id FROM jdbc_md.orders WHERE total > 10")
    try:
        out = tempfile.mkdtemp(prefix="apiary-jdbcmd-")
        subprocess.run(["javac", "-cp", JARS, "-d", out, SRC], check=True)
        url = f"jdbc:hive2://127.0.0.1:{server.binary_port}/default"
        r = subprocess.run(["java", "-cp", f"{out}:{JARS}", "JdbcMetadataDump", url, "jdbc_md"],
                           capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        s = sections(r.stdout)
        assert s["schemas"] == ["jdbc_md"]
        # Sorted by type, then name; REMARKS is the table comment.
        assert s["tables"] == [
            "jdbc_md\text\tTABLE\t", "jdbc_md\to_x\tTABLE\t", "jdbc_md\torders\tTABLE\tall orders",
            "jdbc_md\toyx\tTABLE\t", "jdbc_md\tbig\tVIEW\t",
        ], s["tables"]
        assert s["views"] == ["big\tVIEW"]
        assert s["external"] == ["ext"]
        assert s["columns"] == [
            "id\t-5\tBIGINT\t19\t0\t1\tYES\tNO\torder id",
            "total\t3\tDECIMAL\t12\t2\t2\tYES\tNO\t",
            "note\t12\tVARCHAR\t40\tnull\t3\tYES\tNO\t",
            "placed\t93\tTIMESTAMP\t29\t9\t4\tYES\tNO\t",
            "dt\t12\tSTRING\t2147483647\tnull\t5\tYES\tNO\t",
        ], s["columns"]
        # `_` escaped matches only the underscore.
        assert s["escaped"] == ["o_x"]
        assert s["primary_keys"] == []
        assert any(k.startswith("type_info ") and int(k.split()[1]) > 15 for k in s), list(s)
        assert "function_upper upper" in s
    finally:
        cur.execute("DROP DATABASE jdbc_md CASCADE")
