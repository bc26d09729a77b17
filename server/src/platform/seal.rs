//! Secrets the server must read back (TOTP secrets: codes are computed from
//! them, so they cannot be hashed) sealed at rest with an AEAD,
//! XChaCha20-Poly1305 from RustCrypto, under a key kept outside the
//! database. Each sealing draws a random 24-byte nonce (large enough that
//! random nonces do not repeat) and binds what the secret belongs to (the
//! associated data, a user's id), so a sealed value copied to another row
//! does not open there. Stored as hex of nonce and ciphertext, so that it
//! reads back from `to_jsonb` as a string as the rest of a row does.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use sha2::{Digest, Sha256};

const NONCE_BYTES: usize = 24;
/// The least a key setting holds, as for the audit key.
pub const MIN_KEY_BYTES: usize = 32;

/// A sealing key. `Debug` shows nothing of it.
#[derive(Clone)]
pub struct SealKey(chacha20poly1305::Key);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the key is {0} bytes; it needs at least {MIN_KEY_BYTES} (e.g. `openssl rand -hex 32`)")]
pub struct ShortKey(pub usize);

/// The sealed value does not open under this key (another key, another
/// row's value, or altered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a sealed secret does not open with this key")]
pub struct Unopened;

impl SealKey {
    /// The key from a setting's bytes (a file's or the setting's own), at
    /// least 32 of them: hashed to the cipher's 32 bytes, so any length
    /// and any bytes (hex, base64, raw) make a full-strength key.
    pub fn new(setting: &[u8]) -> Result<Self, ShortKey> {
        if setting.len() < MIN_KEY_BYTES {
            return Err(ShortKey(setting.len()));
        }
        let digest = Sha256::new_with_prefix(b"streamkeeper seal v1\0")
            .chain_update(setting)
            .finalize();
        Ok(Self(digest))
    }

    /// `secret` sealed for `belongs_to`: hex of nonce and ciphertext.
    pub fn seal(&self, belongs_to: &str, secret: &[u8]) -> String {
        let mut nonce = [0_u8; NONCE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let payload = Payload {
            msg: secret,
            aad: belongs_to.as_bytes(),
        };
        // Encryption into a Vec fails only past the cipher's length limit
        // (256 GiB), which no secret comes near.
        let sealed = XChaCha20Poly1305::new(&self.0)
            .encrypt(XNonce::from_slice(&nonce), payload)
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        hex::encode(out)
    }

    /// The secret [`SealKey::seal`] sealed for `belongs_to`.
    pub fn open(&self, belongs_to: &str, sealed: &str) -> Result<Vec<u8>, Unopened> {
        let bytes = hex::decode(sealed).map_err(|_| Unopened)?;
        if bytes.len() <= NONCE_BYTES {
            return Err(Unopened);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let payload = Payload {
            msg: ciphertext,
            aad: belongs_to.as_bytes(),
        };
        XChaCha20Poly1305::new(&self.0)
            .decrypt(XNonce::from_slice(nonce), payload)
            .map_err(|_| Unopened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(fill: u8) -> SealKey {
        SealKey::new(&[fill; 32]).expect("32 bytes")
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_for_its_owner() {
        let k = key(7);
        let sealed = k.seal("user:1", b"JBSWY3DPEHPK3PXP");
        assert!(!sealed.contains("JBSWY3DPEHPK3PXP"));
        assert_eq!(k.open("user:1", &sealed), Ok(b"JBSWY3DPEHPK3PXP".to_vec()));
        assert_eq!(key(8).open("user:1", &sealed), Err(Unopened));
        assert_eq!(k.open("user:2", &sealed), Err(Unopened), "another row's");
        assert_ne!(
            k.seal("user:1", b"x"),
            k.seal("user:1", b"x"),
            "fresh nonces"
        );
        let mut altered = sealed.clone();
        altered.replace_range(60..61, if &sealed[60..61] == "0" { "1" } else { "0" });
        assert_eq!(k.open("user:1", &altered), Err(Unopened));
        assert_eq!(k.open("user:1", "not hex"), Err(Unopened));
    }

    #[test]
    fn a_short_key_is_refused() {
        assert_eq!(SealKey::new(b"short").map(|_| ()), Err(ShortKey(5)));
    }
}
