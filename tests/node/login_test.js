// One login with hive-driver from npm: prints the session user, or the error the login got.
// Usage: node login_test.js plain|http HOST PORT USER PASSWORD [CA_PEM]
// With CA_PEM the connection is TLS, trusting only that CA.
'use strict';
const fs = require('fs');
const hive = require('hive-driver');
const { TCLIService, TCLIService_types } = hive.thrift;

const [mode, host, port, username, password, caFile] = process.argv.slice(2);
const ca = caFile ? fs.readFileSync(caFile) : undefined;

async function main() {
  const client = new hive.HiveClient(TCLIService, TCLIService_types);
  const utils = new hive.HiveUtils(TCLIService_types);
  const options = { host, port: Number(port) };
  let connection, auth;
  if (mode === 'http') {
    connection = new hive.connections.HttpConnection();
    auth = new hive.auth.PlainHttpAuthentication({ username, password });
    options.options = { path: '/cliservice' };
    if (ca) {
      options.options.https = true;
      options.options.nodeOptions = { ca, rejectUnauthorized: true };
    }
  } else {
    connection = new hive.connections.TcpConnection();
    auth = new hive.auth.PlainTcpAuthentication({ username, password });
    if (ca) {
      options.options = { ssl: true, ca, rejectUnauthorized: true };
    }
  }
  await client.connect(options, connection, auth);
  const session = await client.openSession({
    client_protocol: TCLIService_types.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10,
  });
  const op = await session.executeStatement('SELECT current_user() AS u', { runAsync: true });
  await utils.waitUntilReady(op, false, () => {});
  await utils.fetchAll(op);
  const rows = utils.getResult(op).getValue();
  await op.close();
  await session.close();
  await client.close();
  console.log('USER ' + rows[0].u);
  process.exit(0);
}

main().catch((e) => {
  console.log('REFUSED ' + (e && e.message ? e.message : e));
  process.exit(2);
});
