//! What can go wrong talking to a Connect cluster, and how an answer's
//! error body is read: Connect's own shape or Confluent Cloud's, with
//! values a `ConfigException` quotes cut out (they may be secrets).

use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// 404: the connector, task or plugin does not exist.
    #[error("{message}")]
    NotFound { message: String },
    #[error("connector '{name}' exists already")]
    AlreadyExists { name: String },
    /// 409 after every retry: a rebalance that did not end in time.
    #[error(
        "the Connect cluster at {url} was rebalancing and refused the request {attempts} times (HTTP 409); try again shortly"
    )]
    Rebalancing { url: String, attempts: u32 },
    /// Another 4xx Connect explained: an invalid config, a name that does
    /// not match, offsets of a connector that is not stopped. Values in
    /// "Invalid value … for configuration" are cut out (they may be secrets).
    #[error("the Connect cluster refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// Validate refused to start: Connect's text echoes the whole config,
    /// secrets included, so it is not kept.
    #[error(
        "the Connect cluster refused to validate for plugin '{plugin}': connector.class is missing, is not installed there or does not match the plugin"
    )]
    ValidateRefused { plugin: String },
    #[error(
        "the Connect cluster at {url} did not accept the credentials (HTTP 401); check the user and password, the Cloud API key, or the token"
    )]
    Unauthorized { url: String },
    #[error("the credentials may not do this on the Connect cluster at {url} (HTTP 403){}", detail(message.as_deref()))]
    Forbidden {
        url: String,
        message: Option<String>,
    },
    #[error("the Connect cluster at {url} failed (HTTP {status}): {message}")]
    Server {
        url: String,
        status: u16,
        message: String,
        /// The start of a body that was not a Connect error (admins only).
        body: Option<String>,
    },
    #[error("the Connect cluster at {url} could not be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error(
        "the Connect cluster at {url} answered HTTP {status} with something its API never sends: {detail}"
    )]
    UnexpectedResponse {
        url: String,
        status: u16,
        detail: String,
        /// What it said instead, clipped (admins only).
        body: Option<String>,
    },
    #[error(
        "the Connect cluster at {url} answered HTTP {status}, a redirect, which Streamkeeper does not follow: set the Connect URL to where the worker is"
    )]
    Redirected {
        url: String,
        status: u16,
        location: Option<String>,
    },
    #[error(
        "the Connect cluster at {url} answered with more than {limit} bytes; nothing of it was used"
    )]
    TooLarge { url: String, limit: usize },
    #[error("the Connect cluster at {url} may not be reached: {refusal}")]
    Egress {
        url: String,
        refusal: streamkeeper::platform::egress::EgressRefusal,
    },
    #[error("the Connect URL '{url}' cannot be used: {reason}")]
    BadUrl { url: String, reason: String },
}

pub(super) fn detail(message: Option<&str>) -> String {
    message.map(|m| format!(": {m}")).unwrap_or_default()
}

impl ConnectError {
    /// What the other side sent that the error's text leaves out.
    pub fn upstream(&self) -> Option<String> {
        match self {
            ConnectError::Server { body, .. } | ConnectError::UnexpectedResponse { body, .. } => {
                body.clone()
            }
            ConnectError::Redirected { location, .. } => {
                location.as_ref().map(|l| format!("Location {l}"))
            }
            _ => None,
        }
    }

    /// As an HTTP status of Streamkeeper's own answer: the thing is not
    /// there (404), Connect judged the request and said no (422), or the
    /// Connect cluster could not be used (503).
    pub fn status(&self) -> u16 {
        match self {
            ConnectError::NotFound { .. } => 404,
            ConnectError::AlreadyExists { .. }
            | ConnectError::Rejected { .. }
            | ConnectError::ValidateRefused { .. } => 422,
            _ => 503,
        }
    }

    /// Everyone gets the text; admins also what the other side sent.
    pub fn for_viewer(&self, admin: bool) -> String {
        match self.upstream().filter(|_| admin) {
            Some(sent) => format!("{self} (it sent: {sent})"),
            None => self.to_string(),
        }
    }
}

/// The start of a body, for admins: enough to recognise an HTML page.
pub(super) fn snippet(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "(empty)".into(),
        None => text.to_owned(),
    }
}

/// `ConfigException`'s "Invalid value <v> for configuration <k>" quotes
/// the value, which may be a secret: every such value is cut out.
pub(super) fn scrub(message: &str) -> String {
    const START: &str = "Invalid value ";
    const END: &str = " for configuration";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(START) {
        let after = &rest[start + START.len()..];
        match after.find(END) {
            Some(end) => {
                out.push_str(&rest[..start]);
                out.push_str("Invalid value (hidden)");
                rest = &after[end..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Connect's `{"error_code","message"}`, or Cloud's `{"error":{"code",
/// "message"}}` / `{"code","message"}`.
pub(super) fn error_body(body: &[u8]) -> Option<(u16, String)> {
    #[derive(Deserialize)]
    struct Connect {
        error_code: u16,
        #[serde(default)]
        message: String,
    }
    #[derive(Deserialize)]
    struct Inner {
        code: u16,
        #[serde(default)]
        message: String,
    }
    #[derive(Deserialize)]
    struct Cloud {
        error: Inner,
    }
    if let Ok(c) = serde_json::from_slice::<Connect>(body) {
        return Some((c.error_code, c.message));
    }
    if let Ok(c) = serde_json::from_slice::<Cloud>(body) {
        return Some((c.error.code, c.error.message));
    }
    serde_json::from_slice::<Inner>(body)
        .ok()
        .map(|c| (c.code, c.message))
}
