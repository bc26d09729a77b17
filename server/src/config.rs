//! Command line and environment, parsed by clap and validated before
//! anything starts. Every error names the setting (flag and variable) so an
//! operator knows what to fix; secrets are never printed.

use crate::accounts::cli::{TokenCommand, UserCommand};
use crate::audit::cli::AuditCommand;
use crate::clients::egress::Outbound;
use crate::clients::smtp::settings::{Security, SmtpInput, SmtpSettings};
use crate::connect::cli::ConnectCommand;
use crate::http::site::Site;
use crate::lineage::cli::LineageCommand;
use crate::schemas::cli::SchemaCommand;
use crate::watch::cli::{ClusterCommand, KafkaCommand};
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::time::Duration;
use streamkeeper::accounts::sso::LocalLogin;
use streamkeeper::audit::AuditKey;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use url::Url;

#[derive(Debug, Parser)]
#[command(
    name = "streamkeeper",
    version,
    about = "Keeps watch over Kafka streams, read-only, and gets the first alert to the stream's owner."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Postgres connection URL (postgres://user:pass@host:port/db).
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
    /// Log filter: error, warn, info, debug, trace, or a tracing directive.
    #[arg(
        long,
        env = "STREAMKEEPER_LOG",
        default_value = "info,sqlx=warn",
        global = true
    )]
    pub log_level: String,
    /// Log lines as text for people, or as one JSON object per line for a
    /// log pipeline (Loki, Elasticsearch, CloudWatch).
    #[arg(
        long,
        env = "STREAMKEEPER_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text,
        global = true
    )]
    pub log_format: LogFormat,
    /// How long to keep retrying an unreachable Postgres at start, in seconds.
    #[arg(
        long,
        env = "STREAMKEEPER_DB_CONNECT_TIMEOUT",
        default_value_t = 30,
        global = true
    )]
    pub db_connect_timeout: u64,
    /// A second Postgres URL, for a role that owns the schema: migrations
    /// run under it, then the DATABASE_URL role is given every table but
    /// the audit log, which it may only read and append to.
    #[arg(
        long,
        env = "STREAMKEEPER_MIGRATE_DATABASE_URL",
        global = true,
        hide_env_values = true
    )]
    pub migrate_database_url: Option<String>,
    /// The key the audit log's entries are sealed with (HMAC-SHA-256), so
    /// that whoever can write the database cannot rewrite the log
    /// unnoticed: `file:/run/secrets/audit-key` (preferred) or the key
    /// itself, at least 32 bytes. Keep it outside the database.
    #[arg(
        long,
        env = "STREAMKEEPER_AUDIT_KEY",
        global = true,
        hide_env_values = true
    )]
    pub audit_key: Option<String>,
    /// The key TOTP secrets are sealed with at rest (XChaCha20-Poly1305):
    /// `file:/run/secrets/totp-key` (preferred) or the key itself, at least
    /// 32 bytes. Keep it outside the database. Once set, secrets stored
    /// before are sealed at start-up, and the server refuses to start
    /// without it.
    #[arg(
        long,
        env = "STREAMKEEPER_TOTP_KEY",
        global = true,
        hide_env_values = true
    )]
    pub totp_key: Option<String>,
    #[command(flatten)]
    pub outbound: OutboundArgs,
}

/// Where outbound requests may go and which credential references are
/// valid; read by every command that saves or uses cluster settings.
#[derive(Debug, Args)]
pub struct OutboundArgs {
    /// Credential references `env:NAME` must name a variable starting with this.
    #[arg(
        long,
        env = "STREAMKEEPER_CRED_ENV_PREFIX",
        default_value = streamkeeper::platform::credential::DEFAULT_ENV_PREFIX,
        global = true
    )]
    pub cred_env_prefix: String,
    /// Credential references `file:/path` must be under one of these
    /// directories (colon-separated).
    #[arg(
        long,
        env = "STREAMKEEPER_CRED_DIRS",
        default_value = streamkeeper::platform::credential::DEFAULT_DIR,
        global = true
    )]
    pub cred_dirs: String,
    /// Outbound requests may also go to: loopback, private (comma-separated).
    /// Link-local and metadata addresses are refused always.
    #[arg(
        long,
        env = "STREAMKEEPER_EGRESS_ALLOW",
        default_value = "",
        global = true
    )]
    pub egress_allow: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the console and the API (the default).
    Serve(ServeArgs),
    /// Apply the database migrations and exit.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage bearer tokens for machines (CI jobs, OpenLineage producers).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Check the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Read a Kafka cluster, read-only (needs no database).
    #[command(subcommand)]
    Kafka(KafkaCommand),
    /// Manage the clusters the console watches.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// The background routines: each one's schedule, last run, outcome and
    /// error, the replica holding its lease, and when it is next due; an
    /// admin's `schedule` and `run`.
    Routines(crate::platform::routine::cli::RoutinesArgs),
    /// Check schemas: offline on files, or against a running console for
    /// the consumer groups of a topic (needs no database).
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Lineage: what breaks if a topic changes, and rebuilding the graph
    /// from the stored OpenLineage events.
    #[command(subcommand)]
    Lineage(LineageCommand),
    /// Check Kafka Connect connector configs offline (needs no database).
    #[command(subcommand)]
    Connect(ConnectCommand),
    /// The pilot: the day-30 table of its metrics against the baseline,
    /// and setting it up.
    Pilot(crate::pilot::cli::PilotArgs),
    /// A team's notification channels: list, add, send a test, remove.
    Notify(NotifyArgs),
}

/// `notify`: its commands, and the mail server an email channel's `add`
/// and `test` use, read as `serve` reads it (`STREAMKEEPER_SMTP_*`, or the
/// same flags after `notify`), so a test from the command line goes the
/// way the channel's messages will.
#[derive(Debug, Args)]
pub struct NotifyArgs {
    #[command(subcommand)]
    pub command: crate::notify::cli::NotifyCommand,
    #[command(flatten)]
    pub smtp: Box<SmtpArgs>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "STREAMKEEPER_BIND", default_value = "127.0.0.1:3000")]
    pub bind: String,
    /// The URL users reach the console at; https turns on Secure cookies,
    /// the __Host- cookie name and HSTS. Defaults to http://BIND.
    #[arg(long, env = "STREAMKEEPER_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Folder with a built site (pkg/ with the wasm, JS and CSS), served
    /// instead of the one a release binary carries; required by builds
    /// that carry none (debug builds, `cargo build` without scripts/release).
    #[arg(long, env = "STREAMKEEPER_SITE_ROOT")]
    pub site_root: Option<String>,
    /// Minutes without a request after which a session ends.
    #[arg(long, env = "STREAMKEEPER_SESSION_IDLE_MINUTES", default_value_t = 30)]
    pub session_idle_minutes: i64,
    /// Hours after sign-in after which a session ends, however active.
    #[arg(long, env = "STREAMKEEPER_SESSION_MAX_HOURS", default_value_t = 12)]
    pub session_max_hours: i64,
    /// Reverse proxies (addresses or CIDR ranges, comma-separated) whose
    /// X-Forwarded-For / Forwarded headers name the client. Default: none,
    /// the peer address is the client.
    #[arg(long, env = "STREAMKEEPER_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
    /// A clusters file (TOML) applied at start, as `cluster apply` does.
    #[arg(long, env = "STREAMKEEPER_CLUSTERS_FILE")]
    pub clusters_file: Option<std::path::PathBuf>,
    /// The largest schema (with its references) a check, a recorded
    /// schema or a proposal may be, in bytes; request bodies may be 8
    /// times this (at least 2 MiB).
    #[arg(long, env = "STREAMKEEPER_MAX_SCHEMA_BYTES", default_value_t = crate::platform::limits::DEFAULT_MAX_SCHEMA_BYTES)]
    pub max_schema_bytes: usize,
    /// The most per-partition series one `/metrics` scrape carries; past
    /// it those families are left out and named in
    /// `streamkeeper_metrics_cut`.
    #[arg(long, env = "STREAMKEEPER_METRICS_MAX_SERIES", default_value_t = crate::platform::metrics::DEFAULT_MAX_SERIES)]
    pub metrics_max_series: usize,
    /// Another OpenLineage endpoint (Marquez, DataHub) the derived lineage
    /// events are forwarded to, e.g. http://marquez:5000/api/v1/lineage.
    #[arg(long, env = "STREAMKEEPER_LINEAGE_FORWARD_URL")]
    pub lineage_forward_url: Option<Url>,
    #[command(flatten)]
    pub sso: Box<SsoArgs>,
    #[command(flatten)]
    pub smtp: Box<SmtpArgs>,
}

/// The mail server approvers and authors are written through: on when a
/// host is set (docs/notifications-email.md).
#[derive(Debug, Args, Default)]
pub struct SmtpArgs {
    /// The mail server (submission relay), a name or an address.
    #[arg(long, env = "STREAMKEEPER_SMTP_HOST", default_value = "")]
    pub smtp_host: String,
    /// Its port; 587 for starttls, 465 for tls, 25 for none.
    #[arg(long, env = "STREAMKEEPER_SMTP_PORT")]
    pub smtp_port: Option<u16>,
    /// starttls (required, never a fall-back to plain text), tls (from the
    /// first byte), or none (only with STREAMKEEPER_SMTP_INSECURE).
    #[arg(long, env = "STREAMKEEPER_SMTP_SECURITY", value_enum, default_value_t = SmtpSecurity::Starttls)]
    pub smtp_security: SmtpSecurity,
    /// Allows security none: mail and credentials in clear, for a relay on
    /// this host.
    #[arg(long, env = "STREAMKEEPER_SMTP_INSECURE", default_value_t = false, action = clap::ArgAction::Set)]
    pub smtp_insecure: bool,
    /// The username, by reference: env:STREAMKEEPER_CRED_… or file:/run/secrets/….
    #[arg(long, env = "STREAMKEEPER_SMTP_USERNAME")]
    pub smtp_username: Option<String>,
    /// The password, by reference: env:STREAMKEEPER_CRED_… or file:/run/secrets/….
    #[arg(long, env = "STREAMKEEPER_SMTP_PASSWORD")]
    pub smtp_password: Option<String>,
    /// Who the mail is from, e.g. "Streamkeeper <streamkeeper@example.com>".
    #[arg(long, env = "STREAMKEEPER_SMTP_FROM")]
    pub smtp_from: Option<String>,
    /// A PEM file of extra trusted roots, for a relay with a private CA.
    #[arg(long, env = "STREAMKEEPER_SMTP_CA_FILE")]
    pub smtp_ca_file: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SmtpSecurity {
    #[default]
    Starttls,
    Tls,
    None,
}

/// The mail server's settings, checked; `None` when no host is set.
pub fn smtp_settings(
    a: &SmtpArgs,
    outbound: &Outbound,
) -> Result<Option<SmtpSettings>, ConfigError> {
    let security = match a.smtp_security {
        SmtpSecurity::Starttls => Security::StartTls,
        SmtpSecurity::Tls => Security::Tls,
        SmtpSecurity::None => Security::None,
    };
    let input = SmtpInput {
        host: &a.smtp_host,
        port: a.smtp_port,
        security: Some(security),
        insecure: a.smtp_insecure,
        username: a.smtp_username.as_deref(),
        password: a.smtp_password.as_deref(),
        from: a.smtp_from.as_deref(),
        ca_file: a.smtp_ca_file.as_deref(),
    };
    Ok(SmtpSettings::check(
        &input,
        &outbound.credentials,
        outbound.egress,
    )?)
}

/// Single sign-on through an OpenID Connect provider (Keycloak, Okta,
/// Entra ID, Google, Dex, Authentik): on when an issuer is set.
#[derive(Debug, Args, Default)]
pub struct SsoArgs {
    /// The provider's issuer URL; its /.well-known/openid-configuration is
    /// read on the first sign-in.
    #[arg(long, env = "STREAMKEEPER_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// The client id registered at the provider, whose redirect URI is
    /// PUBLIC_URL/login/sso/callback.
    #[arg(long, env = "STREAMKEEPER_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// The client secret, or `file:/path` to read it from a file (a
    /// mounted secret). Leave unset for a public client (PKCE only).
    #[arg(long, env = "STREAMKEEPER_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,
    /// Scopes asked for beside `openid` (comma-separated).
    #[arg(
        long,
        env = "STREAMKEEPER_OIDC_SCOPES",
        default_value = "profile,email"
    )]
    pub oidc_scopes: String,
    /// Where the groups are in the ID token: a claim name or a dotted path
    /// (Keycloak: realm_access.roles).
    #[arg(long, env = "STREAMKEEPER_OIDC_GROUPS_CLAIM", default_value = "groups")]
    pub oidc_groups_claim: String,
    /// The claim a new user's username comes from (else the e-mail's local
    /// part, else the subject).
    #[arg(
        long,
        env = "STREAMKEEPER_OIDC_USERNAME_CLAIM",
        default_value = "preferred_username"
    )]
    pub oidc_username_claim: String,
    /// A JSON file mapping groups to roles and teams, e.g.
    /// {"kafka-admins": {"roles": ["admin"]}, "team-payments": {"teams": ["payments"], "roles": ["owner"]}}.
    /// Without it, users signed in through the provider are viewers.
    #[arg(long, env = "STREAMKEEPER_OIDC_GROUP_MAPPING")]
    pub oidc_group_mapping: Option<std::path::PathBuf>,
    /// What the sign-in button names: "Sign in with <name>".
    #[arg(long, env = "STREAMKEEPER_OIDC_PROVIDER_NAME")]
    pub oidc_provider_name: Option<String>,
    /// Whether "Sign out" also ends the session at the provider (when it
    /// offers an end_session_endpoint); register PUBLIC_URL/login as a
    /// post-logout redirect URI there.
    #[arg(long, env = "STREAMKEEPER_OIDC_PROVIDER_LOGOUT", default_value_t = true, action = clap::ArgAction::Set)]
    pub oidc_provider_logout: bool,
    /// Turn password sign-in off (`disabled`) once single sign-on is set.
    #[arg(long, env = "STREAMKEEPER_LOCAL_LOGIN", value_enum, default_value_t = LocalLoginSetting::Enabled)]
    pub local_login: LocalLoginSetting,
    /// With local sign-in disabled, the one local account that may still
    /// sign in with its password (an admin, for when the provider is down).
    #[arg(long, env = "STREAMKEEPER_BREAK_GLASS_ADMIN")]
    pub break_glass_admin: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LocalLoginSetting {
    #[default]
    Enabled,
    Disabled,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "DATABASE_URL (--database-url) is not set: give the Postgres URL, e.g. postgres://streamkeeper@localhost:5432/streamkeeper"
    )]
    MissingDatabaseUrl,
    #[error("DATABASE_URL (--database-url) is not a postgres:// or postgresql:// URL")]
    BadDatabaseUrl,
    #[error(
        "STREAMKEEPER_MIGRATE_DATABASE_URL (--migrate-database-url) is not a postgres:// or postgresql:// URL"
    )]
    BadMigrateDatabaseUrl,
    #[error("STREAMKEEPER_BIND (--bind) '{0}' is not an address like 127.0.0.1:3000")]
    BadBind(String),
    #[error(
        "STREAMKEEPER_PUBLIC_URL (--public-url) '{0}' is not an http:// or https:// URL with a host"
    )]
    BadPublicUrl(String),
    #[error(
        "STREAMKEEPER_SESSION_IDLE_MINUTES (--session-idle-minutes) must be between 1 and 1440, not {0}"
    )]
    BadIdle(i64),
    #[error(
        "STREAMKEEPER_SESSION_MAX_HOURS (--session-max-hours) must be between 1 and 720, not {0}"
    )]
    BadMax(i64),
    #[error(
        "STREAMKEEPER_TRUSTED_PROXIES (--trusted-proxies) '{0}' is not an address or a CIDR range like 10.0.0.0/8"
    )]
    BadTrustedProxy(String),
    #[error("a STREAMKEEPER_ setting is malformed: {0}")]
    Environment(String),
    #[error("STREAMKEEPER_LOG (--log-level) '{0}' is not a log filter")]
    BadLogLevel(String),
    #[error(
        "STREAMKEEPER_MAX_SCHEMA_BYTES (--max-schema-bytes) must be between 1024 and 67108864 (64 MiB), not {0}"
    )]
    BadMaxSchemaBytes(usize),
    #[error("STREAMKEEPER_AUDIT_KEY (--audit-key) names {path}, which cannot be read: {reason}")]
    AuditKeyFile { path: String, reason: String },
    #[error("STREAMKEEPER_AUDIT_KEY (--audit-key): {0}")]
    AuditKey(#[from] streamkeeper::audit::ShortKey),
    #[error("STREAMKEEPER_TOTP_KEY (--totp-key) names {path}, which cannot be read: {reason}")]
    TotpKeyFile { path: String, reason: String },
    #[error("STREAMKEEPER_TOTP_KEY (--totp-key): {0}")]
    TotpKey(#[from] crate::platform::seal::ShortKey),
    #[error(
        "STREAMKEEPER_OIDC_ISSUER (--oidc-issuer) '{0}' is not an https:// URL (http:// only on localhost)"
    )]
    BadIssuer(String),
    #[error(
        "STREAMKEEPER_OIDC_CLIENT_ID (--oidc-client-id) must be set with STREAMKEEPER_OIDC_ISSUER"
    )]
    MissingClientId,
    #[error(
        "STREAMKEEPER_OIDC_CLIENT_SECRET (--oidc-client-secret) names {path}, which cannot be read: {reason}"
    )]
    ClientSecretFile { path: String, reason: String },
    #[error("STREAMKEEPER_OIDC_GROUP_MAPPING (--oidc-group-mapping) {path}: {reason}")]
    GroupMapping { path: String, reason: String },
    #[error(
        "STREAMKEEPER_LOCAL_LOGIN (--local-login) is disabled but no single sign-on is set (STREAMKEEPER_OIDC_ISSUER): nobody could sign in"
    )]
    NobodyCouldSignIn,
    #[error(
        "this build of streamkeeper carries no site (the wasm, JS and CSS): set STREAMKEEPER_SITE_ROOT (--site-root) to a folder whose pkg/ holds them, or run the binary scripts/release builds"
    )]
    NoSite,
    #[error(transparent)]
    Credentials(#[from] streamkeeper::platform::credential::PolicyError),
    #[error(transparent)]
    Egress(#[from] streamkeeper::platform::egress::EgressSettingError),
    #[error(transparent)]
    Smtp(#[from] crate::clients::smtp::settings::SmtpSettingError),
}

/// The outbound settings, validated.
pub fn outbound(a: &OutboundArgs) -> Result<Outbound, ConfigError> {
    Ok(Outbound {
        egress: EgressPolicy::parse(&a.egress_allow)?,
        credentials: CredentialPolicy::from_setting(&a.cred_env_prefix, &a.cred_dirs)?,
    })
}

/// `serve`'s settings from the environment and defaults, for a bare
/// `streamkeeper` with no subcommand.
pub fn serve_args_from_env() -> Result<ServeArgs, ConfigError> {
    #[derive(Parser)]
    struct ServeOnly {
        #[command(flatten)]
        args: ServeArgs,
    }
    // Parsing no arguments reads only environment variables and defaults.
    ServeOnly::try_parse_from(["streamkeeper"])
        .map(|s| s.args)
        .map_err(|e| ConfigError::Environment(e.to_string().trim().to_string()))
}

/// The database settings every subcommand needs.
pub fn database_url(g: &GlobalArgs) -> Result<String, ConfigError> {
    let url = g
        .database_url
        .as_deref()
        .filter(|u| !u.trim().is_empty())
        .ok_or(ConfigError::MissingDatabaseUrl)?;
    if !is_postgres_url(url) {
        return Err(ConfigError::BadDatabaseUrl);
    }
    Ok(url.to_string())
}

fn is_postgres_url(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "postgres" | "postgresql"))
}

/// A secret setting's value: read from the file a `file:` reference names
/// (its last line break dropped), or the setting's own bytes. Errors name
/// the file and why, never what it holds.
fn secret_bytes(setting: &str) -> Result<Vec<u8>, (String, String)> {
    match setting.strip_prefix("file:") {
        Some(path) => {
            let mut bytes =
                std::fs::read(path).map_err(|e| (path.to_string(), e.kind().to_string()))?;
            while bytes.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                bytes.pop();
            }
            Ok(bytes)
        }
        None => Ok(setting.as_bytes().to_vec()),
    }
}

/// Single sign-on's settings, when an issuer is set.
fn sso_settings(
    a: &SsoArgs,
    public_url: &Url,
) -> Result<Option<crate::accounts::sso::SsoSettings>, ConfigError> {
    let Some(issuer) = a
        .oidc_issuer
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    let issuer_url = Url::parse(issuer)
        .ok()
        .filter(|u| {
            u.scheme() == "https"
                || (u.scheme() == "http"
                    && matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")))
        })
        .ok_or_else(|| ConfigError::BadIssuer(issuer.to_string()))?;
    let client_id = a
        .oidc_client_id
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or(ConfigError::MissingClientId)?
        .to_string();
    let client_secret = match a
        .oidc_client_secret
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        None => None,
        Some(s) => {
            let bytes = secret_bytes(s)
                .map_err(|(path, reason)| ConfigError::ClientSecretFile { path, reason })?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
    };
    let mapping = match &a.oidc_group_mapping {
        None => streamkeeper::accounts::sso::GroupMapping::default(),
        Some(path) => {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError::GroupMapping {
                path: shown.clone(),
                reason: e.kind().to_string(),
            })?;
            streamkeeper::accounts::sso::GroupMapping::parse(&text).map_err(|e| {
                ConfigError::GroupMapping {
                    path: shown,
                    reason: e.to_string(),
                }
            })?
        }
    };
    let mut redirect = public_url.clone();
    redirect.set_path(crate::accounts::sso::CALLBACK_PATH);
    redirect.set_query(None);
    let provider_name = a
        .oidc_provider_name
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| {
            issuer_url
                .host_str()
                .unwrap_or("single sign-on")
                .to_string()
        });
    Ok(Some(crate::accounts::sso::SsoSettings {
        issuer: issuer_url,
        client_id,
        client_secret,
        scopes: a
            .oidc_scopes
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "openid")
            .map(str::to_string)
            .collect(),
        groups_claim: a.oidc_groups_claim.trim().to_string(),
        username_claim: a.oidc_username_claim.trim().to_string(),
        mapping,
        provider_name,
        redirect,
        provider_logout: a.oidc_provider_logout,
    }))
}

fn local_login(a: &SsoArgs) -> Result<LocalLogin, ConfigError> {
    match a.local_login {
        LocalLoginSetting::Enabled => Ok(LocalLogin::Everyone),
        LocalLoginSetting::Disabled
            if a.oidc_issuer.as_deref().is_none_or(|s| s.trim().is_empty()) =>
        {
            Err(ConfigError::NobodyCouldSignIn)
        }
        LocalLoginSetting::Disabled => Ok(LocalLogin::Only(
            a.break_glass_admin
                .as_deref()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty()),
        )),
    }
}

/// The audit key: read from the file a `file:` reference names (its last
/// line break dropped), or the setting's own bytes. Never echoed: errors
/// name the file and why, not what it holds.
pub fn audit_key(g: &GlobalArgs) -> Result<Option<AuditKey>, ConfigError> {
    let Some(setting) = g.audit_key.as_deref().filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let bytes = secret_bytes(setting)
        .map_err(|(path, reason)| ConfigError::AuditKeyFile { path, reason })?;
    Ok(Some(AuditKey::new(bytes)?))
}

/// The TOTP sealing key, read as the audit key is (a `file:` reference or
/// the setting's own bytes). Never echoed.
pub fn totp_key(g: &GlobalArgs) -> Result<Option<crate::platform::seal::SealKey>, ConfigError> {
    let Some(setting) = g.totp_key.as_deref().filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let bytes = secret_bytes(setting)
        .map_err(|(path, reason)| ConfigError::TotpKeyFile { path, reason })?;
    Ok(Some(crate::platform::seal::SealKey::new(&bytes)?))
}

/// The migration role's URL, when the schema's owner is not the runtime role.
pub fn migrate_database_url(g: &GlobalArgs) -> Result<Option<String>, ConfigError> {
    match g.migrate_database_url.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(url) if is_postgres_url(url) => Ok(Some(url.to_string())),
        Some(_) => Err(ConfigError::BadMigrateDatabaseUrl),
    }
}

/// Validated settings of `serve`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    pub public_url: Url,
    /// Where `/pkg` comes from: the binary itself, or a folder.
    pub site: Site,
    pub session_idle: Duration,
    pub session_max: Duration,
    /// Peers whose forwarding headers are believed (see `client_addr`).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub clusters_file: Option<std::path::PathBuf>,
    /// See [`ServeArgs::max_schema_bytes`].
    pub max_schema_bytes: usize,
    /// Where outbound requests may go, which credentials they may carry.
    pub outbound: Outbound,
    /// See [`ServeArgs::metrics_max_series`].
    pub metrics_max_series: usize,
    /// See [`ServeArgs::lineage_forward_url`].
    pub lineage_forward: Option<Url>,
    pub sso: Option<crate::accounts::sso::SsoSettings>,
    pub local_login: LocalLogin,
    /// The mail server, when one is set.
    pub smtp: Option<SmtpSettings>,
}

/// The trusted proxies as networks; a bare address is a network of one.
fn trusted_proxies(list: &[String]) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<ipnet::IpNet>()
                .map(|n| n.trunc())
                .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| ConfigError::BadTrustedProxy(s.to_string()))
        })
        .collect()
}

impl ServeConfig {
    pub fn from_args(a: &ServeArgs, outbound: Outbound) -> Result<Self, ConfigError> {
        let bind: SocketAddr = a
            .bind
            .parse()
            .map_err(|_| ConfigError::BadBind(a.bind.clone()))?;
        let public = a
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{bind}"));
        let public_url = Url::parse(&public)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or(ConfigError::BadPublicUrl(public))?;
        if !(1..=1440).contains(&a.session_idle_minutes) {
            return Err(ConfigError::BadIdle(a.session_idle_minutes));
        }
        if !(1..=720).contains(&a.session_max_hours) {
            return Err(ConfigError::BadMax(a.session_max_hours));
        }
        if !(1024..=64 << 20).contains(&a.max_schema_bytes) {
            return Err(ConfigError::BadMaxSchemaBytes(a.max_schema_bytes));
        }
        let sso = sso_settings(&a.sso, &public_url)?;
        let smtp = smtp_settings(&a.smtp, &outbound)?;
        Ok(Self {
            bind,
            public_url,
            site: Site::choose(a.site_root.as_deref()).ok_or(ConfigError::NoSite)?,
            session_idle: Duration::from_secs(a.session_idle_minutes.unsigned_abs() * 60),
            session_max: Duration::from_secs(a.session_max_hours.unsigned_abs() * 3600),
            trusted_proxies: trusted_proxies(&a.trusted_proxies)?,
            clusters_file: a.clusters_file.clone(),
            outbound,
            max_schema_bytes: a.max_schema_bytes,
            metrics_max_series: a.metrics_max_series,
            lineage_forward: a.lineage_forward_url.clone(),
            sso,
            local_login: local_login(&a.sso)?,
            smtp,
        })
    }

    /// The request body limit: room for the largest schema written as a
    /// JSON string (escaping can double it) with its references, and
    /// never below axum's former 2 MiB, so a schema over its cap reaches
    /// the check that names the cap.
    pub fn body_limit(&self) -> usize {
        self.max_schema_bytes.saturating_mul(8).max(2 << 20)
    }

    pub fn https(&self) -> bool {
        self.public_url.scheme() == "https"
    }

    /// The origin browsers send in `Origin` for this console.
    pub fn origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    /// `__Host-` binds the cookie to this exact origin, but browsers accept
    /// it only with `Secure`, so plain-http installs use a plain name.
    pub fn cookie_name(&self) -> &'static str {
        if self.https() {
            "__Host-streamkeeper"
        } else {
            "streamkeeper"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ServeArgs {
        ServeArgs {
            bind: "127.0.0.1:3000".into(),
            public_url: None,
            site_root: Some("site".into()),
            session_idle_minutes: 30,
            session_max_hours: 12,
            trusted_proxies: vec![],
            clusters_file: None,
            max_schema_bytes: crate::platform::limits::DEFAULT_MAX_SCHEMA_BYTES,
            metrics_max_series: crate::platform::metrics::DEFAULT_MAX_SERIES,
            lineage_forward_url: None,
            sso: Box::default(),
            smtp: Box::default(),
        }
    }

    #[test]
    fn single_sign_on_settings_are_checked_and_name_the_setting() {
        let mut a = args();
        a.sso.oidc_issuer = Some("http://idp.example.com".into());
        a.sso.oidc_client_id = Some("streamkeeper".into());
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("plain http");
        assert!(e.to_string().contains("STREAMKEEPER_OIDC_ISSUER"), "{e}");
        a.sso.oidc_issuer = Some("https://idp.example.com/realms/x".into());
        a.sso.oidc_client_id = None;
        assert_eq!(
            ServeConfig::from_args(&a, Outbound::default()).expect_err("no client"),
            ConfigError::MissingClientId
        );
        a.sso.oidc_client_id = Some("streamkeeper".into());
        let dir = std::env::temp_dir().join(format!("sk-sso-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let secret = dir.join("secret");
        std::fs::write(&secret, "s3cr3t-value\n").expect("write");
        a.sso.oidc_client_secret = Some(format!("file:{}", secret.display()));
        let mapping = dir.join("groups.json");
        std::fs::write(&mapping, r#"{"g": {"roles": ["root"]}}"#).expect("write");
        a.sso.oidc_group_mapping = Some(mapping.clone());
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("bad mapping");
        assert!(
            e.to_string().contains("STREAMKEEPER_OIDC_GROUP_MAPPING"),
            "{e}"
        );
        std::fs::write(&mapping, r#"{"kafka-admins": {"roles": ["admin"]}}"#).expect("write");
        a.sso.oidc_scopes = "openid, profile ,email,groups".into();
        a.public_url = Some("https://sk.example.com/".into());
        let c = ServeConfig::from_args(&a, Outbound::default()).expect("valid");
        let sso = c.sso.expect("on");
        assert_eq!(sso.client_secret.as_deref(), Some("s3cr3t-value"));
        assert_eq!(sso.scopes, ["profile", "email", "groups"]);
        assert_eq!(
            sso.redirect.as_str(),
            "https://sk.example.com/login/sso/callback"
        );
        assert_eq!(sso.provider_name, "idp.example.com");
        assert!(
            !format!("{sso:?}").contains("s3cr3t"),
            "the secret is not printed"
        );
        a.sso.oidc_client_secret = Some("file:/nonexistent/secret".into());
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("no file");
        assert!(e.to_string().contains("/nonexistent/secret"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn local_sign_in_is_turned_off_only_beside_single_sign_on() {
        let mut a = args();
        a.sso.local_login = LocalLoginSetting::Disabled;
        assert_eq!(
            ServeConfig::from_args(&a, Outbound::default()).expect_err("nobody"),
            ConfigError::NobodyCouldSignIn
        );
        a.sso.oidc_issuer = Some("http://127.0.0.1:9400".into());
        a.sso.oidc_client_id = Some("sk".into());
        a.sso.break_glass_admin = Some(" Root ".into());
        let c = ServeConfig::from_args(&a, Outbound::default()).expect("valid");
        assert!(c.local_login.allows("root"));
        assert!(!c.local_login.allows("alice"));
    }

    #[test]
    fn the_schema_cap_is_checked_and_sets_the_body_limit() {
        let c = ServeConfig::from_args(&args(), Outbound::default()).expect("valid");
        assert_eq!(c.max_schema_bytes, 1 << 20);
        assert_eq!(c.body_limit(), 8 << 20);
        let mut a = args();
        a.max_schema_bytes = 1024;
        assert_eq!(
            ServeConfig::from_args(&a, Outbound::default())
                .expect("valid")
                .body_limit(),
            2 << 20
        );
        a.max_schema_bytes = 10;
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("too small");
        assert!(
            e.to_string().contains("STREAMKEEPER_MAX_SCHEMA_BYTES"),
            "{e}"
        );
    }

    #[test]
    fn defaults_public_url_from_bind() {
        let c = ServeConfig::from_args(&args(), Outbound::default()).expect("valid");
        assert_eq!(c.origin(), "http://127.0.0.1:3000");
        assert!(!c.https());
        assert_eq!(c.cookie_name(), "streamkeeper");
    }

    #[test]
    fn https_uses_host_prefixed_cookie() {
        let mut a = args();
        a.public_url = Some("https://sk.example.com/".into());
        let c = ServeConfig::from_args(&a, Outbound::default()).expect("valid");
        assert_eq!(c.cookie_name(), "__Host-streamkeeper");
        assert_eq!(c.origin(), "https://sk.example.com");
    }

    #[test]
    fn trusted_proxies_are_addresses_or_ranges() {
        let mut a = args();
        assert!(
            ServeConfig::from_args(&a, Outbound::default())
                .expect("valid")
                .trusted_proxies
                .is_empty(),
            "none by default"
        );
        a.trusted_proxies = vec!["10.0.0.0/8".into(), " 127.0.0.1".into(), "fd00::/8".into()];
        let c = ServeConfig::from_args(&a, Outbound::default()).expect("valid");
        let shown: Vec<String> = c.trusted_proxies.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
        a.trusted_proxies = vec!["proxy.internal".into()];
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("not an address");
        assert!(
            e.to_string().contains("STREAMKEEPER_TRUSTED_PROXIES"),
            "{e}"
        );
    }

    #[test]
    fn a_build_without_a_site_needs_a_site_root_and_says_so() {
        let mut a = args();
        let c = ServeConfig::from_args(&a, Outbound::default()).expect("a folder");
        assert_eq!(c.site, Site::Folder("site".into()));
        a.site_root = None;
        // Test builds carry no site (server/build.rs chose an empty folder).
        if !Site::carried() {
            let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("no site");
            assert_eq!(e, ConfigError::NoSite);
            assert!(e.to_string().contains("STREAMKEEPER_SITE_ROOT"), "{e}");
        }
    }

    #[test]
    fn errors_name_the_setting() {
        let mut a = args();
        a.bind = "nonsense".into();
        let e = ServeConfig::from_args(&a, Outbound::default()).expect_err("bad bind");
        assert!(e.to_string().contains("STREAMKEEPER_BIND"));
        let mut a = args();
        a.public_url = Some("ftp://x".into());
        assert!(matches!(
            ServeConfig::from_args(&a, Outbound::default()),
            Err(ConfigError::BadPublicUrl(_))
        ));
        let g = GlobalArgs {
            database_url: None,
            log_level: "info".into(),
            log_format: LogFormat::Text,
            db_connect_timeout: 1,
            migrate_database_url: Some("mysql://x".into()),
            audit_key: None,
            totp_key: None,
            outbound: OutboundArgs {
                cred_env_prefix: "STREAMKEEPER_CRED_".into(),
                cred_dirs: "/run/secrets".into(),
                egress_allow: String::new(),
            },
        };
        assert_eq!(
            migrate_database_url(&g),
            Err(ConfigError::BadMigrateDatabaseUrl)
        );
        assert_eq!(database_url(&g), Err(ConfigError::MissingDatabaseUrl));
        let g = GlobalArgs {
            database_url: Some("mysql://x".into()),
            ..g
        };
        assert_eq!(database_url(&g), Err(ConfigError::BadDatabaseUrl));
        let bad = OutboundArgs {
            egress_allow: "everywhere".into(),
            ..g.outbound
        };
        let e = outbound(&bad).expect_err("bad egress");
        assert!(e.to_string().contains("STREAMKEEPER_EGRESS_ALLOW"), "{e}");
        let bad = OutboundArgs {
            egress_allow: "loopback".into(),
            cred_dirs: "secrets".into(),
            ..bad
        };
        let e = outbound(&bad).expect_err("bad dirs");
        assert!(e.to_string().contains("STREAMKEEPER_CRED_DIRS"), "{e}");
    }
}
