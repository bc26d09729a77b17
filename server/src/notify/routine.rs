//! The `notify` routine: every second on every replica (each step claims
//! its rows), it queues repeats of flags left unacknowledged and re-posts
//! of open flags' Alertmanager alerts, fans the pending transitions out
//! to the channels, and sends what is due.

use crate::clients::smtp::Smtp;
use crate::clients::webhook::Webhooks;
use crate::notify::{fanout, send, store};
use crate::platform::errors::Db;
use crate::platform::routine::{Lease, Outcome, Record, Routine, RunResult, Scope, Spec, Target};
use async_trait::async_trait;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use streamkeeper::notify::{FlagNotice, Transition, alertmanager, group};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use tokio_util::sync::CancellationToken;

/// Queues the re-posts of open flags' alerts due now; returns how many posts.
pub async fn queue_reposts(conn: &mut PgConnection, base_url: &str) -> Result<usize, Db> {
    let rows = store::alerts_to_repost(conn, alertmanager::REPOST_S).await?;
    let now_ms = crate::platform::clock::now().timestamp_millis();
    let mut by_channel: Vec<(i64, Vec<(Transition, FlagNotice)>)> = Vec::new();
    for r in rows {
        let f = FlagNotice {
            id: r.flag_id,
            url: format!("{}/flags/{}", base_url.trim_end_matches('/'), r.flag_id),
            cluster: r.cluster,
            subject_kind: r.subject_kind,
            subject: r.subject,
            kind: r.kind,
            was: None,
            reason: r.reason,
            team: r.team,
            onset_ms: r.onset_at.timestamp_millis(),
            topics: r.topics,
            label_topics: r.label_topics,
        };
        match by_channel.last_mut() {
            Some((c, told)) if *c == r.channel_id => told.push((Transition::Repeat, f)),
            _ => by_channel.push((r.channel_id, vec![(Transition::Repeat, f)])),
        }
    }
    let mut n = 0;
    for (channel, told) in by_channel {
        for notice in group(told) {
            let ids: Vec<i64> = notice.flags.iter().map(|f| f.id).collect();
            let body = alertmanager::alerts(&notice, now_ms);
            store::enqueue(conn, channel, "repeat", &ids, &body).await?;
            n += 1;
        }
    }
    Ok(n)
}

/// Queues reminders of flags left unacknowledged and re-posts of open
/// flags' alerts, on one replica at a time (the others skip the step).
async fn queue_reminders(pool: &PgPool, base_url: &str) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    if store::lock_reminders(&mut tx).await? {
        store::queue_repeats(&mut tx).await?;
        queue_reposts(&mut tx, base_url).await?;
    }
    Ok(tx.commit().await?)
}

/// One pass of everything the routine does; how many messages it sent.
/// Without a mail server: email channels' messages wait for one.
pub async fn pass(
    pool: &PgPool,
    base_url: &str,
    webhooks: &Webhooks,
    credentials: &CredentialPolicy,
) -> Result<usize, Db> {
    let senders = send::Senders {
        webhooks: webhooks.clone(),
        mail: None,
    };
    pass_with(pool, base_url, &senders, credentials).await
}

/// [`pass`], with email channels' messages sent through `senders.mail`.
pub async fn pass_with(
    pool: &PgPool,
    base_url: &str,
    senders: &send::Senders,
    credentials: &CredentialPolicy,
) -> Result<usize, Db> {
    queue_reminders(pool, base_url).await?;
    fanout::fan_out(pool, base_url).await?;
    send::send_due(pool, senders, credentials).await
}

pub struct Notify {
    pool: PgPool,
    base_url: String,
    senders: send::Senders,
    credentials: CredentialPolicy,
}

impl Notify {
    /// `base_url` is the console's public URL: messages link to flags there.
    pub fn new(
        pool: PgPool,
        base_url: String,
        egress: EgressPolicy,
        credentials: CredentialPolicy,
    ) -> reqwest::Result<Self> {
        Ok(Self {
            pool,
            base_url,
            senders: send::Senders {
                webhooks: Webhooks::new(egress)?,
                mail: None,
            },
            credentials,
        })
    }

    /// Email channels' messages go through this mail server.
    pub fn with_mail(mut self, mail: Option<Smtp>) -> Self {
        self.senders.mail = mail;
        self
    }
}

#[async_trait]
impl Routine for Notify {
    fn spec(&self) -> Spec {
        Spec {
            name: "notify",
            scope: Scope::Global,
            lease: Lease::Everywhere,
            record: Record::WhenWorked,
            every: Duration::from_secs(1),
        }
    }

    async fn run(&self, _: Target, _: &CancellationToken) -> RunResult {
        match pass_with(&self.pool, &self.base_url, &self.senders, &self.credentials).await? {
            0 => Ok(Outcome::Idle),
            n => Ok(Outcome::Done(serde_json::json!({ "attempted": n }))),
        }
    }
}
