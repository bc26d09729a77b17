//! Rules of the second factor (TOTP, RFC 6238) and of passwords an admin
//! set: which codes are accepted, what a recovery code looks like, and where
//! a user who must change their password may go. The server computes the
//! codes (with `totp-rs`) and keeps the state; the decisions are here.

use sha2::{Digest, Sha256};

/// RFC 6238's time step, which every authenticator app uses.
pub const STEP_SECONDS: u64 = 30;
/// Steps accepted either side of now: a phone's clock a little off, or a
/// code typed just as it rolled over (RFC 6238 §5.2 recommends one).
pub const WINDOW: u64 = 1;
/// How long a sign-in that passed the password waits for its code.
pub const PENDING_SIGN_IN_SECS: i64 = 300;
/// How many recovery codes a user gets.
pub const RECOVERY_CODES: usize = 10;
/// Digits of a TOTP code.
pub const DIGITS: usize = 6;
/// Where a user who must change their password is sent.
pub const ACCOUNT_PAGE: &str = "/account";

/// The time step a Unix time (seconds) falls in; times before 1970 are
/// step 0.
pub fn time_step(unix_secs: i64) -> u64 {
    u64::try_from(unix_secs).unwrap_or(0) / STEP_SECONDS
}

/// Why a TOTP code was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CodeRefusal {
    #[error("the code must be the {DIGITS} digits your authenticator app shows")]
    Malformed,
    #[error("the code is not right (or your device's clock is off)")]
    Wrong,
    /// RFC 6238 §5.2: a code is accepted once; the next one comes within
    /// 30 seconds.
    #[error("that code was used already; wait for the next one")]
    Replayed,
}

/// A TOTP code as typed, without spaces; `None` unless it is 6 digits.
pub fn normalize_code(given: &str) -> Option<String> {
    let code: String = given.chars().filter(|c| !c.is_whitespace()).collect();
    (code.len() == DIGITS && code.bytes().all(|b| b.is_ascii_digit())).then_some(code)
}

/// Compares without stopping at the first difference, so the time taken
/// does not tell how much of a guess was right.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0_u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Whether `given` is the code of a step within [`WINDOW`] of `now_step`
/// that is later than the last one accepted (`last_used`); answers the step
/// it matched, which the caller stores as the new `last_used`. `code_at`
/// computes the code of a step (the server's TOTP with the user's secret).
pub fn accept_code(
    given: &str,
    now_step: u64,
    last_used: Option<u64>,
    code_at: impl Fn(u64) -> String,
) -> Result<u64, CodeRefusal> {
    let code = normalize_code(given).ok_or(CodeRefusal::Malformed)?;
    let mut replayed = false;
    let mut matched = None;
    // Every step of the window is computed, matched or not.
    for step in now_step.saturating_sub(WINDOW)..=now_step.saturating_add(WINDOW) {
        if same(&code_at(step), &code) {
            if last_used.is_some_and(|last| step <= last) {
                replayed = true;
            } else if matched.is_none() {
                matched = Some(step);
            }
        }
    }
    match matched {
        Some(step) => Ok(step),
        None if replayed => Err(CodeRefusal::Replayed),
        None => Err(CodeRefusal::Wrong),
    }
}

/// RFC 4648's base32 alphabet: no 0/1/8/9, so nothing reads as O, I or B.
const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// Characters of a recovery code (60 random bits), shown in groups of 4.
const RECOVERY_LEN: usize = 12;

fn derive(seed: &[u8], label: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed);
    h.update(b":");
    h.update(label.as_bytes());
    h.finalize().into()
}

/// The TOTP secret (160 bits, RFC 4226's recommendation) an enrolment
/// started with `seed` (32 random bytes) ends with.
pub fn secret_from_seed(seed: &[u8]) -> Vec<u8> {
    derive(seed, "totp")[..20].to_vec()
}

/// The recovery codes an enrolment or renewal started with `seed` gives,
/// as shown (`ABCD-EFGH-JKLM`). Derived rather than stored, so they are
/// shown until the user confirms, and exist only as hashes after; they
/// cannot be derived from the TOTP secret.
pub fn recovery_codes_from_seed(seed: &[u8]) -> Vec<String> {
    (0..RECOVERY_CODES)
        .map(|i| {
            let bytes = derive(seed, &format!("recovery:{i}"));
            let chars: String = bytes[..RECOVERY_LEN]
                .iter()
                .map(|b| char::from(BASE32[usize::from(b % 32)]))
                .collect();
            format!("{}-{}-{}", &chars[..4], &chars[4..8], &chars[8..])
        })
        .collect()
}

/// A recovery code as typed: case, spaces and dashes do not matter. `None`
/// unless it has the shape of one.
pub fn normalize_recovery(given: &str) -> Option<String> {
    let code: String = given
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (code.len() == RECOVERY_LEN && code.bytes().all(|b| BASE32.contains(&b))).then_some(code)
}

/// What a recovery code is stored as: the SHA-256 (hex) of its normalized
/// form. 60 random bits need no slow hash.
pub fn recovery_hash(normalized: &str) -> String {
    hex::encode(Sha256::digest(normalized.as_bytes()))
}

/// What a user typed where a second factor is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactorInput {
    Code(String),
    Recovery(String),
}

/// Tells a TOTP code from a recovery code; `None` when it is neither.
pub fn classify(given: &str) -> Option<FactorInput> {
    normalize_code(given)
        .map(FactorInput::Code)
        .or_else(|| normalize_recovery(given).map(FactorInput::Recovery))
}

/// Whether a sign-in that passed its password at `started` may still give
/// its code at `now` (Unix seconds).
pub fn pending_live(started: i64, now: i64) -> bool {
    (0..PENDING_SIGN_IN_SECS).contains(&now.saturating_sub(started))
}

/// What to do with a request of a user signed in with a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Pass,
    /// A page: go to the account page and change the password.
    Redirect,
    /// An API call or server function: 403 `password_change_required`.
    Refuse,
}

/// Where a user whose password an admin set may go before changing it: the
/// account page and what it calls, signing out, and the assets. Tokens
/// are not gated (such a user has made none).
pub fn must_change_gate(must_change: bool, path: &str) -> Gate {
    if !must_change {
        return Gate::Pass;
    }
    let open = matches!(
        path,
        ACCOUNT_PAGE
            | "/logout"
            | "/login"
            | "/healthz"
            | "/favicon.ico"
            | "/api/v1/me/password"
            | "/fn/account_status"
            | "/fn/change_password"
            | "/fn/current_user"
    ) || path.starts_with("/pkg/");
    if open {
        Gate::Pass
    } else if path.starts_with("/api/") || path.starts_with("/fn/") {
        Gate::Refuse
    } else {
        Gate::Redirect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes that are the step number, zero-padded: easy to reason about.
    fn fake(step: u64) -> String {
        format!("{:06}", step % 1_000_000)
    }

    #[test]
    fn codes_of_the_window_are_accepted_once_per_step() {
        assert_eq!(accept_code("000100", 100, None, fake), Ok(100));
        assert_eq!(accept_code("000099", 100, None, fake), Ok(99));
        assert_eq!(accept_code("000101", 100, None, fake), Ok(101));
        assert_eq!(
            accept_code("000098", 100, None, fake),
            Err(CodeRefusal::Wrong)
        );
        assert_eq!(
            accept_code("000102", 100, None, fake),
            Err(CodeRefusal::Wrong)
        );
        assert_eq!(accept_code(" 000 100 ", 100, None, fake), Ok(100));
    }

    #[test]
    fn a_used_step_and_earlier_ones_are_replays() {
        assert_eq!(
            accept_code("000100", 100, Some(100), fake),
            Err(CodeRefusal::Replayed)
        );
        assert_eq!(
            accept_code("000099", 100, Some(100), fake),
            Err(CodeRefusal::Replayed)
        );
        assert_eq!(accept_code("000101", 100, Some(100), fake), Ok(101));
        assert_eq!(
            accept_code("123456", 100, Some(100), fake),
            Err(CodeRefusal::Wrong)
        );
    }

    #[test]
    fn malformed_codes() {
        for bad in ["", "12345", "1234567", "12345a", "١٢٣٤٥٦"] {
            assert_eq!(
                accept_code(bad, 100, None, fake),
                Err(CodeRefusal::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn steps() {
        assert_eq!(time_step(59), 1);
        assert_eq!(time_step(60), 2);
        assert_eq!(time_step(-5), 0);
    }

    #[test]
    fn recovery_codes_are_derived_distinct_and_normalized() {
        let seed = [7_u8; 32];
        let codes = recovery_codes_from_seed(&seed);
        assert_eq!(codes.len(), RECOVERY_CODES);
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), RECOVERY_CODES);
        assert_eq!(codes, recovery_codes_from_seed(&seed));
        assert_ne!(codes, recovery_codes_from_seed(&[8_u8; 32]));
        let first = &codes[0];
        assert_eq!(first.len(), 14);
        let plain = normalize_recovery(first).unwrap_or_default();
        assert_eq!(plain.len(), 12);
        assert_eq!(
            normalize_recovery(&first.to_lowercase().replace('-', " ")),
            Some(plain.clone())
        );
        assert_eq!(recovery_hash(&plain).len(), 64);
        assert_ne!(secret_from_seed(&seed), secret_from_seed(&[8_u8; 32]));
        assert_eq!(secret_from_seed(&seed).len(), 20);
    }

    #[test]
    fn inputs_are_told_apart() {
        assert_eq!(
            classify("123 456"),
            Some(FactorInput::Code("123456".into()))
        );
        assert_eq!(
            classify("abcd-efgh-ijkl"),
            Some(FactorInput::Recovery("ABCDEFGHIJKL".into()))
        );
        assert_eq!(classify("ABCD-EFGH-IJK1"), None);
        assert_eq!(classify("hello"), None);
    }

    #[test]
    fn pending_sign_ins_expire() {
        assert!(pending_live(1000, 1000));
        assert!(pending_live(1000, 1299));
        assert!(!pending_live(1000, 1300));
        assert!(!pending_live(1000, 999));
    }

    #[test]
    fn the_gate_keeps_must_change_users_on_the_account_page() {
        assert_eq!(must_change_gate(false, "/streams"), Gate::Pass);
        assert_eq!(must_change_gate(true, "/streams"), Gate::Redirect);
        assert_eq!(must_change_gate(true, "/"), Gate::Redirect);
        assert_eq!(must_change_gate(true, "/api/v1/users"), Gate::Refuse);
        assert_eq!(must_change_gate(true, "/fn/list_users"), Gate::Refuse);
        for open in [
            "/account",
            "/logout",
            "/pkg/streamkeeper.js",
            "/api/v1/me/password",
            "/fn/change_password",
            "/fn/account_status",
        ] {
            assert_eq!(must_change_gate(true, open), Gate::Pass, "{open}");
        }
        assert_eq!(must_change_gate(true, "/account/x"), Gate::Redirect);
    }
}
