//! Ingest: an event parsed and checked where it arrives, then queued for the
//! writer tasks, which append each batch in one statement and answer each
//! request once it is committed (a 201 means stored).

use super::fold::Fold;
use super::{LineageService, store};
use crate::platform::errors::{Db, internal};
use sqlx::PgPool;
use std::collections::HashSet;
use std::sync::Arc;
use streamkeeper::lineage::event::{Event, EventError, Kind};
use streamkeeper::lineage::graph::Provenance;
use streamkeeper::lineage::receive::{Received, receive, timely};
use streamkeeper_app::error::AppError;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

/// Events written in one transaction at most.
pub const MAX_BATCH: usize = 1_000;

/// Writer tasks taking batches from the one queue: while one waits on
/// Postgres, the next gathers and writes the following batch. A few are
/// enough to keep Postgres busy; more would only make the batches smaller.
pub const WRITERS: usize = 3;

/// How much ingest may queue, and how far a gzip body may inflate.
#[derive(Clone, Copy, Debug)]
pub struct IngestLimits {
    /// Events accepted but not yet stored; more is a 429.
    pub max_pending: usize,
    /// Events stored but not yet folded (about); more is a 429, so reads,
    /// which fold what is waiting first, stay quick.
    pub max_unfolded: i64,
    /// The largest body after inflating a gzip one.
    pub max_inflated: usize,
}

impl IngestLimits {
    /// 20,000 events queued (a few seconds of the writer's pace), 50,000
    /// waiting for the fold (about ten seconds of its pace), and bodies
    /// inflated to twice the request body limit: events reach hundreds of
    /// KB uncompressed (Trino's are about 200 KB).
    pub fn for_body_limit(body_limit: usize) -> Self {
        IngestLimits {
            max_pending: 20_000,
            max_unfolded: 50_000,
            max_inflated: body_limit.saturating_mul(2).max(16 << 20),
        }
    }
}

/// Why one event was not stored.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Event(#[from] EventError),
    /// Postgres cannot keep U+0000 in text or JSONB.
    #[error("the event contains a NUL character (\\u0000), which cannot be stored")]
    Nul,
    /// Ingest is saturated: try again after a second.
    #[error("lineage ingest is saturated; retry after a second")]
    Saturated,
    /// The store failed (retriable).
    #[error("{0}")]
    Store(AppError),
}

impl Refused {
    /// Whether sending the same event again may succeed.
    pub fn retriable(&self) -> bool {
        matches!(self, Refused::Saturated | Refused::Store(_))
    }
}

/// An event ready to store.
pub struct Accepted {
    pub received: Received,
    pub provenance: Provenance,
    /// The account (username) or routine it came from.
    pub sender: String,
    /// `http`, or `kafka:<cluster id>`.
    pub source: String,
}

/// Parses one event and checks it can be stored.
pub fn accept_one(body: &[u8]) -> Result<Received, Refused> {
    let r = receive(body)?;
    storable(&r)?;
    Ok(r)
}

/// A parsed event the store can keep: dated no more than a day ahead
/// (`receive::timely`), and no NUL anywhere (the canonical bytes spell it
/// `\u0000`; an escaped backslash before it is not one).
pub fn storable(r: &Received) -> Result<(), Refused> {
    timely(&r.event, crate::platform::clock::now())?;
    let c = &r.canonical;
    let nul = c.windows(6).enumerate().any(|(i, w)| {
        w == b"\\u0000" && c[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
    });
    if nul { Err(Refused::Nul) } else { Ok(()) }
}

fn kind_str(e: &Event) -> &'static str {
    match e.kind() {
        Kind::RunEvent => "run",
        Kind::DatasetEvent => "dataset",
        Kind::JobEvent => "job",
    }
}

/// What became of one stored event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    New,
    /// The same canonical event was stored before (or earlier in the batch).
    Duplicate,
}

pub(super) struct Pending {
    events: Vec<Accepted>,
    _permit: OwnedSemaphorePermit,
    done: oneshot::Sender<Vec<Result<Stored, Refused>>>,
}
impl LineageService {
    fn writer(&self) -> &mpsc::UnboundedSender<Pending> {
        self.writer.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let rx = Arc::new(tokio::sync::Mutex::new(rx));
            for _ in 0..WRITERS {
                tokio::spawn(write_loop(self.pool.clone(), self.fold.clone(), rx.clone()));
            }
            tx
        })
    }

    /// Stores `events`, answering each once it is committed (or why not).
    /// All or none are queued: a saturated ingest refuses the lot at once.
    pub async fn ingest(&self, events: Vec<Accepted>) -> Vec<Result<Stored, Refused>> {
        let n = events.len();
        if n == 0 {
            return Vec::new();
        }
        let permits = u32::try_from(n.min(self.limits.max_pending)).unwrap_or(u32::MAX);
        let permit = match self.pending.clone().try_acquire_many_owned(permits) {
            Ok(permit) if self.fold.backlog() <= self.limits.max_unfolded => permit,
            _ => return (0..n).map(|_| Err(Refused::Saturated)).collect(),
        };
        let (done, answer) = oneshot::channel();
        let sent = self.writer().send(Pending {
            events,
            _permit: permit,
            done,
        });
        if sent.is_err() {
            let e = internal("lineage writer", "the writer task has stopped");
            return (0..n).map(|_| Err(Refused::Store(e.clone()))).collect();
        }
        match answer.await {
            Ok(results) => results,
            Err(e) => {
                let e = internal("lineage writer", e);
                (0..n).map(|_| Err(Refused::Store(e.clone()))).collect()
            }
        }
    }
}

/// Takes what is queued (at least one request, at most [`MAX_BATCH`]
/// events unless one request brings more); `None` once the queue closed.
async fn next_batch(
    rx: &tokio::sync::Mutex<mpsc::UnboundedReceiver<Pending>>,
) -> Option<Vec<Pending>> {
    // One writer gathers at a time; the others wait for the lock, not for
    // the queue, so each batch takes everything queued while it gathers.
    let mut rx = rx.lock().await;
    let first = rx.recv().await?;
    let mut n = first.events.len();
    let mut batch = vec![first];
    while n < MAX_BATCH {
        match rx.try_recv() {
            Ok(p) => {
                n += p.events.len();
                batch.push(p);
            }
            Err(_) => break,
        }
    }
    Some(batch)
}

/// A writer task: batches what is queued, writes, answers. Writers run
/// side by side; each statement takes its rows in key order
/// ([`store::write`]), so they do not deadlock, and if Postgres
/// ever picks one of them as a deadlock's victim its batch is stored event
/// by event like any failed batch.
async fn write_loop(
    pool: PgPool,
    fold: Arc<Fold>,
    rx: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Pending>>>,
) {
    while let Some(batch) = next_batch(&rx).await {
        let events: Vec<&Accepted> = batch.iter().flat_map(|p| &p.events).collect();
        let mut results = match write(&pool, &events).await {
            Ok(stored) => stored.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => {
                tracing::warn!(error = %e, events = events.len(), "a lineage batch failed; storing its events one by one");
                let mut one_by_one = Vec::with_capacity(events.len());
                for ev in &events {
                    one_by_one.push(match write(&pool, &[*ev]).await {
                        Ok(s) => Ok(s.into_iter().next().unwrap_or(Stored::Duplicate)),
                        Err(e) => Err(Refused::Store(e)),
                    });
                }
                one_by_one
            }
        }
        .into_iter();
        if results
            .as_slice()
            .iter()
            .any(|r| matches!(r, Ok(Stored::New)))
        {
            fold.wake();
        }
        for Pending {
            events,
            _permit,
            done,
        } in batch
        {
            let mine: Vec<_> = results.by_ref().take(events.len()).collect();
            // Room in the queue before the answer: a producer told "stored"
            // may send again at once without a 429.
            drop(_permit);
            // A client that gave up does not stop the others' answers.
            let _ = done.send(mine);
        }
    }
}

/// Appends `events` (one statement: no transaction to open and commit,
/// one round trip); an event already stored is answered as a duplicate.
async fn write(pool: &PgPool, events: &[&Accepted]) -> Result<Vec<Stored>, AppError> {
    let rows: Vec<store::NewEvent> = events
        .iter()
        .map(|e| store::NewEvent {
            hash: &e.received.hash,
            body: std::str::from_utf8(&e.received.canonical).unwrap_or(""),
            provenance: e.provenance,
            kind: kind_str(&e.received.event),
            event_time: e.received.event.header().event_time,
            sender: &e.sender,
            source: &e.source,
        })
        .collect();
    let mut conn = pool.acquire().await.map_err(Db)?;
    let appended = store::append(&mut conn, &rows).await?;
    let mut new: HashSet<Vec<u8>> = appended.into_iter().collect();
    // The first of equal events in the batch is the new one.
    Ok(events
        .iter()
        .map(|e| {
            if new.remove(e.received.hash.as_slice()) {
                Stored::New
            } else {
                Stored::Duplicate
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event_with(text: &str) -> Vec<u8> {
        format!(
            r#"{{"eventTime": "2026-01-01T00:00:00Z", "producer": "p", "dataset": {{"namespace": "n", "name": {text}, "facets": {{}}}}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn a_nul_is_refused_but_an_escaped_backslash_before_u0000_is_not_one() {
        assert!(matches!(
            accept_one(&event_with(r#""a\u0000b""#)),
            Err(Refused::Nul)
        ));
        // The text `\u0000` (a backslash, then u0000): storable.
        assert!(accept_one(&event_with(r#""a\\u0000b""#)).is_ok());
        // A backslash, then a real NUL.
        assert!(matches!(
            accept_one(&event_with(r#""a\\\u0000b""#)),
            Err(Refused::Nul)
        ));
        assert!(!Refused::Nul.retriable() && Refused::Saturated.retriable());
    }
}
