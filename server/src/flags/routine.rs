//! Webhook deliveries: Slack-compatible JSON (a `text` field plus the
//! structured flag), retried with exponential backoff, at most
//! [`MAX_ATTEMPTS`] times. Deliveries are claimed with SKIP LOCKED, so any
//! number of replicas can run this without sending twice.
//!
//! Deliveries go through [`Webhooks`] (`clients/webhook.rs`).

use crate::clients::webhook::Webhooks;
use crate::flags::store;
use crate::platform::routine::{Lease, Outcome, Record, Routine, RunResult, Scope, Spec, Target};
use async_trait::async_trait;
use sqlx::PgPool;
use std::time::Duration;
use streamkeeper::flags::backoff_s;
use streamkeeper::platform::egress::EgressPolicy;
use tokio_util::sync::CancellationToken;

pub const MAX_ATTEMPTS: i32 = 8;

/// Sends what is due once; returns how many were attempted.
pub async fn deliver_due(
    pool: &PgPool,
    webhooks: &Webhooks,
) -> Result<usize, crate::platform::errors::Db> {
    let mut tx = pool.begin().await?;
    let due = store::due(&mut tx, 20).await?;
    for d in &due {
        let outcome = webhooks.post(&d.url, &d.body).await;
        match outcome {
            Ok(()) => store::delivered(&mut tx, d).await?,
            Err(e) => {
                tracing::warn!(delivery = d.id, attempt = d.attempts + 1, error = %e, "webhook failed");
                store::retry_later(&mut tx, d, &e, backoff_s(d.attempts), MAX_ATTEMPTS).await?;
            }
        }
    }
    tx.commit().await?;
    Ok(due.len())
}

/// Deliveries as a routine: every replica sends what is due each second
/// (the claim is row by row), keeping a record only of passes that sent.
pub struct Deliveries {
    pool: PgPool,
    webhooks: Webhooks,
}

impl Deliveries {
    pub fn new(pool: PgPool, egress: EgressPolicy) -> reqwest::Result<Self> {
        Ok(Self {
            pool,
            webhooks: Webhooks::new(egress)?,
        })
    }
}

#[async_trait]
impl Routine for Deliveries {
    fn spec(&self) -> Spec {
        Spec {
            name: "webhooks",
            scope: Scope::Global,
            lease: Lease::Everywhere,
            record: Record::WhenWorked,
            every: Duration::from_secs(1),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        match deliver_due(&self.pool, &self.webhooks).await? {
            0 => Ok(Outcome::Idle),
            n => Ok(Outcome::Done(serde_json::json!({ "attempted": n }))),
        }
    }
}
