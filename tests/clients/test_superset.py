"""Superset's Hive engine spec against Apiary (its own code, run in its own venv by
tests/superset/check_superset.py): the SQL Lab function list, and all ten Hive time grains on a
TIMESTAMP, a DATE and a STRING column with the values Hive gives."""

import json
import os
import subprocess

import pytest

import clients

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "superset", "check_superset.py")
PYTHON = os.environ.get("APIARY_SUPERSET_PYTHON",
                        os.path.expanduser("~/.cache/apiary/superset-venv/bin/python"))

# A Friday afternoon, a Sunday just after midnight, a Sunday at the end of a year.
ROWS = ["2024-03-15 13:45:30.123", "2024-03-17 00:00:01", "2023-12-31 23:59:59"]


def grain(*values):
    return sorted(set(values))


# Hive's answers for the grains Superset's HiveEngineSpec writes, on the timestamps above.
TIMESTAMP_GRAINS = {
    "PT1S": grain("2024-03-15 13:45:30", "2024-03-17 00:00:01", "2023-12-31 23:59:59"),
    "PT1M": grain("2024-03-15 13:45:00", "2024-03-17 00:00:00", "2023-12-31 23:59:00"),
    "PT1H": grain("2024-03-15 13:00:00", "2024-03-17 00:00:00", "2023-12-31 23:00:00"),
    "P1D": grain("2024-03-15 00:00:00", "2024-03-17 00:00:00", "2023-12-31 00:00:00"),
    # date_sub(col, 7 - day-of-week ('u', Monday 1)): the week's Wednesday-to-Sunday quirk.
    "P1W": grain("2024-03-13 00:00:00", "2024-03-17 00:00:00", "2023-12-31 00:00:00"),
    "P1M": grain("2024-03-01 00:00:00", "2024-03-01 00:00:00", "2023-12-01 00:00:00"),
    "P3M": grain("2024-01-01 00:00:00", "2024-01-01 00:00:00", "2023-10-01 00:00:00"),
    "P1Y": grain("2024-01-01 00:00:00", "2024-01-01 00:00:00", "2023-01-01 00:00:00"),
    "P1W/1970-01-03T00:00:00Z": grain("2024-03-16 00:00:00", "2024-03-16 00:00:00",
                                      "2023-12-30 00:00:00"),
    "1969-12-28T00:00:00Z/P1W": grain("2024-03-10 00:00:00", "2024-03-10 00:00:00",
                                      "2023-12-24 00:00:00"),
}


def date_grains():
    """On the DATE column every time of day is midnight."""
    out = dict(TIMESTAMP_GRAINS)
    for g in ("PT1S", "PT1M", "PT1H"):
        out[g] = grain("2024-03-15 00:00:00", "2024-03-17 00:00:00", "2023-12-31 00:00:00")
    return out


@pytest.fixture(scope="module")
def superset_result(server, tmp_path_factory):
    if not os.path.exists(PYTHON):
        pytest.fail(f"Superset is not installed at {PYTHON} (scripts/test.sh installs it)")
    conn = clients.pyhive_none(server)
    cur = conn.cursor()
    cur.execute("CREATE TABLE default.superset_events (ts TIMESTAMP, d DATE, s STRING)")
    values = ", ".join(f"(TIMESTAMP '{r}', DATE '{r[:10]}', '{r}')" for r in ROWS)
    cur.execute(f"INSERT INTO default.superset_events VALUES {values}")
    home = tmp_path_factory.mktemp("superset")
    config = home / "superset_config.py"
    config.write_text("\n".join([
        'SECRET_KEY = "apiary-superset-test-secret-key-0123456789"',
        f'SQLALCHEMY_DATABASE_URI = "sqlite:///{home}/superset.db"',
        'CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}',
        'DATA_CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}',
        'FILTER_STATE_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache"}',
        'EXPLORE_FORM_DATA_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache"}',
        "WTF_CSRF_ENABLED = False",
        "",
    ]))
    env = dict(os.environ, SUPERSET_CONFIG_PATH=str(config), SUPERSET_HOME=str(home))
    try:
        r = subprocess.run([PYTHON, CHECK, str(server.binary_port), "superset_events"],
                           capture_output=True, text=True, timeout=600, env=env, cwd=home)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
        return json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        cur.execute("DROP TABLE default.superset_events")
        conn.close()


def test_sql_lab_function_list(superset_result):
    assert superset_result["spec"] == "HiveEngineSpec"
    functions = set(superset_result["functions"])
    assert {"date_format", "from_unixtime", "get_json_object", "xpath", "ngrams"} <= functions
    assert len(functions) > 400


@pytest.mark.parametrize("column", ["ts", "d", "s"])
def test_every_time_grain(superset_result, column):
    expected = date_grains() if column == "d" else TIMESTAMP_GRAINS
    got = {g: superset_result["grains"][f"{g} {column}"] for g in expected}
    assert got == expected
