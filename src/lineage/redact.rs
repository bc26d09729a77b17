//! Secrets taken out of an event on the way in, before it is hashed,
//! stored or shown: producers send connector configs (Debezium's
//! `debezium_config` carries the whole connector config and its own mask
//! misses URLs with credentials, keys and tokens; reference A6), and a
//! stored secret would be replayed, forwarded and displayed forever.

use serde_json::Value;

/// What a redacted value becomes (Debezium's own mask, so a value it
/// already masked and one we masked read the same).
pub const MASK: &str = "********";

/// Redacts `event` in place and says whether anything was changed.
///
/// - In `facets`, `inputFacets` and `outputFacets` (at any depth), a
///   string or number under a key that looks like a secret (password,
///   secret, token, credential, api key, JAAS config, user info, private
///   key, `*.key`) becomes [`MASK`]. Objects and arrays under such keys
///   are walked, not replaced: a column named `password` in a
///   `columnLineage` facet is a name, not a secret.
/// - The `debezium_config` facet's `configs` entries (`key=value`) get
///   the same key rule.
/// - Anywhere in the event, a `scheme://user:password@host` string has
///   its password masked (JDBC URLs in configs, namespaces, `dataSource`).
pub fn redact(event: &mut Value) -> bool {
    walk(event, false)
}

fn walk(v: &mut Value, in_facets: bool) -> bool {
    match v {
        Value::Object(m) => {
            let mut changed = false;
            for (k, child) in m.iter_mut() {
                let facets_here =
                    in_facets || matches!(k.as_str(), "facets" | "inputFacets" | "outputFacets");
                if in_facets
                    && secret_key(k)
                    && matches!(child, Value::String(_) | Value::Number(_))
                {
                    if child.as_str() != Some(MASK) {
                        *child = Value::String(MASK.into());
                        changed = true;
                    }
                    continue;
                }
                if in_facets && k == "debezium_config" {
                    changed |= debezium_configs(child);
                }
                changed |= walk(child, facets_here);
            }
            changed
        }
        Value::Array(items) => {
            let mut changed = false;
            for item in items {
                changed |= walk(item, in_facets);
            }
            changed
        }
        Value::String(s) => match mask_url_password(s) {
            Some(masked) => {
                *s = masked;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// `configs: ["k=v", …]`: values of secret-looking keys masked.
fn debezium_configs(facet: &mut Value) -> bool {
    let Some(Value::Array(configs)) = facet.get_mut("configs") else {
        return false;
    };
    let mut changed = false;
    for c in configs {
        let Value::String(s) = c else { continue };
        if let Some((k, v)) = s.split_once('=')
            && secret_key(k)
            && v != MASK
        {
            *s = format!("{k}={MASK}");
            changed = true;
        }
    }
    changed
}

/// Whether a key names a secret. Case and separators (`.`, `_`, `-`) do
/// not matter: `database.password`, `clientSecret`, `api_key`,
/// `sasl.jaas.config`, `basic.auth.user.info`, `ssl.key`.
pub fn secret_key(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| !matches!(c, '.' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    const WORDS: [&str; 9] = [
        "password",
        "passwd",
        "secret",
        "token",
        "credential",
        "apikey",
        "jaas",
        "userinfo",
        "privatekey",
    ];
    WORDS.iter().any(|w| k.contains(w)) || key.to_ascii_lowercase().ends_with(".key") || k == "pwd"
}

/// `scheme://user:pass@host…` → `scheme://user:********@host…`; `None`
/// when there is no password in the string.
fn mask_url_password(s: &str) -> Option<String> {
    let start = s.find("://")? + 3;
    let rest = &s[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    let password = &rest[colon + 1..at];
    if password.is_empty() || password == MASK {
        return None;
    }
    Some(format!(
        "{}{}:{MASK}{}",
        &s[..start],
        &rest[..colon],
        &rest[at..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::fixtures;
    use serde_json::json;

    #[test]
    fn debeziums_config_loses_its_secrets() {
        let mut v: Value = serde_json::from_str(fixtures::DEBEZIUM_RUNNING).expect("json");
        assert!(redact(&mut v));
        let text = v.to_string();
        assert!(!text.contains("database.password=postgres"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("database.password=********"));
        assert!(text.contains("jdbc:postgresql://debezium:********@127.0.0.1:5432/shop"));
        assert!(text.contains("database.user=debezium"));
        // Idempotent: a stored event redacts to itself.
        assert!(!redact(&mut v));
    }

    #[test]
    fn secret_looking_facet_keys_are_masked_and_names_are_not() {
        let mut v = json!({
            "producer": "p",
            "job": {"name": "password_rotation", "facets": {"custom": {
                "apiKey": "abc", "token": 7, "sasl.jaas.config": "x required password=\"p\";",
                "ssl.key": "-----BEGIN", "primary_key": "id", "tokens": {"kept": "walked"}}}},
            "outputs": [{"facets": {"columnLineage": {"fields": {"password": {"inputFields": []}}},
                "schema": {"fields": [{"name": "password", "type": "string"}]}}}]
        });
        assert!(redact(&mut v));
        let c = &v["job"]["facets"]["custom"];
        assert_eq!(c["apiKey"], MASK);
        assert_eq!(c["token"], MASK);
        assert_eq!(c["sasl.jaas.config"], MASK);
        assert_eq!(c["ssl.key"], MASK);
        assert_eq!(c["primary_key"], "id");
        assert_eq!(c["tokens"]["kept"], "walked");
        assert_eq!(v["job"]["name"], "password_rotation");
        assert_eq!(
            v["outputs"][0]["facets"]["columnLineage"]["fields"]["password"],
            json!({"inputFields": []})
        );
        assert_eq!(
            v["outputs"][0]["facets"]["schema"]["fields"][0]["name"],
            "password"
        );
    }

    #[test]
    fn urls_keep_everything_but_the_password() {
        assert_eq!(
            mask_url_password("postgres://u:p@h:5432/db?x=y@z").as_deref(),
            Some("postgres://u:********@h:5432/db?x=y@z")
        );
        assert_eq!(mask_url_password("kafka://b1:9092"), None);
        assert_eq!(mask_url_password("s3://bucket/a@b:c"), None);
        assert_eq!(mask_url_password("https://u@h/"), None);
    }
}
