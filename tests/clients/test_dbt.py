"""dbt-hive runs a dbt project against Apiary with no workaround (tests/dbt/project): seeds with
quotes and backslashes, a view, a table, two incremental models partitioned by order_date run
twice (append and insert_overwrite), schema and singular tests, and `dbt docs generate`.

dbt lives in a venv of its own ($APIARY_DBT, which the test command installs from
tests/dbt/requirements.txt)."""

import json
import os
import shutil
import subprocess

import pytest

import clients

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "..", "dbt", "project")
DBT = os.environ.get("APIARY_DBT", os.path.expanduser("~/.cache/apiary/dbt-venv/bin/dbt"))


@pytest.fixture(scope="module")
def project(server, tmp_path_factory):
    if not os.path.exists(DBT):
        pytest.fail(f"dbt is not installed at {DBT} (scripts/test.sh installs it)")
    work = tmp_path_factory.mktemp("dbt") / "project"
    shutil.copytree(PROJECT, work)
    env = dict(
        os.environ,
        APIARY_HOST="127.0.0.1",
        APIARY_PORT=str(server.binary_port),
        APIARY_DBT_SCHEMA="dbt_e2e",
        DBT_PROFILES_DIR=str(work),
        DBT_LOG_PATH=str(work / "logs"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )

    def dbt(*args):
        r = subprocess.run([DBT, *args], cwd=work, env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"dbt {' '.join(args)}:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    return work, dbt


def test_seed_run_twice_test_and_docs(project, server):
    work, dbt = project
    out = dbt("seed")
    assert "Completed successfully" in out
    # First run creates the incremental models from batch 1; the second appends batch 2 to
    # one and overwrites the partitions batch 2 touches in the other.
    dbt("run")
    out = dbt("run")
    assert "PASS=5" in out and "ERROR=0" in out, out
    # The contract-enforced model's table carries its NOT NULL columns, enforced on insert.
    conn = clients.pyhive_none(server)
    try:
        cur = conn.cursor()
        cur.execute("DESCRIBE FORMATTED dbt_e2e.customer_contract")
        described = [tuple((c or "").strip() for c in row) for row in cur.fetchall()]
        assert ("# Not Null Constraints", "", "") in described, described
        not_null = [row[1] for row in described if row[0] == "Column Name:"]
        assert sorted(not_null) == ["customer_id", "name"], described
        cur.execute("SELECT count(*) FROM dbt_e2e.customer_contract WHERE name IS NOT NULL")
        assert cur.fetchall()[0][0] > 0
        with pytest.raises(Exception, match="Either CHECK or NOT NULL constraint violated"):
            cur.execute("INSERT INTO dbt_e2e.customer_contract VALUES (99, NULL, 0)")
    finally:
        conn.close()
    out = dbt("test")
    # The schema tests and the two singular ones (seed strings exact, incremental results).
    assert "PASS=17" in out and "TOTAL=17" in out, out
    dbt("docs", "generate")
    catalog = json.loads((work / "target" / "catalog.json").read_text())
    nodes = catalog["nodes"]
    assert len(nodes) + len(catalog["sources"]) >= 6, sorted(nodes)
    table = nodes["model.apiary_dbt.orders_by_day"]
    columns = table["columns"]
    # Column names and types as Hive gives them over HiveServer2: no padding.
    assert set(columns) == {"order_id", "customer_id", "amount", "status", "order_date"}, columns
    assert columns["order_id"]["type"] == "bigint", columns
