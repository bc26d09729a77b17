//! Webhook deliveries: Slack-compatible JSON (a `text` field plus the
//! structured flag), retried with exponential backoff, at most
//! [`MAX_ATTEMPTS`] times. Deliveries are claimed with SKIP LOCKED, so any
//! number of replicas can run this without sending twice.

use crate::store::flags as store;
use sqlx::PgPool;
use std::time::Duration;
use tokio::task::JoinHandle;

pub const MAX_ATTEMPTS: i32 = 8;

/// 2, 4, 8 … seconds, at most five minutes.
pub fn backoff_s(attempts: i32) -> i64 {
    2_i64
        .saturating_pow(u32::try_from(attempts.clamp(0, 20)).unwrap_or(20) + 1)
        .min(300)
}

/// Sends what is due once; returns how many were attempted.
pub async fn deliver_due(pool: &PgPool, http: &reqwest::Client) -> Result<usize, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let due = store::due(&mut tx, 20).await?;
    for d in &due {
        let sent = http.post(&d.url).json(&d.body).send().await;
        let outcome = match sent {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!("the webhook answered {}", r.status())),
            Err(e) => Err(format!("the webhook could not be reached: {e}")),
        };
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

pub fn spawn(pool: PgPool) -> JoinHandle<()> {
    tokio::spawn(async move {
        let http = match reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
        {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "no HTTP client: webhooks are not delivered");
                return;
            }
        };
        loop {
            if let Err(e) = deliver_due(&pool, &http).await {
                tracing::error!(error = %e, "webhook deliveries");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::backoff_s;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff_s(0), 2);
        assert_eq!(backoff_s(1), 4);
        assert_eq!(backoff_s(4), 32);
        assert_eq!(backoff_s(10), 300);
    }
}
