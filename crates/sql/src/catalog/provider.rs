//! DataFusion's view of the metastore: one catalog (`hive`) whose schemas are the metastore's
//! databases. Table lookups are async (DataFusion resolves every table a statement names
//! before it plans), so the metastore is read before planning, never during it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use apiary_metastore::Metastore;
use apiary_storage::handler::{AsOf, Registry};
use apiary_storage::NativeTable;
use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::datasource::TableProvider;
use datafusion::error::{DataFusionError, Result as DfResult};
use parking_lot::RwLock;

use crate::journal::recovery::Unavailable;

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
    handlers: Arc<Registry>,
    names: Arc<RwLock<Names>>,
    unavailable: Arc<Unavailable>,
}

impl HiveCatalog {
    /// A catalog over `metastore`, reading non-native tables through `handlers`; the tables
    /// in `unavailable` fail to resolve, with the reason.
    pub fn new(
        metastore: Arc<dyn Metastore>,
        handlers: Arc<Registry>,
        unavailable: Arc<Unavailable>,
    ) -> Self {
        Self {
            metastore,
            handlers,
            names: Arc::default(),
            unavailable,
        }
    }

    /// The metastore behind the catalog.
    pub fn metastore(&self) -> &Arc<dyn Metastore> {
        &self.metastore
    }

    /// The `hive` catalog of a session context, if it is one.
    pub fn of(ctx: &datafusion::prelude::SessionContext) -> Option<Arc<dyn Metastore>> {
        let catalog = ctx.catalog(crate::names::CATALOG)?;
        catalog
            .downcast_ref::<HiveCatalog>()
            .map(|c| c.metastore.clone())
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
            handlers: self.handlers.clone(),
            names: self.names.clone(),
            unavailable: self.unavailable.clone(),
        }))
    }
}

/// One database as a DataFusion schema.
#[derive(Debug)]
pub struct HiveSchema {
    db: String,
    metastore: Arc<dyn Metastore>,
    handlers: Arc<Registry>,
    names: Arc<RwLock<Names>>,
    unavailable: Arc<Unavailable>,
}

impl HiveSchema {
    /// The catalog's entry of table `name` in this database; a table whose recovery at
    /// start-up failed is refused.
    async fn catalog_table(&self, name: &str) -> DfResult<Option<apiary_metastore::Table>> {
        if let Some(reason) = self.unavailable.reason(&self.db, name) {
            return Err(DataFusionError::Plan(format!(
                "table {}.{name} is unavailable: its recovery at start-up failed ({reason}); see the server log, or DROP it",
                self.db
            )));
        }
        self.metastore
            .get_table(&self.db, name)
            .await
            .map_err(df_err)
    }

    /// The storage handler `class` of `table`.
    fn handler(
        &self,
        class: &str,
        table: &apiary_metastore::Table,
    ) -> DfResult<Arc<dyn apiary_storage::handler::StorageHandler>> {
        self.handlers.resolve(class).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "Error in loading storage handler.{class} (table {})",
                table.qualified_name()
            ))
        })
    }

    /// A table as of an earlier state (`FOR SYSTEM_VERSION AS OF`, `FOR SYSTEM_TIME AS OF`),
    /// which only a storage handler that keeps versions can give.
    async fn table_as_of(
        &self,
        name: &str,
        as_of: AsOf,
    ) -> DfResult<Option<Arc<dyn TableProvider>>> {
        let Some(table) = self.catalog_table(name).await? else {
            return Ok(None);
        };
        let Some(class) = table.storage_handler() else {
            return Err(DataFusionError::Plan(format!(
                "table {} keeps no earlier versions to read (only tables of a storage handler that keeps them do)",
                table.qualified_name()
            )));
        };
        let handler = self.handler(class, &table)?;
        let job = handler.job_properties(&table);
        handler
            .table_provider_as_of(&table, job, as_of)
            .await
            .map(Some)
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }

    /// A view as DataFusion sees it: its text planned in a context whose current database is
    /// the one it was created in, with the view's column names.
    async fn view(&self, table: &apiary_metastore::Table) -> DfResult<Arc<dyn TableProvider>> {
        use datafusion::catalog::{CatalogProviderList, MemoryCatalogProviderList};
        use datafusion::execution::session_state::SessionStateBuilder;
        use datafusion::prelude::SessionConfig;
        let text = table.view_text.clone().unwrap_or_default();
        let catalogs = Arc::new(MemoryCatalogProviderList::new());
        catalogs.register_catalog(
            crate::names::CATALOG.to_string(),
            Arc::new(HiveCatalog {
                metastore: self.metastore.clone(),
                handlers: self.handlers.clone(),
                names: self.names.clone(),
                unavailable: self.unavailable.clone(),
            }),
        );
        let config = SessionConfig::new()
            .with_default_catalog_and_schema(
                crate::names::CATALOG,
                table.view_database.as_deref().unwrap_or(&table.database),
            )
            .with_create_default_catalog_and_schema(false);
        let ctx = crate::context::hive_context(
            config,
            SessionStateBuilder::new().with_catalog_list(catalogs),
        );
        let mut statements = crate::dialect::tokenize(&text)
            .and_then(|tokens| {
                datafusion::sql::sqlparser::parser::Parser::new(&crate::dialect::HiveQl::default())
                    .with_tokens_with_locations(tokens)
                    .parse_statements()
            })
            .map_err(|e| DataFusionError::Plan(format!("view {}: {e}", table.qualified_name())))?;
        let Some(mut statement) = statements.pop() else {
            return Err(DataFusionError::Plan(format!(
                "view {} has no query",
                table.qualified_name()
            )));
        };
        crate::dialect::rewrite::to_datafusion(&mut statement, None)
            .map_err(|e| DataFusionError::Plan(format!("view {}: {e}", table.qualified_name())))?;
        let plan = ctx
            .state()
            .statement_to_plan(datafusion::sql::parser::Statement::Statement(Box::new(
                statement,
            )))
            .await?;
        // The view's declared column names, in order.
        let names: Vec<&str> = table.sd.columns.iter().map(|c| c.name.as_str()).collect();
        let plan = if names.len() == plan.schema().fields().len() {
            let exprs: Vec<datafusion::logical_expr::Expr> = plan
                .schema()
                .columns()
                .into_iter()
                .zip(&names)
                .map(|(c, n)| datafusion::logical_expr::Expr::Column(c).alias(*n))
                .collect();
            datafusion::logical_expr::LogicalPlanBuilder::from(plan)
                .project(exprs)?
                .build()?
        } else {
            plan
        };
        Ok(Arc::new(datafusion::catalog::view::ViewTable::new(
            plan,
            Some(text),
        )))
    }
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
        if let Some((name, as_of)) = AsOf::of_table_name(name) {
            return self.table_as_of(name, as_of).await;
        }
        let Some(table) = self.catalog_table(name).await? else {
            return Ok(None);
        };
        if table.is_view() {
            return Ok(Some(self.view(&table).await?));
        }
        if let Some(class) = table.storage_handler() {
            let handler = self.handler(class, &table)?;
            let job = handler.job_properties(&table);
            let provider = handler
                .table_provider(&table, job)
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            return Ok(Some(provider));
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
