//! The SQL files of `tests/sql/*.slt`, run in-process through the gateway (the door every
//! front end uses): the same records the client tests run over PyHive
//! (tests/clients/slt.py), on an engine with an embedded metastore in a temporary folder and
//! the JDBC handler registered, values rendered as that runner renders what PyHive returns.
//! With `APIARY_SLT_COMPLETE=1` the expected rows of every query are rewritten from what came
//! back (the same switch as the client runner's; review the diff before committing).

// A test harness: failing loudly is its job.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use apiary_gateway::render::cell_text;
use apiary_gateway::{Client, Gateway, GatewayConfig, Handle, SessionRequest};
use apiary_metastore::SqliteMetastore;
use apiary_sql::{Engine, EngineOptions, Registry};
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float32Type, Float64Type};

enum Record {
    Ok(String),
    Error(String, String),
    Query {
        sort: bool,
        sql: String,
        rows: Vec<String>,
    },
}

fn parse(text: &str) -> Vec<Record> {
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    for line in text.split('\n').chain(std::iter::once("")) {
        if line.trim().is_empty() && !block.is_empty() {
            blocks.push(std::mem::take(&mut block));
        } else if !block.is_empty() || !(line.trim().is_empty() || line.starts_with('#')) {
            block.push(line);
        }
    }
    blocks
        .into_iter()
        .map(|b| {
            let head: Vec<&str> = b[0].splitn(3, char::is_whitespace).collect();
            match head.as_slice() {
                ["statement", "ok", ..] => Record::Ok(b[1..].join("\n")),
                ["statement", "error", rest @ ..] => {
                    Record::Error(rest.join(" ").trim().to_string(), b[1..].join("\n"))
                }
                ["query", ..] => {
                    let sep = b.iter().position(|l| *l == "----").unwrap_or(b.len());
                    Record::Query {
                        sort: b[0].contains("rowsort"),
                        sql: b[1..sep].join("\n"),
                        rows: b
                            .get(sep + 1..)
                            .unwrap_or(&[])
                            .iter()
                            .map(|s| s.to_string())
                            .collect(),
                    }
                }
                _ => panic!("unknown record {:?}", b[0]),
            }
        })
        .collect()
}

/// Python's `repr` of a float, which is what the client runner prints.
fn python_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let s = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{s}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        format!(
            "{sign}{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// A value as the client runner prints it: PyHive's Python value, through `str`.
fn render(a: &dyn Array, row: usize) -> String {
    if a.is_null(row) || a.data_type() == &DataType::Null {
        return "NULL".into();
    }
    match a.data_type() {
        DataType::Float64 => python_float(a.as_primitive::<Float64Type>().value(row)),
        // Hive widens FLOAT to DOUBLE through its decimal text.
        DataType::Float32 => {
            let v = a.as_primitive::<Float32Type>().value(row);
            python_float(format!("{v}").parse().unwrap_or(f64::from(v)))
        }
        DataType::Boolean => a.as_boolean().value(row).to_string(),
        // PyHive parses timestamps into datetime, whose str shows microseconds only if any.
        DataType::Timestamp(_, _) => {
            let text = cell_text(a, row).unwrap_or_default();
            match chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S%.f") {
                Ok(t) if t.and_utc().timestamp_subsec_micros() != 0 => {
                    format!(
                        "{}.{:06}",
                        t.format("%Y-%m-%d %H:%M:%S"),
                        t.and_utc().timestamp_subsec_micros()
                    )
                }
                Ok(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
                Err(_) => text,
            }
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let bytes: Vec<u8> = match a.data_type() {
                DataType::Binary => a.as_binary::<i32>().value(row).to_vec(),
                DataType::LargeBinary => a.as_binary::<i64>().value(row).to_vec(),
                _ => a.as_binary_view().value(row).to_vec(),
            };
            let mut s = String::from("b'");
            for b in bytes {
                match b {
                    b'\\' | b'\'' => s.push_str(&format!("\\{}", b as char)),
                    b'\n' => s.push_str("\\n"),
                    b'\t' => s.push_str("\\t"),
                    b'\r' => s.push_str("\\r"),
                    0x20..=0x7e => s.push(b as char),
                    _ => s.push_str(&format!("\\x{b:02x}")),
                }
            }
            s.push('\'');
            s
        }
        _ => cell_text(a, row).unwrap_or_default(),
    }
    .trim_end()
    .to_string()
}

fn normalise(line: &str, data: &Path) -> String {
    let real = data.canonicalize().unwrap_or_else(|_| data.to_path_buf());
    let mut s = line
        .replace(&real.display().to_string(), "$DATA")
        .replace(&data.display().to_string(), "$DATA");
    let rules = [
        (
            r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}\b",
            "$$TIME",
        ),
        (r"(transient_lastDdlTime'?\t?=?'?\s*)\d{10}", "${1}$$TIME"),
        (r"(transient_lastDdlTime\t)\d{10}", "${1}$$TIME"),
        (r"createTime:\d+", "createTime:$$TIME"),
        // A constraint's generated name: its kind, a hash, the time and a counter.
        (r"\b(pk|uk|fk|nn|dc)_\d+_\d{13}_\d+\b", "${1}_$$NAME"),
    ];
    for (pattern, with) in rules {
        let re = regex::Regex::new(pattern).expect("valid pattern");
        s = re.replace_all(&s, with).into_owned();
    }
    s
}

async fn rows_of(batches: Vec<RecordBatch>, data: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            let cells: Vec<String> = b.columns().iter().map(|c| render(c.as_ref(), r)).collect();
            out.push(normalise(&cells.join("\t"), data));
        }
    }
    out
}

/// Runs one statement to the end through the gateway; a query's rows are returned.
async fn run(
    gateway: &Gateway,
    session: &Handle,
    sql: &str,
) -> Result<Option<Vec<RecordBatch>>, String> {
    let op = gateway
        .execute_statement(session, sql, &Default::default(), false, 0)
        .await
        .map_err(|e| e.message())?;
    let result = if op.has_result_set() {
        let mut batches = Vec::new();
        loop {
            let fetched = op.fetch(10_000, false).await.map_err(|e| e.message())?;
            batches.extend(fetched.batches);
            if !fetched.has_more {
                break;
            }
        }
        Some(batches)
    } else {
        None
    };
    gateway
        .close_operation(&op.handle())
        .map_err(|e| e.message())?;
    Ok(result)
}

/// `text` with the expected rows of its query records replaced by `rows` (one entry per
/// query record, in order); everything else (comments, statements, spacing) is kept.
fn completed(text: &str, mut rows: std::collections::VecDeque<Vec<String>>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut in_query = false;
    let mut skipping = false;
    // Whether the line starts a record: after a blank line, past `#` comments (as `parse`
    // reads records).
    let mut at_start = true;
    for line in text.split('\n') {
        if line.trim().is_empty() {
            in_query = false;
            skipping = false;
            at_start = true;
            out.push(line.to_string());
            continue;
        }
        if skipping {
            continue;
        }
        if at_start && line.starts_with("query") {
            in_query = true;
        }
        at_start = at_start && line.starts_with('#');
        out.push(line.to_string());
        if in_query && line == "----" {
            skipping = true;
            out.extend(rows.pop_front().unwrap_or_default());
        }
    }
    out.join("\n")
}

/// A gateway over a fresh engine in a temporary folder, and a session on it as the client
/// tests' user.
async fn open() -> (tempfile::TempDir, Arc<Gateway>, Handle) {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let dir = tmp.path().join("d");
    std::fs::create_dir_all(&dir).expect("data folder");
    let metastore = Arc::new(SqliteMetastore::open(&dir.join("metastore.db")).expect("metastore"));
    let mut handlers = Registry::default();
    handlers.register(Arc::new(apiary_handler_jdbc::JdbcHandler::default()));
    let engine = Engine::open(
        EngineOptions::new(&dir.join("warehouse")),
        metastore,
        Arc::new(handlers),
    )
    .await
    .expect("engine");
    let gateway = Gateway::new(Arc::new(engine), GatewayConfig::default());
    let client = Client {
        // The user the client tests connect as.
        user: "alice".into(),
        address: None,
        proxy_user: None,
    };
    let session = gateway
        .open_session(&client, SessionRequest::default())
        .await
        .expect("session")
        .handle();
    (tmp, gateway, session)
}

async fn run_file(path: &Path) -> Vec<String> {
    let (tmp, gateway, session) = open().await;
    let data: PathBuf = tmp.path().to_path_buf();
    let text = std::fs::read_to_string(path).expect("slt file");
    let mut failures = Vec::new();
    let mut got_rows = std::collections::VecDeque::new();
    for record in parse(&text) {
        match record {
            Record::Ok(sql) => {
                if let Err(e) = run(&gateway, &session, &sql).await {
                    failures.push(format!("{sql:?}: {e}"));
                }
            }
            Record::Error(expect, sql) => match run(&gateway, &session, &sql).await {
                Ok(_) => failures.push(format!(
                    "{sql:?}: expected an error containing {expect:?}, it succeeded"
                )),
                Err(e) if !e.contains(&expect) => {
                    failures.push(format!("{sql:?}: error {e:?} does not contain {expect:?}"))
                }
                Err(_) => {}
            },
            Record::Query { sort, sql, rows } => match run(&gateway, &session, &sql).await {
                Ok(Some(batches)) => {
                    let mut got = rows_of(batches, &data).await;
                    if sort {
                        got.sort();
                    }
                    if got != rows {
                        failures.push(format!("{sql:?}:\n  expected {rows:?}\n  got      {got:?}"));
                    }
                    got_rows.push_back(got);
                }
                Ok(None) => {
                    failures.push(format!("{sql:?}: no result set"));
                    got_rows.push_back(rows);
                }
                Err(e) => {
                    failures.push(format!("{sql:?}: {e}"));
                    got_rows.push_back(rows);
                }
            },
        }
    }
    if std::env::var("APIARY_SLT_COMPLETE").as_deref() == Ok("1") {
        std::fs::write(path, completed(&text, got_rows)).expect("rewrite the slt file");
    }
    failures
}

/// Every function Hive 4's SHOW FUNCTIONS lists is offered (SHOW FUNCTIONS lists it here
/// too) or left out on purpose with a reason (crates/sql/data/hive_functions_omitted.tsv);
/// every operator listed as a function runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hive_functions_are_offered_or_omitted() {
    let (_tmp, gateway, session) = open().await;
    let listed = run(&gateway, &session, "SHOW FUNCTIONS")
        .await
        .expect("SHOW FUNCTIONS")
        .expect("a result set");
    let mut offered = std::collections::BTreeSet::new();
    for b in &listed {
        let names = b.column(0).as_string::<i32>();
        offered.extend((0..names.len()).map(|i| names.value(i).to_string()));
    }
    let hive = apiary_hive_functions::list::hive_names();
    let missing: Vec<&str> = hive
        .iter()
        .filter(|(name, omitted)| omitted.is_none() && !offered.contains(*name))
        .map(|(name, _)| *name)
        .collect();
    let mut failures = Vec::new();
    if !missing.is_empty() {
        failures.push(format!(
            "{} of Hive's functions are neither offered nor omitted: {}",
            missing.len(),
            missing.join(" ")
        ));
    }
    for (name, _) in apiary_hive_functions::list::entries(apiary_hive_functions::list::OMITTED) {
        if !hive
            .iter()
            .any(|(n, o)| o.is_some() && (*n == name || name.ends_with('*')))
        {
            failures.push(format!("{name} is omitted but Hive has no such function"));
        }
    }
    for (name, probe) in apiary_hive_functions::list::SYNTAX {
        if let Err(e) = run(&gateway, &session, &format!("SELECT {probe}")).await {
            failures.push(format!("operator {name}: SELECT {probe}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_files_in_process() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/sql")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files under {}", root.display());
    let mut report = Vec::new();
    for f in &files {
        for failure in run_file(f).await {
            report.push(format!("{}: {failure}", f.display()));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn completion_replaces_only_expected_rows() {
    let text = "# a comment\nstatement ok\nSELECT 1\n\nquery\nSELECT 2\n----\nold\nrows\n\n# about 3\nquery rowsort\nSELECT 3\n----\n";
    let rows = [
        vec!["2".to_string()],
        vec!["3".to_string(), "4".to_string()],
    ];
    assert_eq!(
        completed(text, rows.into_iter().collect()),
        "# a comment\nstatement ok\nSELECT 1\n\nquery\nSELECT 2\n----\n2\n\n# about 3\nquery rowsort\nSELECT 3\n----\n3\n4\n"
    );
}

#[test]
fn floats_print_as_python_prints_them() {
    for (v, s) in [
        (1.5, "1.5"),
        (1e10, "10000000000.0"),
        (0.25, "0.25"),
        (-2.0, "-2.0"),
        (1e16, "1e+16"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (123.456, "123.456"),
    ] {
        assert_eq!(python_float(v), s);
    }
}
