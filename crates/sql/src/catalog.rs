//! DataFusion's view of the metastore: one catalog (`hive`) whose schemas are the metastore's
//! databases. Table lookups are async (DataFusion resolves every table a statement names
//! before it plans), so the metastore is read before planning, never during it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use apiary_metastore::Metastore;
use apiary_storage::NativeTable;
use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::{DataFusionError, Result as DfResult};
use parking_lot::RwLock;

/// Names seen in the metastore, for DataFusion's synchronous listing calls. Listing that
/// matters to users (SHOW, catalog RPCs) reads the metastore directly.
#[derive(Debug, Default)]
struct Names {
    tables: BTreeMap<String, BTreeSet<String>>,
}

/// The `hive` catalog over a metastore.
#[derive(Debug)]
pub struct HiveCatalog {
    metastore: Arc<dyn Metastore>,
    names: Arc<RwLock<Names>>,
}

impl HiveCatalog {
    /// A catalog over `metastore`.
    pub fn new(metastore: Arc<dyn Metastore>) -> Self {
        Self {
            metastore,
            names: Arc::default(),
        }
    }

    /// Reloads the names DataFusion's synchronous calls see.
    pub async fn refresh(&self) -> Result<(), apiary_metastore::MetastoreError> {
        let mut tables = BTreeMap::new();
        for db in self.metastore.list_databases().await? {
            let names = self.metastore.list_tables(&db).await?;
            tables.insert(db, names.into_iter().collect());
        }
        self.names.write().tables = tables;
        Ok(())
    }
}

impl CatalogProvider for HiveCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.names.read().tables.keys().cloned().collect()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        Some(Arc::new(HiveSchema {
            db: name.to_lowercase(),
            metastore: self.metastore.clone(),
            names: self.names.clone(),
        }))
    }
}

/// One database as a DataFusion schema.
#[derive(Debug)]
pub struct HiveSchema {
    db: String,
    metastore: Arc<dyn Metastore>,
    names: Arc<RwLock<Names>>,
}

fn df_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Plan(e.to_string())
}

#[async_trait]
impl SchemaProvider for HiveSchema {
    fn table_names(&self) -> Vec<String> {
        self.names
            .read()
            .tables
            .get(&self.db)
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        let Some(table) = self
            .metastore
            .get_table(&self.db, name)
            .await
            .map_err(df_err)?
        else {
            return Ok(None);
        };
        if table.is_view() {
            return Err(DataFusionError::NotImplemented(format!(
                "querying view {} is not supported yet",
                table.qualified_name()
            )));
        }
        if let Some(handler) = table.storage_handler() {
            return Err(DataFusionError::NotImplemented(format!(
                "table {} is stored by {handler}; storage handlers are not available yet",
                table.qualified_name()
            )));
        }
        let partitions = if table.partition_keys.is_empty() {
            vec![]
        } else {
            self.metastore
                .list_partitions(&self.db, name)
                .await
                .map_err(df_err)?
        };
        let native = NativeTable::new(table, &partitions).map_err(df_err)?;
        Ok(Some(Arc::new(native)))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.names
            .read()
            .tables
            .get(&self.db)
            .is_some_and(|t| t.contains(&name.to_lowercase()))
    }
}
