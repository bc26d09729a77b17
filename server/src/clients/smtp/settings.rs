//! The mail server's settings, checked once at start: where it is, how
//! the connection is secured, which credentials (by reference) it is
//! given, and whose address the mail comes from. Errors name the setting
//! and never a secret.

use crate::clients::kafka::settings::{SecretRef, SettingsError};
use lettre::message::Mailbox;
use std::time::Duration;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;

/// How the connection to the mail server is secured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Security {
    /// Plain text first, then STARTTLS, required: a server that does not
    /// offer it gets nothing (port 587, submission).
    StartTls,
    /// TLS from the first byte (port 465, submissions).
    Tls,
    /// No TLS at all: only with the explicit insecure setting, for a relay
    /// on the same host or network.
    None,
}

impl Security {
    /// The port a security mode is usually served on.
    pub fn default_port(self) -> u16 {
        match self {
            Security::StartTls => 587,
            Security::Tls => 465,
            Security::None => 25,
        }
    }
}

/// The settings as given, before checks (from the command line or the
/// environment; see `config::SmtpArgs`).
#[derive(Clone, Debug, Default)]
pub struct SmtpInput<'a> {
    pub host: &'a str,
    pub port: Option<u16>,
    pub security: Option<Security>,
    pub insecure: bool,
    pub username: Option<&'a str>,
    pub password: Option<&'a str>,
    pub from: Option<&'a str>,
    pub ca_file: Option<&'a str>,
}

/// Settings that passed every check.
#[derive(Clone, Debug)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub credentials: Option<(SecretRef, SecretRef)>,
    pub from: Mailbox,
    /// Extra trusted roots (PEM), for a relay with a private CA.
    pub ca_pem: Option<Vec<u8>>,
    pub egress: EgressPolicy,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SmtpSettingError {
    #[error("STREAMKEEPER_SMTP_HOST (--smtp-host) '{0}' is not a host name or an address")]
    BadHost(String),
    #[error(
        "STREAMKEEPER_SMTP_SECURITY (--smtp-security) is none, which sends mail and credentials in clear: set STREAMKEEPER_SMTP_INSECURE=true to allow it (a relay on this host only), or use starttls or tls"
    )]
    InClearNotAllowed,
    #[error("STREAMKEEPER_SMTP_FROM (--smtp-from) must be set with STREAMKEEPER_SMTP_HOST")]
    MissingFrom,
    #[error(
        "STREAMKEEPER_SMTP_FROM (--smtp-from) '{0}' is not an address like Streamkeeper <streamkeeper@example.com>"
    )]
    BadFrom(String),
    #[error(
        "STREAMKEEPER_SMTP_USERNAME and STREAMKEEPER_SMTP_PASSWORD are set together, or neither"
    )]
    HalfCredentials,
    #[error("STREAMKEEPER_SMTP_{which} (--smtp-{flag}): {source}")]
    Credential {
        which: &'static str,
        flag: &'static str,
        source: SettingsError,
    },
    #[error("STREAMKEEPER_SMTP_CA_FILE (--smtp-ca-file) {path} cannot be read: {reason}")]
    CaFile { path: String, reason: String },
}

impl SmtpSettings {
    /// The checked settings; `None` without a host (email is off).
    pub fn check(
        input: &SmtpInput<'_>,
        credentials: &CredentialPolicy,
        egress: EgressPolicy,
    ) -> Result<Option<Self>, SmtpSettingError> {
        let host = input.host.trim();
        if host.is_empty() {
            return Ok(None);
        }
        if host.contains(['/', ':', '@', ' ']) && host.parse::<std::net::IpAddr>().is_err() {
            return Err(SmtpSettingError::BadHost(host.into()));
        }
        let security = input.security.unwrap_or(Security::StartTls);
        if security == Security::None && !input.insecure {
            return Err(SmtpSettingError::InClearNotAllowed);
        }
        let from_text = input
            .from
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .ok_or(SmtpSettingError::MissingFrom)?;
        let from: Mailbox = from_text
            .parse()
            .map_err(|_| SmtpSettingError::BadFrom(from_text.into()))?;
        Ok(Some(SmtpSettings {
            host: host.into(),
            port: input.port.unwrap_or(security.default_port()),
            security,
            credentials: credential_pair(input, credentials)?,
            from,
            ca_pem: ca_pem(input.ca_file)?,
            egress,
            timeout: Duration::from_secs(10),
        }))
    }
}

/// Username and password, both references under the policy, and both
/// readable now, so a typo is heard of at start and not at the first mail.
fn credential_pair(
    input: &SmtpInput<'_>,
    policy: &CredentialPolicy,
) -> Result<Option<(SecretRef, SecretRef)>, SmtpSettingError> {
    fn set(v: Option<&str>) -> Option<&str> {
        v.map(str::trim).filter(|v| !v.is_empty())
    }
    match (set(input.username), set(input.password)) {
        (None, None) => Ok(None),
        (Some(u), Some(p)) => Ok(Some((
            checked("USERNAME", "username", u, policy)?,
            checked("PASSWORD", "password", p, policy)?,
        ))),
        _ => Err(SmtpSettingError::HalfCredentials),
    }
}

fn checked(
    which: &'static str,
    flag: &'static str,
    reference: &str,
    policy: &CredentialPolicy,
) -> Result<SecretRef, SmtpSettingError> {
    let credential = |source| SmtpSettingError::Credential {
        which,
        flag,
        source,
    };
    let r = SecretRef::checked(reference, policy).map_err(credential)?;
    r.resolve().map_err(credential)?;
    Ok(r)
}

fn ca_pem(path: Option<&str>) -> Result<Option<Vec<u8>>, SmtpSettingError> {
    let Some(path) = path.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let bad = |reason: String| SmtpSettingError::CaFile {
        path: path.into(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| bad(e.kind().to_string()))?;
    lettre::transport::smtp::client::Certificate::from_pem(&pem)
        .map_err(|_| bad("it holds no PEM certificate".into()))?;
    Ok(Some(pem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> SmtpInput<'static> {
        SmtpInput {
            host: "mail.example.com",
            from: Some("Streamkeeper <sk@example.com>"),
            ..SmtpInput::default()
        }
    }

    fn check(i: &SmtpInput<'_>) -> Result<Option<SmtpSettings>, SmtpSettingError> {
        SmtpSettings::check(i, &CredentialPolicy::default(), EgressPolicy::STRICT)
    }

    #[test]
    fn without_a_host_email_is_off() {
        let i = SmtpInput::default();
        assert!(check(&i).expect("valid").is_none());
    }

    #[test]
    fn starttls_on_587_is_the_default() {
        let s = check(&input()).expect("valid").expect("on");
        assert_eq!((s.security, s.port), (Security::StartTls, 587));
        assert_eq!(s.from.email.to_string(), "sk@example.com");
    }

    #[test]
    fn plain_text_needs_the_insecure_setting() {
        let mut i = input();
        i.security = Some(Security::None);
        let e = check(&i).expect_err("in clear");
        assert!(e.to_string().contains("STREAMKEEPER_SMTP_INSECURE"), "{e}");
        i.insecure = true;
        let s = check(&i).expect("allowed").expect("on");
        assert_eq!(s.port, 25);
    }

    #[test]
    fn credentials_are_references_under_the_policy_and_never_shown() {
        let mut i = input();
        i.username = Some("mailer");
        i.password = Some("hunter2-secret");
        let e = check(&i).expect_err("literal");
        assert!(e.to_string().contains("STREAMKEEPER_SMTP_USERNAME"), "{e}");
        i.username = Some("env:STREAMKEEPER_CRED_SMTP_SURELY_UNSET_U");
        let e = check(&i).expect_err("literal password");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        i.password = None;
        assert!(matches!(check(&i), Err(SmtpSettingError::HalfCredentials)));
        i.password = Some("env:DATABASE_URL");
        let e = check(&i).expect_err("outside the prefix");
        assert!(
            e.to_string().contains("not set") || e.to_string().contains("STREAMKEEPER_CRED_"),
            "{e}"
        );
    }

    #[test]
    fn a_from_address_is_required_and_must_parse() {
        let mut i = input();
        i.from = None;
        assert!(matches!(check(&i), Err(SmtpSettingError::MissingFrom)));
        i.from = Some("not an address");
        assert!(matches!(check(&i), Err(SmtpSettingError::BadFrom(_))));
    }
}
