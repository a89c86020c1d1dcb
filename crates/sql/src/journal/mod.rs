//! DDL on tables another system owns (`STORED BY` handlers) made crash-consistent: each
//! CREATE, DROP and CTAS records its intent in the metastore's journal before it touches the
//! handler's system, commits the catalog change and the intent's outcome together, and is
//! finished or undone by whoever finds the intent unfinished ([`handler_ddl`]); at start-up
//! and on a timer the server settles its own unfinished intents ([`recovery`], and
//! [`handler_ddl::sweep`]).

pub mod handler_ddl;
pub mod recovery;
