//! Credential references: which secrets a cluster's or a registry's
//! settings may name, and over what they may travel.
//!
//! Settings never hold a secret, only a reference to one where the server
//! runs: `env:NAME` or `file:/path`. An admin-chosen reference must not
//! reach the server's other secrets (`env:DATABASE_URL`,
//! `file:/proc/self/environ`), so a reference is valid only under a
//! [`CredentialPolicy`]: variables whose name starts with a prefix
//! (`STREAMKEEPER_CRED_` by default) and files under a few directories
//! (`/run/secrets` by default). These are the rules; the server reads the
//! variable or the file, and checks the rule again when it does.

/// The default prefix of credential variables.
pub const DEFAULT_ENV_PREFIX: &str = "STREAMKEEPER_CRED_";
/// The default directory of credential files (Docker's and Kubernetes'
/// usual mount point for secrets).
pub const DEFAULT_DIR: &str = "/run/secrets";

/// A reference that passed the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// An environment variable of the server.
    Env(String),
    /// A file, as a normalised absolute path (no `.`, `..` or `//`).
    File(String),
}

/// Where credential references may point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialPolicy {
    env_prefix: String,
    /// Normalised absolute paths, without a trailing `/`.
    dirs: Vec<String>,
}

/// A policy the operator configured that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PolicyError {
    #[error(
        "STREAMKEEPER_CRED_ENV_PREFIX '{0}' must be letters, digits and _ (at least one), e.g. STREAMKEEPER_CRED_"
    )]
    BadPrefix(String),
    #[error(
        "STREAMKEEPER_CRED_DIRS: '{0}' must be an absolute directory other than /, e.g. /run/secrets"
    )]
    BadDir(String),
}

/// A reference refused, with the rule it broke.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReferenceError {
    #[error(
        "a credential must be a reference like env:STREAMKEEPER_CRED_KAFKA_PASSWORD or file:/run/secrets/kafka, not a literal"
    )]
    NotAReference,
    #[error("env:{0} is not a variable name (letters, digits and _)")]
    BadEnvName(String),
    #[error(
        "env:{name} is not allowed: a credential variable's name must start with {prefix} (STREAMKEEPER_CRED_ENV_PREFIX)"
    )]
    EnvOutsidePrefix { name: String, prefix: String },
    #[error("file:{0} is not allowed: a credential file is given by its absolute path")]
    RelativePath(String),
    #[error(
        "file:{given} is not allowed: credential files must be under {dirs} (STREAMKEEPER_CRED_DIRS){}",
        normalised_note(given, normalised)
    )]
    FileOutsideDirs {
        given: String,
        normalised: String,
        dirs: String,
    },
}

fn normalised_note(given: &str, normalised: &str) -> String {
    if given == normalised {
        String::new()
    } else {
        format!("; it names {normalised}")
    }
}

impl Default for CredentialPolicy {
    fn default() -> Self {
        CredentialPolicy {
            env_prefix: DEFAULT_ENV_PREFIX.into(),
            dirs: vec![DEFAULT_DIR.into()],
        }
    }
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An absolute path with `.`, `..` and repeated `/` resolved by name
/// alone (`..` at the root stays at the root, as the kernel does). `None`
/// for a relative path.
pub fn normalise(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Whether `path` is strictly inside `dir`, component by component (so
/// `/run/secrets2` is not inside `/run/secrets`). Both normalised.
pub fn is_inside(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
}

impl CredentialPolicy {
    /// A policy from the operator's settings.
    pub fn new<'a>(
        env_prefix: &str,
        dirs: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, PolicyError> {
        let env_prefix = env_prefix.trim();
        if !is_env_name(env_prefix) {
            return Err(PolicyError::BadPrefix(env_prefix.into()));
        }
        let dirs = dirs
            .into_iter()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                normalise(d)
                    .filter(|n| n != "/")
                    .ok_or_else(|| PolicyError::BadDir(d.into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CredentialPolicy {
            env_prefix: env_prefix.into(),
            dirs,
        })
    }

    /// A policy from `STREAMKEEPER_CRED_DIRS`' colon-separated form.
    pub fn from_setting(env_prefix: &str, dirs: &str) -> Result<Self, PolicyError> {
        Self::new(env_prefix, dirs.split(':'))
    }

    /// The narrower policy of one use of credentials, so a reference made
    /// for it cannot name the others' secrets: variables under
    /// `{prefix}{SCOPE}_` and files under `{dir}/{scope}/`. Notification
    /// channels, which a team's owner sets up, use `within("notify")` and
    /// then their team's name: a channel can never send a cluster's
    /// password, or another team's routing key, to an endpoint its author
    /// chose.
    pub fn within(&self, scope: &str) -> Self {
        let env: String = scope
            .chars()
            .map(|c| match c {
                c if c.is_ascii_alphanumeric() => c.to_ascii_uppercase(),
                _ => '_',
            })
            .collect();
        let dir = scope.replace(['/', '\\'], "_");
        CredentialPolicy {
            env_prefix: format!("{}{env}_", self.env_prefix),
            dirs: self.dirs.iter().map(|d| format!("{d}/{dir}")).collect(),
        }
    }

    pub fn env_prefix(&self) -> &str {
        &self.env_prefix
    }

    /// The directories credential files may be in, normalised.
    pub fn dirs(&self) -> &[String] {
        &self.dirs
    }

    /// Checks a reference as an admin entered it.
    pub fn check(&self, reference: &str) -> Result<Reference, ReferenceError> {
        let reference = reference.trim();
        if let Some(name) = reference.strip_prefix("env:").filter(|n| !n.is_empty()) {
            if !is_env_name(name) {
                return Err(ReferenceError::BadEnvName(name.into()));
            }
            if !name.starts_with(&self.env_prefix) || name == self.env_prefix {
                return Err(ReferenceError::EnvOutsidePrefix {
                    name: name.into(),
                    prefix: self.env_prefix.clone(),
                });
            }
            return Ok(Reference::Env(name.into()));
        }
        if let Some(path) = reference.strip_prefix("file:").filter(|p| !p.is_empty()) {
            let normalised =
                normalise(path).ok_or_else(|| ReferenceError::RelativePath(path.into()))?;
            return self
                .file_allowed(&normalised)
                .then(|| Reference::File(normalised.clone()))
                .ok_or_else(|| ReferenceError::FileOutsideDirs {
                    given: path.into(),
                    normalised,
                    dirs: self.dirs_shown(),
                });
        }
        Err(ReferenceError::NotAReference)
    }

    /// Whether a normalised absolute path is inside an allowed directory.
    /// The server asks again with the path's symlinks resolved.
    pub fn file_allowed(&self, normalised: &str) -> bool {
        self.dirs.iter().any(|d| is_inside(normalised, d))
    }

    fn dirs_shown(&self) -> String {
        if self.dirs.is_empty() {
            "no directory (none is configured)".into()
        } else {
            self.dirs.join(" or ")
        }
    }
}

/// Credentials sent in clear, refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TransportError {
    #[error(
        "credentials are sent only over SASL_SSL or SSL, not {0}: use TLS, or set insecure_credentials for a local cluster"
    )]
    KafkaInClear(String),
    #[error(
        "registry credentials are sent only over https://, not {0}://: use https, or set the cluster's insecure_credentials for a local registry"
    )]
    HttpInClear(String),
}

/// May a Kafka connection with this security protocol carry credentials?
/// Only with TLS, unless the cluster is explicitly marked insecure.
pub fn kafka_transport(
    protocol: &str,
    has_credentials: bool,
    insecure: bool,
) -> Result<(), TransportError> {
    let encrypted = matches!(protocol.to_ascii_uppercase().as_str(), "SSL" | "SASL_SSL");
    if has_credentials && !encrypted && !insecure {
        return Err(TransportError::KafkaInClear(protocol.to_ascii_uppercase()));
    }
    Ok(())
}

/// May an HTTP request to a URL of this scheme carry credentials? Only
/// https, unless the cluster is explicitly marked insecure.
pub fn http_transport(
    scheme: &str,
    has_credentials: bool,
    insecure: bool,
) -> Result<(), TransportError> {
    if has_credentials && !scheme.eq_ignore_ascii_case("https") && !insecure {
        return Err(TransportError::HttpInClear(scheme.to_ascii_lowercase()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_narrows_variables_and_directories() {
        let p = CredentialPolicy::new("STREAMKEEPER_CRED_", ["/run/secrets"]).expect("policy");
        let team = p.within("notify").within("fraud-scoring");
        assert_eq!(team.env_prefix(), "STREAMKEEPER_CRED_NOTIFY_FRAUD_SCORING_");
        assert_eq!(team.dirs(), ["/run/secrets/notify/fraud-scoring"]);
        assert!(
            team.check("env:STREAMKEEPER_CRED_NOTIFY_FRAUD_SCORING_SLACK")
                .is_ok()
        );
        assert!(
            team.check("file:/run/secrets/notify/fraud-scoring/pd")
                .is_ok()
        );
        for other in [
            "env:STREAMKEEPER_CRED_KAFKA_PASSWORD",
            "env:STREAMKEEPER_CRED_NOTIFY_PAYMENTS_SLACK",
            "file:/run/secrets/kafka",
            "file:/run/secrets/notify/payments/pd",
            "file:/run/secrets/notify/fraud-scoring/../../kafka",
        ] {
            assert!(team.check(other).is_err(), "{other} must be refused");
        }
        // A scope cannot climb out of its directory.
        assert_eq!(p.within("../x").dirs(), ["/run/secrets/.._x"]);
    }

    #[test]
    fn only_prefixed_variables_are_references() {
        let p = CredentialPolicy::default();
        assert_eq!(
            p.check("env:STREAMKEEPER_CRED_CC_API_KEY"),
            Ok(Reference::Env("STREAMKEEPER_CRED_CC_API_KEY".into()))
        );
        for name in [
            "DATABASE_URL",
            "STREAMKEEPER_CRED_",
            "streamkeeper_cred_x",
            "HOME",
        ] {
            assert!(
                matches!(
                    p.check(&format!("env:{name}")),
                    Err(ReferenceError::EnvOutsidePrefix { .. })
                ),
                "{name}"
            );
        }
        let e = p.check("env:DATABASE_URL").expect_err("outside");
        assert!(
            e.to_string().contains("STREAMKEEPER_CRED_")
                && e.to_string().contains("STREAMKEEPER_CRED_ENV_PREFIX"),
            "{e}"
        );
        assert_eq!(
            p.check("env:STREAMKEEPER_CRED_A=B"),
            Err(ReferenceError::BadEnvName("STREAMKEEPER_CRED_A=B".into()))
        );
        let mine = CredentialPolicy::new("KAFKA_", ["/run/secrets"]).expect("policy");
        assert!(mine.check("env:KAFKA_PW").is_ok());
        assert!(mine.check("env:STREAMKEEPER_CRED_PW").is_err());
    }

    #[test]
    fn only_files_inside_the_directories_are_references() {
        let p = CredentialPolicy::default();
        assert_eq!(
            p.check("file:/run/secrets/cc-key"),
            Ok(Reference::File("/run/secrets/cc-key".into()))
        );
        assert_eq!(
            p.check("file:/run/secrets/./kafka//pw"),
            Ok(Reference::File("/run/secrets/kafka/pw".into()))
        );
        for path in [
            "/etc/passwd",
            "/proc/self/environ",
            "/run/secrets",
            "/run/secrets/",
            "/run/secrets2/x",
            "/run/secrets/../../etc/passwd",
            "/run/secrets/a/../../x",
        ] {
            assert!(
                matches!(
                    p.check(&format!("file:{path}")),
                    Err(ReferenceError::FileOutsideDirs { .. })
                ),
                "{path}"
            );
        }
        let e = p
            .check("file:/run/secrets/../../etc/passwd")
            .expect_err("escape");
        assert_eq!(
            e.to_string(),
            "file:/run/secrets/../../etc/passwd is not allowed: credential files must be under /run/secrets (STREAMKEEPER_CRED_DIRS); it names /etc/passwd"
        );
        assert_eq!(
            p.check("file:run/secrets/x"),
            Err(ReferenceError::RelativePath("run/secrets/x".into()))
        );
        for literal in ["hunter2", "env:", "file:", "ENV:X"] {
            assert_eq!(
                p.check(literal),
                Err(ReferenceError::NotAReference),
                "{literal}"
            );
        }
    }

    #[test]
    fn directories_are_configurable_and_colon_separated() {
        let p = CredentialPolicy::from_setting(
            "STREAMKEEPER_CRED_",
            "/run/secrets:/etc/streamkeeper/creds/",
        )
        .expect("policy");
        assert_eq!(p.dirs(), ["/run/secrets", "/etc/streamkeeper/creds"]);
        assert!(p.check("file:/etc/streamkeeper/creds/sr").is_ok());
        assert!(p.check("file:/etc/streamkeeper/other").is_err());
        let none = CredentialPolicy::from_setting("STREAMKEEPER_CRED_", "").expect("policy");
        assert!(none.dirs().is_empty());
        assert!(none.check("file:/run/secrets/x").is_err());
        assert_eq!(
            CredentialPolicy::from_setting("STREAMKEEPER_CRED_", "/"),
            Err(PolicyError::BadDir("/".into()))
        );
        assert_eq!(
            CredentialPolicy::from_setting("STREAMKEEPER_CRED_", "/run/../"),
            Err(PolicyError::BadDir("/run/../".into()))
        );
        assert_eq!(
            CredentialPolicy::from_setting("STREAMKEEPER_CRED_", "relative/dir"),
            Err(PolicyError::BadDir("relative/dir".into()))
        );
        assert_eq!(
            CredentialPolicy::from_setting("", "/run/secrets"),
            Err(PolicyError::BadPrefix(String::new()))
        );
    }

    #[test]
    fn paths_normalise_by_name() {
        assert_eq!(normalise("/a/./b//c/../d").as_deref(), Some("/a/b/d"));
        assert_eq!(normalise("/../../etc").as_deref(), Some("/etc"));
        assert_eq!(normalise("/").as_deref(), Some("/"));
        assert_eq!(normalise("a/b"), None);
        assert!(is_inside("/run/secrets/x", "/run/secrets"));
        assert!(!is_inside("/run/secrets", "/run/secrets"));
        assert!(!is_inside("/run/secretsx", "/run/secrets"));
    }

    #[test]
    fn credentials_travel_encrypted_unless_the_cluster_is_marked_insecure() {
        assert_eq!(kafka_transport("SASL_SSL", true, false), Ok(()));
        assert_eq!(kafka_transport("ssl", true, false), Ok(()));
        assert_eq!(
            kafka_transport("sasl_plaintext", true, false),
            Err(TransportError::KafkaInClear("SASL_PLAINTEXT".into()))
        );
        assert!(kafka_transport("PLAINTEXT", true, false).is_err());
        assert_eq!(kafka_transport("SASL_PLAINTEXT", true, true), Ok(()));
        assert_eq!(kafka_transport("PLAINTEXT", false, false), Ok(()));
        assert_eq!(http_transport("https", true, false), Ok(()));
        assert_eq!(
            http_transport("http", true, false),
            Err(TransportError::HttpInClear("http".into()))
        );
        assert_eq!(http_transport("http", true, true), Ok(()));
        assert_eq!(http_transport("http", false, false), Ok(()));
        let e = http_transport("http", true, false).expect_err("clear");
        assert!(e.to_string().contains("https://"), "{e}");
    }
}
