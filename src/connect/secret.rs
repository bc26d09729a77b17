//! Which properties are secrets, and how they are kept out of storage,
//! screens and diffs.
//!
//! A secret is either written as a `${provider:path:key}` reference, which
//! the worker's config providers resolve and which is not itself secret, or
//! inline. References are kept exactly as written everywhere: masking one
//! and writing the mask back overwrote the reference in other consoles
//! (kafbat/kafka-ui#1887). Inline secrets are shown and stored only as
//! [`MASK`], so the console never holds them in clear.

use super::config::Config;
use super::plugin::Plugin;
use regex::Regex;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// What an inline secret is shown and stored as.
pub const MASK: &str = "********";

/// What a worker's validate answer echoes for a PASSWORD-typed value
/// (`Password.toString()`, reference B2).
pub const HIDDEN: &str = "[hidden]";

/// Key fragments that mark secrets in the plugins covered and in Kafka
/// clients (reference B1, B3 and A6's list of what Debezium's own mask
/// misses: tokens, private keys, key files).
const SECRET_FRAGMENTS: [&str; 9] = [
    "password",
    "secret",
    "passphrase",
    "private.key",
    "key.json",
    "credentials.json",
    "keyfile",
    "sasl.jaas.config",
    "basic.auth.user.info",
];

/// Whether the key holds a secret: by name (`*.password`, `*.secret`, key
/// material, JAAS configs, registry credentials, tokens) or because the
/// plugin's validate answer typed it PASSWORD (`marked`, from
/// [`super::worker::WorkerAnswer::password_keys`]).
pub fn is_secret_key(key: &str, marked: &BTreeSet<String>) -> bool {
    if marked.contains(key) {
        return true;
    }
    let k = key.to_ascii_lowercase();
    SECRET_FRAGMENTS.iter().any(|f| k.contains(f))
        || k.ends_with("token")
        || k.ends_with("keystore.key")
}

/// The keys typed PASSWORD for a connector of `class`: those its plugin is
/// known to type so ([`Plugin::password_keys`]) and those a worker's
/// validate answer for the class typed so (`learned`). A key in neither is
/// still a secret when its name says so ([`is_secret_key`]).
pub fn marked_keys(class: Option<&str>, learned: &[String]) -> BTreeSet<String> {
    let known = class
        .and_then(Plugin::from_class)
        .map_or(&[][..], Plugin::password_keys);
    known
        .iter()
        .map(|k| (*k).to_owned())
        .chain(learned.iter().cloned())
        .collect()
}

/// A `${provider:path:key}` (or `${provider:key}`) reference, split as
/// Connect's `ConfigTransformer` splits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference<'a> {
    pub provider: &'a str,
    pub path: Option<&'a str>,
    pub key: &'a str,
}

/// The references a value holds, in order. Connect's pattern is
/// `\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`: at least one colon inside.
pub fn references(value: &str) -> Vec<Reference<'_>> {
    let mut found = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let inner = &after[..end];
        let mut parts = inner.splitn(3, ':');
        if let (Some(provider), Some(second)) = (parts.next(), parts.next()) {
            found.push(match parts.next() {
                Some(key) => Reference {
                    provider,
                    path: Some(second),
                    key,
                },
                None => Reference {
                    provider,
                    path: None,
                    key: second,
                },
            });
        }
        rest = &after[end + 1..];
    }
    found
}

/// Whether the value is written with a config-provider reference. A value
/// that mixes text and references (a JAAS line whose password is
/// `${file:…}`) counts as referenced: what it holds in clear is taken to be
/// the non-secret part.
pub fn is_referenced(value: &str) -> bool {
    !references(value).is_empty()
}

/// Whether the value is a mask rather than a secret: ours, the worker's
/// `[hidden]`, or any run of asterisks other tools write.
pub fn is_mask(value: &str) -> bool {
    let v = value.trim();
    v == HIDDEN || (v.len() >= 3 && v.chars().all(|c| c == '*'))
}

/// Whether a value carries credentials whatever its key: a URL with
/// `user:password@`, or a JDBC URL with a `password=` parameter
/// (Aiven-Open/klaw#1284).
pub fn embeds_credentials(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if lower.contains("password=") || lower.contains("pwd=") {
        return true;
    }
    // `scheme://user:pass@host`: a colon in the authority before an `@`.
    lower.split("://").skip(1).any(|after| {
        let authority = after.split(['/', '?', '#']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// Whether this property's value is a secret that must be masked.
pub fn is_secret(key: &str, value: &str, marked: &BTreeSet<String>) -> bool {
    is_secret_key(key, marked) || embeds_credentials(value)
}

/// Whether the value is a secret written inline (not by reference): what
/// the `inline_secret` rule flags and what masking replaces. Blank values
/// hold nothing.
pub fn is_inline_secret(key: &str, value: &str, marked: &BTreeSet<String>) -> bool {
    !value.trim().is_empty() && is_secret(key, value, marked) && !is_referenced(value)
}

/// The value as it may be shown or stored: inline secrets as [`MASK`],
/// everything else (references included) as written.
pub fn display<'a>(key: &str, value: &'a str, marked: &BTreeSet<String>) -> Cow<'a, str> {
    if is_inline_secret(key, value, marked) {
        Cow::Borrowed(MASK)
    } else {
        Cow::Borrowed(value)
    }
}

/// The config with every inline secret replaced by [`MASK`].
pub fn mask(config: &Config, marked: &BTreeSet<String>) -> Config {
    config
        .iter()
        .map(|(k, v)| (k, display(k, v, marked).into_owned()))
        .collect()
}

/// Credentials a text quotes by their shape, whatever their value: a
/// `user:password@` in a URL, a value after a secret-sounding key
/// (`password=…`, `"secret": "…"`, JAAS's `password="…"`), an
/// `Authorization` scheme's token. A trace can quote a secret the console
/// never saw in clear (a `${…}` reference the worker resolved), so masking
/// known values alone leaves it. `${…}` references are kept as written.
pub fn scrub_credentials(text: &str) -> String {
    static REFERENCE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\$\{[^}]*\}").expect("a valid pattern"));
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for r in REFERENCE.find_iter(text) {
        out.push_str(&scrub_shapes(&text[from..r.start()]));
        out.push_str(r.as_str());
        from = r.end();
    }
    out.push_str(&scrub_shapes(&text[from..]));
    out
}

fn scrub_shapes(text: &str) -> String {
    static URL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^@\s/]+@").expect("a valid pattern")
    });
    static KEYED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?i)((?:password|passwd|pwd|secret|passphrase|token|api[._-]?key|access[._-]?key|private[._-]?key|user\.info)["']?\s*[=:]\s*)(?:"[^"]*"|'[^']*'|[^\s&;,)\]}"'$]+)"#,
        )
        .expect("a valid pattern")
    });
    static SCHEME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(bearer|basic)\s+[a-z0-9+/=._~-]{8,}").expect("a valid pattern")
    });
    let text = URL.replace_all(text, format!("${{1}}{MASK}@").as_str());
    let text = KEYED.replace_all(&text, format!("${{1}}{MASK}").as_str());
    SCHEME
        .replace_all(&text, format!("${{1}} {MASK}").as_str())
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_typed_password_is_masked_whatever_its_name() {
        const AZURE: &str = "io.confluent.connect.azure.blob.AzureBlobStorageSinkConnector";
        let config = Config::from_iter([
            ("connector.class", AZURE),
            ("azblob.account.name", "acme"),
            ("azblob.account.key", "c2VjcmV0LWtleQ=="),
        ]);
        let unmarked = mask(&config, &BTreeSet::new());
        assert_eq!(unmarked.get("azblob.account.key"), Some("c2VjcmV0LWtleQ=="));
        let marked = marked_keys(Some(AZURE), &["azblob.account.key".to_owned()]);
        let masked = mask(&config, &marked);
        assert_eq!(masked.get("azblob.account.key"), Some(MASK));
        assert_eq!(masked.get("azblob.account.name"), Some("acme"));
        // The known plugins' lists count before any worker is asked.
        let s3 = marked_keys(Some("io.confluent.connect.s3.S3SinkConnector"), &[]);
        assert!(s3.contains("aws.secret.access.key"), "{s3:?}");
        assert!(marked_keys(None, &[]).is_empty());
    }

    #[test]
    fn credentials_are_masked_by_their_shape_and_references_kept() {
        for (text, gone) in [
            ("FATAL: auth failed, password=hunter2x for u", "hunter2x"),
            (
                "connecting to https://etl:pa55word@dw.internal/db",
                "pa55word",
            ),
            (
                r#"PlainLoginModule required username="u" password="sEcr3t";"#,
                "sEcr3t",
            ),
            (r#"{"aws.secret.access.key": "AKIAxyzabc"}"#, "AKIAxyzabc"),
            (
                "header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30",
                "eyJhbGciOiJIUzI1NiJ9",
            ),
            ("basic.auth.user.info=sr-key:sr-pass", "sr-pass"),
        ] {
            let out = scrub_credentials(text);
            assert!(!out.contains(gone) && out.contains(MASK), "{text} -> {out}");
        }
        let kept = "password authentication failed; see ${file:/etc/secret:pw} and database.password=${vault:db:pw}";
        assert_eq!(scrub_credentials(kept), kept);
        let jdbc = "jdbc:postgresql://dw:5432/dw?user=u";
        assert_eq!(scrub_credentials(jdbc), jdbc, "a port is not a password");
    }

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    #[test]
    fn secrets_are_known_by_name() {
        for key in [
            "database.password",
            "connection.password",
            "aws.secret.access.key",
            "snowflake.private.key",
            "snowflake.private.key.passphrase",
            "keyfile",
            "producer.override.sasl.jaas.config",
            "value.converter.basic.auth.user.info",
            "value.converter.bearer.auth.token",
            "ssl.keystore.key",
            "gcs.credentials.json",
        ] {
            assert!(is_secret_key(key, &none()), "{key}");
        }
        for key in ["database.user", "topics", "key.converter", "topic.prefix"] {
            assert!(!is_secret_key(key, &none()), "{key}");
        }
    }

    #[test]
    fn keys_the_plugin_types_password_are_secrets() {
        let marked = BTreeSet::from(["custom.credential".to_owned()]);
        assert!(is_secret_key("custom.credential", &marked));
        assert!(!is_secret_key("custom.credential", &none()));
    }

    #[test]
    fn references_are_split_as_connect_splits_them() {
        assert_eq!(
            references("${file:/secrets/pg.properties:password}"),
            [Reference {
                provider: "file",
                path: Some("/secrets/pg.properties"),
                key: "password"
            }]
        );
        assert_eq!(
            references("${env:PG_PASSWORD}"),
            [Reference {
                provider: "env",
                path: None,
                key: "PG_PASSWORD"
            }]
        );
        assert!(references("${nocolon}").is_empty());
        assert!(references("${open:never").is_empty());
        assert_eq!(references("a ${x:y} b ${p:q:r}").len(), 2);
        assert!(
            references("${topic}").is_empty(),
            "a JDBC format, not a reference"
        );
    }

    #[test]
    fn references_are_kept_and_inline_secrets_masked() {
        let m = none();
        let r = "${file:/s:pw}";
        assert_eq!(display("database.password", r, &m), r);
        assert_eq!(display("database.password", "hunter2", &m), MASK);
        assert_eq!(display("database.user", "app", &m), "app");
        assert_eq!(display("database.password", "", &m), "");
        let jaas = r#"PlainLoginModule required username="u" password="${file:/s:pw}";"#;
        assert_eq!(display("sasl.jaas.config", jaas, &m), jaas);
    }

    #[test]
    fn credentials_inside_urls_are_secrets() {
        let m = none();
        assert!(embeds_credentials(
            "jdbc:postgresql://db/x?user=a&password=b"
        ));
        assert!(embeds_credentials("https://elastic:changeme@es:9200"));
        assert!(!embeds_credentials("jdbc:postgresql://db:5432/x"));
        assert!(!embeds_credentials("https://user@es:9200/path:x@y"));
        assert_eq!(
            display("connection.url", "https://elastic:changeme@es:9200", &m),
            MASK
        );
    }

    #[test]
    fn masks_are_recognised() {
        assert!(is_mask(MASK));
        assert!(is_mask(HIDDEN));
        assert!(is_mask("*****"));
        assert!(!is_mask("**"));
        assert!(!is_mask("pa**word"));
    }

    #[test]
    fn mask_leaves_only_masks_and_references() {
        let c: Config = [
            ("database.password", "hunter2"),
            ("connection.password", "${env:PW}"),
            ("database.user", "app"),
        ]
        .into_iter()
        .collect();
        let masked = mask(&c, &none());
        assert_eq!(masked.get("database.password"), Some(MASK));
        assert_eq!(masked.get("connection.password"), Some("${env:PW}"));
        assert_eq!(masked.get("database.user"), Some("app"));
    }
}
