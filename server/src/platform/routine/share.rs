//! One replica's view of how the per-cluster routines are shared out: its
//! heartbeat, the live replicas and the leases each holds (read with the
//! schedules every [`super::POLL`]), and the clusters it holds itself
//! (known at once, from its own claims). The rule of who takes and who
//! gives up is `streamkeeper::platform::share`'s.

use super::store::replicas as store;
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, RwLock};
use std::time::Duration;
use streamkeeper::platform::share::{self, Holding};
use streamkeeper_app::platform::model::{Held, ReplicaShare, ReplicaShares};
use tokio::time::Instant;

/// A replica unseen for this long is not counted in the shares: three
/// heartbeats missed.
pub const ALIVE: Duration = Duration::from_secs(6);
/// How far over its fair share a replica may hold before it gives one up
/// whatever the others hold: absorbs a view a heartbeat old.
const SLACK: usize = 1;
/// How old a view may be when a replica decides to take or give up a
/// cluster: a replica that just took or gave one up changed the spread,
/// and a poll-old view (two seconds) has two replicas move clusters about
/// on the same stale counts.
const FRESH: Duration = Duration::from_millis(250);

/// What the last poll read.
struct View {
    read: Instant,
    alive: Vec<String>,
    /// routine → holder → live cluster leases.
    held: HashMap<String, HashMap<String, usize>>,
    targets: usize,
}

pub(super) struct Shares {
    holder: String,
    /// None until the first poll: until then a replica takes what it can.
    view: RwLock<Option<View>>,
    /// routine → the clusters this replica holds its lease for.
    mine: Mutex<HashMap<&'static str, HashSet<i64>>>,
}

impl Shares {
    pub fn new(holder: String) -> Self {
        Self {
            holder,
            view: RwLock::new(None),
            mine: Mutex::default(),
        }
    }

    /// Writes the heartbeat and reads the others': one poll's share work.
    pub async fn poll(&self, pool: &PgPool) -> Result<(), sqlx::Error> {
        store::beat(pool, &self.holder, env!("CARGO_PKG_VERSION")).await?;
        self.read(pool).await
    }

    /// Reads the view again unless it is fresh (a failed read keeps the
    /// last: the decision is then a poll old, as between reads).
    async fn refresh(&self, pool: &PgPool) {
        let fresh = self
            .view
            .read()
            .is_ok_and(|v| v.as_ref().is_some_and(|v| v.read.elapsed() < FRESH));
        if !fresh && let Err(e) = self.read(pool).await {
            tracing::warn!(error = %e, "could not read the replicas' shares");
        }
    }

    async fn read(&self, pool: &PgPool) -> Result<(), sqlx::Error> {
        let alive = store::replicas(pool, ALIVE)
            .await?
            .into_iter()
            .filter(|r| r.alive)
            .map(|r| r.holder)
            .collect();
        let mut held: HashMap<String, HashMap<String, usize>> = HashMap::new();
        for h in store::held(pool).await? {
            let n = usize::try_from(h.held).unwrap_or(0);
            held.entry(h.routine).or_default().insert(h.holder, n);
        }
        let targets = usize::try_from(store::targets(pool).await?).unwrap_or(0);
        if let Ok(mut v) = self.view.write() {
            *v = Some(View {
                read: Instant::now(),
                alive,
                held,
                targets,
            });
        }
        Ok(())
    }

    fn mine(&self, routine: &'static str) -> HashSet<i64> {
        self.mine
            .lock()
            .map(|m| m.get(routine).cloned().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Records whether this replica holds `cluster`'s lease of `routine`.
    pub fn holds(&self, routine: &'static str, cluster: i64, ours: bool) {
        if let Ok(mut m) = self.mine.lock() {
            let set = m.entry(routine).or_default();
            if ours {
                set.insert(cluster);
            } else {
                set.remove(&cluster);
            }
        }
    }

    /// Notes a claim's answer for a cluster target (an error says nothing).
    pub fn noted(
        &self,
        routine: &'static str,
        target: super::Target,
        claim: &Result<super::store::Claim, sqlx::Error>,
    ) {
        if let (super::Target::Cluster(id), Ok(claim)) = (target, claim) {
            self.holds(routine, id, *claim == super::store::Claim::Ours);
        }
    }

    /// The live replicas' holdings of `routine` (this one's as it knows
    /// them itself), and the targets shared; none before the first poll.
    fn holdings(&self, routine: &'static str) -> Option<(Vec<Holding>, usize)> {
        let mine = self.mine(routine).len();
        let view = self.view.read().ok()?;
        let view = view.as_ref()?;
        let counts = view.held.get(routine);
        let mut holdings: Vec<Holding> = view
            .alive
            .iter()
            .filter(|r| **r != self.holder)
            .map(|r| Holding {
                replica: r.clone(),
                held: counts.and_then(|c| c.get(r)).copied().unwrap_or(0),
            })
            .collect();
        holdings.push(Holding {
            replica: self.holder.clone(),
            held: mine,
        });
        Some((holdings, view.targets))
    }

    /// Whether this replica may take (or keep) `cluster` of `routine`.
    pub async fn may_take(&self, pool: &PgPool, routine: &'static str, cluster: i64) -> bool {
        if self.mine(routine).contains(&cluster) {
            return true;
        }
        self.refresh(pool).await;
        self.holdings(routine).is_none_or(|(holdings, targets)| {
            let held = holdings
                .iter()
                .find(|h| h.replica == self.holder)
                .map_or(0, |h| h.held);
            share::may_take(held, targets, holdings.len())
        })
    }

    /// Whether this replica should give one cluster of `routine` up now.
    pub async fn should_shed(&self, pool: &PgPool, routine: &'static str) -> bool {
        self.refresh(pool).await;
        self.holdings(routine).is_some_and(|(holdings, targets)| {
            share::should_shed(&self.holder, &holdings, targets, SLACK)
        })
    }
}

/// Every replica seen in the last day with what it holds, and the share.
pub async fn listing(pool: &PgPool) -> Result<ReplicaShares, sqlx::Error> {
    let replicas = store::replicas(pool, ALIVE).await?;
    let held = store::held(pool).await?;
    let clusters = u64::try_from(store::targets(pool).await?).unwrap_or(0);
    let alive = replicas.iter().filter(|r| r.alive).count();
    let fair_share = share::fair_share(usize::try_from(clusters).unwrap_or(0), alive) as u64;
    let replicas = replicas
        .into_iter()
        .map(|r| ReplicaShare {
            held: held
                .iter()
                .filter(|h| h.holder == r.holder)
                .map(|h| Held {
                    routine: h.routine.clone(),
                    clusters: u64::try_from(h.held).unwrap_or(0),
                })
                .collect(),
            replica: r.holder,
            version: r.version,
            started_at: r.started_at,
            seen_at: r.seen_at,
            alive: r.alive,
        })
        .collect();
    Ok(ReplicaShares {
        clusters,
        alive: alive as u64,
        fair_share,
        replicas,
    })
}
