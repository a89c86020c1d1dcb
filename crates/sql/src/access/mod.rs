//! Access control: SQL-standard authorization's decision ([`decide`]: who holds which
//! privilege, roles, what a session may see of the catalog), what each statement needs of it
//! ([`needs`]), and the server's policy on keys, functions and paths ([`policy`]: restricted
//! and hidden configuration keys, Hive's UDF allow and deny lists, the folders statements may
//! name).

pub mod decide;
pub mod needs;
pub mod policy;
