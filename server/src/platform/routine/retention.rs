//! The runner's own housekeeping: a week of run rows kept.

use super::{Lease, Outcome, Record, Routine, RunResult, Scope, Spec, Target, store};
use async_trait::async_trait;
use chrono::Utc;
use sqlx::PgPool;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Retention of the runs' record: a week of rows, deleted hourly.
pub struct RunRetention {
    pool: PgPool,
}

impl RunRetention {
    pub const KEEP: Duration = Duration::from_secs(7 * 24 * 3600);

    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl Routine for RunRetention {
    fn spec(&self) -> Spec {
        Spec {
            name: "routine-run-retention",
            scope: Scope::Global,
            lease: Lease::Exclusive,
            record: Record::EveryRun,
            every: Duration::from_secs(3600),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        let before = Utc::now() - chrono::Duration::from_std(Self::KEEP).unwrap_or_default();
        let deleted = store::expire_runs(&self.pool, before).await?;
        Ok(Outcome::Done(serde_json::json!({ "deleted": deleted })))
    }
}
