"""Operation life cycle through PyHive's TCLIService client over SASL PLAIN: async execute and
poll, cancel, query timeout, FETCH_FIRST, the operation log, GetInfo, progress, closed handles."""

import time

import pytest
from pyhive import hive
from TCLIService import ttypes as T

import clients

ENDLESS = "SELECT sum(a.value * b.value) AS s FROM range(200000) a CROSS JOIN range(200000) b"


@pytest.fixture
def raw(server):
    conn = clients.pyhive_none(server)
    yield conn._client, conn._sessionHandle, server
    conn.close()


def execute(client, session, sql, run_async=True, timeout=0):
    resp = client.ExecuteStatement(
        T.TExecuteStatementReq(sessionHandle=session, statement=sql, runAsync=run_async, queryTimeout=timeout)
    )
    return resp


def state(client, op, progress=False):
    return client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=op, getProgressUpdate=progress))


def wait_for(client, op, states, limit=30):
    deadline = time.time() + limit
    while time.time() < deadline:
        st = state(client, op)
        if st.operationState in states:
            return st
        time.sleep(0.05)
    raise AssertionError(f"operation did not reach {states}; last {st.operationState}")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def cpu_drops(pid, limit=15.0):
    """Whether, within `limit` seconds, a one-second window uses under 0.25 s of CPU. Aborted
    DataFusion tasks stop at their next yield point, so the drop is not instantaneous."""
    deadline = time.time() + limit
    while time.time() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1.0)
        if cpu_seconds(pid) - before < 0.25:
            return True
    return False


def fetch(client, op, n, orientation=T.TFetchOrientation.FETCH_NEXT, fetch_type=0):
    return client.FetchResults(
        T.TFetchResultsReq(operationHandle=op, orientation=orientation, maxRows=n, fetchType=fetch_type)
    )


def test_async_execute_then_poll(raw):
    client, session, _ = raw
    resp = execute(client, session, "SELECT count(*) AS c FROM range(3000000)")
    assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS
    op = resp.operationHandle
    st = wait_for(client, op, [T.TOperationState.FINISHED_STATE])
    assert st.operationStarted > 0
    r = fetch(client, op, 10)
    assert r.results.columns[0].i64Val.values == [3000000]
    client.CloseOperation(T.TCloseOperationReq(operationHandle=op))


def test_cancel_stops_the_work(raw):
    client, session, srv = raw
    op = execute(client, session, ENDLESS).operationHandle
    wait_for(client, op, [T.TOperationState.RUNNING_STATE])
    time.sleep(1.0)
    busy_before = cpu_seconds(srv.proc.pid)
    time.sleep(1.0)
    busy = cpu_seconds(srv.proc.pid) - busy_before
    assert busy > 0.5, f"the query should be using CPU ({busy:.2f}s in 1s)"
    r = client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
    assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
    assert state(client, op).operationState == T.TOperationState.CANCELED_STATE
    assert cpu_drops(srv.proc.pid), "CPU still busy after cancel"
    client.CloseOperation(T.TCloseOperationReq(operationHandle=op))


def test_query_timeout(raw):
    client, session, srv = raw
    op = execute(client, session, ENDLESS, timeout=1).operationHandle
    st = wait_for(client, op, [T.TOperationState.TIMEDOUT_STATE], limit=15)
    assert "timed out" in st.errorMessage
    assert cpu_drops(srv.proc.pid), "CPU still busy after the timeout"


def test_sync_timeout_is_an_error(raw):
    client, session, _ = raw
    resp = execute(client, session, ENDLESS, run_async=False, timeout=1)
    assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS
    assert "timed out" in resp.status.errorMessage


def test_fetch_first_after_partial_fetch(raw):
    client, session, _ = raw
    op = execute(client, session, "SELECT value FROM range(100) ORDER BY value", run_async=False).operationHandle
    first = fetch(client, op, 10)
    assert first.results.columns[0].i64Val.values == list(range(10))
    nxt = fetch(client, op, 5)
    assert nxt.results.columns[0].i64Val.values == list(range(10, 15))
    again = fetch(client, op, 5, T.TFetchOrientation.FETCH_FIRST)
    assert again.results.columns[0].i64Val.values == list(range(5))
    rest = fetch(client, op, 1000)
    assert rest.results.columns[0].i64Val.values == list(range(5, 100))
    assert fetch(client, op, 10).results.columns[0].i64Val.values == []


def test_operation_log_while_running(raw):
    client, session, _ = raw
    op = execute(client, session, ENDLESS).operationHandle
    wait_for(client, op, [T.TOperationState.RUNNING_STATE])
    log = fetch(client, op, 100, fetch_type=1)
    lines = log.results.columns[0].stringVal.values
    assert any("Compiling command" in l for l in lines), lines
    assert any("Executing command" in l for l in lines), lines
    assert state(client, op).operationState == T.TOperationState.RUNNING_STATE
    progress = state(client, op, progress=True).progressUpdateResponse
    assert progress is not None and progress.headerNames
    client.CancelOperation(T.TCancelOperationReq(operationHandle=op))
    # FETCH_FIRST re-reads the log from the start (as beeline does).
    again = fetch(client, op, 100, T.TFetchOrientation.FETCH_FIRST, fetch_type=1)
    assert again.results.columns[0].stringVal.values[: len(lines)] == lines


def test_finished_log_counts_rows(raw):
    client, session, _ = raw
    op = execute(client, session, "SELECT value FROM range(10)", run_async=False).operationHandle
    fetch(client, op, 100)
    lines = fetch(client, op, 100, fetch_type=1).results.columns[0].stringVal.values
    assert any("rows produced: 10" in l for l in lines), lines


def test_unknown_getinfo_type_keeps_the_session(raw):
    client, session, _ = raw
    r = client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=9999))
    assert r.status.statusCode == T.TStatusCode.ERROR_STATUS
    assert "9999" in r.status.errorMessage
    for info, want in [(T.TGetInfoType.CLI_DBMS_NAME, "Apache Hive"), (T.TGetInfoType.CLI_SERVER_NAME, "Apiary")]:
        r = client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=info))
        assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
        assert r.infoValue.stringValue == want
    r = client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=T.TGetInfoType.CLI_DBMS_VER))
    assert r.infoValue.stringValue


def test_closed_handles(raw, server):
    client, session, _ = raw
    op = execute(client, session, "SELECT 1", run_async=False).operationHandle
    assert client.CloseOperation(T.TCloseOperationReq(operationHandle=op)).status.statusCode == 0
    st = state(client, op)
    assert st.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
    assert "Invalid OperationHandle" in st.status.errorMessage
    r = fetch(client, op, 10)
    assert r.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
    # A closed session refuses statements with a clear message.
    other = clients.pyhive_none(server)
    c2, s2 = other._client, other._sessionHandle
    c2.CloseSession(T.TCloseSessionReq(sessionHandle=s2))
    r = execute(c2, s2, "SELECT 1", run_async=False)
    assert r.status.statusCode == T.TStatusCode.INVALID_HANDLE_STATUS
    assert "Invalid SessionHandle" in r.status.errorMessage


def test_delegation_tokens_answer_unsupported(raw):
    client, session, _ = raw
    r = client.GetDelegationToken(T.TGetDelegationTokenReq(sessionHandle=session, owner="a", renewer="b"))
    assert r.status.statusCode == T.TStatusCode.ERROR_STATUS
    assert "not supported" in r.status.errorMessage


def test_open_session_configuration(server):
    conn = hive.connect(
        host="127.0.0.1", port=server.binary_port, username="carol",
        configuration={"hive.exec.x": "1"},
    )
    cur = conn.cursor()
    cur.execute("SET hive.exec.x")
    assert cur.fetchall() == [("hive.exec.x=1",)]
    conn.close()


def test_catalog_rpcs_answer(raw):
    client, session, _ = raw
    r = client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="def%"))
    rows = fetch(client, r.operationHandle, 100).results.columns[0].stringVal.values
    assert rows == ["default"]
    r = client.GetTypeInfo(T.TGetTypeInfoReq(sessionHandle=session))
    names = fetch(client, r.operationHandle, 100).results.columns[0].stringVal.values
    assert "DECIMAL" in names and "TIMESTAMP" in names
    r = client.GetCatalogs(T.TGetCatalogsReq(sessionHandle=session))
    assert fetch(client, r.operationHandle, 100).results.columns[0].stringVal.values == []


def test_row_based_results_below_v6(raw):
    """A client opening at V5 gets TRow results (columns arrived in V6)."""
    client, _, _ = raw
    opened = client.OpenSession(T.TOpenSessionReq(client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V5,
                                                  username="old_client"))
    assert opened.serverProtocolVersion == T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V5
    s = opened.sessionHandle
    op = execute(client, s, "SELECT 7 AS i, 'x' AS s, CAST(NULL AS DOUBLE) AS d", run_async=False).operationHandle
    r = fetch(client, op, 10)
    assert r.results.columns is None
    (row,) = r.results.rows
    assert row.colVals[0].i32Val.value == 7
    assert row.colVals[1].stringVal.value == "x"
    assert row.colVals[2].doubleVal.value is None
    client.CloseSession(T.TCloseSessionReq(sessionHandle=s))


def _raw_call(client, name, req_fields):
    """Sends an RPC PyHive's generated client lacks; `req_fields` writes the request struct."""
    from thrift.Thrift import TMessageType, TType

    oprot, iprot = client._oprot, client._iprot
    oprot.writeMessageBegin(name, TMessageType.CALL, 99)
    oprot.writeStructBegin("args")
    oprot.writeFieldBegin("req", TType.STRUCT, 1)
    oprot.writeStructBegin("req")
    req_fields(oprot)
    oprot.writeFieldStop()
    oprot.writeStructEnd()
    oprot.writeFieldEnd()
    oprot.writeFieldStop()
    oprot.writeStructEnd()
    oprot.writeMessageEnd()
    oprot.trans.flush()
    _name, mtype, seq = iprot.readMessageBegin()
    assert mtype == TMessageType.REPLY and seq == 99
    values = {}
    iprot.readStructBegin()
    while True:
        _, ftype, fid = iprot.readFieldBegin()
        if ftype == TType.STOP:
            break
        assert fid == 0 and ftype == TType.STRUCT
        iprot.readStructBegin()
        while True:
            _, t2, id2 = iprot.readFieldBegin()
            if t2 == TType.STOP:
                break
            if t2 == TType.STRING:
                values[id2] = iprot.readString()
            elif t2 == TType.STRUCT and id2 == 1:
                status = T.TStatus()
                status.read(iprot)
                values[id2] = status
            else:
                iprot.skip(t2)
            iprot.readFieldEnd()
        iprot.readStructEnd()
        iprot.readFieldEnd()
    iprot.readStructEnd()
    iprot.readMessageEnd()
    return values


def test_get_query_id_and_set_client_info(raw):
    from thrift.Thrift import TType

    client, session, _ = raw
    op = execute(client, session, "SELECT 1", run_async=False).operationHandle

    def query_id_req(oprot):
        oprot.writeFieldBegin("operationHandle", TType.STRUCT, 1)
        op.write(oprot)
        oprot.writeFieldEnd()

    qid = _raw_call(client, "GetQueryId", query_id_req)[1]
    assert qid.startswith("apiary_"), qid

    def client_info_req(oprot):
        oprot.writeFieldBegin("sessionHandle", TType.STRUCT, 1)
        session.write(oprot)
        oprot.writeFieldEnd()
        oprot.writeFieldBegin("configuration", TType.MAP, 2)
        oprot.writeMapBegin(TType.STRING, TType.STRING, 1)
        oprot.writeString("ApplicationName")
        oprot.writeString("tests")
        oprot.writeMapEnd()
        oprot.writeFieldEnd()

    status = _raw_call(client, "SetClientInfo", client_info_req)[1]
    assert status.statusCode == T.TStatusCode.SUCCESS_STATUS
    # The session still works afterwards.
    r = execute(client, session, "SELECT 2", run_async=False)
    assert r.status.statusCode == T.TStatusCode.SUCCESS_STATUS
