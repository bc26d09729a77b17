//! The generic webhook: today's JSON (`text`, `transition`, `flag`; a
//! burst lists its `flags`), signed as Stripe signs its webhooks: header
//! `X-Streamkeeper-Signature: t=<unix seconds>,v1=<hex HMAC-SHA-256 of
//! "<t>.<body>">`, so a receiver checks the body and that it is recent.

use super::{FlagNotice, Notice};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

pub const SIGNATURE_HEADER: &str = "X-Streamkeeper-Signature";

fn flag_json(f: &FlagNotice, state: &str) -> Value {
    json!({
        "id": f.id, "state": state, "cluster": f.cluster,
        "subject_kind": f.subject_kind, "subject": f.subject, "kind": f.kind,
        "reason": f.reason, "team": f.team, "url": f.url,
        "onset_at": chrono::DateTime::from_timestamp_millis(f.onset_ms),
    })
}

/// The body of a notice.
pub fn body(n: &Notice) -> Value {
    let state = match n.transition {
        super::Transition::Resolve => "resolved",
        super::Transition::Acknowledge => "acknowledged",
        _ => "open",
    };
    let mut b = json!({ "text": n.text(), "transition": n.transition.as_str() });
    match &n.flags[..] {
        [one] => {
            b["flag"] = flag_json(one, state);
            if let Some(was) = &one.was {
                b["was"] = json!(was);
            }
        }
        many => {
            b["cluster"] = json!(n.cluster);
            b["flags"] = many.iter().map(|f| flag_json(f, state)).collect();
        }
    }
    if let Some(by) = &n.by {
        b["by"] = json!(by);
    }
    b
}

/// The signature header's value for `body` sent at `unix_s` with `key`.
pub fn signature(key: &[u8], unix_s: i64, body: &[u8]) -> String {
    // HMAC accepts a key of any length, so `new_from_slice` cannot fail;
    // an empty key still signs. A webhook channel without a signing key
    // sends no signature header at all (its settings make one optional).
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(unix_s.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={unix_s},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// Why a signed request is not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the signature header is not t=<unix>,v1=<hex>")]
    Malformed,
    #[error("the signature is older than the tolerance")]
    Stale,
    #[error("the signature does not match the body")]
    Mismatch,
}

/// A receiver's check (what the doubles and the docs do): the header
/// parsed, its time within `tolerance_s` of `now_s`, its MAC the body's,
/// compared in constant time.
pub fn verify(
    key: &[u8],
    header: &str,
    body: &[u8],
    now_s: i64,
    tolerance_s: i64,
) -> Result<(), VerifyError> {
    let mut t = None;
    let mut v1 = None;
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", x)) => t = x.parse::<i64>().ok(),
            Some(("v1", x)) => v1 = hex::decode(x).ok(),
            _ => {}
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else {
        return Err(VerifyError::Malformed);
    };
    if (now_s - t).abs() > tolerance_s {
        return Err(VerifyError::Stale);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| VerifyError::Mismatch)?;
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&v1).map_err(|_| VerifyError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::Transition;
    use crate::notify::notice::tests::{flag, one};

    #[test]
    fn a_single_flag_keeps_todays_shape() {
        let b = body(&one(Transition::Raise, flag(2, "billing", "STOP")));
        assert_eq!(b["transition"], "raise");
        assert_eq!(b["flag"]["id"], 2);
        assert_eq!(b["flag"]["state"], "open");
        assert!(b["text"].as_str().expect("text").starts_with("[STOP]"));
    }

    #[test]
    fn a_burst_lists_its_flags() {
        let n = Notice {
            transition: Transition::Resolve,
            cluster: "prod".into(),
            flags: vec![flag(1, "a", "STOP"), flag(2, "b", "WARN")],
            by: None,
        };
        let b = body(&n);
        assert_eq!(b["flags"].as_array().expect("flags").len(), 2);
        assert_eq!(b["flags"][1]["state"], "resolved");
        assert!(b.get("flag").is_none());
    }

    #[test]
    fn signature_matches_stripes_scheme_and_verifies() {
        // HMAC-SHA-256("Jefe", "1.what do ya want for nothing?"), as
        // Python's hmac module computes it.
        let sig = signature(b"Jefe", 1, b"what do ya want for nothing?");
        assert_eq!(
            sig,
            "t=1,v1=a9049465ce89cfb8e9aac62333abda66f80e3403f51f57f6bae3c3a4485eca38"
        );
        let body = br#"{"text":"x"}"#;
        let h = signature(b"secret", 1_000, body);
        assert_eq!(verify(b"secret", &h, body, 1_100, 300), Ok(()));
        assert_eq!(
            verify(b"other", &h, body, 1_100, 300),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(b"secret", &h, b"{}", 1_100, 300),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(b"secret", &h, body, 2_000, 300),
            Err(VerifyError::Stale)
        );
        assert_eq!(
            verify(b"secret", "v1=zz", body, 1_000, 300),
            Err(VerifyError::Malformed)
        );
    }
}
