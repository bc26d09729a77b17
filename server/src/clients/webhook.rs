//! The webhook sender: the egress rule, no redirects (a 3xx is a failed
//! delivery: a receiver that moved is fixed in settings, not followed to
//! wherever it points), and of the answer only its status and its first
//! KiB are read (what a channel's test and delivery log show: PagerDuty's
//! and Slack's answers say why they refused).

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

/// What a receiver answered: its status and the start of its body (a
/// channel's delivery log and its "send a test" show it word for word).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `202 {"status":"success",…}` as shown.
    pub fn shown(&self) -> String {
        match self.body.trim() {
            "" => self.status.to_string(),
            b => format!("{} {b}", self.status),
        }
    }
}

/// The most of a receiver's answer kept: enough for PagerDuty's or
/// Slack's error text, never a page of HTML.
pub const ANSWER_BYTES: usize = 1024;

impl Webhooks {
    /// Sends `body` (already serialized, so a signature covers exactly
    /// these bytes) with `headers`, and says what the receiver answered.
    /// `Err` only when there was no answer; errors never hold the URL.
    pub async fn send(
        &self,
        url: &str,
        idempotency_key: &str,
        body: Vec<u8>,
        headers: &[(&str, String)],
    ) -> Result<Answer, String> {
        let url = Url::parse(url).map_err(|_| "the endpoint is not a URL".to_owned())?;
        let mut request = self
            .http
            .request(Method::POST, url)
            .map_err(|e| format!("the endpoint may not be reached: {e}"))?
            .header(IDEMPOTENCY_KEY, idempotency_key)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let mut response = request
            .body(body)
            .send()
            .await
            .map_err(|e| match refusal_of(&e) {
                Some(refusal) => format!("the endpoint may not be reached: {refusal}"),
                None => format!("the endpoint could not be reached: {}", e.without_url()),
            })?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        // Only the start is kept; a receiver that streams on is not waited for.
        while bytes.len() < ANSWER_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
                _ => break,
            }
        }
        bytes.truncate(ANSWER_BYTES);
        Ok(Answer {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}
