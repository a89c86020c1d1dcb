//! What a statement's text becomes: variables substituted, comments stripped, the statement
//! classified once ([`crate::parser::classify`]) and handed to the parser of its family, then
//! compiled into a [`Prepared`]: rows already answered (SHOW, DESCRIBE, SET without a value),
//! a query plan for the caller to run, or a task that makes the statement's changes when its
//! operation runs. Compiling changes nothing outside the session's own state (SET, RESET,
//! USE and SET ROLE change that state at once, as Hive's do).

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::parser::Parser;

use crate::access::decide::Need;
use crate::dialect::substitute::substitute;
use crate::dialect::{rewrite, HiveQl};
use crate::error::{HiveError, SqlError};
use crate::prepared::{string_rows, Prepared, QueryPlan, SessionChange};
use crate::statement::Scope;
use crate::task::{Task, TaskOutput};
use crate::SqlSession;

/// The server's list of environment variables `${env:NAME}` may read (none by default).
pub const ENV_ALLOWED_KEY: &str = "apiary.substitute.env.allowed";
/// Operators a statement may hold per level of nesting allowed: a single chain of them is a
/// tree that deep, and a bounded one is dropped and visited safely.
const OPERATORS_PER_LEVEL: usize = 50;

impl SqlSession {
    /// Substitutes variables, parses and plans one statement, changing nothing: a statement's
    /// effect is returned for the caller to run (a query's plan, a task) or to apply (a
    /// change of the session's own state, [`SqlSession::apply`]).
    pub async fn compile(&mut self, sql: &str) -> Result<Prepared, SqlError> {
        let text = if self.conf("hive.variable.substitute") == Some("false") {
            sql.to_string()
        } else {
            let depth = self
                .conf("hive.variable.substitute.depth")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(crate::dialect::substitute::DEFAULT_DEPTH);
            // A server setting a session cannot raise (read from the server's configuration).
            let env_allowed: Vec<String> = self
                .defaults
                .get(ENV_ALLOWED_KEY)
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            substitute(sql, &self.hivevar, &self.hiveconf, &env_allowed, depth)
                .map_err(|e| SqlError::Substitution(e.to_string()))?
        };
        let mut text = strip_statement(&text);
        if text.is_empty() {
            return Ok(Prepared::Done);
        }
        use crate::parser::Family;
        let mut family = crate::parser::classify(&text);
        if family == Family::FromFirst {
            let mut bodies = crate::parser::from_first_bodies(&text)?;
            if bodies.len() > 1 {
                return self.multi_insert(bodies).await;
            }
            // One body: the statement it means, read as its own family.
            text = bodies.pop().map(|b| b.text()).unwrap_or_default();
            family = crate::parser::classify(&text);
        }
        let text = text.as_str();
        match family {
            Family::Authorization => self.compile_authorization(text).await,
            Family::Set => self.set_statement(text[3..].trim()),
            Family::Reset => {
                let key = text[5..].trim();
                Ok(Prepared::Session(SessionChange::Reset(
                    (!key.is_empty()).then(|| key.to_string()),
                )))
            }
            Family::Use => {
                let db = text[3..].trim().trim_matches('`').to_ascii_lowercase();
                if self.metastore.get_database(&db).await?.is_none() {
                    return Err(SqlError::DatabaseNotFound(db));
                }
                Ok(Prepared::Session(SessionChange::Use(db)))
            }
            Family::Hive => match crate::parser::parse(text)? {
                Some(stmt) => self.compile_hive(stmt).await,
                None => self.plan_sql(text).await,
            },
            Family::Query | Family::FromFirst => self.plan_sql(text).await,
        }
    }

    /// A FROM-first statement with several INSERTs: each planned and checked now, run in order
    /// as one task. Hive reads the FROM clause once for all of them; run in order, an INSERT
    /// reading a table an earlier one writes would see the new rows, so that is refused.
    async fn multi_insert(
        &mut self,
        bodies: Vec<crate::parser::Body>,
    ) -> Result<Prepared, SqlError> {
        use crate::parser::HiveStatement;
        let mut written: Vec<(String, String, Option<String>)> = vec![];
        let mut tasks = vec![];
        for body in bodies {
            if body.insert.is_none() {
                return Err(SqlError::Unsupported(
                    "a FROM-first statement with several bodies where one is not an INSERT".into(),
                ));
            }
            let Some(stmt @ HiveStatement::Insert { .. }) = crate::parser::parse(&body.text())?
            else {
                return Err(SqlError::Unsupported(
                    "INSERT OVERWRITE DIRECTORY in a multi-insert".into(),
                ));
            };
            let HiveStatement::Insert {
                table, partition, ..
            } = &stmt
            else {
                return Err(SqlError::Unsupported("this multi-insert".into()));
            };
            let db = table.db.clone().unwrap_or_else(|| self.database());
            let target = (
                db.to_lowercase(),
                table.name.to_lowercase(),
                partition.as_ref().map(|p| format!("{p:?}")),
            );
            if written.contains(&target) {
                return Err(SqlError::hive(
                    HiveError::DuplicateOutput,
                    format!("{}.{}", target.0, target.1),
                ));
            }
            let query = crate::dialect::parse_one(&body.query)?;
            let relations = crate::access::needs::relations(&query);
            let read = crate::access::needs::tables_read(
                self.metastore.as_ref(),
                &self.database(),
                &relations,
            )
            .await?;
            if let Some(t) = read.iter().find(|t| {
                written
                    .iter()
                    .any(|(db, name, _)| t.database == *db && t.name == *name)
            }) {
                return Err(SqlError::Unsupported(format!(
                    "a multi-insert whose INSERT reads {}.{}, which an earlier INSERT of it writes",
                    t.database, t.name
                )));
            }
            written.push(target);
            match self.compile_hive(stmt).await? {
                Prepared::Task(task) => tasks.push(task),
                Prepared::Done => {}
                _ => return Err(SqlError::Unsupported("this multi-insert".into())),
            }
        }
        Ok(Prepared::Task(Task::sequence(tasks)))
    }

    /// GRANT, REVOKE and the role statements: a change of roles or grants is a task; SET ROLE
    /// changes the session's roles at once; SHOW GRANT and the like answer rows.
    async fn compile_authorization(&mut self, text: &str) -> Result<Prepared, SqlError> {
        let stmt = crate::parser::parse_authz(text)?;
        let Some(auth) = self.policy.authorization() else {
            return Err(SqlError::ddl(
                "Authorization is not enabled: GRANT, REVOKE and roles need hive.security.authorization.enabled=true in the server's configuration".to_string(),
            ));
        };
        let db = self.database();
        if stmt.changes_grants() {
            // A change of roles or grants is a task, so it runs as an operation (runAsync,
            // queryTimeout and cancel apply): interrupted before its one metastore
            // transaction, it changes nothing; that transaction, once begun, runs to its end.
            let (policy, metastore) = (self.policy.clone(), self.metastore.clone());
            let (user, mut roles) = (self.user.clone(), self.roles.clone());
            let task = Task::cooperative(Default::default(), move |interrupt| {
                Box::pin(async move {
                    crate::task::failpoint("authz.before_change").await?;
                    if interrupt.is_cancelled() {
                        return Err(SqlError::Cancelled);
                    }
                    let Some(auth) = policy.authorization() else {
                        return Err(SqlError::ddl("authorization is not enabled".to_string()));
                    };
                    crate::statement::grant::run(auth, &metastore, &user, &db, &mut roles, stmt)
                        .await
                        .map(|_| ())
                })
            });
            return Ok(Prepared::Task(task.with_settle(self.ddl_settle)));
        }
        // SET ROLE decides the roles in force here; the session takes them when applied.
        let mut roles = self.roles.clone();
        let prepared =
            crate::statement::grant::run(auth, &self.metastore, &self.user, &db, &mut roles, stmt)
                .await?;
        if roles != self.roles {
            return Ok(Prepared::Session(SessionChange::Roles(roles)));
        }
        Ok(prepared)
    }

    /// Makes a change [`SqlSession::compile`] checked and returned.
    pub fn apply(&mut self, change: SessionChange) -> Result<(), SqlError> {
        match change {
            SessionChange::Conf { key, value } => self.set_conf(&key, &value)?,
            SessionChange::Var { name, value } => self.set_var(&name, &value),
            SessionChange::Reset(key) => self.reset(key.as_deref().unwrap_or_default()),
            SessionChange::Use(db) => self.use_known_database(&db),
            SessionChange::Roles(roles) => self.roles = roles,
        }
        Ok(())
    }

    /// RESET: every key back to the server's value, or one key.
    fn reset(&mut self, key: &str) {
        self.reset_keys(key);
        // (The server's zone was checked when the session began.)
        let _ = self.apply_time_zone();
    }

    fn reset_keys(&mut self, key: &str) {
        if key.is_empty() {
            self.hiveconf = self.defaults.clone();
        } else {
            match self.defaults.get(key) {
                Some(v) => {
                    let v = v.clone();
                    self.hiveconf.insert(key.to_string(), v);
                }
                None => {
                    self.hiveconf.remove(key);
                }
            }
        }
    }

    /// A parsed Hive statement: what only reads (DESCRIBE, SHOW) runs now; INSERT is planned
    /// now and written by its task; every other statement with a side effect becomes a task
    /// that runs it in a fork of this session when its operation starts.
    async fn compile_hive(
        &mut self,
        stmt: crate::parser::HiveStatement,
    ) -> Result<Prepared, SqlError> {
        for (clause, path) in stmt.named_paths() {
            self.policy.check_path(clause, path)?;
        }
        if let Some(auth) = self.policy.authorization() {
            let (operation, needs) = crate::access::needs::needs(
                self.metastore.as_ref(),
                &self.handlers,
                &self.database(),
                &stmt,
            )
            .await?;
            let subject = self.subject().await?;
            auth.check(self.metastore.as_ref(), &subject, operation, &needs)
                .await?;
        }
        // (INSERT OVERWRITE DIRECTORY is refused here, once its path has been checked.)
        if stmt.is_read_only()
            || matches!(
                stmt,
                crate::parser::HiveStatement::Insert { .. }
                    | crate::parser::HiveStatement::InsertDirectory { .. }
            )
        {
            let scope: &mut dyn Scope = self;
            return scope.run_hive(stmt).await;
        }
        let mut fork = self.fork();
        let notes = fork.notes.clone();
        // MSCK's result set is the lines naming what it added.
        let output = matches!(stmt, crate::parser::HiveStatement::MsckRepair(_)).then(|| {
            TaskOutput::new(Arc::new(Schema::new(vec![Field::new(
                "result",
                DataType::Utf8,
                true,
            )])))
        });
        let sink = output.clone();
        let task = Task::cooperative(notes, move |interrupt| {
            Box::pin(async move {
                fork.interrupt = interrupt;
                if fork.interrupt.is_cancelled() {
                    return Err(SqlError::Cancelled);
                }
                let scope: &mut dyn Scope = &mut fork;
                match scope.run_hive(stmt).await? {
                    Prepared::Task(inner) => inner.run(fork.interrupt.clone()).await,
                    Prepared::Rows { batches, .. } => {
                        if let Some(sink) = &sink {
                            sink.set(batches);
                        }
                        Ok(())
                    }
                    Prepared::Query { .. } | Prepared::Done | Prepared::Session(_) => Ok(()),
                }
            })
        });
        Ok(Prepared::Task(
            task.with_output(output).with_settle(self.ddl_settle),
        ))
    }

    /// Plans a query (SELECT, VALUES, WITH ...) and returns its logical plan.
    pub(crate) async fn plan_query(&mut self, text: &str) -> Result<LogicalPlan, SqlError> {
        match self.plan_sql(text).await? {
            // Analyzed, so column types are those of the rows (CTAS, views, INSERT's checks).
            Prepared::Query { plan, .. } => analyze(&self.ctx.state(), plan.plan),
            _ => Err(SqlError::hive(
                HiveError::Generic,
                "expected a query (SELECT or VALUES)",
            )),
        }
    }

    async fn plan_sql(&mut self, text: &str) -> Result<Prepared, SqlError> {
        let dialect = HiveQl::default();
        let mut tokens = crate::dialect::tokenize(text).map_err(crate::dialect::parse_error)?;
        // Hive's table functions (`matchpath(ON t ..)`) become queries over their sources,
        // whose columns planning `SELECT * FROM source` gives.
        let calls = crate::dialect::ptf::calls(&tokens)?;
        if !calls.is_empty() {
            let mut expansions = Vec::with_capacity(calls.len());
            for call in calls {
                let source = Box::pin(self.plan_query(&call.source_query())).await?;
                let columns: Vec<String> = source
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                let (from, to) = call.range();
                expansions.push((from, to, call.expand(&columns)?));
            }
            crate::dialect::ptf::splice(&mut tokens, expansions)?;
        }
        let limit = self.max_nesting();
        let operators = rewrite::operator_count(&tokens);
        if operators > limit.saturating_mul(OPERATORS_PER_LEVEL) {
            return Err(SqlError::hive(HiveError::Generic, format!("the statement has {operators} operators; at most {} are allowed ({OPERATORS_PER_LEVEL} per level of apiary.sql.max.nesting.depth)",
                limit.saturating_mul(OPERATORS_PER_LEVEL)
            )));
        }
        let mut statements = Parser::new(&dialect)
            .with_tokens_with_locations(tokens)
            .parse_statements()
            .map_err(crate::dialect::parse_error)?;
        if statements.len() != 1 {
            return Err(SqlError::Parse {
                line: 1,
                column: 0,
                detail: "only one statement may be executed at a time".into(),
            });
        }
        let mut statement = statements.remove(0);
        if rewrite::nesting_depth(&statement, limit) > limit {
            return Err(SqlError::hive(HiveError::Generic, format!("the statement nests expressions or queries more than {limit} levels deep (apiary.sql.max.nesting.depth)"
            )));
        }
        self.policy.check_called(&statement)?;
        if let Some(auth) = self.policy.authorization() {
            let subject = self.subject().await?;
            let relations = crate::access::needs::relations(&statement);
            let mut needs: Vec<Need> = crate::access::needs::tables_read(
                self.metastore.as_ref(),
                &self.database(),
                &relations,
            )
            .await?
            .into_iter()
            .map(|table| Need::Privileges {
                table,
                privileges: vec!["SELECT"],
                grant: false,
            })
            .collect();
            if relations
                .iter()
                .any(|r| r.len() > 1 && r[r.len() - 2].eq_ignore_ascii_case("information_schema"))
            {
                // DataFusion's catalog views list every table, whatever the grants.
                needs.push(Need::Admin {
                    object_type: "DATABASE",
                    name: "information_schema".into(),
                });
            }
            if !matches!(
                statement,
                datafusion::sql::sqlparser::ast::Statement::Query(_)
                    | datafusion::sql::sqlparser::ast::Statement::Explain { .. }
                    | datafusion::sql::sqlparser::ast::Statement::ShowVariable { .. }
            ) {
                // DataFusion's own DDL and DML (CREATE EXTERNAL TABLE, COPY, its SHOW and
                // DROP forms) bypass Hive's statements: admins only.
                needs.push(Need::Admin {
                    object_type: "COMMAND_PARAMS",
                    name: format!(
                        "[{}]",
                        statement
                            .to_string()
                            .split_whitespace()
                            .take(2)
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                });
            }
            auth.check(self.metastore.as_ref(), &subject, "QUERY", &needs)
                .await?;
        }
        // Hive qualifies the columns of `*` and of `t.col` in a SELECT's result (not those of
        // a UNION's, since Hive 4) unless hive.resultset.use.unique.column.names is off.
        let unique_names = self
            .conf(crate::results::UNIQUE_COLUMN_NAMES)
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
        rewrite::to_datafusion(
            &mut statement,
            self.conf(crate::dialect::time_travel::LOCAL_TIME_ZONE),
        )?;
        let naming = match &statement {
            datafusion::sql::sqlparser::ast::Statement::Query(q) if unique_names => {
                crate::results::outer_select(&q.body).map(crate::results::select_items)
            }
            _ => None,
        };
        let explain = matches!(
            statement,
            datafusion::sql::sqlparser::ast::Statement::Explain { .. }
        );
        let state = self.ctx.state();
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(statement)))
            .await
            .map_err(SqlError::from_planning)?;
        self.policy.check_plan(&plan)?;
        if let Some(auth) = self.policy.authorization() {
            // What plans into DataFusion's DDL, DML or COPY under another form (SELECT .. INTO,
            // EXPLAIN ANALYZE of a COPY) is for admins too.
            if changes_things(&plan) {
                let subject = self.subject().await?;
                let need = Need::Admin {
                    object_type: "COMMAND_PARAMS",
                    name: format!("[{}]", plan.display()),
                };
                auth.check(self.metastore.as_ref(), &subject, "QUERY", &[need])
                    .await?;
            }
        }
        match &plan {
            LogicalPlan::Ddl(_) | LogicalPlan::Dml(_) | LogicalPlan::Copy(_) => {
                let ctx = self.ctx.clone();
                Ok(Prepared::Task(Task::abortable(async move {
                    let df = ctx
                        .execute_logical_plan(plan)
                        .await
                        .map_err(SqlError::from_planning)?;
                    df.collect().await.map_err(SqlError::from_execution)?;
                    Ok(())
                })))
            }
            LogicalPlan::Statement(_) => Err(SqlError::Unsupported(
                "this statement is not supported; use SET, RESET or USE".into(),
            )),
            _ if explain => self.explain(plan).await,
            _ => {
                let plan = crate::results::in_window_order(plan)?;
                let schema = result_schema(&state, &plan, naming.as_deref())?;
                Ok(Prepared::Query {
                    plan: QueryPlan {
                        ctx: self.ctx.clone(),
                        plan,
                    },
                    schema,
                })
            }
        }
    }

    /// Runs EXPLAIN and returns its text as Hive's one-column `Explain` result.
    async fn explain(&self, plan: LogicalPlan) -> Result<Prepared, SqlError> {
        let df = self
            .ctx
            .execute_logical_plan(plan)
            .await
            .map_err(SqlError::from_planning)?;
        let batches = df.collect().await.map_err(SqlError::from_execution)?;
        let mut lines = Vec::new();
        for b in &batches {
            for row in 0..b.num_rows() {
                let kind = apiary_hive_types::render::cell_text(b.column(0).as_ref(), row)
                    .unwrap_or_default();
                let text = apiary_hive_types::render::cell_text(b.column(1).as_ref(), row)
                    .unwrap_or_default();
                lines.push(format!("{kind}:"));
                lines.extend(text.lines().map(|l| format!("  {l}")));
            }
        }
        Ok(string_rows("Explain", lines))
    }

    fn set_statement(&mut self, rest: &str) -> Result<Prepared, SqlError> {
        if rest.is_empty() || rest == "-v" {
            let mut lines: Vec<String> = self
                .hiveconf
                .iter()
                .filter(|(k, _)| !self.policy.is_hidden(k))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            lines.extend(self.hivevar.iter().map(|(k, v)| format!("hivevar:{k}={v}")));
            lines.sort();
            return Ok(string_rows("set", lines));
        }
        match rest.split_once('=') {
            None => {
                let key = rest.trim();
                let conf_key = key.strip_prefix("hiveconf:").unwrap_or(key);
                if !key.starts_with("hivevar:") && self.policy.is_hidden(conf_key) {
                    return Ok(string_rows(
                        "set",
                        vec![format!("{key} is a hidden config")],
                    ));
                }
                let line = match self.lookup(key) {
                    Some(v) => format!("{key}={v}"),
                    None => format!("{key} is undefined"),
                };
                Ok(string_rows("set", vec![line]))
            }
            Some((k, v)) => {
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() {
                    return Err(SqlError::Parse {
                        line: 1,
                        column: 4,
                        detail: "SET needs a key before '='".into(),
                    });
                }
                if let Some(name) = k.strip_prefix("hivevar:") {
                    return Ok(Prepared::Session(SessionChange::Var {
                        name: name.to_string(),
                        value: v.to_string(),
                    }));
                }
                let key = k.strip_prefix("hiveconf:").unwrap_or(k);
                self.check_conf(key, v)?;
                Ok(Prepared::Session(SessionChange::Conf {
                    key: key.to_string(),
                    value: v.to_string(),
                }))
            }
        }
    }
}

/// The schema a query's rows will have: that of the analyzed plan, since type coercion (a
/// UNION of a BIGINT and a DOUBLE column gives DOUBLE) can change the planned one. With the
/// outermost SELECT's `items` (Hive's unique column names), a column the plan still knows by
/// its table (or subquery) and that the query did not name bare is named `table.column`.
fn result_schema(
    state: &datafusion::execution::session_state::SessionState,
    plan: &LogicalPlan,
    items: Option<&[crate::results::Item]>,
) -> Result<SchemaRef, SqlError> {
    let analyzed = analyze(state, plan.clone())?;
    let schema = analyzed.schema();
    let n = schema.fields().len();
    let bare = items.map_or_else(
        || vec![true; n],
        |items| crate::results::bare_columns(items, n),
    );
    let qualify = items.is_some();
    let fields: Vec<arrow::datatypes::Field> = schema
        .iter()
        .zip(bare)
        .map(|((table, field), bare)| {
            let name = field.name();
            let written = crate::names::result_name(name);
            let named = if written.len() != name.len() {
                // A column the select list names again: as written, or bare.
                if qualify {
                    written.to_string()
                } else {
                    crate::names::bare_result_name(name).to_string()
                }
            } else {
                match table {
                    Some(t) if qualify && !bare => {
                        format!("{}.{}", t.table().to_ascii_lowercase(), name)
                    }
                    _ => return field.as_ref().clone(),
                }
            };
            field.as_ref().clone().with_name(named)
        })
        .collect();
    Ok(Arc::new(arrow::datatypes::Schema::new_with_metadata(
        fields,
        schema.as_arrow().metadata().clone(),
    )))
}

/// A plan after DataFusion's analyzer (type coercion and the like): its schema is the one its
/// rows have. Running it analyzes it again, which changes nothing.
fn analyze(
    state: &datafusion::execution::session_state::SessionState,
    plan: LogicalPlan,
) -> Result<LogicalPlan, SqlError> {
    state
        .analyzer()
        .execute_and_check(plan, state.config_options(), |_, _| {})
        .map_err(SqlError::from_planning)
}

/// The statement without its comments outside quoted text (`-- ..` to the end of a line,
/// `/* .. */` anywhere: dbt puts one before or after every statement, and optimizer hints are
/// comments too), the blanks around it and its trailing semicolons.
fn strip_statement(sql: &str) -> String {
    let stripped = without_comments(sql);
    let stripped = stripped.trim().trim_end_matches(';').trim_end();
    // A SET's value is taken as written after the key (`SET p=/a/*/b` keeps its `/*`); only
    // the comments before it go.
    if stripped
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("set "))
    {
        let start = leading_comments_end(sql);
        return sql[start..]
            .trim()
            .trim_end_matches(';')
            .trim_end()
            .to_string();
    }
    stripped.to_string()
}

/// Where the statement starts after its leading blanks and comments.
fn leading_comments_end(sql: &str) -> usize {
    let mut rest = sql;
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql.len() - trimmed.len();
        }
    }
}

/// The text without its comments outside quoted text.
fn without_comments(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                out.push(c);
                while let Some(q) = chars.next() {
                    out.push(q);
                    if q == '\\' && c != '`' {
                        if let Some(escaped) = chars.next() {
                            out.push(escaped);
                        }
                    } else if q == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for skipped in chars.by_ref() {
                    if last == '*' && skipped == '/' {
                        break;
                    }
                    last = skipped;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Whether a DataFusion plan creates, drops or writes something (its DDL, DML or COPY), under
/// EXPLAIN too (EXPLAIN ANALYZE runs it).
fn changes_things(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Ddl(_) | LogicalPlan::Dml(_) | LogicalPlan::Copy(_) => true,
        LogicalPlan::Explain(e) => changes_things(&e.plan),
        LogicalPlan::Analyze(a) => changes_things(&a.input),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_stripped() {
        assert_eq!(strip_statement("  -- hello\nselect 1 ;; "), "select 1");
        assert_eq!(strip_statement("-- only a comment"), "");
        assert_eq!(
            strip_statement("/* {\"app\": \"dbt\"} */\n\n  show databases"),
            "show databases"
        );
        assert_eq!(strip_statement("show tables /* x */ ;"), "show tables");
        assert_eq!(
            strip_statement("select '--', \"/*\", 'it\\'s -- no' -- yes\nfrom t"),
            "select '--', \"/*\", 'it\\'s -- no' \nfrom t"
        );
        assert_eq!(strip_statement("select /*+ MAPJOIN(b) */ 1"), "select   1");
        assert_eq!(
            strip_statement("/* dbt */ -- x\n SET p=/a/*/b -- kept;"),
            "SET p=/a/*/b -- kept"
        );
    }
}
