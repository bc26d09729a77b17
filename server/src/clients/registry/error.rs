//! The registry's failures as types. Its error bodies are
//! `{"error_code":40401,"message":"…"}` with the HTTP status in the first
//! three digits; infrastructure in front of it (Confluent Cloud, proxies)
//! adds 401, 403 and 429. Anything outside that contract is an
//! [`RegistryError::UnexpectedResponse`], never a success.
//!
//! An error's text never holds what the registry (or whatever answered in
//! its place) sent outside its error contract: a body can hold anything the
//! URL reaches, and error texts are shown to everyone who can read a page.
//! Such text is kept aside, clipped, in [`RegistryError::upstream`], for
//! [`RegistryError::for_viewer`] to show to admins.

use super::types::VersionRef;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde::Deserialize;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("subject '{subject}' does not exist in the schema registry")]
    SubjectNotFound { subject: String },
    #[error("subject '{subject}' has no version {version}")]
    VersionNotFound {
        subject: String,
        version: VersionRef,
    },
    #[error("{}", schema_not_found(subject.as_deref(), *id))]
    SchemaNotFound {
        /// The subject a lookup searched, if it was a lookup.
        subject: Option<String>,
        /// The ID asked for, if it was a fetch by ID.
        id: Option<u32>,
    },
    #[error(
        "subject '{subject}' is soft-deleted already; only a permanent delete removes it further"
    )]
    SubjectSoftDeleted { subject: String },
    #[error("subject '{subject}' must be soft-deleted before it can be deleted permanently")]
    SubjectNotSoftDeleted { subject: String },
    #[error(
        "version {version} of subject '{subject}' is soft-deleted already; only a permanent delete removes it further"
    )]
    VersionSoftDeleted {
        subject: String,
        version: VersionRef,
    },
    #[error(
        "version {version} of subject '{subject}' must be soft-deleted before it can be deleted permanently"
    )]
    VersionNotSoftDeleted {
        subject: String,
        version: VersionRef,
    },
    #[error("subject '{subject}' has no compatibility level of its own; the global one applies")]
    NoSubjectConfig { subject: String },
    #[error("subject '{subject}' has no mode of its own; the global one applies")]
    NoSubjectMode { subject: String },
    /// HTTP 409; `error_code` is 409 up to Confluent 8.0.3 / 8.1.1 and
    /// 40901 from 8.0.4, 8.1.2 and 8.2.
    #[error("the schema is incompatible with an earlier version of subject '{subject}': {message}")]
    Incompatible {
        subject: String,
        error_code: u32,
        message: String,
    },
    #[error("the schema registry rejected the schema as invalid: {message}")]
    InvalidSchema { message: String },
    #[error("the schema registry does not accept that version: {message}")]
    InvalidVersion { message: String },
    #[error("the schema registry does not accept that compatibility level: {message}")]
    InvalidCompatibilityLevel { message: String },
    #[error("the schema registry does not accept that mode: {message}")]
    InvalidMode { message: String },
    /// Read-only or import mode, or a mode change the registry forbids.
    #[error("the schema registry does not permit this now: {message}")]
    OperationNotPermitted { message: String },
    #[error("other schemas still reference this version, so it cannot be deleted: {message}")]
    ReferenceExists { message: String },
    /// Another 4xx the registry explains with an error code (42207 ID
    /// mismatch, 42208 invalid subject, 42209 schema too large, …).
    #[error(
        "the schema registry refused the request (HTTP {status}, error {error_code}): {message}"
    )]
    Rejected {
        status: u16,
        error_code: u32,
        message: String,
    },
    #[error(
        "the schema registry at {url} did not accept the credentials (HTTP 401); check the API key and secret, or the token"
    )]
    Unauthorized { url: String },
    #[error("the credentials may not do this in the schema registry at {url} (HTTP 403){}", detail(message.as_deref()))]
    Forbidden {
        url: String,
        message: Option<String>,
    },
    #[error("the schema registry at {url} is limiting requests (HTTP 429); {}", retry_hint(*retry_after))]
    RateLimited {
        url: String,
        /// From `Retry-After` when it gives seconds.
        retry_after: Option<Duration>,
    },
    #[error("the schema registry at {url} failed (HTTP {status}{}): {message}", code_hint(*error_code))]
    Server {
        url: String,
        status: u16,
        /// 50001 store error, 50002 timeout, 50003 forwarding failed,
        /// 50004 unknown leader; absent when the body had none.
        error_code: Option<u32>,
        /// The registry's message, or a note that it sent none.
        message: String,
        /// The start of a body that was not a registry error (admins only).
        body: Option<String>,
    },
    #[error("the schema registry at {url} could not be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error(
        "the schema registry at {url} answered HTTP {status} with something its API never sends: {detail}"
    )]
    UnexpectedResponse {
        url: String,
        status: u16,
        /// What was wrong, in Streamkeeper's words only.
        detail: String,
        /// What it said instead, clipped (admins only).
        body: Option<String>,
    },
    /// A 3xx: Streamkeeper follows no redirect, so a registry moved (or a
    /// URL that sends requests elsewhere) is an error to fix in settings.
    #[error(
        "the schema registry at {url} answered HTTP {status}, a redirect, which Streamkeeper does not follow: set the registry URL to where the registry is"
    )]
    Redirected {
        url: String,
        status: u16,
        /// Where it pointed (admins only).
        location: Option<String>,
        /// The start of its body (admins only).
        body: Option<String>,
    },
    #[error(
        "the schema registry at {url} answered with more than {limit} bytes, more than a registry answer may be; nothing of it was used"
    )]
    TooLarge { url: String, limit: usize },
    #[error("the schema registry at {url} may not be reached: {refusal}")]
    Egress {
        url: String,
        refusal: streamkeeper::platform::egress::EgressRefusal,
    },
    #[error("the schema registry URL '{url}' cannot be used: {reason}")]
    BadUrl { url: String, reason: String },
}

impl RegistryError {
    /// What the other side sent that the error's text leaves out: the
    /// start of a body outside the contract, and where a redirect pointed.
    pub fn upstream(&self) -> Option<String> {
        match self {
            RegistryError::Server { body, .. } | RegistryError::UnexpectedResponse { body, .. } => {
                body.clone()
            }
            RegistryError::Redirected { location, body, .. } => {
                let parts: Vec<String> = [
                    location.as_ref().map(|l| format!("Location {l}")),
                    body.clone(),
                ]
                .into_iter()
                .flatten()
                .collect();
                (!parts.is_empty()).then(|| parts.join("; "))
            }
            _ => None,
        }
    }

    /// What the failure says about the request, as an HTTP status: the
    /// registry does not hold it (404), the registry judged the content
    /// and said no (422), or the registry could not be used (503) —
    /// unreachable, failing, limiting, refusing Streamkeeper's own
    /// credentials or answering outside its API. The same failure answers
    /// the same status on every route.
    pub fn status(&self) -> u16 {
        use RegistryError as E;
        match self {
            E::SubjectNotFound { .. }
            | E::VersionNotFound { .. }
            | E::SchemaNotFound { .. }
            | E::NoSubjectConfig { .. }
            | E::NoSubjectMode { .. } => 404,
            E::SubjectSoftDeleted { .. }
            | E::SubjectNotSoftDeleted { .. }
            | E::VersionSoftDeleted { .. }
            | E::VersionNotSoftDeleted { .. }
            | E::Incompatible { .. }
            | E::InvalidSchema { .. }
            | E::InvalidVersion { .. }
            | E::InvalidCompatibilityLevel { .. }
            | E::InvalidMode { .. }
            | E::OperationNotPermitted { .. }
            | E::ReferenceExists { .. }
            | E::Rejected { .. } => 422,
            E::Unauthorized { .. }
            | E::Forbidden { .. }
            | E::RateLimited { .. }
            | E::Server { .. }
            | E::Unreachable { .. }
            | E::UnexpectedResponse { .. }
            | E::Redirected { .. }
            | E::TooLarge { .. }
            | E::Egress { .. }
            | E::BadUrl { .. } => 503,
        }
    }

    /// The error as the person asking sees it: everyone gets the text,
    /// admins (who set the registry up) also what it sent.
    pub fn for_viewer(&self, admin: bool) -> String {
        match self.upstream().filter(|_| admin) {
            Some(sent) => format!("{self} (it sent: {sent})"),
            None => self.to_string(),
        }
    }
}

fn schema_not_found(subject: Option<&str>, id: Option<u32>) -> String {
    match (subject, id) {
        (_, Some(id)) => format!("no schema has ID {id} in the schema registry"),
        (Some(subject), None) => {
            format!("this schema is not registered under subject '{subject}'")
        }
        (None, None) => "the schema registry does not have this schema".into(),
    }
}

fn detail(message: Option<&str>) -> String {
    message.map(|m| format!(": {m}")).unwrap_or_default()
}

fn retry_hint(after: Option<Duration>) -> String {
    match after {
        Some(d) => format!("retry in {} s", d.as_secs()),
        None => "retry later".into(),
    }
}

fn code_hint(code: Option<u32>) -> String {
    code.map(|c| format!(", error {c}")).unwrap_or_default()
}

/// What a request was about, so an error can name it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Target {
    pub subject: Option<String>,
    pub version: Option<VersionRef>,
    pub id: Option<u32>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error_code: u32,
    #[serde(default)]
    message: String,
}

/// The error a non-2xx answer stands for.
pub(crate) fn from_answer(
    url: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    target: &Target,
) -> RegistryError {
    let url = url.to_string();
    let parsed = serde_json::from_slice::<ErrorBody>(body).ok();
    match status.as_u16() {
        401 => return RegistryError::Unauthorized { url },
        403 => {
            return RegistryError::Forbidden {
                url,
                message: parsed.map(|b| b.message).filter(|m| !m.is_empty()),
            };
        }
        429 => {
            return RegistryError::RateLimited {
                url,
                retry_after: retry_after(headers),
            };
        }
        _ => {}
    }
    let Some(ErrorBody {
        error_code,
        message,
    }) = parsed
    else {
        return if status.is_server_error() {
            RegistryError::Server {
                url,
                status: status.as_u16(),
                error_code: None,
                message: "it sent no registry error".into(),
                body: Some(snippet(body)),
            }
        } else {
            unexpected(url, status, "no registry error body", Some(snippet(body)))
        };
    };
    // The contract: the status is the code's first three digits.
    let agrees =
        error_code == u32::from(status.as_u16()) || error_code / 100 == u32::from(status.as_u16());
    if !agrees {
        return unexpected(
            url,
            status,
            &format!("error code {error_code} does not go with the status"),
            Some(message),
        );
    }
    if status.is_server_error() {
        return RegistryError::Server {
            url,
            status: status.as_u16(),
            error_code: Some(error_code),
            message,
            body: None,
        };
    }
    let subject = target.subject.clone();
    let version = target.version;
    match (error_code, subject, version) {
        (40401, Some(subject), _) => RegistryError::SubjectNotFound { subject },
        (40402, Some(subject), Some(version)) => {
            RegistryError::VersionNotFound { subject, version }
        }
        (40403, subject, _) => RegistryError::SchemaNotFound {
            subject,
            id: target.id,
        },
        (40404, Some(subject), _) => RegistryError::SubjectSoftDeleted { subject },
        (40405, Some(subject), _) => RegistryError::SubjectNotSoftDeleted { subject },
        (40406, Some(subject), Some(version)) => {
            RegistryError::VersionSoftDeleted { subject, version }
        }
        (40407, Some(subject), Some(version)) => {
            RegistryError::VersionNotSoftDeleted { subject, version }
        }
        (40408, Some(subject), _) => RegistryError::NoSubjectConfig { subject },
        (40409, Some(subject), _) => RegistryError::NoSubjectMode { subject },
        (409 | 40901, Some(subject), _) => RegistryError::Incompatible {
            subject,
            error_code,
            message,
        },
        (42201, ..) => RegistryError::InvalidSchema { message },
        (42202, ..) => RegistryError::InvalidVersion { message },
        (42203, ..) => RegistryError::InvalidCompatibilityLevel { message },
        (42204, ..) => RegistryError::InvalidMode { message },
        (42205, ..) => RegistryError::OperationNotPermitted { message },
        (42206, ..) => RegistryError::ReferenceExists { message },
        // A subject or version error from a call about neither.
        (40401..=40409 | 409 | 40901, ..) => unexpected(
            url,
            status,
            &format!("error {error_code} for a request it cannot apply to"),
            Some(message),
        ),
        _ => RegistryError::Rejected {
            status: status.as_u16(),
            error_code,
            message,
        },
    }
}

pub(crate) fn unexpected(
    url: String,
    status: StatusCode,
    detail: &str,
    body: Option<String>,
) -> RegistryError {
    RegistryError::UnexpectedResponse {
        url,
        status: status.as_u16(),
        detail: detail.to_owned(),
        body,
    }
}

/// `Retry-After` in seconds; an HTTP date gives no duration (registries
/// and Confluent Cloud send seconds).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The start of a body, for a message: enough to recognise an HTML error
/// page or a proxy's text.
pub(crate) fn snippet(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "(empty)".into(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str, target: &Target) -> RegistryError {
        from_answer(
            "http://sr/x",
            StatusCode::from_u16(status).expect("status"),
            &HeaderMap::new(),
            body.as_bytes(),
            target,
        )
    }

    fn subject(s: &str) -> Target {
        Target {
            subject: Some(s.into()),
            ..Target::default()
        }
    }

    #[test]
    fn both_incompatible_codes_are_incompatible() {
        for code in [409, 40901] {
            let e = answer(
                409,
                &format!(r#"{{"error_code":{code},"message":"details: []"}}"#),
                &subject("orders-value"),
            );
            assert!(
                matches!(&e, RegistryError::Incompatible { error_code, .. } if *error_code == code),
                "{e:?}"
            );
        }
    }

    #[test]
    fn every_code_of_the_contract_has_its_variant() {
        type Is = fn(&RegistryError) -> bool;
        let target = Target {
            subject: Some("s".into()),
            version: Some(VersionRef::Number(2)),
            id: None,
        };
        let cases: [(u16, u32, Is); 18] = [
            (404, 40401, |e| {
                matches!(e, RegistryError::SubjectNotFound { .. })
            }),
            (404, 40402, |e| {
                matches!(e, RegistryError::VersionNotFound { .. })
            }),
            (404, 40403, |e| {
                matches!(e, RegistryError::SchemaNotFound { .. })
            }),
            (404, 40404, |e| {
                matches!(e, RegistryError::SubjectSoftDeleted { .. })
            }),
            (404, 40405, |e| {
                matches!(e, RegistryError::SubjectNotSoftDeleted { .. })
            }),
            (404, 40406, |e| {
                matches!(e, RegistryError::VersionSoftDeleted { .. })
            }),
            (404, 40407, |e| {
                matches!(e, RegistryError::VersionNotSoftDeleted { .. })
            }),
            (404, 40408, |e| {
                matches!(e, RegistryError::NoSubjectConfig { .. })
            }),
            (404, 40409, |e| {
                matches!(e, RegistryError::NoSubjectMode { .. })
            }),
            (409, 409, |e| {
                matches!(e, RegistryError::Incompatible { .. })
            }),
            (422, 42201, |e| {
                matches!(e, RegistryError::InvalidSchema { .. })
            }),
            (422, 42202, |e| {
                matches!(e, RegistryError::InvalidVersion { .. })
            }),
            (422, 42203, |e| {
                matches!(e, RegistryError::InvalidCompatibilityLevel { .. })
            }),
            (422, 42204, |e| {
                matches!(e, RegistryError::InvalidMode { .. })
            }),
            (422, 42205, |e| {
                matches!(e, RegistryError::OperationNotPermitted { .. })
            }),
            (422, 42206, |e| {
                matches!(e, RegistryError::ReferenceExists { .. })
            }),
            (422, 42209, |e| {
                matches!(
                    e,
                    RegistryError::Rejected {
                        error_code: 42209,
                        ..
                    }
                )
            }),
            (500, 50004, |e| {
                matches!(
                    e,
                    RegistryError::Server {
                        error_code: Some(50004),
                        ..
                    }
                )
            }),
        ];
        for (status, code, is) in cases {
            let e = answer(
                status,
                &format!(r#"{{"error_code":{code},"message":"m"}}"#),
                &target,
            );
            assert!(is(&e), "{code}: {e:?}");
            assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn forbidden_keeps_the_registry_s_reason() {
        let e = answer(
            403,
            r#"{"error_code":40301,"message":"User is denied operation Write on Subject: s"}"#,
            &subject("s"),
        );
        assert_eq!(
            e.to_string(),
            "the credentials may not do this in the schema registry at http://sr/x (HTTP 403): User is denied operation Write on Subject: s"
        );
    }

    #[test]
    fn a_code_that_disagrees_with_the_status_is_unexpected() {
        let e = answer(404, r#"{"error_code":42201,"message":"x"}"#, &subject("s"));
        assert!(
            matches!(e, RegistryError::UnexpectedResponse { .. }),
            "{e:?}"
        );
    }

    #[test]
    fn a_404_without_an_error_body_is_unexpected_not_missing() {
        let e = answer(404, "<html>Not Found</html>", &subject("s"));
        assert_eq!(e.upstream().as_deref(), Some("<html>Not Found</html>"));
        assert!(matches!(e, RegistryError::UnexpectedResponse { .. }));
    }

    #[test]
    fn a_5xx_without_a_body_is_still_a_server_error() {
        let e = answer(502, "Bad Gateway", &Target::default());
        assert!(
            matches!(&e, RegistryError::Server { status: 502, error_code: None, body: Some(b), .. } if b == "Bad Gateway"),
            "{e:?}"
        );
    }

    #[test]
    fn what_it_sent_outside_the_contract_is_shown_to_admins_only() {
        let cases = [
            answer(404, "<html>AKIA-secret-page</html>", &subject("s")),
            answer(502, "AKIA-secret-page", &Target::default()),
            answer(
                404,
                r#"{"error_code":42201,"message":"AKIA-secret-page"}"#,
                &subject("s"),
            ),
            answer(
                404,
                r#"{"error_code":40401,"message":"AKIA-secret-page"}"#,
                &Target::default(),
            ),
        ];
        for e in cases {
            assert!(!e.to_string().contains("AKIA"), "{e}");
            assert!(!e.for_viewer(false).contains("AKIA"), "{e}");
            assert!(e.for_viewer(true).contains("AKIA-secret-page"), "{e:?}");
        }
        // The registry's own error messages are its contract, for everyone.
        let e = answer(
            422,
            r#"{"error_code":42201,"message":"Invalid schema"}"#,
            &subject("s"),
        );
        assert!(e.for_viewer(false).contains("Invalid schema"), "{e}");
    }

    #[test]
    fn long_bodies_are_cut() {
        let s = snippet("é".repeat(500).as_bytes());
        assert_eq!(s.chars().count(), 201);
    }
}
