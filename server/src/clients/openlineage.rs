//! The OpenLineage sender: posts events, as stored, to another OpenLineage
//! endpoint (Marquez, DataHub) under the egress rule, no redirects
//! followed, the answer's body never read, only its status.

use crate::clients::egress::{HttpClient, refusal_of};
use reqwest::{Method, Url, header};
use std::time::Duration;
use streamkeeper::platform::egress::EgressPolicy;

#[derive(Clone, Debug)]
pub struct OpenLineageSender {
    http: HttpClient,
    url: Url,
}

impl OpenLineageSender {
    /// Sends to `url` (the endpoint itself, e.g. `…/api/v1/lineage`).
    pub fn new(egress: EgressPolicy, url: Url) -> reqwest::Result<Self> {
        let builder = reqwest::Client::builder().timeout(Duration::from_secs(10));
        Ok(OpenLineageSender {
            http: HttpClient::new(egress, builder)?,
            url,
        })
    }

    /// One event's JSON. Errors say the status or why it was not reached.
    pub async fn send(&self, event: &str) -> Result<(), String> {
        let request = self
            .http
            .request(Method::POST, self.url.clone())
            .map_err(|e| format!("the OpenLineage endpoint may not be reached: {e}"))?;
        let sent = request
            .header(header::CONTENT_TYPE, "application/json")
            .body(event.to_owned())
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) if r.status().is_redirection() => Err(format!(
                "the OpenLineage endpoint answered {}, a redirect, which is not followed",
                r.status()
            )),
            Ok(r) => Err(format!("the OpenLineage endpoint answered {}", r.status())),
            Err(e) => Err(match refusal_of(&e) {
                Some(refusal) => format!("the OpenLineage endpoint may not be reached: {refusal}"),
                None => format!(
                    "the OpenLineage endpoint could not be reached: {}",
                    e.without_url()
                ),
            }),
        }
    }
}
