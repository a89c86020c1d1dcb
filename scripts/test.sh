#!/usr/bin/env bash
# Runs every test of Apiary on a fresh machine: Rust unit and integration tests, then the
# real-client tests (PyHive, impyla, SQLAlchemy, Hive JDBC, beeline, hive-driver) against a
# server the tests start themselves on 127.0.0.1 with free ports.
#
# Installs what the client tests need into a cache (default ~/.cache/apiary, or $APIARY_CACHE):
# a Python venv with the pinned clients (pyspark brings the JDBC and beeline jars) and
# hive-driver from npm; PostgreSQL, MariaDB and OpenLDAP from Debian's packages if they are missing. Java 17 (javac) and
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

# OpenLDAP for the authentication tests (the tests start their own slapd; the package's own
# service is not started).
if ! command -v slapd >/dev/null 2>&1 && [ ! -x /usr/sbin/slapd ]; then
  echo "== installing OpenLDAP (slapd)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slapd ldap-utils >/dev/null
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slapd ldap-utils >/dev/null; fi
fi

echo "== fuzz targets (cargo fuzz, \${APIARY_FUZZ_SECONDS:-30} s each)"
# cargo-fuzz builds with the sanitizer-coverage passes; on a stable toolchain RUSTC_BOOTSTRAP
# lets it pass its -Z flags, and --sanitizer none needs no nightly runtime.
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
FUZZ_TARGET_DIR="$CACHE/fuzz-target"
for target in thrift_decode framing hiveql; do
  mkdir -p "$CACHE/fuzz-corpus/$target"
  log="$CACHE/fuzz-$target.log"
  if ! RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$FUZZ_TARGET_DIR" cargo fuzz run --dev --sanitizer none \
      --fuzz-dir fuzz "$target" "$CACHE/fuzz-corpus/$target" "fuzz/corpus/$target" -- \
      -max_total_time="${APIARY_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 -max_len=65536 \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz target $target failed (crash input under fuzz/artifacts/$target)"
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" | tr '\n' ' '
  echo "($target)"
done

echo "== client tests"
export APIARY_NODE_MODULES="$NODE_CACHE/node_modules"
export APIARY_BIN="$CARGO_TARGET_DIR/debug/apiary"
"$VENV/bin/python" -m pytest tests/clients -q -p no:cacheprovider "$@"
