//! How a replica keeps to its share of a per-cluster routine while it
//! runs: it forgets a target whose task ends, leaves a target to replicas
//! with less work when it holds its share, and hands one over after its run
//! when it holds more than the spread allows (the rule is
//! `streamkeeper::platform::share`'s; the counts are `share.rs`'s).

use super::{Shared, Target, store};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Forgets this replica's hold on a target when its task ends (the cluster
/// paused or removed, or shutdown): a share counts only what is held.
pub(super) struct Forget {
    pub(super) shared: Arc<Shared>,
    pub(super) routine: &'static str,
    pub(super) target: Target,
}

impl Drop for Forget {
    fn drop(&mut self) {
        forget(&self.shared, self.routine, self.target);
    }
}

pub(super) fn forget(shared: &Shared, routine: &'static str, target: Target) {
    if let Target::Cluster(id) = target {
        shared.shares.holds(routine, id, false);
    }
}

/// How long to wait before looking again when this replica holds its fair
/// share of `routine` already and `target` is not one of them: while
/// another replica holds it, until its lease lapses; while it is free, a
/// replica with less work takes it at its next look. Only for so long: a
/// target left free for a quarter of a lease's life (the view is a
/// heartbeat old, a dead replica still counted, or the others are full) is
/// taken anyway, since an unsampled cluster is worse than an uneven share.
pub(super) async fn over_share(
    shared: &Shared,
    routine: &'static str,
    target: Target,
    ttl: Duration,
    declined: &mut Option<Instant>,
) -> Option<Duration> {
    let Target::Cluster(id) = target else {
        return None;
    };
    if shared.shares.may_take(&shared.pool, routine, id).await {
        *declined = None;
        return None;
    }
    if let Ok(Some(left)) = store::replicas::lease_left(&shared.pool, routine, id).await {
        *declined = None;
        return Some(left + Duration::from_millis(100));
    }
    // Not a whole lease's life: a replica killed a moment ago still counts
    // as alive for a few heartbeats, and its clusters must move within an
    // interval (lapse at most three fifths of one, then this quarter).
    let since = *declined.get_or_insert_with(Instant::now);
    if since.elapsed() >= ttl / 4 {
        tracing::info!(
            routine,
            cluster = id,
            "no replica with less work took the cluster; taking it over its share"
        );
        *declined = None;
        return None;
    }
    Some(ttl / 8)
}

/// After a run, hands `target` over when this replica holds more than the
/// replicas' spread allows: its lease lapses when the next run is due
/// (`rest` from now), and a replica with less work takes it then, so the
/// cluster is sampled an interval after this run — never twice at once,
/// nor twice within an interval, nor skipped. True when handed over.
pub(super) async fn shed(
    shared: &Shared,
    routine: &'static str,
    target: Target,
    rest: Duration,
) -> bool {
    let Target::Cluster(id) = target else {
        return false;
    };
    // One decision at a time: targets whose runs end together would
    // otherwise each count the others as still held and all go.
    let _one = shared.shares.deciding().await;
    if !shared.shares.should_shed(&shared.pool, routine).await {
        return false;
    }
    match store::replicas::hand_over(&shared.pool, routine, id, &shared.holder, rest).await {
        Ok(released) => {
            shared.shares.holds(routine, id, false);
            if released {
                tracing::info!(
                    routine,
                    cluster = id,
                    "gave the cluster up to a replica with less work"
                );
            }
            released
        }
        Err(e) => {
            tracing::warn!(routine, cluster = id, error = %e, "could not give a cluster up");
            false
        }
    }
}
