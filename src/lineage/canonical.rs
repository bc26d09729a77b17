//! One byte form per event, so the same event sent twice (a client retry,
//! a Kafka replay after a crash before the commit) stores once: raw
//! events are deduplicated by the SHA-256 of these bytes, not by an index
//! over the JSON (Marquez's first schema failed on large events, #1029).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical bytes of a JSON value: object keys sorted by their
/// UTF-8 bytes, no whitespace, strings escaped and numbers printed as
/// serde_json prints them. Written out here rather than trusting
/// `serde_json::to_vec`, whose key order follows the map type (a
/// `preserve_order` feature anywhere in the build would change it).
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(v, &mut out);
    out
}

/// SHA-256 of [`canonical_bytes`]: the dedup key of a raw event.
pub fn event_hash(canonical: &[u8]) -> [u8; 32] {
    Sha256::digest(canonical).into()
}

fn write(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(k, out);
                out.push(b':');
                if let Some(child) = m.get(k) {
                    write(child, out);
                }
            }
            out.push(b'}');
        }
    }
}

/// A JSON string as serde_json escapes it (quotes, backslash, control
/// characters; everything else as UTF-8).
fn string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_whitespace_do_not_change_the_bytes() {
        let a: Value = serde_json::from_str(r#"{"b": [1, {"y": null, "x": "é\n"}], "a": true}"#)
            .expect("json");
        let b: Value =
            serde_json::from_str(r#"{"a":true,"b":[1,{"x":"é\n","y":null}]}"#).expect("json");
        assert_eq!(canonical_bytes(&a), canonical_bytes(&b));
        assert_eq!(
            String::from_utf8(canonical_bytes(&a)).expect("utf-8"),
            r#"{"a":true,"b":[1,{"x":"é\n","y":null}]}"#
        );
        assert_eq!(
            event_hash(&canonical_bytes(&a)),
            event_hash(&canonical_bytes(&b))
        );
        assert_ne!(
            event_hash(&canonical_bytes(&a)),
            event_hash(&canonical_bytes(&json!({"a": false})))
        );
    }

    #[test]
    fn the_bytes_are_json_that_reads_back_the_same() {
        let v = json!({"s": "\u{1}\"\\\t", "n": -1.5e-7, "big": u64::MAX, "e": {}, "l": []});
        let back: Value = serde_json::from_slice(&canonical_bytes(&v)).expect("canonical is JSON");
        assert_eq!(back, v);
    }

    /// Found by the fuzz target: without serde_json's `float_roundtrip`
    /// (set in the workspace), this number reads back as a neighbour, and
    /// a replayed event would hash differently from when it was stored.
    #[test]
    fn numbers_read_back_exactly_so_stored_bytes_keep_their_hash() {
        let text = br#"{"n": 4.813836439452961e+107, "m": [0.1, 2.2250738585072014e-308]}"#;
        let v: Value = serde_json::from_slice(text).expect("JSON");
        let stored = canonical_bytes(&v);
        let again: Value = serde_json::from_slice(&stored).expect("canonical is JSON");
        assert_eq!(canonical_bytes(&again), stored);
        assert_eq!(event_hash(&canonical_bytes(&again)), event_hash(&stored));
    }
}
