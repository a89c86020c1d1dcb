"""One query returning every Hive type, a row of values and a row of NULLs, with the text
Hive gives each value; shared by the Python, JDBC and Node tests."""

import re

COLUMNS = [
    # name, expression, Hive type name in metadata, expected text of the value
    ("c_boolean", "true", "BOOLEAN", "true"),
    ("c_tinyint", "CAST(-7 AS TINYINT)", "TINYINT", "-7"),
    ("c_smallint", "CAST(300 AS SMALLINT)", "SMALLINT", "300"),
    ("c_int", "2147483647", "INT", "2147483647"),
    ("c_bigint", "CAST(9007199254740993 AS BIGINT)", "BIGINT", "9007199254740993"),
    ("c_float", "CAST(1.5 AS FLOAT)", "FLOAT", "1.5"),
    ("c_double", "CAST(2.25 AS DOUBLE)", "DOUBLE", "2.25"),
    ("c_decimal", "CAST('12345678.90' AS DECIMAL(10,2))", "DECIMAL", "12345678.90"),
    ("c_string", "'héllo, \"world\"'", "STRING", 'héllo, "world"'),
    ("c_varchar", "CAST('abc' AS VARCHAR(10))", "VARCHAR", "abc"),
    ("c_char", "CAST('ab' AS CHAR(5))", "CHAR", "ab   "),
    ("c_date", "DATE '2024-02-29'", "DATE", "2024-02-29"),
    ("c_timestamp", "TIMESTAMP '2024-02-29 12:34:56.123456'", "TIMESTAMP", "2024-02-29 12:34:56.123456"),
    ("c_binary", "CAST('bin' AS BINARY)", "BINARY", "bin"),
    ("c_array", "array(1, 2, 3)", "ARRAY", "[1,2,3]"),
    ("c_map", "map('a', 1, 'b', 2)", "MAP", '{"a":1,"b":2}'),
    ("c_struct", "named_struct('x', 1, 'y', 'z')", "STRUCT", '{"x":1,"y":"z"}'),
    ("c_interval_ym", "INTERVAL '14' MONTH", "INTERVAL_YEAR_MONTH", "1-2"),
    ("c_interval_dt", "INTERVAL '93784' SECOND", "INTERVAL_DAY_TIME", "1 02:03:04.000000000"),
]


def _nullable(expr):
    """`expr` on row 1, NULL on row 2; inside a CAST so the declared type is kept."""
    m = re.fullmatch(r"CAST\((.*) AS (.+)\)", expr)
    if m:
        return f"CAST(CASE WHEN id = 1 THEN {m.group(1)} END AS {m.group(2)})"
    return f"CASE WHEN id = 1 THEN {expr} END"


def expected_type(type_name, protocol_version):
    """The type name a client sees: types newer than its protocol (V8 intervals) read as STRING."""
    if type_name.startswith("INTERVAL") and protocol_version < 8:
        return "STRING"
    return type_name


def query():
    """Row 1 holds the values, row 2 NULL in every column (same types)."""
    cols = ", ".join(f"{_nullable(expr)} AS {name}" for name, expr, _, _ in COLUMNS)
    return f"SELECT id, {cols} FROM (VALUES (1), (2)) AS t(id) ORDER BY id"


def normalize(v):
    """A client's value as Hive's text."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    if isinstance(v, float):
        return repr(v)
    return str(v)


# One result of a Hive function per type family, with the text Hive sends for it (doubles as
# Java writes them, complex values as JSON). The Hive JDBC driver, and beeline over it, read a
# TIMESTAMP into java.sql.Timestamp, whose text has at least one fractional digit.
JDBC_TEXT = {"2024-02-29 19:00:00": "2024-02-29 19:00:00.0"}
FUNCTION_RESULTS = [
    ("xpath_boolean('<a><b>1</b></a>', 'a/b')", "true"),
    ("xpath_short('<a>70000</a>', 'a')", "4464"),
    ("datediff('2024-03-01', '2024-02-01')", "29"),
    ("xpath_long('<a>2147483648</a>', 'a')", "2147483648"),
    ("xpath_float('<a>0.25</a>', 'a')", "0.25"),
    ("pow(10, 10)", "1.0E10"),
    ("xpath_double('<a>0.1</a>', 'a')", "0.1"),
    ("round(2.345, 2)", "2.35"),
    ("(SELECT percentile_disc(x, 0.5) FROM (VALUES (1), (2), (3)) AS t(x))", "2.0"),
    ("upper(xpath_string('<a>x</a>', 'a'))", "X"),
    ("to_date('2024-02-29 10:00:00')", "2024-02-29"),
    ("from_utc_timestamp('2024-02-29 10:00:00', 'Asia/Tokyo')", "2024-02-29 19:00:00"),
    ("xpath('<a><b>1</b><b>2</b></a>', 'a/b/text()')", '["1","2"]'),
    ("str_to_map('a:1,b:2')", '{"a":"1","b":"2"}'),
    ("json_read('{\"a\": 1}', 'struct<a:int>')", '{"a":1}'),
    ("(SELECT ngrams(array(array('a', 'b', 'a', 'b')), 2, 1))",
     '[{"ngram":["a","b"],"estfrequency":2.0}]'),
]


def function_query():
    """The results above as one row."""
    return "SELECT " + ", ".join(expr for expr, _ in FUNCTION_RESULTS)
