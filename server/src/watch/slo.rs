//! Freshness SLOs at run time (issue 42): after each pass, each stream
//! with a freshness budget is judged fresh, stale or not known from its
//! readers' time lags and the pass's seconds are added to its tallies;
//! the burn-rate windows then raise, keep or resolve its SLO_BURN flag
//! through the flags' lifecycle. The rules are `streamkeeper::watch::slo`.

use crate::platform::authz::require;
use crate::platform::errors::Db;
use crate::watch::ClusterService;
use crate::watch::store::slo::{self as store, Scope, SloRow};
use crate::watch::store::{ClusterRow, TopicRow};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::watch::slo::{
    BurnCall, StreamSlo, Tally, burn_key, month_bounds, month_slo, observe_burn, pass_freshness,
    stands_for, within_tier,
};
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::{DomainSlo, SloStream};

/// Each topic's readers' largest time lags in a pass, one a group.
pub type TimeLags = HashMap<String, Vec<Option<f64>>>;

/// Adds a group's time lags by topic (`GroupObservation::time_lags`).
pub fn add_time_lags(all: &mut TimeLags, group: BTreeMap<String, Option<f64>>) {
    for (topic, lag) in group {
        all.entry(topic).or_default().push(lag);
    }
}

/// What the SLOs observed in a pass, for the flags' lifecycle.
#[derive(Default)]
pub struct SloPass {
    pub observed: Vec<Observation>,
    /// The burn flags judged (only these may resolve).
    pub evaluated: Vec<FlagKey>,
}

/// Judges the streams of `catalog` with a freshness budget after a pass
/// that started at `started` and read the cluster by `at`, records the
/// pass (standing for the time since the cluster's previous pass, see
/// `stands_for`) and calls each tiered stream's burn rate.
pub async fn after_pass(
    pool: &sqlx::PgPool,
    cluster: &ClusterRow,
    (started, at): (DateTime<Utc>, DateTime<Utc>),
    catalog: &HashMap<String, TopicRow>,
    lags: &TimeLags,
) -> Result<SloPass, Db> {
    let budgeted: Vec<(&String, &TopicRow, i32)> = catalog
        .iter()
        .filter_map(|(n, t)| t.freshness_budget_s.map(|b| (n, t, b)))
        .collect();
    let mut pass = SloPass::default();
    // A stream without a budget or a tier has no burn rate: a burn flag
    // raised before either was removed resolves.
    pass.evaluated.extend(
        catalog
            .iter()
            .filter(|(_, t)| t.freshness_budget_s.is_none() || t.tier.is_none())
            .map(|(n, _)| burn_key(n)),
    );
    if budgeted.is_empty() {
        return Ok(pass);
    }
    let verdicts: Vec<_> = budgeted
        .iter()
        .map(|(n, _, b)| {
            let readers = lags.get(*n).into_iter().flatten().copied();
            ((*n).clone(), pass_freshness(*b, readers))
        })
        .collect();
    let prev = store::previous_pass_at(pool, cluster.id, started).await?;
    let stands = stands_for(
        prev.map(|p| p.timestamp_millis()),
        started.timestamp_millis(),
        cluster.interval_s,
    );
    store::record(pool, cluster.id, at, stands, &verdicts).await?;
    let windows = store::burn_windows(pool, cluster.id, at).await?;
    for (topic, t, _) in budgeted {
        let Some(tier) = t.tier else { continue };
        let w = windows.get(topic).copied().unwrap_or_default();
        match observe_burn(topic, tier, &w, at.timestamp_millis()) {
            BurnCall::Flag(o) => {
                pass.evaluated.push(o.key.clone());
                pass.observed.push(o);
            }
            BurnCall::Clear => pass.evaluated.push(burn_key(topic)),
            BurnCall::Held => {}
        }
    }
    Ok(pass)
}

/// A stream's SLO this month from its row.
fn slo_of(r: &SloRow, now: DateTime<Utc>) -> StreamSlo {
    let tally = Tally {
        fresh_s: r.fresh_s,
        stale_s: r.stale_s,
    };
    month_slo(r.tier, r.freshness_budget_s, tally, r.interval_s, now)
}

impl ClusterService {
    /// This month's SLOs of the streams in `scope`.
    async fn slo_streams(&self, scope: Scope<'_>) -> Result<Vec<SloStream>, AppError> {
        let now = crate::platform::clock::now();
        let rows = store::tallies(&self.pool, scope, month_bounds(now).0).await?;
        Ok(rows
            .iter()
            .map(|r| SloStream {
                cluster_id: r.cluster_id,
                cluster: r.cluster.clone(),
                topic: r.topic.clone(),
                domain: r.domain.clone(),
                slo: slo_of(r, now),
            })
            .collect())
    }

    /// The SLOs of cluster `id`'s streams, by topic (for its topic views;
    /// the caller has checked access).
    pub(super) async fn cluster_slos(
        &self,
        id: i64,
    ) -> Result<HashMap<String, StreamSlo>, AppError> {
        Ok(self
            .slo_streams(Scope::Cluster(id))
            .await?
            .into_iter()
            .map(|s| (s.topic, s.slo))
            .collect())
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Slo for ClusterService {
    #[tracing::instrument(skip_all, fields(user = %who.username, domain = domain))]
    async fn domain_slo(&self, who: &Principal, domain: &str) -> Result<DomainSlo, AppError> {
        require(who, Action::Read, "see streams")?;
        if domain.is_empty() || !store::domain_exists(&self.pool, domain).await? {
            return Err(AppError::NotFound(format!("Domain {domain}")));
        }
        let streams = self.slo_streams(Scope::Domain(domain)).await?;
        let (within, judged) = within_tier(streams.iter().map(|s| &s.slo));
        Ok(DomainSlo {
            domain: domain.to_string(),
            within_tier: within,
            judged,
            streams,
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn slos(&self, who: &Principal) -> Result<Vec<SloStream>, AppError> {
        require(who, Action::Read, "see streams")?;
        self.slo_streams(Scope::All).await
    }
}

/// The SLOs as CSV, one row a stream; names are people's text, so each
/// cell is kept from being read as a formula.
pub fn slo_csv(rows: &[SloStream]) -> Result<Vec<u8>, AppError> {
    use streamkeeper::platform::csv_cell::neutralise;
    use streamkeeper::watch::slo::RunOut;
    let fail = |e: csv::Error| crate::platform::errors::internal("writing the SLOs' CSV", e);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "domain",
        "cluster",
        "topic",
        "tier",
        "target_pct",
        "freshness_budget_s",
        "month",
        "fresh_min",
        "stale_min",
        "not_known_min",
        "attainment_pct",
        "budget_min",
        "budget_used_min",
        "budget_left_min",
        "runs_out",
        "within_tier",
        "interval_warning",
    ])
    .map_err(fail)?;
    let num = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for r in rows {
        let s = &r.slo;
        let runs_out = match s.runs_out {
            Some(RunOut::Exhausted) => "exhausted".to_string(),
            Some(RunOut::On(d)) => d.to_string(),
            Some(RunOut::NotThisMonth) => "not this month".into(),
            Some(RunOut::NotAtThisRate) => "not at this rate".into(),
            None => String::new(),
        };
        let cells = [
            r.domain.clone(),
            r.cluster.clone(),
            r.topic.clone(),
            s.tier.map(|t| t.to_string()).unwrap_or_default(),
            num(s.target_pct),
            s.freshness_budget_s.to_string(),
            s.month.clone(),
            num(Some(s.fresh_min)),
            num(Some(s.stale_min)),
            num(Some(s.not_known_min)),
            num(s.attainment_pct),
            num(s.budget_min),
            num(s.budget_used_min),
            num(s.budget_left_min),
            runs_out,
            s.within_tier.map(|b| b.to_string()).unwrap_or_default(),
            s.interval_warning.clone().unwrap_or_default(),
        ];
        w.write_record(cells.iter().map(|c| neutralise(c).into_owned()))
            .map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| crate::platform::errors::internal("writing the SLOs' CSV", e))
}
