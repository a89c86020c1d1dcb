//! Connecting to a JDBC table's database: the table's properties read into a [`Remote`] whose
//! connection is the implementation its database type names (`postgres`, `mysql`, `sqlite`).

use std::collections::BTreeMap;
use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::HandlerResult;
use apiary_storage::Reach;

use crate::properties::PASSWORD;
use crate::remote::{all_properties, def_err, Kind, Remote, RemoteDb, RemoteName, Target};
use crate::{mysql, postgres, sqlite};

/// Reads a table's JDBC properties (secrets included). A URL naming a host or file the
/// server's limits (`reach`) do not allow is refused before any connection is made.
pub(crate) fn remote_of(reach: &Reach, props: &BTreeMap<String, String>) -> HandlerResult<Remote> {
    let get = |k: &str| props.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let db_type = get("hive.sql.database.type")
        .ok_or_else(|| def_err("Property hive.sql.database.type is required"))?;
    let kind = match db_type.to_ascii_uppercase().as_str() {
        "POSTGRES" | "POSTGRESQL" => Kind::Postgres,
        "SQLITE" => Kind::Sqlite,
        "MYSQL" | "MARIADB" => Kind::Mysql,
        other => {
            return Err(def_err(format!(
                "hive.sql.database.type {other} is not supported here; supported: POSTGRES, MYSQL, SQLITE"
            )))
        }
    };
    let url = get("hive.sql.jdbc.url")
        .ok_or_else(|| def_err("Property hive.sql.jdbc.url is required"))?;
    let user = get("hive.sql.dbcp.username");
    let password = get(PASSWORD);
    let db: Arc<dyn RemoteDb> = match kind {
        Kind::Postgres => Arc::new(postgres::Postgres::from_url(url, user, password)?),
        Kind::Sqlite => Arc::new(sqlite::Sqlite::from_url(url)?),
        Kind::Mysql => Arc::new(mysql::Mysql::from_url(url, user, password)?),
    };
    let allowed = match db.target() {
        Target::Hosts(hosts) => hosts
            .iter()
            .try_for_each(|(host, port)| reach.check_host(host, *port)),
        Target::File(path) => reach.check_path("hive.sql.jdbc.url", &path),
    };
    allowed.map_err(|e| def_err(e.to_string()))?;
    let table = get("hive.sql.table").map(|t| RemoteName {
        kind,
        schema: get("hive.sql.schema").map(str::to_string),
        name: t.to_string(),
    });
    let query = get("hive.sql.query").map(str::to_string);
    if table.is_none() && query.is_none() {
        return Err(def_err(
            "One of hive.sql.table or hive.sql.query must be set for a JDBC table",
        ));
    }
    Ok(Remote {
        kind,
        db,
        table,
        query,
    })
}

pub(crate) fn remote_of_table(reach: &Reach, table: &Table) -> HandlerResult<Remote> {
    remote_of(reach, &all_properties(table))
}
