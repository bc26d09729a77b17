//! The audit log's hash chain. Each entry's hash covers its own content and
//! the previous entry's hash, so changing, removing or reordering any entry
//! breaks every hash after it; `streamkeeper audit verify` walks the chain
//! with [`ChainVerifier`] and names the first entry that does not fit.
//!
//! A chain alone cannot show that its newest entries were cut off: what is
//! left still links. So the head (the newest entry's id and hash) is
//! exported outside the database — logged on a schedule and printed by
//! `streamkeeper audit head` — and `audit verify --expect-head ID:HASH`
//! fails when the log no longer holds that entry with that hash.
//!
//! A plain hash can be recomputed by anyone who can write the table (the
//! database's owner, a superuser). So, given a key kept outside the
//! database ([`AuditKey`]), entries are sealed with HMAC-SHA-256 instead:
//! without the key no rewritten entry verifies. Entries written before a
//! key was set stay plain; once an entry is keyed, a plain one after it is
//! a break, since that is what a rewrite without the key would leave.

pub mod list;

use chrono::{DateTime, SecondsFormat, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub type Hash = [u8; 32];

/// The hash the first entry chains to.
pub const GENESIS: Hash = [0; 32];

/// What an audit entry says: who did what to which object, when and from where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryContent {
    /// UTC, stored and hashed at microsecond precision (Postgres's own).
    pub at: DateTime<Utc>,
    /// The acting user's name, or `cli`, or `anonymous` for failed logins.
    pub actor: String,
    /// A dotted verb such as `login.failure` or `user.create`.
    pub action: String,
    /// The object acted on, e.g. `user:alice` or `team:payments`.
    pub target: String,
    /// Details as a JSON text, hashed byte for byte as stored.
    pub detail: String,
    /// Where the request came from: an IP address, or `cli`.
    pub source: String,
}

impl EntryContent {
    /// The time as it is hashed and stored (microseconds, `Z`).
    pub fn at_text(&self) -> String {
        self.at.to_rfc3339_opts(SecondsFormat::Micros, true)
    }
}

/// The longest target an entry keeps, in characters. Targets can hold what
/// a client sent (a path, an attempted username), so they are clipped where
/// they are written rather than trusted to be short.
pub const MAX_TARGET_CHARS: usize = 256;

/// `target` cut to [`MAX_TARGET_CHARS`] characters, on a character boundary.
pub fn clip_target(target: &str) -> &str {
    match target.char_indices().nth(MAX_TARGET_CHARS) {
        Some((end, _)) => &target[..end],
        None => target,
    }
}

/// Truncates a time to microseconds, so what is hashed is what Postgres keeps.
pub fn to_micros(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap_or(at)
}

/// The hash of entry `id` with `content`, chained to `prev`. Fields are
/// length-prefixed so that no two different entries encode alike.
pub fn entry_hash(prev: &Hash, id: i64, content: &EntryContent) -> Hash {
    let mut h = Sha256::new();
    encode(b"streamkeeper-audit-v1", prev, id, content, |b| h.update(b));
    h.finalize().into()
}

/// The keyed hash (HMAC-SHA-256) of entry `id`: the same encoding as
/// [`entry_hash`] under another tag, so a plain hash never passes for a
/// keyed one.
pub fn entry_mac(key: &AuditKey, prev: &Hash, id: i64, content: &EntryContent) -> Hash {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(&key.0)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    encode(b"streamkeeper-audit-v2-hmac", prev, id, content, |b| {
        m.update(b)
    });
    m.finalize().into_bytes().into()
}

/// The hash a new entry is stored with, and whether it is keyed.
pub fn seal(key: Option<&AuditKey>, prev: &Hash, id: i64, content: &EntryContent) -> (Hash, bool) {
    match key {
        Some(key) => (entry_mac(key, prev, id, content), true),
        None => (entry_hash(prev, id, content), false),
    }
}

fn encode(tag: &[u8], prev: &Hash, id: i64, content: &EntryContent, mut put: impl FnMut(&[u8])) {
    put(tag);
    put(prev);
    put(&id.to_be_bytes());
    for field in [
        content.at_text().as_str(),
        &content.actor,
        &content.action,
        &content.target,
        &content.detail,
        &content.source,
    ] {
        put(&(field.len() as u64).to_be_bytes());
        put(field.as_bytes());
    }
}

/// The fewest bytes an audit key may have: as many as the hash's output.
pub const MIN_KEY_BYTES: usize = 32;

/// The secret the chain is keyed with. It never prints, so it cannot leak
/// through a log line or an error.
#[derive(Clone)]
pub struct AuditKey(Vec<u8>);

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditKey(..)")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the audit key has {0} bytes; it needs at least {MIN_KEY_BYTES} (make one with `head -c 32 /dev/urandom | base64`)"
)]
pub struct ShortKey(pub usize);

impl AuditKey {
    pub fn new(bytes: Vec<u8>) -> Result<Self, ShortKey> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ShortKey(bytes.len()));
        }
        Ok(Self(bytes))
    }
}

/// The newest entry of a chain as seen at one moment: written `ID:HEX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub id: i64,
    pub hash: Hash,
}

impl std::fmt::Display for Head {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.id, hex::encode(self.hash))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "an audit head is written ID:HASH, an entry id and its 64 hex digits (as `audit head` prints it)"
)]
pub struct BadHead;

impl std::str::FromStr for Head {
    type Err = BadHead;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (id, hash) = s.trim().split_once(':').ok_or(BadHead)?;
        let id = id.parse().map_err(|_| BadHead)?;
        let bytes = hex::decode(hash).map_err(|_| BadHead)?;
        let hash = bytes.as_slice().try_into().map_err(|_| BadHead)?;
        Ok(Head { id, hash })
    }
}

/// An entry as stored, with the hashes to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEntry {
    pub id: i64,
    pub content: EntryContent,
    pub prev_hash: Vec<u8>,
    pub hash: Vec<u8>,
    /// Sealed with the audit key ([`entry_mac`]) rather than hashed plain.
    pub keyed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    #[error("entry {id}: its previous-hash does not match the hash of entry {previous}")]
    Unlinked { id: i64, previous: String },
    #[error("entry {id}: its content does not match its hash (changed after it was written)")]
    Altered { id: i64 },
    #[error(
        "entry {id}: its content does not match its keyed hash (changed after it was written, or the audit key is not the one it was written with)"
    )]
    Forged { id: i64 },
    #[error(
        "entry {id}: it is keyed, and checking it needs the audit key (STREAMKEEPER_AUDIT_KEY)"
    )]
    KeyNeeded { id: i64 },
    #[error(
        "entry {id}: it is not keyed, though the log is keyed from entry {keyed_from} on (rewritten without the key)"
    )]
    UnkeyedAfterKeyed { id: i64, keyed_from: i64 },
    #[error("entry {id}: comes after entry {previous} but its id is not greater")]
    OutOfOrder { id: i64, previous: i64 },
    #[error("entry {id}: its hash is not the expected head's (the log was rewritten from there)")]
    HeadRewritten { id: i64 },
    #[error(
        "entry {id}: the expected head is missing; the log ends at {last} (its newest entries were cut off)"
    )]
    HeadMissing { id: i64, last: String },
}

impl ChainBreak {
    pub fn id(&self) -> i64 {
        match self {
            ChainBreak::Unlinked { id, .. }
            | ChainBreak::Altered { id }
            | ChainBreak::Forged { id }
            | ChainBreak::KeyNeeded { id }
            | ChainBreak::UnkeyedAfterKeyed { id, .. }
            | ChainBreak::OutOfOrder { id, .. }
            | ChainBreak::HeadRewritten { id }
            | ChainBreak::HeadMissing { id, .. } => *id,
        }
    }
}

/// Walks the chain in id order, one entry at a time, so a log of any size can
/// be checked in batches. Keyed entries are checked with the key it is
/// given; without one, the first keyed entry is a [`ChainBreak::KeyNeeded`].
#[derive(Debug, Default)]
pub struct ChainVerifier {
    key: Option<AuditKey>,
    last: Option<(i64, Hash)>,
    keyed_from: Option<i64>,
    checked: u64,
}

impl ChainVerifier {
    pub fn new(key: Option<AuditKey>) -> Self {
        Self {
            key,
            ..Self::default()
        }
    }

    /// Checks the next entry; the first error names the first broken entry.
    pub fn check(&mut self, entry: &StoredEntry) -> Result<(), ChainBreak> {
        let id = entry.id;
        let (expected_prev, previous) = match self.last {
            Some((last, hash)) => {
                if id <= last {
                    return Err(ChainBreak::OutOfOrder { id, previous: last });
                }
                (hash, last.to_string())
            }
            None => (GENESIS, "(start of the log)".to_string()),
        };
        if entry.prev_hash.as_slice() != expected_prev.as_slice() {
            return Err(ChainBreak::Unlinked { id, previous });
        }
        let hash = match (entry.keyed, &self.key, self.keyed_from) {
            (false, _, Some(keyed_from)) => {
                return Err(ChainBreak::UnkeyedAfterKeyed { id, keyed_from });
            }
            (false, _, None) => entry_hash(&expected_prev, id, &entry.content),
            (true, None, _) => return Err(ChainBreak::KeyNeeded { id }),
            (true, Some(key), _) => entry_mac(key, &expected_prev, id, &entry.content),
        };
        if entry.hash.as_slice() != hash.as_slice() {
            return Err(if entry.keyed {
                ChainBreak::Forged { id }
            } else {
                ChainBreak::Altered { id }
            });
        }
        if entry.keyed {
            self.keyed_from.get_or_insert(id);
        }
        self.last = Some((id, hash));
        self.checked += 1;
        Ok(())
    }

    /// The first keyed entry checked so far: the ones before it were
    /// written before the log had a key.
    pub fn keyed_from(&self) -> Option<i64> {
        self.keyed_from
    }

    pub fn checked(&self) -> u64 {
        self.checked
    }

    /// The newest entry checked so far.
    pub fn head(&self) -> Option<Head> {
        self.last.map(|(id, hash)| Head { id, hash })
    }

    /// Checks `entry` as [`ChainVerifier::check`] does and, when it is the
    /// expected head's entry, that its hash is the head's.
    pub fn check_towards(
        &mut self,
        entry: &StoredEntry,
        expect: Option<Head>,
    ) -> Result<(), ChainBreak> {
        self.check(entry)?;
        match expect {
            Some(h) if h.id == entry.id && entry.hash.as_slice() != h.hash.as_slice() => {
                Err(ChainBreak::HeadRewritten { id: h.id })
            }
            _ => Ok(()),
        }
    }

    /// After the last entry: the expected head must have been reached.
    pub fn finish(&self, expect: Option<Head>) -> Result<u64, ChainBreak> {
        match (expect, self.last) {
            (Some(h), last) if h.id > 0 && last.is_none_or(|(id, _)| id < h.id) => {
                Err(ChainBreak::HeadMissing {
                    id: h.id,
                    last: last.map_or("the start (it is empty)".into(), |(id, _)| {
                        format!("entry {id}")
                    }),
                })
            }
            _ => Ok(self.checked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(action: &str) -> EntryContent {
        EntryContent {
            at: to_micros(
                DateTime::parse_from_rfc3339("2026-11-29T10:00:00.123456789Z")
                    .map(|t| t.with_timezone(&Utc))
                    .unwrap_or_default(),
            ),
            actor: "alice".into(),
            action: action.into(),
            target: "user:bob".into(),
            detail: r#"{"roles":["viewer"]}"#.into(),
            source: "127.0.0.1".into(),
        }
    }

    fn chain(n: i64) -> Vec<StoredEntry> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|id| {
                let c = content(&format!("a{id}"));
                let hash = entry_hash(&prev, id, &c);
                let e = StoredEntry {
                    id,
                    content: c,
                    prev_hash: prev.to_vec(),
                    hash: hash.to_vec(),
                    keyed: false,
                };
                prev = hash;
                e
            })
            .collect()
    }

    fn verify(entries: &[StoredEntry]) -> Result<u64, ChainBreak> {
        verify_towards(entries, None)
    }

    fn verify_towards(entries: &[StoredEntry], expect: Option<Head>) -> Result<u64, ChainBreak> {
        let mut v = ChainVerifier::new(None);
        for e in entries {
            v.check_towards(e, expect)?;
        }
        v.finish(expect)
    }

    fn head_of(entries: &[StoredEntry]) -> Head {
        let mut v = ChainVerifier::new(None);
        for e in entries {
            v.check(e).expect("intact");
        }
        v.head().expect("not empty")
    }

    #[test]
    fn a_cut_tail_is_caught_by_the_expected_head() {
        let c = chain(5);
        let head = head_of(&c);
        assert_eq!(head.id, 5);
        assert_eq!(verify_towards(&c, Some(head)), Ok(5));
        // An older head is fine: the log grew since it was exported.
        assert_eq!(verify_towards(&c, Some(head_of(&c[..3]))), Ok(5));
        // The last two entries deleted: what is left still links.
        assert_eq!(verify(&c[..3]), Ok(3));
        assert_eq!(
            verify_towards(&c[..3], Some(head)),
            Err(ChainBreak::HeadMissing {
                id: 5,
                last: "entry 3".into()
            })
        );
        assert!(verify_towards(&[], Some(head)).is_err());
        // Cut and rewritten from entry 4 on, chained consistently.
        let mut forged = c[..3].to_vec();
        let mut prev = hash_of(&forged[2]);
        for id in 4..=5 {
            let content = content("forged");
            let hash = entry_hash(&prev, id, &content);
            forged.push(StoredEntry {
                id,
                content,
                prev_hash: prev.to_vec(),
                hash: hash.to_vec(),
                keyed: false,
            });
            prev = hash;
        }
        assert_eq!(verify(&forged), Ok(5));
        assert_eq!(
            verify_towards(&forged, Some(head)),
            Err(ChainBreak::HeadRewritten { id: 5 })
        );
    }

    fn key(byte: u8) -> AuditKey {
        AuditKey::new(vec![byte; MIN_KEY_BYTES]).expect("long enough")
    }

    /// `n` entries, the first `plain` of them written before the key was set.
    fn keyed_chain(k: &AuditKey, plain: i64, n: i64) -> Vec<StoredEntry> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|id| {
                let content = content(&format!("a{id}"));
                let (hash, keyed) = seal((id > plain).then_some(k), &prev, id, &content);
                let e = StoredEntry {
                    id,
                    content,
                    prev_hash: prev.to_vec(),
                    hash: hash.to_vec(),
                    keyed,
                };
                prev = hash;
                e
            })
            .collect()
    }

    fn verify_with(entries: &[StoredEntry], k: Option<&AuditKey>) -> Result<u64, ChainBreak> {
        let mut v = ChainVerifier::new(k.cloned());
        for e in entries {
            v.check(e)?;
        }
        v.finish(None)
    }

    #[test]
    fn a_keyed_chain_verifies_only_with_its_key() {
        let k = key(7);
        let c = keyed_chain(&k, 2, 5);
        let mut v = ChainVerifier::new(Some(k.clone()));
        for e in &c {
            v.check(e).expect("intact");
        }
        assert_eq!(v.keyed_from(), Some(3));
        assert_eq!(verify_with(&c, None), Err(ChainBreak::KeyNeeded { id: 3 }));
        assert_eq!(
            verify_with(&c, Some(&key(8))),
            Err(ChainBreak::Forged { id: 3 })
        );
        // The plain prefix still checks as before.
        assert_eq!(verify_with(&c[..2], None), Ok(2));
        assert_ne!(
            entry_mac(&k, &GENESIS, 1, &content("x")),
            entry_hash(&GENESIS, 1, &content("x"))
        );
    }

    #[test]
    fn a_rewrite_without_the_key_does_not_verify() {
        let k = key(7);
        let c = keyed_chain(&k, 0, 4);
        // Entry 3 changed and the tail recomputed as a forger without the
        // key can: plain hashes, consistently chained.
        let mut forged = c[..2].to_vec();
        let mut prev = hash_of(&forged[1]);
        for id in 3..=4 {
            let content = content("forged");
            let hash = entry_hash(&prev, id, &content);
            forged.push(StoredEntry {
                id,
                content,
                prev_hash: prev.to_vec(),
                hash: hash.to_vec(),
                keyed: false,
            });
            prev = hash;
        }
        assert_eq!(
            verify_with(&forged, Some(&k)),
            Err(ChainBreak::UnkeyedAfterKeyed {
                id: 3,
                keyed_from: 1
            })
        );
        // Claiming the forged entries are keyed does not help either.
        for e in &mut forged[2..] {
            e.keyed = true;
        }
        assert_eq!(
            verify_with(&forged, Some(&k)),
            Err(ChainBreak::Forged { id: 3 })
        );
        // Nor does a keyed entry's content changed in place.
        let mut altered = c.clone();
        altered[1].content.detail = "{}".into();
        assert_eq!(
            verify_with(&altered, Some(&k)),
            Err(ChainBreak::Forged { id: 2 })
        );
    }

    #[test]
    fn keys_are_long_and_never_printed() {
        assert_eq!(AuditKey::new(vec![1; 31]).map(drop), Err(ShortKey(31)));
        let k = key(0x61);
        let shown = format!("{k:?}");
        assert_eq!(shown, "AuditKey(..)");
        assert!(!shown.contains("aaaa"));
    }

    #[test]
    fn heads_are_written_id_colon_hash() {
        let head = head_of(&chain(2));
        let text = head.to_string();
        assert!(text.starts_with("2:") && text.len() == 2 + 64, "{text}");
        assert_eq!(text.parse::<Head>(), Ok(head));
        for bad in ["", "2", "x:00", "2:zz", "2:00ff"] {
            assert_eq!(bad.parse::<Head>(), Err(BadHead), "{bad}");
        }
    }

    #[test]
    fn intact_chain_verifies() {
        assert_eq!(verify(&chain(5)), Ok(5));
        assert_eq!(verify(&[]), Ok(0));
    }

    #[test]
    fn time_is_hashed_at_microseconds() {
        assert_eq!(content("x").at_text(), "2026-11-29T10:00:00.123456Z");
    }

    #[test]
    fn altered_entry_is_named() {
        let mut c = chain(5);
        c[2].content.actor = "mallory".into();
        assert_eq!(verify(&c), Err(ChainBreak::Altered { id: 3 }));
    }

    #[test]
    fn removed_entry_breaks_the_next_one() {
        let mut c = chain(5);
        c.remove(1);
        assert_eq!(verify(&c).map_err(|e| e.id()), Err(3));
    }

    #[test]
    fn rehashed_entry_still_breaks_its_successor() {
        // An attacker rewrites entry 2 and recomputes its own hash: entry 3
        // still points at the old hash.
        let mut c = chain(4);
        c[1].content.detail = "{}".into();
        c[1].hash = entry_hash(&hash_of(&c[0]), 2, &c[1].content).to_vec();
        assert!(matches!(
            verify(&c),
            Err(ChainBreak::Unlinked { id: 3, .. })
        ));
    }

    fn hash_of(e: &StoredEntry) -> Hash {
        e.hash.as_slice().try_into().unwrap_or(GENESIS)
    }

    #[test]
    fn reordered_entries_are_out_of_order() {
        // Swapped: entry 3 no longer follows the entry it was chained to.
        let mut c = chain(3);
        c.swap(1, 2);
        assert!(matches!(
            verify(&c),
            Err(ChainBreak::Unlinked { id: 3, .. })
        ));
        // Replayed: an old entry appended again.
        let mut c = chain(3);
        c.push(c[1].clone());
        assert_eq!(
            verify(&c),
            Err(ChainBreak::OutOfOrder { id: 2, previous: 3 })
        );
    }

    #[test]
    fn targets_are_clipped_on_a_character_boundary() {
        assert_eq!(clip_target("user:alice"), "user:alice");
        let long = "é".repeat(70_000);
        let clipped = clip_target(&long);
        assert_eq!(clipped.chars().count(), MAX_TARGET_CHARS);
        assert_eq!(
            clip_target(&"x".repeat(MAX_TARGET_CHARS)).len(),
            MAX_TARGET_CHARS
        );
    }

    #[test]
    fn fields_are_not_ambiguous() {
        let mut a = content("x");
        let mut b = content("x");
        a.actor = "ab".into();
        a.action = "c".into();
        b.actor = "a".into();
        b.action = "bc".into();
        assert_ne!(entry_hash(&GENESIS, 1, &a), entry_hash(&GENESIS, 1, &b));
    }
}
