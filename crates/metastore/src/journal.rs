//! The intent journal: DDL whose side effects reach another system (a storage handler's
//! object) is recorded here before any side effect, in the metastore's own database, so a
//! crash at any step can be finished or undone at start-up. Each change of the journal that
//! goes with a change of the catalog (the table row appears, the table row goes) happens in
//! the same transaction as that change.

use serde::{Deserialize, Serialize};

use crate::model::Table;
use crate::MetastoreError;

/// What the operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntentKind {
    /// CREATE TABLE of a non-native table.
    CreateTable,
    /// DROP TABLE of a non-native table.
    DropTable,
}

/// How far the operation got, as far as the catalog knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntentState {
    /// Recorded; the catalog is unchanged. Recovery undoes what the handler may have done.
    Pending,
    /// The catalog changed (table added or removed) in the same transaction as this state:
    /// the operation is decided, and recovery finishes the handler's side.
    Committed,
    /// Decided the other way: the catalog will not change; what the handler did is being
    /// undone. Only `Pending` can become `Aborting`, so an operation is never both
    /// committed and undone, even when a commit's outcome was unknown to its caller.
    Aborting,
}

/// One operation in the journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Intent {
    /// Unique id; the handler tags the objects it creates with it.
    pub id: String,
    /// The server that runs it: recovery only takes over its own server's intents, so two
    /// servers sharing a catalog never undo each other's running operations.
    pub owner: String,
    /// What it does.
    pub kind: IntentKind,
    /// How far it got.
    pub state: IntentState,
    /// The table as it is being created, or as it was before the drop.
    pub table: Table,
    /// DROP of a managed table: delete the handler's object.
    pub delete_data: bool,
    /// Seconds since the epoch.
    pub created: i64,
}

impl Intent {
    /// `Conflict` unless the intent is still `Pending` (only then may it commit or abort).
    pub fn require_pending(&self) -> Result<(), MetastoreError> {
        if self.state == IntentState::Pending {
            Ok(())
        } else {
            Err(MetastoreError::Conflict(format!(
                "operation {} is {:?}, not pending",
                self.id, self.state
            )))
        }
    }
}
