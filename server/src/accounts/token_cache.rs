//! Bearer tokens checked from memory for a few seconds: a lineage producer
//! posts thousands of events a second with one token, and one statement
//! a request to read the same row again was a third of ingest's round
//! trips.
//!
//! **The bound.** Only a live token is kept, with its user's row as read,
//! for at most [`TOKEN_CACHE_TTL`] from that read. Its liveness
//! (`streamkeeper::accounts::token::liveness`) is judged again at every
//! use, so an expiry bites on time, cached or not. What this process
//! changes (a user disabled, demoted or given a new password here, roles
//! set by single sign-on) drops every cached token at once, before the
//! change is answered. A change made elsewhere (another replica, or
//! `streamkeeper token revoke` / `user disable` / `user password` from the
//! CLI) is seen within [`TOKEN_CACHE_TTL`]. An unknown or dead token is
//! never kept: it is looked up (and its refusal audited) every time.

use super::store::tokens::TokenRow;
use super::store::users::UserRow;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a token read from the store is trusted without reading it
/// again: the longest a revocation made by another process takes to bite.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(5);

/// Live tokens kept at most (a token is a few hundred bytes here); a
/// full cache drops what it holds and starts again.
const CAPACITY: usize = 10_000;

/// A live token as last read, with when this process last marked it used.
pub struct Cached {
    pub row: TokenRow,
    pub user: UserRow,
    /// When it was read: it is trusted until [`TOKEN_CACHE_TTL`] after.
    read: Instant,
    /// `last_used_at` as this process last read or wrote it, in Unix
    /// seconds ([`NEVER`] when never).
    used: AtomicI64,
}

const NEVER: i64 = i64::MIN;

impl Cached {
    /// Whether the token should be marked used now: a minute after it
    /// last was (as `touch` writes at most once a minute); if so, notes
    /// that it is.
    pub fn touch_due(&self, now: DateTime<Utc>) -> bool {
        let now = now.timestamp();
        let used = self.used.load(Ordering::Relaxed);
        (used == NEVER || now - used >= 60)
            && self
                .used
                .compare_exchange(used, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Live tokens by the SHA-256 of their secret (never the secret itself).
/// A plain map under a lock: the age is checked at every read, so the
/// bound does not depend on when anything is evicted.
#[derive(Clone, Default)]
pub struct TokenCache {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    tokens: HashMap<Vec<u8>, Arc<Cached>>,
    /// Moved on by every [`TokenCache::drop_all`]: a row read before a
    /// drop is not kept after it.
    epoch: u64,
}

impl TokenCache {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing here can leave the map half-changed: a poisoned lock's
        // map is as good as any.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token with this digest, if read less than the TTL ago and not
    /// dropped since.
    pub fn get(&self, digest: &[u8]) -> Option<Arc<Cached>> {
        let mut inner = self.lock();
        let cached = inner.tokens.get(digest)?;
        if cached.read.elapsed() < TOKEN_CACHE_TTL {
            return Some(cached.clone());
        }
        inner.tokens.remove(digest);
        None
    }

    /// Where the drops stand: taken before reading a token, for
    /// [`TokenCache::keep`].
    pub fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    /// Keeps a live token read after [`TokenCache::epoch`] said `epoch`
    /// (and `read` is when the read began), unless a drop came since:
    /// the read may predate the change that caused it.
    pub fn keep(
        &self,
        epoch: u64,
        read: Instant,
        digest: Vec<u8>,
        row: TokenRow,
        user: UserRow,
    ) -> Arc<Cached> {
        let cached = Arc::new(Cached {
            used: AtomicI64::new(row.last_used_at.map_or(NEVER, |t| t.timestamp())),
            read,
            row,
            user,
        });
        let mut inner = self.lock();
        if inner.epoch == epoch {
            if inner.tokens.len() >= CAPACITY {
                inner.tokens.clear();
            }
            inner.tokens.insert(digest, cached.clone());
        }
        cached
    }

    /// Forgets every token: called once a change that may end one (or
    /// change its user's roles) is committed, before it is answered, so
    /// this process never answers from a row older than that change.
    pub fn drop_all(&self) {
        let mut inner = self.lock();
        inner.epoch += 1;
        inner.tokens.clear();
    }
}
