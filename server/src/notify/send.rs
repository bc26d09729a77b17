//! A channel's deliveries sent: claimed, the endpoint and secret resolved
//! from their references only now (never stored, never logged), signed or
//! keyed as the receiver expects, and recorded with the receiver's answer
//! in a short transaction of their own. A 4xx (other than 408 and 429)
//! marks the channel broken with that answer and gives the delivery up:
//! its settings are wrong and retrying will not mend them; the other
//! channels deliver regardless. Anything else is retried with back-off and
//! the same idempotency key. An email channel's messages go through the
//! operator's mail server (`clients::smtp`, the approvers' mail's): a
//! refusal of the message or its recipients (a 5xx) marks it broken the
//! same, anything else (STARTTLS not offered, a 4xx) is retried, and
//! with no mail server set the message waits for one, no attempt spent.

use crate::clients::kafka::settings::{SecretRef, SettingsError};
use crate::clients::smtp::{Email, Smtp, SmtpError};
use crate::clients::webhook::{Answer, Webhooks};
use crate::notify::store::{self, ChannelDelivery};
use crate::platform::errors::Db;
use serde_json::Value;
use sqlx::PgPool;
use streamkeeper::flags::backoff_s;
use streamkeeper::notify::email::FlagMail;
use streamkeeper::notify::{ChannelKind, broken_by, pagerduty, webhook};
use streamkeeper::platform::credential::CredentialPolicy;
use tokio::task::JoinSet;

pub const MAX_ATTEMPTS: i32 = 8;
/// How long an email channel's message waits before it looks again for a
/// mail server (one is set by restarting with it).
const WAIT_FOR_MAIL_S: i64 = 60;
const BATCH: i64 = 50;
const CLAIM_S: i64 = 120;

/// A channel's settings as sending needs them.
pub struct Target<'a> {
    pub kind: &'a str,
    pub endpoint: Option<&'a str>,
    pub endpoint_ref: Option<&'a str>,
    pub secret_ref: Option<&'a str>,
}

/// Why a message was not sent (no answer, or not even tried). Never the
/// endpoint or a secret: only what went wrong, for the delivery's log.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("the channel's kind {0} is unknown")]
    UnknownKind(String),
    #[error("the channel has no endpoint")]
    NoEndpoint,
    #[error("PagerDuty needs a routing key")]
    NoRoutingKey,
    #[error("a credential cannot be read: {0}")]
    Credential(#[from] SettingsError),
    #[error("the message cannot be written: {0}")]
    Body(#[from] serde_json::Error),
    /// The receiver did not answer (refused, timed out, not allowed).
    #[error("{0}")]
    NoAnswer(String),
    #[error("no mail server is set (STREAMKEEPER_SMTP_HOST)")]
    NoMailServer,
    /// The mail server's answer, or why there was none.
    #[error("{0}")]
    Mail(#[from] SmtpError),
}

impl SendError {
    /// Whether it is the channel's settings that are wrong (a mail server
    /// refusing the message or its recipients for good), so the channel
    /// is broken until they change.
    pub fn breaks_channel(&self) -> bool {
        matches!(self, SendError::Mail(e) if e.is_permanent())
    }
}

fn secret(reference: &str, policy: &CredentialPolicy) -> Result<String, SettingsError> {
    SecretRef::checked(reference, policy).and_then(|s| s.resolve())
}

/// One message to a channel, ready to post.
pub struct Prepared {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    /// The exact bytes sent (a signature covers these).
    pub bytes: Vec<u8>,
}

/// Where channels' credential references may point (see
/// `CredentialPolicy::within`): `{prefix}NOTIFY_…` and `{dir}/notify/…`.
pub const CHANNELS_SCOPE: &str = "notify";

/// The URL, headers and exact bytes of one message to `t`.
pub fn prepare(
    t: &Target<'_>,
    body: &Value,
    policy: &CredentialPolicy,
) -> Result<Prepared, SendError> {
    let kind = ChannelKind::parse(t.kind).ok_or_else(|| SendError::UnknownKind(t.kind.into()))?;
    // Read under the channels' own policy again: a reference stored before
    // it narrowed, or edited in the table, still names no other secret.
    let policy = &policy.within(CHANNELS_SCOPE);
    let url = match (t.endpoint, t.endpoint_ref, kind.needs().default_endpoint) {
        (Some(u), _, _) => u.to_owned(),
        (None, Some(r), _) => secret(r, policy)?,
        (None, None, Some(d)) => d.to_owned(),
        (None, None, None) => return Err(SendError::NoEndpoint),
    };
    let mut headers = Vec::new();
    let bytes = match (kind, t.secret_ref) {
        (ChannelKind::PagerDuty, Some(r)) => {
            let key = secret(r, policy)?;
            serde_json::to_vec(&pagerduty::with_routing_key(body, &key))
        }
        (ChannelKind::PagerDuty, None) => return Err(SendError::NoRoutingKey),
        (ChannelKind::Webhook, Some(r)) => {
            let key = secret(r, policy)?;
            let bytes = serde_json::to_vec(body)?;
            let now_s = crate::platform::clock::now().timestamp();
            headers.push((
                webhook::SIGNATURE_HEADER,
                webhook::signature(key.as_bytes(), now_s, &bytes),
            ));
            Ok(bytes)
        }
        _ => serde_json::to_vec(body),
    }?;
    Ok(Prepared {
        url,
        headers,
        bytes,
    })
}

/// Sends one message now; `Err` when it could not be sent or got no answer.
pub async fn send(
    webhooks: &Webhooks,
    t: &Target<'_>,
    key: &str,
    body: &Value,
    policy: &CredentialPolicy,
) -> Result<Answer, SendError> {
    let p = prepare(t, body, policy)?;
    webhooks
        .send(&p.url, key, p.bytes, &p.headers)
        .await
        .map_err(SendError::NoAnswer)
}

/// Mails one queued message of an email channel `t` through `mail`; the
/// mail server's answer.
pub async fn mail(mail: Option<&Smtp>, t: &Target<'_>, body: &Value) -> Result<String, SendError> {
    let smtp = mail.ok_or(SendError::NoMailServer)?;
    let to = t.endpoint.ok_or(SendError::NoEndpoint)?;
    let m: FlagMail = serde_json::from_value(body.clone())?;
    let email = Email {
        to: to.to_owned(),
        subject: m.subject,
        text: m.text,
        html: m.html,
        message_id: m.message_id,
        in_reply_to: m.in_reply_to,
    };
    Ok(smtp.send(&email).await?)
}

/// How the channels' messages leave: webhooks, and the mail server (if
/// one is set) for email channels.
#[derive(Clone)]
pub struct Senders {
    pub webhooks: Webhooks,
    pub mail: Option<Smtp>,
}

/// Sends the due channel deliveries once; returns how many were attempted.
pub async fn send_due(
    pool: &PgPool,
    senders: &Senders,
    policy: &CredentialPolicy,
) -> Result<usize, Db> {
    let due = store::claim(pool, BATCH, CLAIM_S).await?;
    let n = due.len();
    let mut sending = JoinSet::new();
    for d in due {
        let (pool, senders, policy) = (pool.clone(), senders.clone(), policy.clone());
        sending.spawn(async move { deliver(&pool, &senders, &policy, d).await });
    }
    let mut first_error = None;
    while let Some(done) = sending.join_next().await {
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "a channel delivery's outcome could not be recorded");
                first_error.get_or_insert(e);
            }
            Err(e) => tracing::error!(error = %e, "a channel delivery's task failed"),
        }
    }
    first_error.map_or(Ok(n), Err)
}

async fn deliver(
    pool: &PgPool,
    senders: &Senders,
    policy: &CredentialPolicy,
    d: ChannelDelivery,
) -> Result<(), Db> {
    let t = Target {
        kind: &d.kind,
        endpoint: d.endpoint.as_deref(),
        endpoint_ref: d.endpoint_ref.as_deref(),
        secret_ref: d.secret_ref.as_deref(),
    };
    if ChannelKind::parse(&d.kind) == Some(ChannelKind::Email) {
        return deliver_mail(pool, senders.mail.as_ref(), &t, &d).await;
    }
    let backoff = backoff_s(d.attempts);
    match send(&senders.webhooks, &t, &d.idempotency_key, &d.body, policy).await {
        Ok(a) if a.ok() => {
            store::delivered(pool, &d, &a.shown()).await?;
            store::set_broken(pool, d.channel_id, None).await
        }
        Ok(a) if broken_by(a.status) => {
            tracing::warn!(
                delivery = d.id,
                channel = d.channel_id,
                status = a.status,
                "channel broken"
            );
            store::failed(pool, &d, &a.shown(), backoff, MAX_ATTEMPTS, true).await?;
            store::set_broken(pool, d.channel_id, Some(&a.shown())).await
        }
        Ok(a) => store::failed(pool, &d, &a.shown(), backoff, MAX_ATTEMPTS, false).await,
        Err(e) => {
            tracing::warn!(delivery = d.id, attempt = d.attempts + 1, error = %e, "channel delivery failed");
            store::failed(pool, &d, &e.to_string(), backoff, MAX_ATTEMPTS, false).await
        }
    }
}

/// One claimed email delivery, recorded as [`deliver`] records a post.
async fn deliver_mail(
    pool: &PgPool,
    smtp: Option<&Smtp>,
    t: &Target<'_>,
    d: &ChannelDelivery,
) -> Result<(), Db> {
    if smtp.is_none() {
        // No mail server set (yet): the message waits for one, its
        // attempts unspent, rather than be given up before one is.
        let why = SendError::NoMailServer.to_string();
        return store::wait(pool, d, &why, WAIT_FOR_MAIL_S).await;
    }
    let backoff = backoff_s(d.attempts);
    match mail(smtp, t, &d.body).await {
        Ok(answer) => {
            store::delivered(pool, d, &answer).await?;
            store::set_broken(pool, d.channel_id, None).await
        }
        Err(e) if e.breaks_channel() => {
            tracing::warn!(delivery = d.id, channel = d.channel_id, error = %e, "channel broken");
            store::failed(pool, d, &e.to_string(), backoff, MAX_ATTEMPTS, true).await?;
            store::set_broken(pool, d.channel_id, Some(&e.to_string())).await
        }
        Err(e) => {
            tracing::warn!(delivery = d.id, attempt = d.attempts + 1, error = %e, "channel delivery failed");
            store::failed(pool, d, &e.to_string(), backoff, MAX_ATTEMPTS, false).await
        }
    }
}
