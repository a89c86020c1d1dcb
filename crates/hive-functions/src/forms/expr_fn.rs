//! [`ExprFn`], a Hive function planned as an expression of DataFusion's functions and
//! operators, and the helpers the families build their expressions with.

use std::ops::RangeInclusive;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{internal_err, Column, DFSchema, Result};
use datafusion::execution::context::ExecutionProps;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr::create_physical_expr;

use crate::args::check_arity;

/// The expression a Hive function stands for, from its arguments and their types (after
/// [`Coerce`]).
pub(crate) type Build = Box<dyn Fn(Vec<Expr>, &[DataType]) -> Result<Expr> + Send + Sync>;

/// The types a function's arguments are cast to before its expression is built.
pub(crate) type Coerce = Box<dyn Fn(&[DataType]) -> Result<Vec<DataType>> + Send + Sync>;

/// A Hive function planned as an expression of DataFusion's functions and operators.
pub(crate) struct ExprFn {
    name: &'static str,
    signature: Signature,
    arity: RangeInclusive<usize>,
    coerce: Coerce,
    build: Build,
}

impl std::fmt::Debug for ExprFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExprFn").field("name", &self.name).finish()
    }
}

impl PartialEq for ExprFn {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ExprFn {}

impl std::hash::Hash for ExprFn {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ExprFn {
    /// `name` taking `arity` arguments of their own types, standing for what `build` makes
    /// of them.
    pub(crate) fn new(
        name: &'static str,
        arity: RangeInclusive<usize>,
        build: impl Fn(Vec<Expr>, &[DataType]) -> Result<Expr> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name,
            signature: Signature::user_defined(Volatility::Immutable),
            arity,
            coerce: Box::new(|types| Ok(types.to_vec())),
            build: Box::new(build),
        }
    }

    /// The same function, its arguments first cast to the types `coerce` gives.
    pub(crate) fn coerced(
        mut self,
        coerce: impl Fn(&[DataType]) -> Result<Vec<DataType>> + Send + Sync + 'static,
    ) -> Self {
        self.coerce = Box::new(coerce);
        self
    }

    /// The expression over columns `a0, a1, ..` of the arguments' fields, and the schema of
    /// those columns.
    fn over_columns(&self, fields: &[FieldRef]) -> Result<(Expr, Schema)> {
        check_arity(self.name, &self.arity, fields.len())?;
        let schema = Schema::new(
            fields
                .iter()
                .enumerate()
                .map(|(i, f)| Field::new(format!("a{i}"), f.data_type().clone(), f.is_nullable()))
                .collect::<Vec<_>>(),
        );
        let args = (0..fields.len())
            .map(|i| Expr::Column(Column::from_name(format!("a{i}"))))
            .collect();
        let types: Vec<DataType> = fields.iter().map(|f| f.data_type().clone()).collect();
        Ok(((self.build)(args, &types)?, schema))
    }

    /// The type and nullability of a call with arguments of these fields.
    fn typed(&self, fields: &[FieldRef]) -> Result<(DataType, bool)> {
        let (expr, schema) = self.over_columns(fields)?;
        let (_, field) = expr.to_field(&DFSchema::try_from(schema)?)?;
        Ok((field.data_type().clone(), field.is_nullable()))
    }
}

impl ScalarUDFImpl for ExprFn {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        check_arity(self.name, &self.arity, arg_types.len())?;
        (self.coerce)(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .map(|t| Arc::new(Field::new("", t.clone(), true)))
            .collect();
        Ok(self.typed(&fields)?.0)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let (data_type, nullable) = self.typed(args.arg_fields)?;
        Ok(Arc::new(Field::new(self.name, data_type, nullable)))
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let types = args
            .iter()
            .map(|a| info.get_data_type(a))
            .collect::<Result<Vec<_>>>()?;
        Ok(ExprSimplifyResult::Simplified((self.build)(args, &types)?))
    }

    /// Runs the expression over the arguments as columns: only where the plan was not
    /// simplified (its optimizer turned off, or the function called outside a plan).
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (expr, schema) = self.over_columns(&args.arg_fields)?;
        let schema = Arc::new(schema);
        let physical = create_physical_expr(
            &expr,
            &DFSchema::try_from(Arc::clone(&schema))?,
            &ExecutionProps::new(),
            &PhysicalPlanningContext::default(),
        )?;
        let columns = args
            .args
            .iter()
            .map(|a| a.to_array(args.number_rows))
            .collect::<Result<Vec<_>>>()?;
        let batch = RecordBatch::try_new_with_options(
            schema,
            columns,
            &RecordBatchOptions::new().with_row_count(Some(args.number_rows)),
        )?;
        physical.evaluate(&batch)
    }
}

/// The `N` arguments of a call whose arity was checked.
pub(crate) fn take<const N: usize>(args: Vec<Expr>) -> Result<[Expr; N]> {
    match <[Expr; N]>::try_from(args) {
        Ok(args) => Ok(args),
        Err(args) => internal_err!("{N} arguments expected, {} given", args.len()),
    }
}

/// `function` called with `args` of `types`, each cast to the type the function's signature
/// coerces it to, as DataFusion's analyzer does for the calls it plans (a replacement is
/// planned after it).
pub(crate) fn call_coerced(
    function: &ScalarUDF,
    args: Vec<Expr>,
    types: &[DataType],
) -> Result<Expr> {
    let fields: Vec<FieldRef> = types
        .iter()
        .map(|t| Arc::new(Field::new("a", t.clone(), true)))
        .collect();
    let wanted = fields_with_udf(&fields, function)?;
    let args = args
        .into_iter()
        .zip(types)
        .zip(wanted)
        .map(|((a, t), w)| {
            if t == w.data_type() {
                a
            } else {
                cast(a, w.data_type().clone())
            }
        })
        .collect();
    Ok(function.call(args))
}

/// Whether `t` is a text type.
pub(crate) fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}
