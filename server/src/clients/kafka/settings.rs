//! How to reach a cluster: bootstrap servers, security and credentials.
//! Credentials are references (`env:NAME` or `file:/path`), valid only
//! under the operator's [`CredentialPolicy`], and resolved when a client is
//! made, so they are never stored in the database nor printed.

use rdkafka::ClientConfig;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;
use streamkeeper::platform::credential::{
    CredentialPolicy, Reference, ReferenceError, TransportError, kafka_transport,
};

/// A credential reference that passed the policy, with the policy it is
/// resolved under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRef {
    reference: Reference,
    policy: CredentialPolicy,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("credential environment variable {0} is not set")]
    MissingEnv(String),
    #[error("credential file {0} cannot be read")]
    UnreadableFile(String),
    #[error(
        "credential file {0} leads outside the credential directories (STREAMKEEPER_CRED_DIRS) once its links are followed"
    )]
    FileEscapes(String),
    #[error("security protocol '{0}' is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")]
    BadProtocol(String),
    #[error("SASL mechanism '{0}' is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")]
    BadMechanism(String),
    #[error("SASL needs both a username and a password reference")]
    MissingCredentials,
    #[error(
        "mutual TLS needs both a client certificate reference and its key's (give both, or neither)"
    )]
    HalfClientCertificate,
    #[error("bootstrap servers must be host:port[,host:port…], got '{0}'")]
    BadBootstrap(String),
}

impl SecretRef {
    /// The reference, if the policy allows it.
    pub fn checked(reference: &str, policy: &CredentialPolicy) -> Result<Self, SettingsError> {
        Ok(SecretRef {
            reference: policy.check(reference)?,
            policy: policy.clone(),
        })
    }

    /// The secret. A file is read only if, with its symbolic links
    /// followed, it is still inside an allowed directory (itself with its
    /// links followed): a link in the directory cannot point elsewhere.
    pub fn resolve(&self) -> Result<String, SettingsError> {
        match &self.reference {
            Reference::Env(name) => {
                std::env::var(name).map_err(|_| SettingsError::MissingEnv(name.clone()))
            }
            Reference::File(path) => {
                let unreadable = || SettingsError::UnreadableFile(path.clone());
                let real = std::fs::canonicalize(path).map_err(|_| unreadable())?;
                let inside = self.policy.dirs().iter().any(|d| {
                    std::fs::canonicalize(Path::new(d))
                        .is_ok_and(|dir| real != dir && real.starts_with(&dir))
                });
                if !inside {
                    return Err(SettingsError::FileEscapes(path.clone()));
                }
                std::fs::read_to_string(&real)
                    .map(|s| s.trim_end_matches(['\n', '\r']).to_string())
                    .map_err(|_| unreadable())
            }
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
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Plaintext => "PLAINTEXT",
            Protocol::Ssl => "SSL",
            Protocol::SaslPlaintext => "SASL_PLAINTEXT",
            Protocol::SaslSsl => "SASL_SSL",
        }
    }

    pub fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }

    pub fn tls(self) -> bool {
        matches!(self, Protocol::Ssl | Protocol::SaslSsl)
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

/// A client certificate (its chain after it) and its private key, both
/// PEM, by reference: resolved when a client is made.
#[derive(Clone, Debug)]
pub struct ClientCert {
    pub cert: SecretRef,
    pub key: SecretRef,
}

impl ClientCert {
    /// Both references or neither; one alone is refused.
    pub fn pair(
        cert: Option<SecretRef>,
        key: Option<SecretRef>,
    ) -> Result<Option<Self>, SettingsError> {
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(ClientCert { cert, key })),
            (None, None) => Ok(None),
            _ => Err(SettingsError::HalfClientCertificate),
        }
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
    /// The CA bundle (PEM) the brokers' certificates are checked against;
    /// `None`: the system's trust store.
    pub ca: Option<SecretRef>,
    /// Mutual TLS: the certificate (PEM) shown to brokers that ask for
    /// one, and its private key; `None`: no client certificate.
    pub client_cert: Option<ClientCert>,
    /// Per-request timeout; a pass must finish well before the next one.
    pub timeout: Duration,
}

impl ClusterSettings {
    pub fn plaintext(bootstrap: &str) -> Result<Self, SettingsError> {
        Self::new(bootstrap, Protocol::Plaintext, None, None, None, false)
    }

    /// `insecure` lets credentials go without TLS (a local cluster).
    pub fn new(
        bootstrap: &str,
        protocol: Protocol,
        mechanism: Option<Mechanism>,
        username: Option<SecretRef>,
        password: Option<SecretRef>,
        insecure: bool,
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
        kafka_transport(
            protocol.as_str(),
            username.is_some() || password.is_some(),
            insecure,
        )?;
        Ok(Self {
            bootstrap: bootstrap.trim().to_string(),
            protocol,
            mechanism,
            username,
            password,
            ca: None,
            client_cert: None,
            timeout: Duration::from_secs(10),
        })
    }

    /// The SASL mechanism as librdkafka and the broker spell it; PLAIN
    /// when none was chosen (librdkafka's default).
    pub fn mechanism_name(&self) -> &'static str {
        self.mechanism.unwrap_or(Mechanism("PLAIN")).0
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
        if self.protocol.tls() {
            // The broker's name is checked against its certificate (the
            // librdkafka default, said here so it cannot drift).
            c.set("ssl.endpoint.identification.algorithm", "https");
            if let Some(ca) = &self.ca {
                c.set("ssl.ca.pem", ca.resolve()?);
            }
            if let Some(client) = &self.client_cert {
                c.set("ssl.certificate.pem", client.cert.resolve()?)
                    .set("ssl.key.pem", client.key.resolve()?);
            }
        }
        if self.protocol.sasl() {
            let (Some(user), Some(pass)) = (&self.username, &self.password) else {
                return Err(SettingsError::MissingCredentials);
            };
            c.set("sasl.mechanism", self.mechanism_name())
                .set("sasl.username", user.resolve()?)
                .set("sasl.password", pass.resolve()?);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(dir: &std::path::Path) -> CredentialPolicy {
        CredentialPolicy::new("STREAMKEEPER_CRED_", [dir.to_str().expect("utf-8")]).expect("policy")
    }

    #[test]
    fn credentials_are_references_the_policy_allows() {
        let p = CredentialPolicy::default();
        assert!(SecretRef::checked("env:STREAMKEEPER_CRED_KAFKA_PW", &p).is_ok());
        assert!(SecretRef::checked("file:/run/secrets/kafka", &p).is_ok());
        assert_eq!(
            SecretRef::checked("hunter2", &p),
            Err(SettingsError::Reference(ReferenceError::NotAReference))
        );
        assert!(matches!(
            SecretRef::checked("env:DATABASE_URL", &p),
            Err(SettingsError::Reference(
                ReferenceError::EnvOutsidePrefix { .. }
            ))
        ));
        assert!(matches!(
            SecretRef::checked("file:/etc/passwd", &p),
            Err(SettingsError::Reference(
                ReferenceError::FileOutsideDirs { .. }
            ))
        ));
        let missing = SecretRef::checked("env:STREAMKEEPER_CRED_TEST_SURELY_UNSET", &p)
            .expect("allowed")
            .resolve();
        assert_eq!(
            missing,
            Err(SettingsError::MissingEnv(
                "STREAMKEEPER_CRED_TEST_SURELY_UNSET".into()
            ))
        );
    }

    #[test]
    fn a_file_is_read_only_inside_the_directories_links_followed() {
        let root = std::env::temp_dir().join(format!("sk-cred-{}", std::process::id()));
        let dir = root.join("secrets");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("pw"), "s3cret\n").expect("write");
        std::fs::write(root.join("outside"), "not-for-you").expect("write");
        let _ = std::fs::remove_file(dir.join("link"));
        std::os::unix::fs::symlink(root.join("outside"), dir.join("link")).expect("symlink");
        let p = policy(&dir);
        let at = |name: &str| format!("file:{}", dir.join(name).display());
        assert_eq!(
            SecretRef::checked(&at("pw"), &p)
                .expect("allowed")
                .resolve(),
            Ok("s3cret".into())
        );
        let e = SecretRef::checked(&at("link"), &p)
            .expect("the name is inside")
            .resolve()
            .expect_err("the link leads outside");
        assert!(matches!(e, SettingsError::FileEscapes(_)), "{e:?}");
        assert!(!e.to_string().contains("not-for-you"));
        assert!(SecretRef::checked(&at("../outside"), &p).is_err());
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[test]
    fn validates_bootstrap_and_sasl() {
        assert!(ClusterSettings::plaintext("a:9092,b:9093").is_ok());
        assert!(ClusterSettings::plaintext("nohost").is_err());
        assert!(ClusterSettings::plaintext("a:notaport").is_err());
        let sasl = ClusterSettings::new(
            "pkc.example:9092",
            Protocol::SaslSsl,
            None,
            None,
            None,
            false,
        );
        assert_eq!(sasl.err(), Some(SettingsError::MissingCredentials));
        let p = CredentialPolicy::default();
        let cred = || SecretRef::checked("env:STREAMKEEPER_CRED_X", &p).ok();
        let clear = ClusterSettings::new(
            "k:9092",
            Protocol::SaslPlaintext,
            None,
            cred(),
            cred(),
            false,
        );
        assert!(
            matches!(clear, Err(SettingsError::Transport(_))),
            "{clear:?}"
        );
        let local = ClusterSettings::new(
            "k:9092",
            Protocol::SaslPlaintext,
            None,
            cred(),
            cred(),
            true,
        );
        assert!(local.is_ok(), "{local:?}");
        assert_eq!("sasl_ssl".parse::<Protocol>(), Ok(Protocol::SaslSsl));
        assert!("scram-sha-512".parse::<Mechanism>().is_ok());
        assert!("GSSAPI".parse::<Mechanism>().is_err());
    }

    #[test]
    fn a_client_certificate_comes_with_its_key() {
        let p = CredentialPolicy::default();
        let r = || SecretRef::checked("env:STREAMKEEPER_CRED_X", &p).ok();
        assert!(matches!(ClientCert::pair(r(), r()), Ok(Some(_))));
        assert!(matches!(ClientCert::pair(None, None), Ok(None)));
        assert_eq!(
            ClientCert::pair(r(), None).err(),
            Some(SettingsError::HalfClientCertificate)
        );
        assert_eq!(
            ClientCert::pair(None, r()).err(),
            Some(SettingsError::HalfClientCertificate)
        );
    }
}
