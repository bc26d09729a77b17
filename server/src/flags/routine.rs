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
//! Deliveries go through [`Webhooks`] (`clients/webhook.rs`), and those
//! whose URL is `mailto:` through the mail server ([`Smtp`],
//! `clients/smtp.rs`): one email each, the same message on every retry.

use crate::clients::smtp::{Email, Smtp};
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
    deliver_due_with_mail(pool, webhooks, None).await
}

/// [`deliver_due`], with emails sent through `mail` (without one, an
/// email delivery fails and is retried, so setting a mail server later
/// still sends it).
pub async fn deliver_due_with_mail(
    pool: &PgPool,
    webhooks: &Webhooks,
    mail: Option<&Smtp>,
) -> Result<usize, crate::platform::errors::Db> {
    let due = store::claim(pool, BATCH, CLAIM_S).await?;
    let n = due.len();
    let mut sending = JoinSet::new();
    for d in due {
        let (pool, webhooks, mail) = (pool.clone(), webhooks.clone(), mail.cloned());
        sending.spawn(async move { deliver(&pool, &webhooks, mail.as_ref(), d).await });
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
    mail: Option<&Smtp>,
    d: Delivery,
) -> Result<(), crate::platform::errors::Db> {
    let sent = if d.url.starts_with(store::MAILTO) {
        send_mail(mail, &d).await
    } else {
        webhooks
            .post(&d.url, &d.idempotency_key, &d.body)
            .await
            .map_err(|e| (e, false))
    };
    match sent {
        Ok(()) => store::delivered(pool, &d, crate::platform::clock::now()).await,
        Err((e, permanent)) => {
            tracing::warn!(delivery = d.id, attempt = d.attempts + 1, error = %e, "delivery failed");
            // A refusal of this very message is final: no retry can help.
            let max = if permanent {
                d.attempts + 1
            } else {
                MAX_ATTEMPTS
            };
            store::retry_later(pool, &d, &e, backoff_s(d.attempts), max).await
        }
    }
}

/// One email delivery; the error says whether it is final. It may name
/// the address (a refused recipient), which the delivery's URL shows too:
/// an address, never a credential.
async fn send_mail(mail: Option<&Smtp>, d: &Delivery) -> Result<(), (String, bool)> {
    let Some(smtp) = mail else {
        return Err((
            "no mail server is set (STREAMKEEPER_SMTP_HOST)".into(),
            false,
        ));
    };
    let email: Email = serde_json::from_value(d.body.clone())
        .map_err(|e| (format!("the queued email cannot be read: {e}"), true))?;
    smtp.send(&email)
        .await
        .map(drop)
        .map_err(|e| (e.to_string(), e.is_permanent()))
}

/// Deliveries as a routine: every replica sends what is due each second
/// (the claim is row by row), keeping a record only of passes that sent.
pub struct Deliveries {
    pool: PgPool,
    webhooks: Webhooks,
    mail: Option<Smtp>,
}

impl Deliveries {
    pub fn new(pool: PgPool, egress: EgressPolicy) -> reqwest::Result<Self> {
        Ok(Self {
            pool,
            webhooks: Webhooks::new(egress)?,
            mail: None,
        })
    }

    /// Emails go through this mail server.
    pub fn with_mail(mut self, mail: Option<Smtp>) -> Self {
        self.mail = mail;
        self
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
        match deliver_due_with_mail(&self.pool, &self.webhooks, self.mail.as_ref()).await? {
            0 => Ok(Outcome::Idle),
            n => Ok(Outcome::Done(serde_json::json!({ "attempted": n }))),
        }
    }
}
