"""Starts real Apiary servers (port 0, 127.0.0.1) for the client tests and stops them."""

import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from procs import free_port, stop_process, wait_for_port

BIN = os.environ.get("APIARY_BIN", "")


class Server:
    """An `apiary serve` process on free ports; stops itself when the test session ends."""

    def __init__(self, *extra, data=None, env=None, wrapper=()):
        """Starts a server; `data` reuses the folder of an earlier server (a restart), `env`
        replaces the environment it runs in, `wrapper` is a command it runs under (such as
        `prlimit --as=N --`, which leaves the same process)."""
        if not BIN or not os.path.exists(BIN):
            raise RuntimeError("APIARY_BIN must name the built apiary binary")
        self.data = data or tempfile.mkdtemp(prefix="apiary-test-")
        self.log_path = os.path.join(self.data, "server.log")
        self.log = open(self.log_path, "a")
        args = [*wrapper, BIN, "serve", "--data-dir", os.path.join(self.data, "d"), "--port", "0", "--http-port", "0",
                "--flightsql-port", "0", *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        self.binary_port = None
        self.http_port = None
        self.flight_port = None
        deadline = time.time() + 60
        want_http = "hive.server2.transport.mode=binary" not in extra
        want_binary = "hive.server2.transport.mode=http" not in extra
        want_flight = "apiary.flightsql.enabled=false" not in extra
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"(binary|http|Flight SQL) endpoint listening on [\d.]+:(\d+)", line)
            if m:
                port = int(m.group(2))
                if m.group(1) == "binary":
                    self.binary_port = port
                elif m.group(1) == "http":
                    self.http_port = port
                else:
                    self.flight_port = port
            if ((self.binary_port or not want_binary) and (self.http_port or not want_http)
                    and (self.flight_port or not want_flight)):
                return
        self.stop()
        raise RuntimeError("server did not start: " + open(self.log_path).read()[-2000:])

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def server_log(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    assert s.alive(), "server died during the tests:\n" + s.server_log()[-3000:]
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


@pytest.fixture(scope="session")
def nosasl_server():
    s = Server("--hiveconf", "hive.server2.authentication=NOSASL")
    yield s
    s.stop()
    shutil.rmtree(s.data, ignore_errors=True)


class Postgres:
    """A throwaway PostgreSQL cluster on a free loopback port, in its own folder."""

    def __init__(self, *settings):
        """`settings` are `name=value` server settings (e.g. shared_preload_libraries=...)."""
        import glob
        import pwd

        initdb = shutil.which("initdb") or (sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or [None])[-1]
        if not initdb:
            raise RuntimeError("PostgreSQL is not installed (scripts/test.sh installs it)")
        bindir = os.path.dirname(os.path.realpath(initdb))
        self.dir = tempfile.mkdtemp(prefix="apiary-pg-")
        run_as = []
        if os.getuid() == 0:
            # PostgreSQL refuses to run as root.
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            run_as = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        data = os.path.join(self.dir, "data")
        subprocess.run(run_as + [os.path.join(bindir, "initdb"), "-D", data, "-U", "apiary",
                                 "--auth=trust", "-E", "UTF8"], check=True, capture_output=True)
        self.proc = subprocess.Popen(
            run_as + [os.path.join(bindir, "postgres"), "-D", data, "-p", str(self.port),
                      "-h", "127.0.0.1", "-k", self.dir] + [a for kv in settings for a in ("-c", kv)],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "pg.log"), "w"))
        deadline = time.time() + 30
        while time.time() < deadline:
            r = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "apiary",
                                "-d", "postgres", "-c", "SELECT 1"], capture_output=True)
            if r.returncode == 0:
                break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError("PostgreSQL did not start")

    def psql(self, sql, db="postgres"):
        r = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "apiary", "-d", db,
                            "-At", "-c", sql], capture_output=True, text=True, check=True)
        return r.stdout

    def url(self, db):
        return f"postgresql://apiary@127.0.0.1:{self.port}/{db}"

    def shared_catalog(self, db):
        """A fresh database `db` and warehouse folder for servers that share one catalog;
        returns the servers' settings and the warehouse."""
        self.psql(f"DROP DATABASE IF EXISTS {db}")
        self.psql(f"CREATE DATABASE {db}")
        warehouse = tempfile.mkdtemp(prefix="apiary-shared-wh-")
        conf = ["--hiveconf", f"apiary.metastore.url={self.url(db)}",
                "--hiveconf", f"hive.metastore.warehouse.dir={warehouse}"]
        return conf, warehouse

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    pg = Postgres()
    yield pg
    pg.stop()


class MariaDB:
    """A throwaway MariaDB server on a free loopback port, in its own folder (grant tables off:
    any user connects without a password)."""

    def __init__(self):

        mysqld = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)
        install = shutil.which("mariadb-install-db")
        if not mysqld or not install:
            raise RuntimeError("MariaDB is not installed (scripts/test.sh installs it)")
        self.dir = tempfile.mkdtemp(prefix="apiary-mariadb-")
        data = os.path.join(self.dir, "data")
        # mariadbd runs as root only when told to.
        user = ["--user=root"] if os.getuid() == 0 else []
        subprocess.run([install, "--no-defaults", f"--datadir={data}", "--skip-test-db",
                        "--auth-root-authentication-method=normal"] + user,
                       check=True, capture_output=True)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [mysqld, "--no-defaults", f"--datadir={data}", f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--socket={os.path.join(self.dir, 'sock')}", f"--pid-file={os.path.join(self.dir, 'pid')}",
             "--skip-grant-tables", "--skip-name-resolve"] + user,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "mariadb.log"), "w"))
        deadline = time.time() + 60
        while time.time() < deadline:
            r = subprocess.run(self._client() + ["-e", "SELECT 1"], capture_output=True)
            if r.returncode == 0:
                break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError("MariaDB did not start")

    def _client(self):
        return ["mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", str(self.port), "-u", "root", "-N", "-B"]

    def sql(self, sql, db=None):
        r = subprocess.run(self._client() + ([db] if db else []) + ["-e", sql],
                           capture_output=True, text=True, check=True)
        return r.stdout

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class BigtableEmulator:
    """Google's Cloud Bigtable emulator (`cbtemulator`, in memory) on a free loopback port.
    Clients find it through BIGTABLE_EMULATOR_HOST, which `env()` gives."""

    PATHS = ["/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator",
             "/usr/share/google-cloud-sdk/platform/bigtable-emulator/cbtemulator"]

    def __init__(self):
        binary = (os.environ.get("APIARY_CBTEMULATOR") or shutil.which("cbtemulator")
                  or next((p for p in self.PATHS if os.path.exists(p)), None))
        if not binary:
            raise RuntimeError("the Bigtable emulator (cbtemulator) is not installed (scripts/test.sh installs it)")
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([binary, "-host", "127.0.0.1", "-port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for_port(self.port, 30):
            self.stop()
            raise RuntimeError("the Bigtable emulator did not start")

    def env(self):
        return {**os.environ, "BIGTABLE_EMULATOR_HOST": self.host}

    def stop(self):
        stop_process(self.proc)
