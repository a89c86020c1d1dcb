#!/usr/bin/env bash
# Runs every test of Apiary on a fresh machine: Rust unit and integration tests, then the
# real-client tests (PyHive, impyla, SQLAlchemy, Hive JDBC, beeline, hive-driver) against a
# server the tests start themselves on 127.0.0.1 with free ports.
#
# Installs what the client tests need into a cache (default ~/.cache/apiary, or $APIARY_CACHE):
# a Python venv with the pinned clients (pyspark brings the JDBC and beeline jars) and
# hive-driver from npm; PostgreSQL, MariaDB, OpenLDAP, an MIT Kerberos KDC and the Kerberos
# build headers from Debian's packages if they are missing, and Google's Bigtable emulator
# (from Google's Debian repository) for the HBase tests. Java 17 (javac) and Node.js must be
# on the machine.
#
# Usage: scripts/test.sh [STAGE] [PYTEST ARGS...]
#   (none) or all   every stage: rust (fmt, clippy, build, cargo test), fuzz, clients
#   rust            only the Rust stage: the layout check (scripts/check_layout.py), fmt,
#                   clippy, build, cargo test
#   fuzz            the binary and the fuzz targets (APIARY_FUZZ_SECONDS each, default 30;
#                   0 skips fuzzing)
#   clients         the binary and the client tests
#   tests/clients/test_x.py ...   the binary and those client test files
# Arguments after the stage (or all arguments, when the first is no stage) go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

STAGE=all
case "${1:-}" in
  all|rust|fuzz|clients) STAGE="$1"; shift ;;
  tests/clients/*.py|*/tests/clients/*.py) STAGE=clients ;;
esac
# stage NAME: whether NAME runs in this invocation.
stage() { [ "$STAGE" = all ] || [ "$STAGE" = "$1" ]; }

CACHE="${APIARY_CACHE:-$HOME/.cache/apiary}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
mkdir -p "$CACHE"

# Debian's packages the build and the tests need, installed in one go where missing:
# MIT Kerberos' and PAM's headers and clang (the kerberos and pam features' bindings), the
# servers the tests start themselves (their packaged services are not used): PostgreSQL for
# the shared metastore, MariaDB for the JDBC handler, OpenLDAP, an MIT KDC with its admin
# tools; and pam_pwdfile, the PAM module the PAM tests' services check passwords with.
need=()
# have TOOL [GLOB]: the tool is on the PATH or in /usr/sbin, or a file matches GLOB.
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || { [ -n "${2:-}" ] && compgen -G "$2" >/dev/null; }; }
have krb5-config || need+=(libkrb5-dev)
[ -f /usr/include/security/pam_appl.h ] || need+=(libpam0g-dev)
compgen -G "/usr/lib/*/security/pam_pwdfile.so" >/dev/null || need+=(libpam-pwdfile)
compgen -G "/usr/lib/llvm-*/lib/libclang.so" >/dev/null || need+=(libclang-dev)
have initdb "/usr/lib/postgresql/*/bin/initdb" || need+=(postgresql)
have mariadbd || need+=(mariadb-server)
have slapd || need+=(slapd ldap-utils)
have krb5kdc || need+=(krb5-kdc)
have kadmin.local || need+=(krb5-admin-server)
have kinit || need+=(krb5-user)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${need[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Google's Cloud Bigtable emulator, the HBase tests' server: Google's Debian package, from
# Google's own repository (added where it is missing).
if ! have cbtemulator "/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator"; then
  echo "== installing the Bigtable emulator (google-cloud-cli-bigtable-emulator)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  if ! grep -rqs "packages.cloud.google.com/apt" /etc/apt/sources.list.d/*.list /etc/apt/sources.list; then
    curl -fsSL https://packages.cloud.google.com/apt/doc/apt-key.gpg \
      | $sudo gpg --dearmor --yes -o /usr/share/keyrings/cloud.google.gpg
    echo "deb [signed-by=/usr/share/keyrings/cloud.google.gpg] https://packages.cloud.google.com/apt cloud-sdk main" \
      | $sudo tee /etc/apt/sources.list.d/google-cloud-sdk.list >/dev/null
  fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq google-cloud-cli-bigtable-emulator >/dev/null
fi

# Every build here has Hive's KERBEROS and PAM modes (a plain `cargo build` leaves them out).
FEATURES=(--features apiary/kerberos,apiary/pam)
if stage rust; then
  echo "== layout (no module cycle, no file above 1,000 lines, no crate above 30 %), fmt, clippy, build and test"
  python3 scripts/check_layout.py
  cargo fmt --all -- --check
  cargo clippy --workspace --all-targets "${FEATURES[@]}" -- -D warnings
  cargo build --workspace --bins "${FEATURES[@]}"
  cargo test --workspace "${FEATURES[@]}"
  if [ "$STAGE" = rust ]; then exit 0; fi
else
  echo "== cargo build"
  cargo build --workspace --bins "${FEATURES[@]}"
fi

FUZZ_SECONDS="${APIARY_FUZZ_SECONDS:-30}"
if stage fuzz && [ "$FUZZ_SECONDS" != 0 ]; then
  echo "== fuzz targets (cargo fuzz, $FUZZ_SECONDS s each)"
  # cargo-fuzz builds with the sanitizer-coverage passes; on a stable toolchain RUSTC_BOOTSTRAP
  # lets it pass its -Z flags, and --sanitizer none needs no nightly runtime.
  command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
  FUZZ_TARGET_DIR="$CACHE/fuzz-target"
  for target in thrift_decode framing hiveql; do
    mkdir -p "$CACHE/fuzz-corpus/$target"
    log="$CACHE/fuzz-$target.log"
    if ! RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$FUZZ_TARGET_DIR" cargo fuzz run --dev --sanitizer none \
        --fuzz-dir fuzz "$target" "$CACHE/fuzz-corpus/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 -max_len=65536 \
        -print_final_stats=1 >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz target $target failed (crash input under fuzz/artifacts/$target)"
      exit 1
    fi
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" | tr '\n' ' '
    echo "($target)"
  done
fi
if [ "$STAGE" = fuzz ]; then exit 0; fi

VENV="$CACHE/venv"
DBT_VENV="$CACHE/dbt-venv"
SUPERSET_VENV="$CACHE/superset-venv"
NODE_CACHE="$CACHE/node"
echo "== client tooling"
# venv DIR REQUIREMENTS: a Python venv at DIR holding the pinned requirements, reinstalled
# when the file changes.
venv() {
  [ -x "$1/bin/python" ] || python3 -m venv "$1"
  if ! cmp -s "$2" "$1/.installed-requirements" 2>/dev/null; then
    "$1/bin/pip" install -q --disable-pip-version-check -r "$2"
    cp "$2" "$1/.installed-requirements"
  fi
}
venv "$VENV" tests/clients/requirements.txt
# dbt-hive, and Apache Superset (its Hive engine spec), in venvs of their own: dbt-core and
# Superset (SQLAlchemy < 2, pyarrow < 19) pin libraries the clients above pin differently.
venv "$DBT_VENV" tests/dbt/requirements.txt
venv "$SUPERSET_VENV" tests/superset/requirements.txt
mkdir -p "$NODE_CACHE"
if ! cmp -s tests/node/package.json "$NODE_CACHE/package.json" 2>/dev/null || [ ! -d "$NODE_CACHE/node_modules/hive-driver" ]; then
  cp tests/node/package.json "$NODE_CACHE/package.json"
  (cd "$NODE_CACHE" && npm install --no-audit --no-fund --loglevel=error)
fi

echo "== client tests"
export APIARY_NODE_MODULES="$NODE_CACHE/node_modules"
export APIARY_BIN="$CARGO_TARGET_DIR/debug/apiary"
export APIARY_DBT="$DBT_VENV/bin/dbt"
export APIARY_SUPERSET_PYTHON="$SUPERSET_VENV/bin/python"
# Test files named on the command line run alone; otherwise every client test.
paths=(tests/clients)
for a in "$@"; do
  case "$a" in *.py|*.py::*) paths=() ;; esac
done
"$VENV/bin/python" -m pytest "${paths[@]}" -q -p no:cacheprovider "$@"
