#!/usr/bin/env bash
# Runs every test of Apiary on a fresh machine: Rust unit and integration tests, then the
# real-client tests (PyHive, impyla, SQLAlchemy, Hive JDBC, beeline, hive-driver) against a
# server the tests start themselves on 127.0.0.1 with free ports.
#
# Installs what the client tests need into a cache (default ~/.cache/apiary, or $APIARY_CACHE):
# a Python venv with the pinned clients (pyspark brings the JDBC and beeline jars) and
# hive-driver from npm; PostgreSQL and MariaDB from Debian's packages if they are missing. Java 17 (javac) and
# Node.js must be on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${APIARY_CACHE:-$HOME/.cache/apiary}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
mkdir -p "$CACHE"

echo "== cargo fmt, clippy, build and test"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo build --workspace --bins
cargo test --workspace

echo "== client tooling"
VENV="$CACHE/venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
REQ=tests/clients/requirements.txt
if ! cmp -s "$REQ" "$VENV/.installed-requirements" 2>/dev/null; then
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/.installed-requirements"
fi
NODE_CACHE="$CACHE/node"
mkdir -p "$NODE_CACHE"
if ! cmp -s tests/node/package.json "$NODE_CACHE/package.json" 2>/dev/null || [ ! -d "$NODE_CACHE/node_modules/hive-driver" ]; then
  cp tests/node/package.json "$NODE_CACHE/package.json"
  (cd "$NODE_CACHE" && npm install --no-audit --no-fund --loglevel=error)
fi

# A PostgreSQL server for the shared-metastore tests (the tests start their own cluster).
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "== installing PostgreSQL"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >/dev/null; fi
fi

# MariaDB for the JDBC handler's MySQL tests (the tests start their own server).
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "== installing MariaDB"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq mariadb-server >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq mariadb-server >/dev/null; fi
fi

echo "== client tests"
export APIARY_NODE_MODULES="$NODE_CACHE/node_modules"
export APIARY_BIN="$CARGO_TARGET_DIR/debug/apiary"
"$VENV/bin/python" -m pytest tests/clients -q -p no:cacheprovider "$@"
