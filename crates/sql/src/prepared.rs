//! What compiling a statement produces ([`Prepared`]): a re-runnable query plan, rows computed
//! at once, nothing, or a [`Task`] to run as the operation.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::prelude::SessionContext;

use crate::error::SqlError;
use crate::task::Task;

/// What a statement produced once prepared.
#[derive(Debug)]
pub enum Prepared {
    /// A query whose rows are streamed from DataFusion.
    Query {
        /// The plan, kept so the query can be run again (FETCH_FIRST).
        plan: QueryPlan,
        /// The result schema.
        schema: SchemaRef,
    },
    /// A small result computed while preparing (SET listing, SHOW DATABASES, EXPLAIN).
    Rows {
        /// The result schema.
        schema: SchemaRef,
        /// The rows.
        batches: Vec<RecordBatch>,
    },
    /// A statement without a result set (SET k=v, USE, DDL).
    Done,
    /// Work without a result set that runs as the operation (INSERT, CTAS).
    Task(Task),
    /// A change of the session's own state (SET, RESET, USE, SET ROLE), checked as it was
    /// compiled, made by [`crate::SqlSession::apply`]. HiveServer2 makes it at once, whether
    /// the statement runs asynchronously or not (as Hive's SET does), so the session's next
    /// statement sees it.
    Session(SessionChange),
}

/// A change of a session's own state, made by [`crate::SqlSession::apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// `SET key=value`: a Hive setting (a `datafusion.*` key sets DataFusion's option too).
    Conf {
        /// The key, without `hiveconf:`.
        key: String,
        /// The value.
        value: String,
    },
    /// `SET hivevar:name=value`.
    Var {
        /// The variable's name.
        name: String,
        /// The value.
        value: String,
    },
    /// `RESET` (every key back to the server's value) or `RESET key` (`Some(key)`).
    Reset(Option<String>),
    /// `USE db`, of a database that exists.
    Use(String),
    /// `SET ROLE`: the roles in force from now on.
    Roles(crate::access::decide::RoleSetting),
}

/// A query's rows as they are produced, with the statement layer's errors.
pub type RowStream =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<RecordBatch, SqlError>> + Send>>;

/// A planned query, opaque to the layers above: run it (again, for FETCH_FIRST) with
/// [`QueryPlan::stream`].
#[derive(Clone)]
pub struct QueryPlan {
    pub(crate) ctx: SessionContext,
    pub(crate) plan: LogicalPlan,
}

impl std::fmt::Debug for QueryPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryPlan")
            .field("schema", self.plan.schema())
            .finish()
    }
}

impl QueryPlan {
    /// Starts the query; its rows arrive on the stream.
    pub async fn stream(&self) -> Result<RowStream, SqlError> {
        let rows = execute(&self.ctx, self.plan.clone()).await?;
        Ok(Box::pin(futures::StreamExt::map(rows, |r| {
            r.map_err(SqlError::from_execution)
        })))
    }

    /// The logical plan (for the SQL layer's own tests and EXPLAIN-like tools).
    pub fn logical(&self) -> &LogicalPlan {
        &self.plan
    }
}

/// Runs a plan and returns its record-batch stream.
pub async fn execute(
    ctx: &SessionContext,
    plan: LogicalPlan,
) -> Result<SendableRecordBatchStream, SqlError> {
    let df = ctx
        .execute_logical_plan(plan)
        .await
        .map_err(SqlError::from_planning)?;
    df.execute_stream().await.map_err(SqlError::from_execution)
}

/// A one-column STRING result.
pub fn string_rows(column: &str, values: Vec<String>) -> Prepared {
    rows(
        &[column],
        values.into_iter().map(|v| vec![Some(v)]).collect(),
    )
}

/// A result of string columns.
pub fn rows(columns: &[&str], data: Vec<Vec<Option<String>>>) -> Prepared {
    let schema: SchemaRef = Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(*c, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = (0..columns.len())
        .map(|i| {
            Arc::new(StringArray::from(
                data.iter()
                    .map(|r| r.get(i).cloned().flatten())
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        })
        .collect();
    match RecordBatch::try_new(schema.clone(), arrays) {
        Ok(b) => Prepared::Rows {
            schema,
            batches: vec![b],
        },
        Err(_) => Prepared::Rows {
            schema,
            batches: vec![],
        },
    }
}
