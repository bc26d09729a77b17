//! Webhook deliveries: Slack-compatible JSON (a `text` field plus the
//! structured flag), retried with exponential backoff, at most
//! [`MAX_ATTEMPTS`] times. Each delivery is claimed, sent and recorded on
//! its own: the claim is one statement (rows another replica claims are
//! skipped), the post holds no transaction, and its outcome is recorded in
//! a short transaction of its own. So a sampler updating the same flags
//! never waits on a webhook, nothing rolls back a delivery already made,
//! and a receiver that hangs or fails delays only its own deliveries.
//! Each carries its idempotency key, the same on every retry.
//!
//! Deliveries go through [`Webhooks`] (`clients/webhook.rs`).

use crate::clients::webhook::Webhooks;
use crate::flags::store::{self, Delivery};
use crate::platform::routine::{Lease, Outcome, Record, Routine, RunResult, Scope, Spec, Target};
use async_trait::async_trait;
use sqlx::PgPool;
use std::time::Duration;
use streamkeeper::flags::backoff_s;
use streamkeeper::platform::egress::EgressPolicy;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub const MAX_ATTEMPTS: i32 = 8;

/// Deliveries claimed at a time, and sent side by side.
const BATCH: i64 = 50;

/// How long a claim lasts: far longer than a post may take (the sender's
/// timeout is 5 s), so no other replica sends a delivery being sent.
const CLAIM_S: i64 = 120;

/// Sends what is due once; returns how many were attempted.
pub async fn deliver_due(
    pool: &PgPool,
    webhooks: &Webhooks,
) -> Result<usize, crate::platform::errors::Db> {
    let due = store::claim(pool, BATCH, CLAIM_S).await?;
    let n = due.len();
    let mut sending = JoinSet::new();
    for d in due {
        let (pool, webhooks) = (pool.clone(), webhooks.clone());
        sending.spawn(async move { deliver(&pool, &webhooks, d).await });
    }
    let mut first_error = None;
    while let Some(done) = sending.join_next().await {
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "a delivery's outcome could not be recorded");
                first_error.get_or_insert(e);
            }
            Err(e) => tracing::error!(error = %e, "a delivery's task failed"),
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

/// One claimed delivery: post it, then record how that went. An outcome
/// that cannot be recorded leaves the claim to run out and the delivery
/// to be sent again with the same key.
async fn deliver(
    pool: &PgPool,
    webhooks: &Webhooks,
    d: Delivery,
) -> Result<(), crate::platform::errors::Db> {
    match webhooks.post(&d.url, &d.idempotency_key, &d.body).await {
        Ok(()) => store::delivered(pool, &d, crate::platform::clock::now()).await,
        Err(e) => {
            tracing::warn!(delivery = d.id, attempt = d.attempts + 1, error = %e, "webhook failed");
            store::retry_later(pool, &d, &e, backoff_s(d.attempts), MAX_ATTEMPTS).await
        }
    }
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
