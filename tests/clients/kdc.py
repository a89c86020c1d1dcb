"""A real MIT Kerberos KDC (Debian's krb5-kdc) on a loopback port, in a folder of its own: a
realm with the server's principals in a keytab and users with passwords, for the KERBEROS
tests. Nothing outside the folder is touched: the tools read its krb5.conf and kdc.conf
through KRB5_CONFIG and KRB5_KDC_PROFILE."""

import os
import shutil
import subprocess
import tempfile

from procs import free_port, wait_for_port

REALM = "APIARY.TEST"
SBIN = "/usr/sbin"


def _tool(name):
    for d in (SBIN, "/usr/bin"):
        path = os.path.join(d, name)
        if os.path.exists(path):
            return path
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed (Debian's krb5-kdc, krb5-admin-server, krb5-user)")
    return found


class Kdc:
    """A KDC process for realm APIARY.TEST; `stop()` ends it and removes its folder."""

    def __init__(self, services=("hive/localhost", "HTTP/localhost"), users=None):
        self.dir = tempfile.mkdtemp(prefix="apiary-kdc-")
        self.port = free_port()
        self.krb5_conf = os.path.join(self.dir, "krb5.conf")
        self.kdc_conf = os.path.join(self.dir, "kdc.conf")
        self.keytab = os.path.join(self.dir, "server.keytab")
        with open(self.krb5_conf, "w") as f:
            f.write(f"""[libdefaults]
 default_realm = {REALM}
 dns_lookup_realm = false
 dns_lookup_kdc = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 ticket_lifetime = 1h
[realms]
 {REALM} = {{
  kdc = 127.0.0.1:{self.port}
 }}
[domain_realm]
 localhost = {REALM}
 127.0.0.1 = {REALM}
""")
        with open(self.kdc_conf, "w") as f:
            f.write(f"""[kdcdefaults]
 kdc_ports = {self.port}
 kdc_tcp_ports = {self.port}
[realms]
 {REALM} = {{
  database_name = {self.dir}/principal
  key_stash_file = {self.dir}/stash
  acl_file = {self.dir}/kadm5.acl
  max_life = 1h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }}
[logging]
 kdc = FILE:{self.dir}/kdc.log
""")
        open(os.path.join(self.dir, "kadm5.acl"), "w").close()
        # The replay cache of whoever accepts tickets lives here too.
        self.env = dict(os.environ, KRB5_CONFIG=self.krb5_conf, KRB5_KDC_PROFILE=self.kdc_conf,
                        KRB5RCACHEDIR=self.dir)
        subprocess.run([_tool("kdb5_util"), "-r", REALM, "create", "-s", "-P", "master-pw"],
                       env=self.env, check=True, capture_output=True)
        for service in services:
            self.kadmin(f"addprinc -randkey {service}")
            self.kadmin(f"ktadd -k {self.keytab} {service}")
        self.users = users or {"alice": "wonderland", "bob": "builder"}
        for user, password in self.users.items():
            self.kadmin(f"addprinc -pw {password} {user}")
        self.proc = subprocess.Popen([_tool("krb5kdc"), "-n", "-r", REALM], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for_port(self.port, 20):
            self.stop()
            raise RuntimeError("the KDC did not start")

    def kadmin(self, query):
        subprocess.run([_tool("kadmin.local"), "-r", REALM, "-q", query], env=self.env, check=True,
                       capture_output=True)

    def principal(self, name):
        return f"{name}@{REALM}"

    def kinit(self, user, password=None):
        """A ticket cache holding `user`'s ticket; returns the environment that uses it."""
        cache = os.path.join(self.dir, f"cc_{user.replace('/', '_')}")
        env = dict(self.env, KRB5CCNAME=f"FILE:{cache}")
        subprocess.run([_tool("kinit"), self.principal(user)], env=env, check=True,
                       input=(password or self.users[user]) + "\n", text=True, capture_output=True)
        return env

    def server_settings(self, principal="hive/localhost", keytab=None):
        return ["--hiveconf", "hive.server2.authentication=KERBEROS",
                "--hiveconf", f"hive.server2.authentication.kerberos.principal={principal}@{REALM}",
                "--hiveconf", f"hive.server2.authentication.kerberos.keytab={keytab or self.keytab}"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
