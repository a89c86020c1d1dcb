//! `apiary`: a HiveServer2-compatible SQL gateway on DataFusion. This binary only wires the
//! configuration and starts the endpoints.

#![warn(missing_docs)]

mod config;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use apiary_endpoint::Endpoints;
use apiary_gateway::Gateway;
use apiary_sql::Engine;
use clap::{Parser, Subcommand};

use crate::config::{ServerConfig, KEYS, WORKER_STACK};

#[derive(Parser)]
#[command(
    name = "apiary",
    version,
    about = "A HiveServer2-compatible SQL gateway on Apache DataFusion"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the server (HiveServer2 binary transport on 10000, HTTP on 10001, Arrow Flight
    /// SQL on 10003, bound to 127.0.0.1).
    Serve(ServeArgs),
    /// List every configuration key with its default and meaning.
    Keys,
    /// Print the TCLIService wire contract this build speaks: one line per struct field
    /// (`field STRUCT ID NAME TYPE required|optional`) and enum constant (`value ENUM NAME N`).
    WireSpec,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Folder holding the metastore and the warehouse [default: ./apiary-data].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Address to bind (hive.server2.thrift.bind.host).
    #[arg(long, value_name = "ADDR")]
    bind: Option<String>,
    /// Binary transport port (hive.server2.thrift.port); 0 picks a free port.
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// HTTP transport port (hive.server2.thrift.http.port); 0 picks a free port.
    #[arg(long, value_name = "N")]
    http_port: Option<u16>,
    /// Arrow Flight SQL port (apiary.flightsql.port); 0 picks a free port.
    #[arg(long, value_name = "N")]
    flightsql_port: Option<u16>,
    /// TOML file with `data_dir` and a `[hiveconf]` table of keys (see `apiary keys`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Set a configuration key (repeatable), e.g. --hiveconf hive.server2.transport.mode=binary.
    #[arg(long = "hiveconf", value_name = "KEY=VALUE")]
    hiveconf: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Keys => {
            let mut out = std::io::stdout().lock();
            for (k, d, help) in KEYS {
                // A closed pipe (`apiary keys | head`) ends the listing quietly.
                if writeln!(out, "{k} (default {d}): {help}").is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
        Command::WireSpec => {
            let mut lines = Vec::new();
            for t in apiary_protocol::tcli::wire_spec() {
                match t {
                    apiary_protocol::tcli::WireType::Struct(name, fields) => {
                        for f in fields {
                            let req = if f.required { "required" } else { "optional" };
                            lines.push(format!(
                                "field {name} {} {} {} {req}",
                                f.id, f.name, f.ttype
                            ));
                        }
                    }
                    apiary_protocol::tcli::WireType::Enum(name, values) => {
                        for (v, n) in values {
                            lines.push(format!("value {name} {v} {n}"));
                        }
                    }
                }
            }
            let mut out = std::io::stdout().lock();
            for line in lines {
                if writeln!(out, "{line}").is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
        Command::Serve(args) => {
            // The configuration, and the Kerberos keys, are read before the runtime's threads
            // start: the keytab is named to Kerberos through the environment. The log's form
            // is the configuration's, so it starts once that is read.
            let loaded = load_config(&args).and_then(|config| {
                init_logging(config.log_format()?);
                let kerberos = config.kerberos()?;
                Ok((config, kerberos))
            });
            let (config, kerberos) = match loaded {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("apiary: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                // DataFusion recurses over expression trees; with statements bounded by
                // apiary.sql.max.nesting.depth, 16 MiB leaves a wide margin (measured: a chain
                // of 2,000 additions plans and runs, 4,000 overflows).
                .thread_stack_size(WORKER_STACK)
                // Under `ulimit -v`, fewer blocking threads, so their stacks leave the
                // address space to queries.
                .max_blocking_threads(config::max_blocking_threads())
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("apiary: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(serve(config, kerberos)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("apiary: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Starts the server log on standard error: `RUST_LOG`'s filter (default `info`), as text
/// coloured only when standard error is a terminal and `NO_COLOR` is unset or empty, or as
/// one JSON object a line.
fn init_logging(format: config::LogFormat) {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        config::LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init(),
        config::LogFormat::Text => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            builder
                .with_ansi(std::io::stderr().is_terminal() && !no_color)
                .init()
        }
    }
}

/// The server's configuration: defaults, the `--config` file, `--hiveconf` pairs, flags.
fn load_config(args: &ServeArgs) -> Result<ServerConfig, Box<dyn std::error::Error>> {
    Ok(ServerConfig::load(
        args.config.as_ref(),
        args.data_dir.clone(),
        &args.hiveconf,
        &[
            ("hive.server2.thrift.bind.host", args.bind.clone()),
            ("hive.server2.thrift.port", args.port.map(|p| p.to_string())),
            (
                "hive.server2.thrift.http.port",
                args.http_port.map(|p| p.to_string()),
            ),
            (
                "apiary.flightsql.port",
                args.flightsql_port.map(|p| p.to_string()),
            ),
        ],
    )?)
}

async fn serve(
    config: ServerConfig,
    kerberos: config::Kerberos,
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| format!("cannot create data dir {}: {e}", config.data_dir.display()))?;
    let mut endpoint = config.endpoint()?;
    endpoint.kerberos = kerberos.binary;
    endpoint.spnego = kerberos.http;
    let flightsql = config.flightsql()?;
    let mut gateway_config = config.gateway()?;
    gateway_config.jwt = config.jwt().await?.map(Arc::new);
    let check_interval = config.duration("hive.server2.session.check.interval", "ms")?;
    if let Some(spec) = config.hiveconf.get("apiary.failpoints") {
        apiary_failpoints::configure(spec).map_err(|e| format!("apiary.failpoints: {e}"))?;
    }
    // Before the metastore opens: its tables' secrets are sealed and opened with this key.
    apiary_metastore::sealed::install_key_file(&config.secrets_key_file())
        .map_err(|e| format!("apiary.secrets.key.file: {e}"))?;
    let metastore: Arc<dyn apiary_metastore::Metastore> =
        match config.hiveconf.get("apiary.metastore.url").map(String::as_str) {
            Some(url) if url.starts_with("postgres") => Arc::new(
                apiary_metastore::PostgresMetastore::open(url, &config.postgres()?)
                    .await
                    .map_err(|e| format!("cannot open the PostgreSQL metastore: {e}"))?,
            ),
            Some(url) if !url.is_empty() => {
                return Err(format!(
                    "apiary.metastore.url must be empty (embedded SQLite) or a postgresql:// URL, not {url}"
                )
                .into())
            }
            _ => Arc::new(
                apiary_metastore::SqliteMetastore::open(&config.metastore_path()).map_err(|e| {
                    format!(
                        "cannot open metastore {}: {e}",
                        config.metastore_path().display()
                    )
                })?,
            ),
        };
    let engine_options = config.engine()?;
    let policy = engine_options.policy.clone();
    tracing::info!(
        memory_pool = ?engine_options.memory_pool_bytes,
        spill_dir = ?engine_options.spill_dir,
        server_id = %engine_options.server_id,
        "query runtime"
    );
    let engine = Arc::new(
        Engine::open(
            engine_options,
            metastore,
            Arc::new(handlers(policy.reach())),
        )
        .await?,
    );
    let gateway = Gateway::new(engine, gateway_config);
    let http_path = endpoint.http_path.clone();
    let endpoints = Endpoints::start(gateway.clone(), endpoint).await?;
    if let Some(a) = endpoints.binary_addr {
        println!("Apiary HiveServer2 binary endpoint listening on {a}");
    }
    if let Some(a) = endpoints.http_addr {
        println!("Apiary HiveServer2 http endpoint listening on {a}/{http_path}");
    }
    let flight = match flightsql {
        Some(c) => {
            let f = apiary_flightsql::FlightSqlEndpoint::start(gateway.clone(), c).await?;
            println!("Apiary Flight SQL endpoint listening on {}", f.addr);
            Some(f)
        }
        None => None,
    };
    tracing::info!(data_dir = %config.data_dir.display(), "Apiary started");

    let expiry = {
        let gw = gateway.clone();
        tokio::spawn(async move {
            let mut tick =
                tokio::time::interval(check_interval.max(std::time::Duration::from_millis(100)));
            loop {
                tick.tick().await;
                let (sessions, ops) = gw.expire_idle();
                if sessions + ops > 0 {
                    tracing::info!(
                        sessions,
                        operations = ops,
                        "closed idle sessions and operations"
                    );
                }
            }
        })
    };

    wait_for_signal().await;
    tracing::info!("shutting down");
    if let Some(f) = flight {
        f.shutdown().await;
    }
    endpoints.shutdown().await;
    expiry.abort();
    gateway.close_all();
    tracing::info!("stopped");
    Ok(())
}

/// The storage handlers this server knows, each from its own crate. A new handler is one
/// line here. Each gets the server's limits on what tables may reach.
fn handlers(reach: &Arc<apiary_storage::Reach>) -> apiary_storage::handler::Registry {
    let mut registry = apiary_storage::handler::Registry::default();
    registry.register(Arc::new(apiary_handler_jdbc::JdbcHandler::new(
        reach.clone(),
    )));
    registry.register(Arc::new(apiary_handler_delta::DeltaHandler::new(
        reach.clone(),
    )));
    registry.register(Arc::new(apiary_handler_hbase::HBaseHandler::new()));
    registry
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
