//! Connections to Bigtable: its data API through `bigtable_rs`, and its table admin API (create,
//! describe, delete tables) through the generated admin client.
//!
//! The endpoint is the emulator named by `BIGTABLE_EMULATOR_HOST` in the server's environment,
//! as every Bigtable client honours it, and otherwise Google's, with application default
//! credentials.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use admin::bigtable_table_admin_client::BigtableTableAdminClient;
use bigtable_rs::bigtable::{BigTable, BigTableConnection};
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use apiary_storage::handler::{HandlerError, HandlerResult};

/// The environment variable naming an emulator (`host:port`).
pub(crate) const EMULATOR_HOST: &str = "BIGTABLE_EMULATOR_HOST";
/// How long an admin call may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(60);
const ADMIN_HOST: &str = "https://bigtableadmin.googleapis.com";
const ADMIN_SCOPE: &str = "https://www.googleapis.com/auth/bigtable.admin.table";

pub(crate) fn remote_err(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}

/// One Bigtable instance: its data and admin clients.
pub(crate) struct Instance {
    project: String,
    instance: String,
    data: BigTableConnection,
    admin: BigtableTableAdminClient<Channel>,
    /// Google's credentials for the admin calls (none for the emulator).
    auth: Option<Arc<dyn gcp_auth::TokenProvider>>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "projects/{}/instances/{}", self.project, self.instance)
    }
}

impl Instance {
    async fn connect(project: &str, instance: &str) -> HandlerResult<Self> {
        match std::env::var(EMULATOR_HOST) {
            Ok(host) => {
                // (bigtable_rs would panic on an address that is no URI.)
                let endpoint = Endpoint::from_shared(format!("http://{host}")).map_err(|e| {
                    remote_err(format!("{EMULATOR_HOST}={host} is no host:port: {e}"))
                })?;
                let data =
                    BigTableConnection::new_with_emulator(&host, project, instance, false, 1, None)
                        .map_err(remote_err)?;
                Ok(Self {
                    project: project.into(),
                    instance: instance.into(),
                    data,
                    admin: BigtableTableAdminClient::new(endpoint.connect_lazy()),
                    auth: None,
                })
            }
            Err(_) => {
                let auth = gcp_auth::provider().await.map_err(|e| {
                    remote_err(format!(
                        "no Google credentials for Bigtable (set {EMULATOR_HOST} for an emulator): {e}"
                    ))
                })?;
                let data = BigTableConnection::new_with_token_provider(
                    project,
                    instance,
                    false,
                    1,
                    None,
                    auth.clone(),
                )
                .map_err(remote_err)?;
                let channel = Endpoint::from_static(ADMIN_HOST)
                    .tls_config(ClientTlsConfig::new().with_native_roots())
                    .map_err(remote_err)?
                    .connect_lazy();
                Ok(Self {
                    project: project.into(),
                    instance: instance.into(),
                    data,
                    admin: BigtableTableAdminClient::new(channel),
                    auth: Some(auth),
                })
            }
        }
    }

    /// A data client.
    pub(crate) fn data(&self) -> BigTable {
        self.data.client()
    }

    fn parent(&self) -> String {
        format!("projects/{}/instances/{}", self.project, self.instance)
    }

    /// The full name of table `id`.
    pub(crate) fn table_name(&self, id: &str) -> String {
        format!("{}/tables/{id}", self.parent())
    }

    /// An admin request, with Google's token when talking to Google.
    async fn request<T>(&self, message: T) -> HandlerResult<tonic::Request<T>> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(ADMIN_TIMEOUT);
        if let Some(auth) = &self.auth {
            let token = auth.token(&[ADMIN_SCOPE]).await.map_err(remote_err)?;
            let value = format!("Bearer {}", token.as_str())
                .parse()
                .map_err(remote_err)?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }

    /// The column families of table `id`, or None when there is no such table.
    pub(crate) async fn families(&self, id: &str) -> HandlerResult<Option<BTreeSet<String>>> {
        let request = self
            .request(admin::GetTableRequest {
                name: self.table_name(id),
                view: admin::table::View::SchemaView as i32,
            })
            .await?;
        match self.admin.clone().get_table(request).await {
            Ok(table) => Ok(Some(
                table.into_inner().column_families.into_keys().collect(),
            )),
            Err(s) if s.code() == tonic::Code::NotFound => Ok(None),
            Err(s) => Err(status_err("describing", id, s)),
        }
    }

    /// Creates table `id` with `families` (one cell version each, HBase's default). Returns
    /// false when a table of that name exists already.
    pub(crate) async fn create(
        &self,
        id: &str,
        families: &BTreeSet<String>,
    ) -> HandlerResult<bool> {
        let column_families: HashMap<String, admin::ColumnFamily> = families
            .iter()
            .map(|f| {
                let family = admin::ColumnFamily {
                    gc_rule: Some(admin::GcRule {
                        rule: Some(admin::gc_rule::Rule::MaxNumVersions(1)),
                    }),
                    ..Default::default()
                };
                (f.clone(), family)
            })
            .collect();
        let request = self
            .request(admin::CreateTableRequest {
                parent: self.parent(),
                table_id: id.to_string(),
                table: Some(admin::Table {
                    column_families,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await?;
        match self.admin.clone().create_table(request).await {
            Ok(_) => Ok(true),
            Err(s) if s.code() == tonic::Code::AlreadyExists => Ok(false),
            Err(s) => Err(status_err("creating", id, s)),
        }
    }

    /// Deletes table `id`; a table already gone counts as deleted.
    pub(crate) async fn delete(&self, id: &str) -> HandlerResult<()> {
        let request = self
            .request(admin::DeleteTableRequest {
                name: self.table_name(id),
            })
            .await?;
        match self.admin.clone().delete_table(request).await {
            Ok(_) => Ok(()),
            Err(s) if s.code() == tonic::Code::NotFound => Ok(()),
            Err(s) => Err(status_err("deleting", id, s)),
        }
    }
}

fn status_err(doing: &str, id: &str, s: tonic::Status) -> HandlerError {
    remote_err(format!(
        "Bigtable failed {doing} table {id}: {} ({:?})",
        s.message(),
        s.code()
    ))
}

/// The instances a server has connected to, by project and instance id.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    open: tokio::sync::Mutex<HashMap<(String, String), Arc<Instance>>>,
}

impl Instances {
    /// The instance `project`/`instance`, connected on first use.
    pub(crate) async fn get(&self, project: &str, instance: &str) -> HandlerResult<Arc<Instance>> {
        let mut open = self.open.lock().await;
        let key = (project.to_string(), instance.to_string());
        if let Some(i) = open.get(&key) {
            return Ok(i.clone());
        }
        let i = Arc::new(Instance::connect(project, instance).await?);
        open.insert(key, i.clone());
        Ok(i)
    }
}
