// Drives Apiary with hive-driver from npm over binary (PLAIN, NOSASL) and HTTP.
// Usage: node client_test.js MODE HOST PORT TYPES_QUERY_JSON_FILE
'use strict';
const fs = require('fs');
const hive = require('hive-driver');
const { TCLIService, TCLIService_types } = hive.thrift;

const [mode, host, port, specFile] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
let failures = 0;
function check(ok, what) {
  console.log((ok ? 'PASS ' : 'FAIL ') + what);
  if (!ok) failures++;
}

async function run(session, utils, sql) {
  const op = await session.executeStatement(sql, { runAsync: true });
  await utils.waitUntilReady(op, false, () => {});
  await utils.fetchAll(op);
  const rows = utils.getResult(op).getValue();
  await op.close();
  return rows;
}

async function main() {
  const client = new hive.HiveClient(TCLIService, TCLIService_types);
  const utils = new hive.HiveUtils(TCLIService_types);
  let connection, auth, options = { host, port: Number(port) };
  if (mode === 'http') {
    connection = new hive.connections.HttpConnection();
    auth = new hive.auth.PlainHttpAuthentication({ username: 'node', password: 'x' });
    options.options = { path: '/cliservice' };
  } else if (mode === 'nosasl') {
    connection = new hive.connections.TcpConnection();
    auth = new hive.auth.NoSaslAuthentication();
  } else {
    connection = new hive.connections.TcpConnection();
    auth = new hive.auth.PlainTcpAuthentication({ username: 'node', password: 'x' });
  }
  await client.connect(options, connection, auth);
  const session = await client.openSession({
    client_protocol: TCLIService_types.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10,
  });
  const one = await run(session, utils, 'SELECT 1 AS one, \'a\' AS s');
  check(one.length === 1 && one[0].one === 1 && one[0].s === 'a', 'simple query ' + JSON.stringify(one));
  const many = await run(session, utils, 'SELECT value FROM range(12345) ORDER BY value');
  check(many.length === 12345 && many[12344].value === 12344, 'multi-batch fetch ' + many.length);
  const typed = await run(session, utils, spec.query);
  check(typed.length === 2, 'types rows');
  for (const [name, expected] of spec.expected) {
    let got = typed[0][name];
    if (Buffer.isBuffer(got)) got = got.toString('utf8');
    else if (typeof got === 'boolean') got = got ? 'true' : 'false';
    else if (got !== null && typeof got === 'object' && typeof got.toString === 'function' && got.constructor && got.constructor.name === 'Int64') got = got.toString();
    else if (got !== null && typeof got === 'object') got = JSON.stringify(got);
    // hive-driver parses DECIMAL text into a JavaScript number.
    else if (typeof got === 'number') got = Number(expected) === got ? expected : String(got);
    check(String(got) === expected, `${name} = ${JSON.stringify(got)} (want ${JSON.stringify(expected)})`);
    check(typed[1][name] === null, `${name} NULL`);
  }
  try {
    await run(session, utils, 'SELECT * FROM absent_table');
    check(false, 'error raised');
  } catch (e) {
    check(String(e.message || e).includes("Table not found 'absent_table'"), 'error text: ' + (e.message || e));
  }
  await session.close();
  await client.close();
  console.log(failures === 0 ? 'ALL PASSED' : failures + ' FAILED');
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log('FAIL exception ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
