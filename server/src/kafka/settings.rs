//! How to reach a cluster: bootstrap servers, security and credentials.
//! Credentials are references (`env:NAME` or `file:/path`) resolved when a
//! client is made, so they are never stored in the database nor printed.

use rdkafka::ClientConfig;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretRef {
    Env(String),
    File(PathBuf),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    #[error(
        "a credential must be a reference like env:KAFKA_PASSWORD or file:/run/secrets/kafka, not a literal"
    )]
    NotAReference,
    #[error("credential environment variable {0} is not set")]
    MissingEnv(String),
    #[error("credential file {0} cannot be read")]
    UnreadableFile(String),
    #[error("security protocol '{0}' is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")]
    BadProtocol(String),
    #[error("SASL mechanism '{0}' is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")]
    BadMechanism(String),
    #[error("SASL needs both a username and a password reference")]
    MissingCredentials,
    #[error("bootstrap servers must be host:port[,host:port…], got '{0}'")]
    BadBootstrap(String),
}

impl FromStr for SecretRef {
    type Err = SettingsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(name) = s.strip_prefix("env:").filter(|n| !n.is_empty()) {
            Ok(SecretRef::Env(name.to_string()))
        } else if let Some(path) = s.strip_prefix("file:").filter(|p| !p.is_empty()) {
            Ok(SecretRef::File(PathBuf::from(path)))
        } else {
            Err(SettingsError::NotAReference)
        }
    }
}

impl SecretRef {
    pub fn resolve(&self) -> Result<String, SettingsError> {
        match self {
            SecretRef::Env(name) => {
                std::env::var(name).map_err(|_| SettingsError::MissingEnv(name.clone()))
            }
            SecretRef::File(path) => std::fs::read_to_string(path)
                .map(|s| s.trim_end_matches(['\n', '\r']).to_string())
                .map_err(|_| SettingsError::UnreadableFile(path.display().to_string())),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl FromStr for Protocol {
    type Err = SettingsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(Protocol::Plaintext),
            "SSL" => Ok(Protocol::Ssl),
            "SASL_PLAINTEXT" => Ok(Protocol::SaslPlaintext),
            "SASL_SSL" => Ok(Protocol::SaslSsl),
            _ => Err(SettingsError::BadProtocol(s.to_string())),
        }
    }
}

impl Protocol {
    fn as_str(self) -> &'static str {
        match self {
            Protocol::Plaintext => "PLAINTEXT",
            Protocol::Ssl => "SSL",
            Protocol::SaslPlaintext => "SASL_PLAINTEXT",
            Protocol::SaslSsl => "SASL_SSL",
        }
    }

    fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }
}

/// A validated SASL mechanism name, as librdkafka spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mechanism(&'static str);

impl FromStr for Mechanism {
    type Err = SettingsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
            .into_iter()
            .find(|m| m.eq_ignore_ascii_case(s))
            .map(Mechanism)
            .ok_or_else(|| SettingsError::BadMechanism(s.to_string()))
    }
}

/// Everything needed to connect to one cluster, read-only.
#[derive(Clone, Debug)]
pub struct ClusterSettings {
    pub bootstrap: String,
    pub protocol: Protocol,
    pub mechanism: Option<Mechanism>,
    pub username: Option<SecretRef>,
    pub password: Option<SecretRef>,
    /// Per-request timeout; a pass must finish well before the next one.
    pub timeout: Duration,
}

impl ClusterSettings {
    pub fn plaintext(bootstrap: &str) -> Result<Self, SettingsError> {
        Self::new(bootstrap, Protocol::Plaintext, None, None, None)
    }

    pub fn new(
        bootstrap: &str,
        protocol: Protocol,
        mechanism: Option<Mechanism>,
        username: Option<SecretRef>,
        password: Option<SecretRef>,
    ) -> Result<Self, SettingsError> {
        let ok = !bootstrap.trim().is_empty()
            && bootstrap.split(',').all(|hp| {
                hp.trim()
                    .rsplit_once(':')
                    .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
            });
        if !ok {
            return Err(SettingsError::BadBootstrap(bootstrap.to_string()));
        }
        if protocol.sasl() && (username.is_none() || password.is_none()) {
            return Err(SettingsError::MissingCredentials);
        }
        Ok(Self {
            bootstrap: bootstrap.trim().to_string(),
            protocol,
            mechanism,
            username,
            password,
            timeout: Duration::from_secs(10),
        })
    }

    /// A librdkafka configuration that can only read: no auto-commit, no
    /// offset store, no topic auto-creation.
    pub fn client_config(&self) -> Result<ClientConfig, SettingsError> {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap)
            .set("client.id", "streamkeeper")
            .set("security.protocol", self.protocol.as_str())
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("allow.auto.create.topics", "false")
            .set("socket.timeout.ms", self.timeout.as_millis().to_string())
            .set("log_level", "3");
        if self.protocol.sasl() {
            let (Some(user), Some(pass)) = (&self.username, &self.password) else {
                return Err(SettingsError::MissingCredentials);
            };
            c.set(
                "sasl.mechanism",
                self.mechanism.unwrap_or(Mechanism("PLAIN")).0,
            )
            .set("sasl.username", user.resolve()?)
            .set("sasl.password", pass.resolve()?);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_references_only() {
        assert_eq!(
            "env:KAFKA_PW".parse(),
            Ok(SecretRef::Env("KAFKA_PW".into()))
        );
        assert_eq!("file:/run/s".parse(), Ok(SecretRef::File("/run/s".into())));
        assert_eq!(
            "hunter2".parse::<SecretRef>(),
            Err(SettingsError::NotAReference)
        );
        let missing = SecretRef::Env("STREAMKEEPER_TEST_SURELY_UNSET".into()).resolve();
        assert_eq!(
            missing,
            Err(SettingsError::MissingEnv(
                "STREAMKEEPER_TEST_SURELY_UNSET".into()
            ))
        );
    }

    #[test]
    fn validates_bootstrap_and_sasl() {
        assert!(ClusterSettings::plaintext("a:9092,b:9093").is_ok());
        assert!(ClusterSettings::plaintext("nohost").is_err());
        assert!(ClusterSettings::plaintext("a:notaport").is_err());
        let sasl = ClusterSettings::new("pkc.example:9092", Protocol::SaslSsl, None, None, None);
        assert_eq!(sasl.err(), Some(SettingsError::MissingCredentials));
        assert_eq!("sasl_ssl".parse::<Protocol>(), Ok(Protocol::SaslSsl));
        assert!("scram-sha-512".parse::<Mechanism>().is_ok());
        assert!("GSSAPI".parse::<Mechanism>().is_err());
    }
}
