"""Flight SQL helpers for the client tests: ADBC connections, Flight SQL commands for a bare
pyarrow.flight client (their protobuf messages written out by field number), and Arrow
values as the text Hive gives them, to compare with what HiveServer2 clients receive."""

import datetime
import decimal
import json

import adbc_driver_flightsql.dbapi as adbc
import pyarrow as pa
import pyarrow.flight as fl

import hive_types

SQL_PREFIX = "type.googleapis.com/arrow.flight.protocol.sql."


def adbc_connect(srv, user="carol", password="pw", **kw):
    """An ADBC DB-API connection to the server's Flight SQL port (Basic credentials in the
    handshake, then the bearer token the server hands back)."""
    return adbc.connect(
        f"grpc://127.0.0.1:{srv.flight_port}",
        db_kwargs={"username": user, "password": password, **kw},
        autocommit=True,
    )


def flight_client(srv, user="carol", password="pw"):
    """A bare pyarrow.flight client and the call options carrying its bearer token."""
    client = fl.FlightClient(f"grpc://127.0.0.1:{srv.flight_port}")
    header = client.authenticate_basic_token(user, password)
    return client, fl.FlightCallOptions(headers=[header])


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _bytes_field(number, value):
    if isinstance(value, str):
        value = value.encode()
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def command(name, *fields):
    """A Flight SQL command `name` wrapped in google.protobuf.Any; `fields` are
    (field number, string or bytes) pairs of the command's message."""
    body = b"".join(_bytes_field(n, v) for n, v in fields)
    return _bytes_field(1, SQL_PREFIX + name) + _bytes_field(2, body)


def statement_query(sql):
    """A FlightDescriptor for CommandStatementQuery (field 1: the query)."""
    return fl.FlightDescriptor.for_command(command("CommandStatementQuery", (1, sql)))


def cancel_flight_info(client, options, info):
    """CancelFlightInfo (the action's body is CancelFlightInfoRequest, field 1 the FlightInfo);
    returns the CancelStatus number of the reply (1 = cancelled, 3 = not cancellable)."""
    body = _bytes_field(1, info.serialize())
    results = list(client.do_action(fl.Action("CancelFlightInfo", body), options))
    reply = results[0].body.to_pybytes()
    # CancelFlightInfoResult { CancelStatus status = 1 } : tag 0x08, then the varint.
    return reply[1] if reply[:1] == b"\x08" else 0


def _json(v):
    """A nested value as Hive renders it inside ARRAY/MAP/STRUCT text."""
    if v is None:
        return "null"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return hive_text(v)


def hive_text(v):
    """An Arrow value (as pyarrow's to_pylist gives it) as Hive's text for it: scalars as
    hive_types.normalize gives a DB-API value's, plus the types only Arrow clients see."""
    if v is None or isinstance(v, (bool, bytes, bytearray, float, decimal.Decimal, str, int)):
        return hive_types.normalize(v)
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.%f") if v.microsecond else v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, pa.MonthDayNano) and v.months and not (v.days or v.nanoseconds):
        # A year-month interval (Hive's INTERVAL YEAR TO MONTH): `years-months`.
        return f"{v.months // 12}-{v.months % 12}"
    if isinstance(v, pa.MonthDayNano):
        # A day-time interval (Hive's INTERVAL DAY TO SECOND): days, then the time of day.
        days, nanos = v.days, v.nanoseconds
        days, secs = days + nanos // 86_400_000_000_000, nanos % 86_400_000_000_000 // 1_000_000_000
        frac = nanos % 1_000_000_000
        return f"{days} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{frac:09d}"
    if isinstance(v, dict):
        return "{" + ",".join(f'"{k}":{_json(x)}' for k, x in v.items()) + "}"
    if isinstance(v, list):
        if v and all(isinstance(e, tuple) and len(e) == 2 for e in v):
            return "{" + ",".join(f"{_json(k)}:{_json(x)}" for k, x in v) + "}"
        return "[" + ",".join(_json(e) for e in v) + "]"
    return str(v)
