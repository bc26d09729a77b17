//! Every outbound HTTP request (Schema Registry, webhooks) goes through an
//! [`HttpClient`]: it follows no redirect (a 3xx is an answer, which the
//! caller turns into an error), uses no proxy from the environment, checks
//! a literal IP host before each request, and resolves names through
//! [`Resolver`], which drops every address the egress rule
//! (`streamkeeper::platform::egress`) refuses. The check is on the addresses the
//! connection is made to, so a name that resolves to a public address when
//! saved and to a metadata address later is still refused.
//! [`read_capped`] reads an answer's body up to a limit.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, RequestBuilder, Response, Url};
use std::net::SocketAddr;
use std::sync::Arc;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::{EgressPolicy, EgressRefusal};

/// A service's base URL refused before any request: the URL as it may be
/// shown (credentials cut) and why.
#[derive(Debug)]
pub struct BadBaseUrl {
    pub url: String,
    pub reason: String,
}

/// A service's base URL (a registry's, a Connect worker's), read one way:
/// http or https, no query or fragment, and no credentials, since a URL is
/// logged and shown and so would a secret in it be (`auth` says where they
/// belong instead).
pub fn base_url(raw: &str, auth: &str) -> Result<Url, BadBaseUrl> {
    let bad = |url: &str, reason: &str| BadBaseUrl {
        url: url.to_owned(),
        reason: reason.into(),
    };
    let base = Url::parse(raw.trim()).map_err(|e| bad(raw, &e.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
        return Err(bad(raw, "it must be an http:// or https:// URL"));
    }
    if !base.username().is_empty() || base.password().is_some() {
        return Err(bad(
            &format!("{}://{}", base.scheme(), base.host_str().unwrap_or("")),
            &format!("credentials belong in {auth}, not in the URL"),
        ));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(bad(raw, "it must not have a query or a fragment"));
    }
    Ok(base)
}

/// `base` (as [`base_url`] checked it) with `path`'s segments after its
/// own, each percent-encoded, and `query`; `None` when the base cannot
/// take a path. The registry and Connect clients build every URL so.
pub fn endpoint(base: &Url, path: &[&str], query: &[(&str, String)]) -> Option<Url> {
    let mut url = base.clone();
    url.path_segments_mut().ok()?.pop_if_empty().extend(path);
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Some(url)
}

/// A response's media type, lowercase and without its parameters
/// (`application/json; charset=utf-8` is `application/json`); empty when
/// it has none.
pub fn media_type(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Why a request got no answer, worded for an operator: a timeout as
/// such, anything else as its chain of causes (reqwest's own text repeats
/// the URL; its causes say what broke).
pub fn unreachable_reason(e: &reqwest::Error, timeout: std::time::Duration) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", timeout.as_secs_f32());
    }
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.contains(&text) {
            causes.push(text);
        }
        source = cause.source();
    }
    if causes.is_empty() {
        e.to_string()
    } else {
        causes.join(": ")
    }
}

/// What the operator allows outbound: where connections may go, and which
/// credential references may be sent along.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outbound {
    pub egress: EgressPolicy,
    pub credentials: CredentialPolicy,
}

/// A name resolver that keeps only the addresses the policy allows.
#[derive(Clone, Copy, Debug)]
pub struct Resolver {
    policy: EgressPolicy,
}

impl Resolver {
    pub fn new(policy: EgressPolicy) -> Self {
        Resolver { policy }
    }

    /// The allowed addresses of `host`; the first refusal if none is.
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, ResolveError> {
        // The port is the URL's; reqwest sets it on what we return.
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
            .await
            .map_err(ResolveError::Lookup)?
            .collect();
        let mut refused = None;
        let kept: Vec<SocketAddr> = found
            .into_iter()
            .filter(|a| match self.policy.check(a.ip()) {
                Ok(()) => true,
                Err(r) => {
                    refused.get_or_insert(r);
                    false
                }
            })
            .collect();
        match (kept.is_empty(), refused) {
            (true, Some(r)) => Err(ResolveError::Refused {
                host: host.to_owned(),
                refusal: r,
            }),
            _ => Ok(kept),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("{host} resolves only to refused addresses: {refusal}")]
    Refused {
        host: String,
        refusal: EgressRefusal,
    },
    #[error("{0}")]
    Lookup(std::io::Error),
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = *self;
        Box::pin(async move {
            let addrs = resolver.lookup(name.as_str()).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// An outbound request refused by the egress rule, from its error.
pub fn refusal_of(e: &reqwest::Error) -> Option<EgressRefusal> {
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(ResolveError::Refused { refusal, .. }) = cause.downcast_ref::<ResolveError>() {
            return Some(refusal.clone());
        }
        source = cause.source();
    }
    None
}

/// A reqwest client under the egress rule, without redirects or proxies.
#[derive(Clone, Debug)]
pub struct HttpClient {
    http: reqwest::Client,
    policy: EgressPolicy,
}

impl HttpClient {
    /// `builder` carries the caller's own settings (timeouts, headers).
    pub fn new(policy: EgressPolicy, builder: reqwest::ClientBuilder) -> reqwest::Result<Self> {
        let http = builder
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the name itself, out of the rule's reach.
            .no_proxy()
            .dns_resolver(Arc::new(Resolver::new(policy)))
            .build()?;
        Ok(HttpClient { http, policy })
    }

    pub fn policy(&self) -> EgressPolicy {
        self.policy
    }

    /// A request to `url`, once its host passes the literal check (a
    /// literal IP never reaches the resolver).
    pub fn request(&self, method: Method, url: Url) -> Result<RequestBuilder, EgressRefusal> {
        self.policy.check_literal(url.host_str().unwrap_or(""))?;
        Ok(self.http.request(method, url))
    }
}

/// A body longer than allowed.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the answer is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error(transparent)]
    Read(#[from] reqwest::Error),
}

/// The body, read chunk by chunk and given up as soon as it passes
/// `limit` (at once when `Content-Length` says it will).
pub async fn read_capped(mut response: Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    let declared = response.content_length().unwrap_or(0);
    if declared > u64::try_from(limit).unwrap_or(u64::MAX) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_resolve_only_to_allowed_addresses() {
        let strict = Resolver::new(EgressPolicy::STRICT);
        let e = strict.lookup("localhost").await.expect_err("loopback");
        assert!(
            matches!(&e, ResolveError::Refused { refusal, .. } if refusal.class == streamkeeper::platform::egress::AddressClass::Loopback),
            "{e:?}"
        );
        let local = Resolver::new(EgressPolicy::LOOPBACK);
        let found = local.lookup("localhost").await.expect("allowed");
        assert!(!found.is_empty() && found.iter().all(|a| a.ip().is_loopback()));
        let e = local.lookup("169.254.169.254").await.expect_err("metadata");
        assert!(e.to_string().contains("never connects there"), "{e}");
    }
}
