//! Password hashing with argon2id (OWASP parameters: 19 MiB, t=2, p=1, the
//! argon2 crate's defaults), and a dummy verification so that unknown users
//! take as long to reject as wrong passwords.
//!
//! A hash takes tens of milliseconds of one core on purpose, so the server
//! hashes and verifies with the `_async` functions: on the blocking pool,
//! one per core at a time (see [`crate::platform::limits::Blocking`]), never on the
//! async threads that answer every other request. The plain functions are
//! for the CLI and tests.

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use std::sync::OnceLock;
use streamkeeper_app::error::AppError;

use crate::platform::limits::Blocking;

/// The process's hashing jobs, shared by every service that hashes: a
/// core can run one argon2 hash at a time whoever asks for it.
fn hashing() -> &'static Blocking {
    static HASHING: OnceLock<Blocking> = OnceLock::new();
    HASHING.get_or_init(Blocking::per_core)
}

/// [`hash`] on the blocking pool; a failure is logged and answered as an
/// internal error.
pub async fn hash_async(password: String) -> Result<String, AppError> {
    hashing().run(move || hash(&password)).await?.map_err(|e| {
        tracing::error!(error = %e, "hashing failed");
        AppError::Internal(crate::platform::errors::reference())
    })
}

/// [`verify`] on the blocking pool.
pub async fn verify_async(password: String, stored: String) -> Result<bool, AppError> {
    hashing().run(move || verify(&password, &stored)).await
}

/// [`verify_dummy`] on the blocking pool.
pub async fn verify_dummy_async(password: String) -> Result<(), AppError> {
    hashing().run(move || verify_dummy(&password)).await
}

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
        assert_eq!(
            streamkeeper::accounts::account::check_password(&p, &[]),
            Ok(())
        );
    }
}
