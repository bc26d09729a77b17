//! TOTP codes (RFC 6238, with `totp-rs`) and recovery codes, checked
//! against a user's stored state: the rules are `streamkeeper::accounts::second_factor`'s,
//! the codes computed here, and a code accepted is written down in the same
//! statement that checks it was not used before. TOTP secrets are sealed at
//! rest under `STREAMKEEPER_TOTP_KEY` when it is set ([`use_key`],
//! [`at_start`]).

use crate::accounts::store::users::{StoredSecret, UserRow};
use crate::platform::db::acquire;
use crate::platform::seal::SealKey;
use chrono::Utc;
use rand::RngCore;
use sqlx::PgPool;
use std::sync::OnceLock;
use streamkeeper::accounts::second_factor::{
    CodeRefusal, FactorInput, STEP_SECONDS, accept_code, classify, recovery_codes_from_seed,
    recovery_hash, secret_from_seed, time_step,
};
use streamkeeper_app::accounts::model::PendingFactor;
use streamkeeper_app::error::AppError;
use totp_rs::{Algorithm, Secret, Totp};

/// Shown as the account's issuer in authenticator apps.
const ISSUER: &str = "Streamkeeper";

fn totp(secret: Vec<u8>, username: &str) -> Result<Totp, AppError> {
    totp_rs::Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_step_duration(STEP_SECONDS)
        .with_secret(secret)
        .with_issuer(Some(ISSUER))
        .with_account_name(username)
        .build()
        // Never the error's text: it may hold the secret's URL.
        .map_err(|_| {
            tracing::error!("a TOTP could not be built");
            AppError::Internal(crate::platform::errors::reference())
        })
}

/// The process's sealing key, set once at start ([`use_key`]); like the
/// audit key, every path that reads or writes a secret uses it, so it is
/// kept here rather than threaded through each.
static KEY: OnceLock<Option<SealKey>> = OnceLock::new();

/// Sets the key TOTP secrets are sealed with, once, before any is read or
/// written; later calls change nothing.
pub fn use_key(key: Option<SealKey>) {
    let _ = KEY.set(key);
}

fn key() -> Option<&'static SealKey> {
    KEY.get().and_then(Option::as_ref)
}

/// Whether TOTP secrets are sealed at rest.
pub fn keyed() -> bool {
    key().is_some()
}

/// What a user's sealed secret is bound to: their id, so that a sealed
/// value copied to another user's row does not open there.
fn owner(user_id: i64) -> String {
    format!("users.totp_sealed:{user_id}")
}

/// A confirmed secret as it is stored: sealed when there is a key.
pub fn for_storage(user_id: i64, secret_base32: &str) -> StoredSecret {
    match key() {
        Some(k) => StoredSecret::Sealed(k.seal(&owner(user_id), secret_base32.as_bytes())),
        None => StoredSecret::Plain(secret_base32.to_owned()),
    }
}

/// Why the server cannot start with the TOTP key it has.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "TOTP secrets are sealed in the database: set STREAMKEEPER_TOTP_KEY to the key they were sealed with"
    )]
    Missing,
    #[error(
        "STREAMKEEPER_TOTP_KEY does not open the TOTP secret sealed for user {0}: it is another key, or the value was altered"
    )]
    Mismatch(i64),
    #[error("reading the users' TOTP secrets failed: {0}")]
    Db(#[from] crate::platform::errors::Db),
}

/// Checked at start by every command that may read a second factor: with
/// a key, it must open the secrets sealed before, and the secrets still in
/// plain form are sealed now (the migration that made the column could not
/// know the key); without one, no secret may be sealed. Answers how many
/// secrets it sealed.
pub async fn at_start(pool: &PgPool) -> Result<usize, KeyError> {
    use crate::accounts::store::users;
    let sample = users::a_sealed_totp_secret(pool).await?;
    let Some(k) = key() else {
        return match sample {
            Some(_) => Err(KeyError::Missing),
            None => Ok(0),
        };
    };
    if let Some((id, sealed)) = sample
        && k.open(&owner(id), &sealed).is_err()
    {
        return Err(KeyError::Mismatch(id));
    }
    let mut sealed = 0;
    for (id, plain) in users::plain_totp_secrets(pool).await? {
        let s = k.seal(&owner(id), plain.as_bytes());
        if users::seal_totp_secret(pool, id, &plain, &s).await? {
            sealed += 1;
        }
    }
    Ok(sealed)
}

/// The user's secret (base32), opened when sealed.
fn stored_secret(u: &UserRow) -> Result<Option<String>, AppError> {
    let unreadable = |why: &str| {
        tracing::error!(user_id = u.id, "a stored TOTP secret {why}");
        AppError::Internal(crate::platform::errors::reference())
    };
    match (&u.totp_secret, &u.totp_sealed) {
        (Some(plain), _) => Ok(Some(plain.clone())),
        (None, None) => Ok(None),
        (None, Some(sealed)) => {
            let k = key().ok_or_else(|| unreadable("is sealed and no key is set"))?;
            let bytes = k
                .open(&owner(u.id), sealed)
                .map_err(|_| unreadable("does not open with the key"))?;
            String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| unreadable("is not text"))
        }
    }
}

fn stored_totp(u: &UserRow) -> Result<Option<Totp>, AppError> {
    let Some(secret) = stored_secret(u)? else {
        return Ok(None);
    };
    let bytes = Secret::try_from_base32(&secret).map_err(|_| {
        tracing::error!(user_id = u.id, "a stored TOTP secret is not base32");
        AppError::Internal(crate::platform::errors::reference())
    })?;
    totp(bytes.as_ref().to_vec(), &u.username).map(Some)
}

/// Whether `code` is a current code of `t`, not used since `last_used`;
/// answers its step.
fn check(t: &Totp, code: &str, last_used: Option<i64>) -> Result<i64, CodeRefusal> {
    let now = time_step(Utc::now().timestamp());
    let last = last_used.and_then(|l| u64::try_from(l).ok());
    let step = accept_code(code, now, last, |s| {
        t.generate(s.saturating_mul(STEP_SECONDS)).to_string()
    })?;
    i64::try_from(step).map_err(|_| CodeRefusal::Wrong)
}

/// Which factor a user gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    Code,
    RecoveryCode,
}

impl Factor {
    pub fn as_str(self) -> &'static str {
        match self {
            Factor::Code => "totp",
            Factor::RecoveryCode => "recovery_code",
        }
    }
}

/// Checks what a user with a second factor typed, and uses it up: a code's
/// step is not accepted again, a recovery code (when `recovery` allows one)
/// works once. `Ok(Err(_))` is the user's mistake, for them to see.
pub async fn verify(
    pool: &PgPool,
    u: &UserRow,
    given: &str,
    recovery: bool,
) -> Result<Result<Factor, CodeRefusal>, AppError> {
    let Some(t) = stored_totp(u)? else {
        return Ok(Err(CodeRefusal::Wrong));
    };
    match classify(given) {
        Some(FactorInput::Code(code)) => {
            let step = match check(&t, &code, u.totp_last_step) {
                Ok(s) => s,
                Err(e) => return Ok(Err(e)),
            };
            let mut conn = acquire(pool).await?;
            // Two requests with one code: only the first writes its step.
            if crate::accounts::store::users::use_totp_step(&mut conn, u.id, step).await? {
                Ok(Ok(Factor::Code))
            } else {
                Ok(Err(CodeRefusal::Replayed))
            }
        }
        Some(FactorInput::Recovery(code)) if recovery => {
            let mut conn = acquire(pool).await?;
            let used = crate::accounts::store::users::use_recovery_code(
                &mut conn,
                u.id,
                &recovery_hash(&code),
            )
            .await?;
            Ok(if used {
                Ok(Factor::RecoveryCode)
            } else {
                Err(CodeRefusal::Wrong)
            })
        }
        _ => Ok(Err(CodeRefusal::Malformed)),
    }
}

/// A new enrolment's seed (hex of 32 random bytes).
pub fn new_seed() -> String {
    let mut bytes = [0_u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn seed_bytes(seed: &str) -> Result<Vec<u8>, AppError> {
    hex::decode(seed).map_err(|_| {
        tracing::error!("a stored enrolment seed is not hex");
        AppError::Internal(crate::platform::errors::reference())
    })
}

/// What a started enrolment (or renewal, when the user has a secret
/// already) shows.
pub fn pending(u: &UserRow) -> Result<Option<PendingFactor>, AppError> {
    let Some(seed) = &u.totp_pending_seed else {
        return Ok(None);
    };
    let seed = seed_bytes(seed)?;
    let codes = recovery_codes_from_seed(&seed);
    if u.has_second_factor() {
        return Ok(Some(PendingFactor {
            secret_base32: None,
            otpauth_uri: None,
            recovery_codes: codes,
        }));
    }
    let t = totp(secret_from_seed(&seed), &u.username)?;
    let uri = t.to_url().map_err(|_| {
        tracing::error!("an otpauth URI could not be built");
        AppError::Internal(crate::platform::errors::reference())
    })?;
    Ok(Some(PendingFactor {
        secret_base32: Some(Secret::from(secret_from_seed(&seed)).to_base32()),
        otpauth_uri: Some(uri),
        recovery_codes: codes,
    }))
}

/// What confirming a pending seed writes: the secret (base32, for an
/// enrolment), the step of the confirming code, and the recovery codes'
/// hashes. The code is checked against the new secret for an enrolment,
/// against the current one for a renewal.
pub struct Confirmed {
    pub secret: Option<String>,
    pub step: i64,
    pub hashes: Vec<String>,
}

pub fn confirm(u: &UserRow, code: &str) -> Result<Result<Confirmed, CodeRefusal>, AppError> {
    let Some(seed) = &u.totp_pending_seed else {
        return Err(AppError::Conflict(
            "Start setting up a second factor first.".into(),
        ));
    };
    let seed = seed_bytes(seed)?;
    let (t, secret, last) = match stored_totp(u)? {
        Some(t) => (t, None, u.totp_last_step),
        None => {
            let secret = secret_from_seed(&seed);
            let b32 = Secret::from(secret.clone()).to_base32();
            (totp(secret, &u.username)?, Some(b32), None)
        }
    };
    let step = match check(&t, code, last) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let hashes = recovery_codes_from_seed(&seed)
        .iter()
        .filter_map(|c| streamkeeper::accounts::second_factor::normalize_recovery(c))
        .map(|c| recovery_hash(&c))
        .collect();
    Ok(Ok(Confirmed {
        secret,
        step,
        hashes,
    }))
}
