"""A runner for sqllogictest-style files, over a real HiveServer2 client connection.

Records, separated by blank lines:

    statement ok
    <sql>

    statement error <text the error message must contain>
    <sql>

    query [rowsort]
    <sql>
    ----
    <rows: values separated by tabs, NULL for None>

Output is normalised before comparing: the server's data folder becomes $DATA, times in
DESCRIBE FORMATTED / SHOW CREATE TABLE become $TIME, and trailing blanks are cut from values.
With APIARY_SLT_COMPLETE=1 the expected rows of every query are rewritten from what the server
returned (review the diff before committing).
"""

import decimal
import os
import re


def parse(text):
    records, block = [], []
    for line in text.split("\n") + [""]:
        if line.strip() == "" and block:
            records.append(block)
            block = []
        elif line.strip() != "" or block:
            if not (line.startswith("#") and not block):
                block.append(line)
    out = []
    for b in records:
        head = b[0].split(None, 2)
        if head[0] == "statement":
            out.append({"kind": head[1], "expect": head[2] if len(head) > 2 else "", "sql": "\n".join(b[1:])})
        elif head[0] == "query":
            i = b.index("----") if "----" in b else len(b)
            out.append({"kind": "query", "sort": "rowsort" in b[0], "sql": "\n".join(b[1:i]),
                        "rows": b[i + 1:], "header": b[0]})
        else:
            raise ValueError(f"unknown record {b[0]!r}")
    return out


def render(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, decimal.Decimal):
        # The server's text, which PyHive read into a Decimal: plain digits to the scale
        # (str() would write a zero of scale 18 as 0E-18).
        return format(v, "f")
    return str(v).rstrip()


def normalise(line, data_dir):
    line = line.replace(os.path.realpath(data_dir), "$DATA").replace(data_dir, "$DATA")
    line = re.sub(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}\b", "$TIME", line)
    line = re.sub(r"(transient_lastDdlTime'?\t?=?'?\s*)\d{10}", r"\g<1>$TIME", line)
    line = re.sub(r"(transient_lastDdlTime\t)\d{10}", r"\g<1>$TIME", line)
    line = re.sub(r"createTime:\d+", "createTime:$TIME", line)
    # A constraint's generated name: its kind, a hash, the time and a counter.
    line = re.sub(r"\b(pk|uk|fk|nn|dc)_\d+_\d{13}_\d+\b", r"\g<1>_$NAME", line)
    return line


def completed(text, rows):
    """`text` with the expected rows of its query records replaced by `rows` (a list per query
    record, in order); comments, statements and spacing are kept (the in-process runner,
    crates/gateway/tests/slt.rs, rewrites the same way)."""
    rows = list(rows)
    out, in_query, skipping = [], False, False
    for line in text.split("\n"):
        if line.strip() == "":
            in_query = skipping = False
            out.append(line)
            continue
        if skipping:
            continue
        if (not out or out[-1].strip() == "") and line.startswith("query"):
            in_query = True
        out.append(line)
        if in_query and line == "----":
            skipping = True
            out.extend(rows.pop(0) if rows else [])
    return "\n".join(out)


def run_file(path, connect, data_dir):
    """Runs every record of `path` on a new connection; returns a list of failures."""
    text = open(path).read()
    records = parse(text)
    conn = connect()
    cur = conn.cursor()
    failures, completed_records = [], []
    for r in records:
        sql = r["sql"]
        if r["kind"] in ("ok", "error"):
            try:
                cur.execute(sql)
                if r["kind"] == "error":
                    failures.append(f"{sql!r}: expected an error containing {r['expect']!r}, it succeeded")
            except Exception as e:  # noqa: BLE001 - any client error is the error under test
                msg = str(e)
                if r["kind"] == "ok":
                    failures.append(f"{sql!r}: {msg[:500]}")
                elif r["expect"] not in msg:
                    failures.append(f"{sql!r}: error {msg[:500]!r} does not contain {r['expect']!r}")
            completed_records.append(r)
            continue
        try:
            cur.execute(sql)
            rows = cur.fetchall()
        except Exception as e:  # noqa: BLE001
            failures.append(f"{sql!r}: {str(e)[:500]}")
            completed_records.append(r)
            continue
        got = [normalise("\t".join(render(v) for v in row), data_dir) for row in rows]
        if r["sort"]:
            got.sort()
        if got != r["rows"]:
            failures.append(f"{sql!r}:\n  expected {r['rows']}\n  got      {got}")
        r = dict(r, rows=got)
        completed_records.append(r)
    cur.close()
    conn.close()
    if os.environ.get("APIARY_SLT_COMPLETE") == "1":
        with open(path, "w") as f:
            f.write(completed(text, [r["rows"] for r in completed_records if r["kind"] == "query"]))
    return failures
