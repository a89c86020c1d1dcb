//! Partition columns for readers that cannot fill them in (ORC, Avro): one scan per
//! partition directory, wrapped in an operator that appends the directory's values as
//! constant columns, and casts what the reader returns to the declared types (a reader's
//! batches can differ from the schema it declares). It is its own operator on purpose: a projection of literals would be
//! pushed into the file scan by the optimizer, and those readers do not evaluate it.

use std::fmt;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use futures::StreamExt;

/// Where one output column comes from.
#[derive(Debug, Clone)]
pub enum Slot {
    /// A column of the input, by index.
    Input(usize),
    /// The same value on every row.
    Constant(ScalarValue),
}

/// Emits the input's batches with columns rearranged and constants added, per `slots`.
#[derive(Debug)]
pub struct ConstantColumnsExec {
    input: Arc<dyn ExecutionPlan>,
    slots: Vec<Slot>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl ConstantColumnsExec {
    /// `schema` is the output schema, one field per slot.
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        slots: Vec<Slot>,
        schema: SchemaRef,
    ) -> DfResult<Self> {
        if slots.len() != schema.fields().len() {
            return Err(DataFusionError::Internal(format!(
                "{} slots for {} output columns",
                slots.len(),
                schema.fields().len()
            )));
        }
        let n_in = input.schema().fields().len();
        for s in &slots {
            if let Slot::Input(i) = s {
                if *i >= n_in {
                    return Err(DataFusionError::Internal(format!(
                        "input column {i} of {n_in}"
                    )));
                }
            }
        }
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(
                input.properties().output_partitioning().partition_count(),
            ),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            slots,
            schema,
            properties,
        })
    }
}

impl DisplayAs for ConstantColumnsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let constants: Vec<String> = self
            .slots
            .iter()
            .zip(self.schema.fields())
            .filter_map(|(s, f)| match s {
                Slot::Constant(v) => Some(format!("{}={v}", f.name())),
                Slot::Input(_) => None,
            })
            .collect();
        write!(f, "PartitionValuesExec: {}", constants.join(", "))
    }
}

impl ExecutionPlan for ConstantColumnsExec {
    fn name(&self) -> &str {
        "PartitionValuesExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        // A repartition below would see the reader's batches before they are cast.
        vec![false]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "PartitionValuesExec has one input".into(),
            ));
        }
        Ok(Arc::new(Self::try_new(
            children.swap_remove(0),
            self.slots.clone(),
            self.schema.clone(),
        )?))
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(
                datafusion::physical_plan::ChildrenPropertiesMode::Recompute,
            ),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let slots = self.slots.clone();
        let schema = self.schema.clone();
        let out = schema.clone();
        let stream = input.map(move |batch| {
            let batch = batch?;
            let rows = batch.num_rows();
            let columns = slots
                .iter()
                .zip(out.fields())
                .map(|(s, field)| match s {
                    // Readers may return another unit than declared (ORC timestamps are
                    // nanoseconds): cast to what the table declares.
                    Slot::Input(i) if batch.column(*i).data_type() != field.data_type() => {
                        Ok(arrow::compute::cast(batch.column(*i), field.data_type())?)
                    }
                    Slot::Input(i) => Ok(batch.column(*i).clone()),
                    Slot::Constant(v) => v.to_array_of_size(rows),
                })
                .collect::<DfResult<Vec<ArrayRef>>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            Ok(RecordBatch::try_new_with_options(
                out.clone(),
                columns,
                &options,
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}
