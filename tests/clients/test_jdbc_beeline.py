"""The Hive JDBC driver (a Java program) and beeline, both from the pyspark package's jars, over
binary SASL, binary NOSASL and HTTP."""

import os
import subprocess
import tempfile

import pyspark
import pytest

import hive_types

SPARK_HOME = os.path.dirname(pyspark.__file__)
JARS = os.path.join(SPARK_HOME, "jars", "*")
HERE = os.path.dirname(os.path.abspath(__file__))
JAVA_SRCS = [os.path.join(HERE, "..", "jdbc", f) for f in ("JdbcClientTest.java", "JdbcRows.java")]


def urls(srv):
    return {
        "binary-sasl": f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default",
        "binary-nosasl": f"jdbc:hive2://127.0.0.1:{srv.binary_port}/default;auth=noSasl",
        "http": f"jdbc:hive2://127.0.0.1:{srv.http_port}/default;transportMode=http;httpPath=cliservice",
    }


@pytest.fixture(scope="module")
def jdbc_classes():
    out = tempfile.mkdtemp(prefix="apiary-jdbc-")
    subprocess.run(["javac", "-cp", JARS, "-d", out, *JAVA_SRCS], check=True)
    return out


@pytest.mark.parametrize("mode", ["binary-sasl", "binary-nosasl", "http"])
def test_jdbc_driver(server, jdbc_classes, mode):
    url = urls(server)[mode]
    r = subprocess.run(
        ["java", "-cp", f"{jdbc_classes}:{JARS}", "JdbcClientTest", url, hive_types.query()],
        capture_output=True, text=True, timeout=180,
    )
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "ALL PASSED" in r.stdout


def beeline(url, *args):
    env = dict(os.environ, SPARK_HOME=SPARK_HOME)
    return subprocess.run(
        [os.path.join(SPARK_HOME, "bin", "beeline"), "-u", url, "-n", "beeline_user", *args],
        capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("mode", ["binary-sasl", "binary-nosasl", "http"])
def test_beeline(server, mode):
    url = urls(server)[mode]
    r = beeline(url, "--outputformat=csv2", "-e",
                "SELECT 1 AS one, 'x' AS s; SELECT count(*) AS n FROM range(5000); " + hive_types.query())
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    # beeline may prefix a line with its continuation prompt; csv2 quotes JSON values with NULs.
    lines = [l.rsplit("> ", 1)[-1].replace("\x00", "") for l in r.stdout.splitlines()]
    assert "one,s" in lines and "1,x" in lines
    assert "n" in lines and "5000" in lines
    header = "id," + ",".join(n for n, _e, _t, _v in hive_types.COLUMNS)
    assert header in lines, r.stdout
    # beeline prints NULL values as the string NULL in csv2.
    assert any(l.startswith("2,") and l.count("NULL") == len(hive_types.COLUMNS) for l in lines), r.stdout


def test_beeline_error_and_log(server):
    url = urls(server)["binary-sasl"]
    r = beeline(url, "-e", "SELECT * FROM not_here")
    assert r.returncode != 0
    assert "Table not found 'not_here'" in r.stderr + r.stdout
    r = beeline(url, "--verbose=true", "-e", "SELECT count(*) FROM range(1000)")
    assert r.returncode == 0
    # beeline shows the operation log it fetched with fetchType=1.
    assert "Compiling command" in r.stderr + r.stdout


@pytest.mark.parametrize("mode", ["binary-sasl", "http"])
def test_beeline_draws_progress_of_a_slow_query(server, mode):
    # Beeline polls GetOperationStatus with progress updates while a query runs and draws
    # them with Hive's nine-column vertex table; other shapes make it fail.
    url = urls(server)[mode]
    r = beeline(url, "--outputformat=csv2", "-e",
                "SELECT count(*) AS n FROM range(150000000) t(id) WHERE id % 7 = 1")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "21428572" in r.stdout, r.stdout
    assert "MissingFormatArgumentException" not in r.stdout + r.stderr


def test_function_results_render_as_hive_prints_them(server, jdbc_classes):
    """One function result per type family: beeline's tsv2 line and the JDBC driver's
    getString give the text they give for Hive's, PyHive the value it stands for."""
    query = hive_types.function_query()
    expected = [hive_types.JDBC_TEXT.get(text, text) for _expr, text in hive_types.FUNCTION_RESULTS]
    url = urls(server)["binary-sasl"]
    r = beeline(url, "--outputformat=tsv2", "--showHeader=false", "-e", query)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    rows = [l.rsplit("> ", 1)[-1] for l in r.stdout.splitlines() if "\t" in l]
    assert rows and rows[-1].split("\t") == expected, r.stdout
    r = subprocess.run(
        ["java", "-cp", f"{jdbc_classes}:{JARS}", "JdbcRows", url, query],
        capture_output=True, text=True, timeout=180,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.splitlines()[-1].split("\t") == expected
    from pyhive import hive
    conn = hive.connect("127.0.0.1", server.binary_port, username="pyhive_user")
    cur = conn.cursor()
    cur.execute(query)
    (row,) = cur.fetchall()
    for (expr, text), value in zip(hive_types.FUNCTION_RESULTS, row):
        if isinstance(value, float):
            assert value == float(text), expr
        else:
            assert hive_types.normalize(value) == text, expr
    conn.close()
