"""SQL behaviour from tests/sql/*.slt, each file on its own PyHive connection to one server."""

import glob
import os

import pytest

import clients
from slt import run_file

FILES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "sql", "*.slt")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f) for f in FILES])
def test_sql_file_over_pyhive(server, path):
    failures = run_file(path, lambda: clients.pyhive_none(server), server.data)
    assert not failures, "\n".join(failures)
