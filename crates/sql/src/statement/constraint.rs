//! Table constraints (Hive 3+): CREATE TABLE's checked and recorded as Hive records them,
//! and their part in INSERT. An enabled DEFAULT fills a column an INSERT's column list
//! leaves out (and the `DEFAULT` keyword of a VALUES row); enabled NOT NULL and CHECK
//! constraints refuse a row breaking them, with Hive's error, before anything is written.
//! PRIMARY KEY, UNIQUE and FOREIGN KEY are informational, as in Hive: DISABLE only.

use std::collections::HashMap;

use apiary_metastore::{Column, Constraint, ConstraintKind, Table, TableType};
use datafusion::common::tree_node::TreeNode as _;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::ConstraintDef;

fn invalid(detail: &str) -> SqlError {
    SqlError::hive(HiveError::InvalidConstraint, format!(" {detail}"))
}

/// The flags Hive records when a constraint writes none: ENABLE NOVALIDATE RELY, a foreign
/// key ENABLE VALIDATE NORELY; DISABLE alone is NOVALIDATE NORELY.
fn flags(d: &ConstraintDef) -> (bool, bool, bool) {
    let fk = matches!(d.kind, ConstraintKind::ForeignKey { .. });
    let enable = d.enable.unwrap_or(true);
    let validate = d.validate.unwrap_or(enable && fk);
    let rely = d.rely.unwrap_or(enable && !fk);
    (enable, validate, rely)
}

/// A name for a constraint written without one, in the form Hive's metastore gives:
/// `<kind>_<hash>_<milliseconds>_<counter>`.
fn generated_name(kind: &ConstraintKind, counter: usize) -> String {
    let prefix = match kind {
        ConstraintKind::PrimaryKey => "pk",
        ConstraintKind::Unique => "uk",
        ConstraintKind::ForeignKey { .. } => "fk",
        ConstraintKind::NotNull => "nn",
        ConstraintKind::Default(_) | ConstraintKind::Check(_) => "dc",
    };
    format!(
        "{prefix}_{}_{}_{counter}",
        (uuid::Uuid::new_v4().as_u128() as u32) & 0x0fff_ffff,
        chrono::Utc::now().timestamp_millis()
    )
}

/// The schema of `columns` as the engine reads them.
fn schema_of(columns: &[&Column]) -> Result<DFSchema, SqlError> {
    let fields = columns
        .iter()
        .map(|c| {
            apiary_storage::native::column_field(c).map_err(|e| SqlError::semantic(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    DFSchema::try_from(arrow::datatypes::Schema::new(fields)).map_err(SqlError::from_planning)
}

/// A CHECK constraint's expression over `schema`; Hive refuses aggregates, window functions
/// and subqueries in one.
fn check_expr(
    ctx: &datafusion::prelude::SessionContext,
    text: &str,
    schema: &DFSchema,
) -> Result<Expr, SqlError> {
    let refused = |why: String| {
        invalid(&format!(
            "Invalid CHECK constraint expression: {text}. {why}"
        ))
    };
    let ast = crate::dialect::parse_expr(text).map_err(|e| refused(e.hive_message()))?;
    let expr = ctx
        .state()
        .create_logical_expr_from_sql_expr(
            datafusion::sql::sqlparser::ast::ExprWithAlias {
                expr: ast,
                alias: None,
            },
            schema,
        )
        .map_err(|e| refused(SqlError::from_planning(e).hive_message()))?;
    let mut nested = false;
    let _ = expr.apply(|e| {
        nested |= matches!(
            e,
            Expr::AggregateFunction(_)
                | Expr::WindowFunction(_)
                | Expr::ScalarSubquery(_)
                | Expr::Exists(_)
                | Expr::InSubquery(_)
        );
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    });
    if nested {
        return Err(refused(
            "Aggregates, window functions and subqueries are not allowed in a CHECK constraint"
                .into(),
        ));
    }
    Ok(expr)
}

/// The columns an expression names (a CHECK's, a DEFAULT's), lower case.
pub(super) fn referenced_columns(expr: &datafusion::sql::sqlparser::ast::Expr) -> Vec<String> {
    use datafusion::sql::sqlparser::ast::{visit_expressions, Expr as Ast};
    let mut out = Vec::new();
    let _ = visit_expressions(expr, |e| {
        match e {
            Ast::Identifier(id) => out.push(id.value.to_lowercase()),
            Ast::CompoundIdentifier(ids) => {
                if let Some(last) = ids.last() {
                    out.push(last.value.to_lowercase());
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    out
}

/// Whether an expression holds a subquery.
fn has_subquery(expr: &datafusion::sql::sqlparser::ast::Expr) -> bool {
    use datafusion::sql::sqlparser::ast::{visit_expressions, Expr as Ast};
    visit_expressions(expr, |e| {
        if matches!(
            e,
            Ast::Subquery(_) | Ast::Exists { .. } | Ast::InSubquery { .. }
        ) {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })
    .is_break()
}

/// The constraints of `table` that still hold after its data columns became `columns`: those
/// naming a column that went, or a CHECK reading one, go too.
pub(super) fn surviving(table: &Table, columns: &[Column]) -> Vec<Constraint> {
    let exists = |name: &String| {
        columns
            .iter()
            .chain(&table.partition_keys)
            .any(|c| &c.name == name)
    };
    table
        .constraints
        .iter()
        .filter(|c| c.columns.iter().all(exists))
        .filter(|c| match &c.kind {
            ConstraintKind::Check(text) => crate::dialect::parse_expr(text)
                .map(|e| referenced_columns(&e).iter().all(exists))
                .unwrap_or(false),
            _ => true,
        })
        .cloned()
        .collect()
}

impl dyn Scope {
    /// The constraints CREATE TABLE writes, checked as Hive checks them (columns that exist,
    /// DISABLE for keys, a DEFAULT that is a constant, a CHECK over the table's columns, a
    /// foreign key naming a key of its parent, names unique in the database) and with
    /// Hive's flags and names filled in.
    pub(super) async fn resolve_constraints(
        &mut self,
        defs: &[ConstraintDef],
        table: &Table,
    ) -> Result<Vec<Constraint>, SqlError> {
        let columns: Vec<&Column> = table
            .sd
            .columns
            .iter()
            .chain(&table.partition_keys)
            .collect();
        let mut out: Vec<Constraint> = Vec::with_capacity(defs.len());
        for (i, d) in defs.iter().enumerate() {
            let (enable, validate, rely) = flags(d);
            for c in &d.columns {
                if !columns.iter().any(|x| &x.name == c) {
                    return Err(SqlError::hive(HiveError::InvalidColumn, format!(" {c}")));
                }
            }
            match &d.kind {
                ConstraintKind::PrimaryKey | ConstraintKind::Unique if enable => {
                    return Err(invalid(
                        "ENABLE/ENFORCED feature not supported yet. Please use DISABLE/NOT ENFORCED instead.",
                    ))
                }
                ConstraintKind::ForeignKey { .. } if enable => {
                    return Err(SqlError::hive(
                        HiveError::InvalidForeignKey,
                        " ENABLE feature not supported yet. Please use DISABLE instead.",
                    ))
                }
                _ if validate => {
                    return Err(invalid(
                        "VALIDATE feature not supported yet. Please use NOVALIDATE instead.",
                    ))
                }
                _ if enable && table.table_type == TableType::External => {
                    return Err(invalid(
                        "Constraints are disallowed with External tables. Only RELY is allowed.",
                    ))
                }
                _ => {}
            }
            let kind = match &d.kind {
                ConstraintKind::ForeignKey {
                    parent_database,
                    parent_table,
                    parent_columns,
                } => {
                    let parent_database = if parent_database.is_empty() {
                        self.database()
                    } else {
                        parent_database.clone()
                    };
                    self.check_foreign_key(
                        table,
                        defs,
                        &d.columns,
                        &parent_database,
                        parent_table,
                        parent_columns,
                    )
                    .await?;
                    ConstraintKind::ForeignKey {
                        parent_database,
                        parent_table: parent_table.clone(),
                        parent_columns: parent_columns.clone(),
                    }
                }
                ConstraintKind::Default(text) => {
                    let column = columns
                        .iter()
                        .find(|c| Some(&c.name) == d.columns.first())
                        .copied();
                    if let Some(column) = column {
                        self.default_value(text, column).await?;
                    }
                    d.kind.clone()
                }
                ConstraintKind::Check(text) => {
                    // An INSERT's rows carry the data columns (and dynamic partition values
                    // only): a CHECK reads the data columns.
                    if d.columns
                        .iter()
                        .any(|c| table.partition_keys.iter().any(|k| &k.name == c))
                    {
                        return Err(invalid(
                            "CHECK constraints on partition columns are not supported.",
                        ));
                    }
                    let data: Vec<&Column> = table.sd.columns.iter().collect();
                    check_expr(self.context(), text, &schema_of(&data)?)?;
                    d.kind.clone()
                }
                other => other.clone(),
            };
            let name = match &d.name {
                Some(n) => n.clone(),
                None => generated_name(&kind, i),
            };
            out.push(Constraint {
                name,
                kind,
                columns: d.columns.clone(),
                enable,
                validate,
                rely,
            });
        }
        // A primary key is one constraint, however many columns wrote it.
        if out
            .iter()
            .filter(|c| c.kind == ConstraintKind::PrimaryKey)
            .count()
            > 1
        {
            return Err(invalid("More than one primary key is not allowed."));
        }
        self.check_names_unique(table, defs).await?;
        Ok(out)
    }

    /// Hive keeps constraint names unique in a database.
    async fn check_names_unique(
        &self,
        table: &Table,
        defs: &[ConstraintDef],
    ) -> Result<(), SqlError> {
        let named: Vec<&str> = defs.iter().filter_map(|d| d.name.as_deref()).collect();
        if named.is_empty() {
            return Ok(());
        }
        let exists = |name: &str| {
            SqlError::ddl(format!(
                "InvalidObjectException(message:Constraint name already exists: {}.{}.{name})",
                table.database, table.name
            ))
        };
        for (i, n) in named.iter().enumerate() {
            if named[..i].contains(n) || table.constraints.iter().any(|c| &c.name == n) {
                return Err(exists(n));
            }
        }
        for other in self.metastore().list_tables(&table.database).await? {
            if other == table.name {
                continue;
            }
            if let Some(t) = self.metastore().get_table(&table.database, &other).await? {
                if let Some(c) = t
                    .constraints
                    .iter()
                    .find(|c| named.contains(&c.name.as_str()))
                {
                    return Err(exists(&c.name));
                }
            }
        }
        Ok(())
    }

    /// A foreign key's parent exists and the referenced columns are its primary key or one of
    /// its unique keys.
    async fn check_foreign_key(
        &self,
        table: &Table,
        defs: &[ConstraintDef],
        columns: &[String],
        parent_database: &str,
        parent_table: &str,
        parent_columns: &[String],
    ) -> Result<(), SqlError> {
        if parent_columns.len() != columns.len() {
            return Err(SqlError::hive(
                HiveError::InvalidForeignKey,
                format!(
                    " The number of foreign key columns ({}) differs from the number of referenced columns ({}).",
                    columns.len(),
                    parent_columns.len()
                ),
            ));
        }
        // The keys of the parent: this table's own (a key referencing it) or the catalog's.
        let keys: Vec<Vec<String>> = if parent_database == table.database
            && parent_table == table.name
        {
            defs.iter()
                .filter(|d| matches!(d.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique))
                .map(|d| d.columns.clone())
                .chain(
                    table
                        .constraints
                        .iter()
                        .filter(|c| {
                            matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique)
                        })
                        .map(|c| c.columns.clone()),
                )
                .collect()
        } else {
            let parent = self
                .metastore()
                .get_table(parent_database, parent_table)
                .await?
                .ok_or_else(|| {
                    SqlError::TableNotFound(format!("{parent_database}.{parent_table}"))
                })?;
            parent
                .constraints
                .iter()
                .filter(|c| matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique))
                .map(|c| c.columns.clone())
                .collect()
        };
        if keys.iter().any(|k| k.as_slice() == parent_columns) {
            return Ok(());
        }
        Err(SqlError::ddl(format!(
            "MetaException(message:Foreign key references {parent_database}.{parent_table}:[{}] but no corresponding primary key or unique key exists. Possible keys: [{}])",
            parent_columns.join(", "),
            keys.iter()
                .map(|k| format!("[{}]", k.join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// A DEFAULT's value for `column`: its expression, evaluated (a constant, or a function of
    /// constants such as `current_date()`), as the column's type.
    pub(super) async fn default_value(
        &mut self,
        text: &str,
        column: &Column,
    ) -> Result<ScalarValue, SqlError> {
        let refused = || {
            invalid(&format!(
                "Invalid Default value: {text}. DEFAULT only allows constant or function expressions"
            ))
        };
        // A constant, or functions of constants: no column, no subquery.
        let ast = crate::dialect::parse_expr(text).map_err(|_| refused())?;
        if !referenced_columns(&ast).is_empty() || has_subquery(&ast) {
            return Err(refused());
        }
        let plan = self
            .plan_query(&format!("SELECT {text}"))
            .await
            .map_err(|_| refused())?;
        let declared = apiary_storage::native::column_field(column)
            .map_err(|e| SqlError::semantic(e.to_string()))?;
        let got = plan.schema().field(0).data_type().clone();
        if got != *declared.data_type()
            && !got.is_null()
            && !arrow::compute::can_cast_types(&got, declared.data_type())
        {
            return Err(invalid(&format!(
                "Invalid type: {got} for default value: {text}. Please make sure that the type is compatible with column type: {}",
                column.type_name
            )));
        }
        let batches = datafusion::dataframe::DataFrame::new(self.context().state(), plan)
            .collect()
            .await
            .map_err(SqlError::from_execution)?;
        let value = match batches.iter().find(|b| b.num_rows() > 0) {
            Some(b) => {
                ScalarValue::try_from_array(b.column(0), 0).map_err(SqlError::from_execution)?
            }
            None => ScalarValue::Null,
        };
        Ok(value)
    }

    /// The values of the enabled DEFAULT constraints of the columns in `names`.
    pub(super) async fn defaults_of(
        &mut self,
        table: &Table,
        names: &[&str],
    ) -> Result<HashMap<String, ScalarValue>, SqlError> {
        let mut out = HashMap::new();
        for c in &table.constraints {
            let (ConstraintKind::Default(text), true, Some(name)) =
                (&c.kind, c.enable, c.columns.first())
            else {
                continue;
            };
            if !names.contains(&name.as_str()) {
                continue;
            }
            if let Some(column) = table.sd.columns.iter().find(|x| &x.name == name) {
                let value = self.default_value(text, column).await?;
                out.insert(name.clone(), value);
            }
        }
        Ok(out)
    }

    /// The text a VALUES row's `DEFAULT` keyword stands for in each target column: the
    /// column's enabled DEFAULT, else NULL.
    pub(super) fn default_texts(&self, table: &Table, targets: &[String]) -> Vec<String> {
        targets
            .iter()
            .map(|t| {
                table
                    .constraints
                    .iter()
                    .find_map(|c| match (&c.kind, c.enable) {
                        (ConstraintKind::Default(text), true) if c.columns.first() == Some(t) => {
                            Some(text.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| "NULL".into())
            })
            .collect()
    }
}

/// The rows an INSERT writes into `table` (its data columns, then the last `dynamic`
/// partition keys), checked against its enabled NOT NULL and CHECK constraints: a row
/// breaking one fails the statement with Hive's error, before anything is committed.
pub(super) fn enforce(
    ctx: &datafusion::prelude::SessionContext,
    plan: LogicalPlan,
    table: &Table,
    dynamic: usize,
) -> Result<LogicalPlan, SqlError> {
    let enforced: Vec<&Constraint> = table
        .constraints
        .iter()
        .filter(|c| {
            c.enable && matches!(c.kind, ConstraintKind::NotNull | ConstraintKind::Check(_))
        })
        .collect();
    if enforced.is_empty() {
        return Ok(plan);
    }
    let targets = written_columns(table, dynamic);
    // The rows under the table's column names, so the constraints can name them.
    let named: Vec<Expr> = plan
        .schema()
        .columns()
        .into_iter()
        .zip(&targets)
        .map(|(given, column)| Expr::Column(given).alias(&column.name))
        .collect();
    let plan = LogicalPlanBuilder::from(plan)
        .project(named)
        .and_then(|b| b.build())
        .map_err(SqlError::from_planning)?;
    let schema = plan.schema().as_ref().clone();
    let mut conditions = Vec::new();
    for c in enforced {
        match &c.kind {
            ConstraintKind::NotNull => {
                // A static partition value is never NULL.
                if let Some(name) = c
                    .columns
                    .first()
                    .filter(|n| targets.iter().any(|t| &&t.name == n))
                {
                    conditions.push(
                        datafusion::logical_expr::col(datafusion::common::Column::from_name(
                            name.clone(),
                        ))
                        .is_not_null(),
                    );
                }
            }
            // A CHECK whose value is unknown (NULL) passes, as in Hive.
            ConstraintKind::Check(text) => {
                conditions.push(check_expr(ctx, text, &schema)?.is_not_false())
            }
            _ => {}
        }
    }
    let Some(all) = conditions.into_iter().reduce(Expr::and) else {
        return Ok(plan);
    };
    let udf = datafusion::execution::FunctionRegistry::udf(
        ctx,
        apiary_hive_functions::ENFORCE_CONSTRAINT,
    )
    .map_err(SqlError::from_planning)?;
    LogicalPlanBuilder::from(plan)
        .filter(udf.call(vec![all]))
        .and_then(|b| b.build())
        .map_err(SqlError::from_planning)
}
