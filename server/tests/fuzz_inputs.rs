//! Fuzz targets for the server's parsers of user input (issue 12): the
//! clusters file (any text, and valid files mutated), credential
//! references, connection settings, registry URLs, and the size cap in
//! front of the schema parsers. Each asserts only that nothing panics:
//! errors are answers. The schema parsers themselves are fuzzed in the
//! root crate's `tests/fuzz_schema.rs`.
//!
//! Cases per target: `PROPTEST_CASES` (proptest's default, 256, when
//! unset).

use proptest::prelude::*;
use proptest::test_runner::Config;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::schemas::{ResolvedReference, SchemaText, SchemaType};
use streamkeeper_server::clients::kafka::settings::{
    ClusterSettings, Mechanism, Protocol, SecretRef,
};
use streamkeeper_server::clients::registry::{RegistryClient, RegistrySettings};
use streamkeeper_server::platform::limits::{Blocking, SchemaLimits};
use streamkeeper_server::watch::cluster_file;

fn config() -> Config {
    Config {
        // Failures are kept as regression tests, not in files.
        failure_persistence: None,
        ..Config::default()
    }
}

/// A `[[cluster]]` table with keys picked from the real ones, a few
/// misspelt, and values of every TOML kind.
fn cluster_table() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "name",
        "bootstrap",
        "security_protocol",
        "sasl_mechanism",
        "username",
        "password",
        "interval_s",
        "pasword",
        "name.x",
        "\"quoted key\"",
    ]);
    let value = prop_oneof![
        "[a-z0-9.:,-]{0,12}".prop_map(|s| format!("'{s}'")),
        Just("\"env:CC_API_KEY\"".to_owned()),
        Just("\"file:/run/secrets/cc\"".to_owned()),
        Just("\"SASL_SSL\"".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("9999999999999999999999".to_owned()),
        Just("1979-05-27T07:32:00Z".to_owned()),
        Just("[1, 'a']".to_owned()),
        Just("{ a = 1 }".to_owned()),
        Just("true".to_owned()),
        Just("nan".to_owned()),
        Just("'''multi\nline'''".to_owned()),
    ];
    prop::collection::vec((key, value), 0..8).prop_map(|pairs| {
        let mut t = String::from("[[cluster]]\n");
        for (k, v) in pairs {
            t += &format!("{k} = {v}\n");
        }
        t
    })
}

/// `text` with a slice cut, doubled or replaced, at char boundaries.
fn mutated(text: &str, at: prop::sample::Index, len: usize, insert: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let start = at.index(chars.len() + 1).min(chars.len());
    let end = (start + len).min(chars.len());
    let mut out: String = chars[..start].iter().collect();
    out.push_str(insert);
    out.extend(&chars[end..]);
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_as_a_clusters_file_never_panics(text in any::<String>()) {
        let _ = cluster_file::parse("fuzz.toml", &text);
    }

    #[test]
    fn clusters_files_and_mutations_never_panic(
        tables in prop::collection::vec(cluster_table(), 0..4),
        at in any::<prop::sample::Index>(),
        len in 0..6_usize,
        insert in prop::sample::select(vec!["", "[", "]]", "=", "'", "\"", "\\u", "\n", "#", "[[cluster]]\n", "\u{0}"]),
    ) {
        let text = tables.concat();
        let _ = cluster_file::parse("fuzz.toml", &text);
        let _ = cluster_file::parse("fuzz.toml", &mutated(&text, at, len, insert));
    }

    #[test]
    fn credential_references_and_connection_settings_never_panic(
        reference in prop_oneof![any::<String>(), "(env|file|ENV|env ):[ -~]{0,12}"],
        bootstrap in prop_oneof![any::<String>(), "[a-z0-9.:,\\[\\] ]{0,20}"],
        protocol in any::<String>(),
        mechanism in any::<String>(),
    ) {
        let policy = CredentialPolicy::default();
        let r = SecretRef::checked(&reference, &policy).ok();
        let _ = protocol.parse::<Protocol>();
        let m = mechanism.parse::<Mechanism>().ok();
        for p in [Protocol::Plaintext, Protocol::SaslSsl] {
            for insecure in [false, true] {
                let _ = ClusterSettings::new(&bootstrap, p, m, r.clone(), r.clone(), insecure);
            }
        }
    }

    #[test]
    fn registry_urls_never_panic(
        url in prop_oneof![
            any::<String>(),
            "(https?|ftp|file|)://[a-z0-9.@:%\\[\\]/?#-]{0,24}",
        ],
    ) {
        let _ = RegistryClient::new(RegistrySettings::new(&url));
    }

    /// The cap in front of the schema parsers, over any sizes and names.
    #[test]
    fn the_schema_size_cap_never_panics(
        limit in 0..64_usize,
        text in "[a-z]{0,80}",
        references in prop::collection::vec((any::<String>(), "[a-z]{0,40}"), 0..4),
    ) {
        let limits = SchemaLimits::new(limit, Blocking::new(1));
        let schema = SchemaText {
            schema_type: SchemaType::Avro,
            text,
            references: references
                .into_iter()
                .map(|(name, text)| ResolvedReference { name, text })
                .collect(),
        };
        let total: usize = schema.text.len() + schema.references.iter().map(|r| r.text.len()).sum::<usize>();
        let admitted = limits.admit(&schema).is_ok();
        prop_assert_eq!(admitted, total <= limit && schema.text.len() <= limit);
    }
}
