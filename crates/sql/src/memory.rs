//! The memory pool of the server's queries: DataFusion's fair spilling pool, with room kept
//! for an operator's next growth.
//!
//! Operators account for their memory after they have allocated it: a hash aggregation's
//! table grows by allocating a table twice as large while the old one still exists, and only
//! then asks the pool for the difference. A pool that lets one operator hold nearly all of it
//! lets that growth go past the memory the process has (its cgroup, its `ulimit -v`), and an
//! allocation that fails aborts the whole server. [`HeadroomPool`] therefore grants growth
//! only while, after it, as much is still free in the pool as the growing reservation holds:
//! the room its next doubling needs is checked for before it allocates. Past that, the operator
//! spills (or its query fails with "Resources exhausted"), and the server stays up. The price:
//! one operator holds at most about half the pool (with the default pool, a quarter of the
//! memory), joins' build sides included. It is a rule, not a reservation: operators growing at
//! once may each count on the same free room.

use datafusion::common::{resources_datafusion_err, Result};
use datafusion::execution::memory_pool::{
    human_readable_size, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};

/// A pool that keeps room for its reservations' next growth (see the module's text).
#[derive(Debug)]
pub(crate) struct HeadroomPool<P> {
    inner: P,
    limit: usize,
}

impl<P: MemoryPool> HeadroomPool<P> {
    /// `inner`, whose limit is `limit` bytes.
    pub(crate) fn new(inner: P, limit: usize) -> Self {
        Self { inner, limit }
    }
}

impl<P: MemoryPool> std::fmt::Display for HeadroomPool<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeadroomPool({})", self.inner)
    }
}

impl<P: MemoryPool> MemoryPool for HeadroomPool<P> {
    fn name(&self) -> &str {
        "HeadroomPool"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer)
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer)
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.inner.grow(reservation, additional)
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink)
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        // Checked before the inner pool grants anything, so a refusal holds nothing back from
        // other consumers even for a moment. (Concurrent growths may each see the same free
        // room: the rule keeps room in the common case, it reserves nothing.)
        let after = reservation.size().saturating_add(additional);
        let free = self.limit.saturating_sub(self.inner.reserved());
        if free < additional.saturating_add(after) {
            return Err(resources_datafusion_err!(
                "Failed to allocate additional {} for {} with {} already allocated for this reservation - {} remain available for the total pool, and a reservation may grow only while as much as it then holds stays free for its next growth",
                human_readable_size(additional),
                reservation.consumer().name(),
                human_readable_size(reservation.size()),
                human_readable_size(free)
            ));
        }
        self.inner.try_grow(reservation, additional)
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
    }

    fn memory_limit(&self) -> MemoryLimit {
        self.inner.memory_limit()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::execution::memory_pool::{FairSpillPool, MemoryConsumer, MemoryPool};

    use super::HeadroomPool;

    #[test]
    fn a_reservation_grows_only_while_its_next_growth_fits() {
        let pool: Arc<dyn MemoryPool> = Arc::new(HeadroomPool::new(FairSpillPool::new(1000), 1000));
        let a = MemoryConsumer::new("agg")
            .with_can_spill(true)
            .register(&pool);
        a.try_grow(400).unwrap();
        a.try_grow(100).unwrap();
        assert_eq!(pool.reserved(), 500);
        // 501 held would leave 499 free: not room for its next growth.
        let err = a.try_grow(1).unwrap_err().to_string();
        assert!(err.contains("Resources exhausted"), "{err}");
        assert_eq!(a.size(), 500);
        assert_eq!(pool.reserved(), 500);
        // Other small reservations still fit beside it.
        let b = MemoryConsumer::new("sort").register(&pool);
        b.try_grow(200).unwrap();
        assert_eq!(pool.reserved(), 700);
        drop(a);
        assert_eq!(pool.reserved(), 200);
    }

    #[test]
    fn the_inner_pools_own_limit_still_holds() {
        let pool: Arc<dyn MemoryPool> = Arc::new(HeadroomPool::new(FairSpillPool::new(1000), 1000));
        let a = MemoryConsumer::new("unspillable").register(&pool);
        a.try_grow(300).unwrap();
        let b = MemoryConsumer::new("other").register(&pool);
        b.try_grow(300).unwrap();
        let err = b.try_grow(500).unwrap_err().to_string();
        assert!(err.contains("Resources exhausted"), "{err}");
        assert_eq!(pool.reserved(), 600);
    }
}
