//! Password hashing with argon2id (OWASP parameters: 19 MiB, t=2, p=1, the
//! argon2 crate's defaults), and a dummy verification so that unknown users
//! take as long to reject as wrong passwords.

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use std::sync::OnceLock;

#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

pub fn hash(password: &str) -> Result<String, HashError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError(e.to_string()))
}

/// Whether `password` matches the stored PHC string. A malformed stored hash
/// never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// Spends the time of one verification, for logins of unknown users.
pub fn verify_dummy(password: &str) {
    static DUMMY: OnceLock<Option<String>> = OnceLock::new();
    if let Some(h) = DUMMY.get_or_init(|| hash("not a real password, only timing").ok()) {
        let _ = verify(password, h);
    }
}

/// A random password for `user add` and `user passwd` without stdin:
/// 20 characters from a 56-letter alphabet without look-alikes (~116 bits).
pub fn generate() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rngs::OsRng;
    (0..20)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_verifies() {
        let h = hash("correct-horse-battery-staple").expect("hash");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct-horse-battery-staple", &h));
        assert!(!verify("wrong", &h));
        assert!(!verify("x", "not a phc string"));
    }

    #[test]
    fn generated_passwords_pass_the_policy() {
        let p = generate();
        assert_eq!(p.len(), 20);
        assert_ne!(p, generate());
        assert_eq!(streamkeeper::account::check_password(&p, &[]), Ok(()));
    }
}
