//! A channel's deliveries sent: claimed, the endpoint and secret resolved
//! from their references only now (never stored, never logged), signed or
//! keyed as the receiver expects, and recorded with the receiver's answer
//! in a short transaction of their own. A 4xx (other than 408 and 429)
//! marks the channel broken with that answer and gives the delivery up:
//! its settings are wrong and retrying will not mend them; the other
//! channels deliver regardless. Anything else is retried with back-off and
//! the same idempotency key.

use crate::clients::kafka::settings::SecretRef;
use crate::clients::webhook::{Answer, Webhooks};
use crate::notify::store::{self, ChannelDelivery};
use crate::platform::errors::Db;
use serde_json::Value;
use sqlx::PgPool;
use streamkeeper::flags::backoff_s;
use streamkeeper::notify::{ChannelKind, broken_by, pagerduty, webhook};
use streamkeeper::platform::credential::CredentialPolicy;
use tokio::task::JoinSet;

pub const MAX_ATTEMPTS: i32 = 8;
const BATCH: i64 = 50;
const CLAIM_S: i64 = 120;

/// A channel's settings as sending needs them.
pub struct Target<'a> {
    pub kind: &'a str,
    pub endpoint: Option<&'a str>,
    pub endpoint_ref: Option<&'a str>,
    pub secret_ref: Option<&'a str>,
}

fn secret(reference: &str, policy: &CredentialPolicy) -> Result<String, String> {
    SecretRef::checked(reference, policy)
        .and_then(|s| s.resolve())
        .map_err(|e| e.to_string())
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
) -> Result<Prepared, String> {
    let kind = ChannelKind::parse(t.kind).ok_or_else(|| format!("unknown kind {}", t.kind))?;
    // Read under the channels' own policy again: a reference stored before
    // it narrowed, or edited in the table, still names no other secret.
    let policy = &policy.within(CHANNELS_SCOPE);
    let url = match (t.endpoint, t.endpoint_ref, kind.needs().default_endpoint) {
        (Some(u), _, _) => u.to_owned(),
        (None, Some(r), _) => secret(r, policy)?,
        (None, None, Some(d)) => d.to_owned(),
        (None, None, None) => return Err("the channel has no endpoint".into()),
    };
    let mut headers = Vec::new();
    let bytes = match (kind, t.secret_ref) {
        (ChannelKind::PagerDuty, Some(r)) => {
            let key = secret(r, policy)?;
            serde_json::to_vec(&pagerduty::with_routing_key(body, &key))
        }
        (ChannelKind::PagerDuty, None) => return Err("PagerDuty needs a routing key".into()),
        (ChannelKind::Webhook, Some(r)) => {
            let key = secret(r, policy)?;
            let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
            let now_s = crate::platform::clock::now().timestamp();
            headers.push((
                webhook::SIGNATURE_HEADER,
                webhook::signature(key.as_bytes(), now_s, &bytes),
            ));
            Ok(bytes)
        }
        _ => serde_json::to_vec(body),
    }
    .map_err(|e| e.to_string())?;
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
) -> Result<Answer, String> {
    let p = prepare(t, body, policy)?;
    webhooks.send(&p.url, key, p.bytes, &p.headers).await
}

/// Sends the due channel deliveries once; returns how many were attempted.
pub async fn send_due(
    pool: &PgPool,
    webhooks: &Webhooks,
    policy: &CredentialPolicy,
) -> Result<usize, Db> {
    let due = store::claim(pool, BATCH, CLAIM_S).await?;
    let n = due.len();
    let mut sending = JoinSet::new();
    for d in due {
        let (pool, webhooks, policy) = (pool.clone(), webhooks.clone(), policy.clone());
        sending.spawn(async move { deliver(&pool, &webhooks, &policy, d).await });
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
    webhooks: &Webhooks,
    policy: &CredentialPolicy,
    d: ChannelDelivery,
) -> Result<(), Db> {
    let t = Target {
        kind: &d.kind,
        endpoint: d.endpoint.as_deref(),
        endpoint_ref: d.endpoint_ref.as_deref(),
        secret_ref: d.secret_ref.as_deref(),
    };
    let backoff = backoff_s(d.attempts);
    match send(webhooks, &t, &d.idempotency_key, &d.body, policy).await {
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
            store::failed(pool, &d, &e, backoff, MAX_ATTEMPTS, false).await
        }
    }
}
