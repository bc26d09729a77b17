//! The webhook sender: the egress rule, no redirects (a 3xx is a failed
//! delivery: a receiver that moved is fixed in settings, not followed to
//! wherever it points), and the answer's body is never read, only its
//! status.

use crate::clients::egress::{HttpClient, refusal_of};
use reqwest::{Method, Url};
use std::time::Duration;
use streamkeeper::platform::egress::EgressPolicy;

/// The header a delivery's idempotency key travels in (the IETF draft
/// "The Idempotency-Key HTTP Header Field", as Stripe and others use it).
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// The webhook sender.
#[derive(Clone, Debug)]
pub struct Webhooks {
    http: HttpClient,
}

impl Webhooks {
    pub fn new(egress: EgressPolicy) -> reqwest::Result<Self> {
        let builder = reqwest::Client::builder().timeout(Duration::from_secs(5));
        Ok(Webhooks {
            http: HttpClient::new(egress, builder)?,
        })
    }

    /// One delivery, with its idempotency key as the `Idempotency-Key`
    /// header: the same on every retry of it, so a receiver that got it
    /// once can drop a repeat. Errors never hold the URL: a webhook's URL
    /// is its secret.
    pub async fn post(
        &self,
        url: &str,
        idempotency_key: &str,
        body: &serde_json::Value,
    ) -> Result<(), String> {
        let url = Url::parse(url).map_err(|_| "the webhook URL is not a URL".to_owned())?;
        let request = self
            .http
            .request(Method::POST, url)
            .map_err(|e| format!("the webhook may not be reached: {e}"))?;
        match request
            .header(IDEMPOTENCY_KEY, idempotency_key)
            .json(body)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) if r.status().is_redirection() => Err(format!(
                "the webhook answered {}, a redirect, which is not followed",
                r.status()
            )),
            Ok(r) => Err(format!("the webhook answered {}", r.status())),
            Err(e) => Err(match refusal_of(&e) {
                Some(refusal) => format!("the webhook may not be reached: {refusal}"),
                None => format!("the webhook could not be reached: {}", e.without_url()),
            }),
        }
    }
}
