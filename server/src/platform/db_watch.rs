//! Whether Postgres answers, asked twice a second on a connection of the
//! watch's own. While it does not, the router answers 503 at once instead
//! of letting every request wait out the pool's acquire timeout (5 s, so a
//! page with three reads hung 15 s and clients gave up first), and a
//! request under way when the outage is seen is cut short the same way
//! (issue 46: within 2 s). The pool itself is not asked: a pool busy with
//! a burst of requests is not a database that is down.

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, PgConnection, PgPool};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often the watch asks, how long `SELECT 1` may take, and how long
/// connecting may (a TLS handshake and authentication take longer than a
/// query: a busy database is not a database that is down).
const EVERY: Duration = Duration::from_millis(500);
const ANSWER: Duration = Duration::from_millis(700);
const CONNECT: Duration = Duration::from_secs(3);
/// A refused or broken connection is an outage at once; a slow answer
/// only when the next one is slow too (a checkpoint can stall one query).
const SLOW_IN_A_ROW: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Database {
    Answering,
    Down,
}

/// The last answer, for the router's middleware and `/readyz`.
#[derive(Clone)]
pub struct DbWatch {
    state: Arc<watch::Sender<Database>>,
}

impl Default for DbWatch {
    fn default() -> Self {
        Self::new()
    }
}

impl DbWatch {
    /// Answering until a watch started by [`DbWatch::spawn`] sees otherwise
    /// (a router built without one, in tests, never turns requests away).
    pub fn new() -> Self {
        Self {
            state: Arc::new(watch::channel(Database::Answering).0),
        }
    }

    pub fn now(&self) -> Database {
        *self.state.borrow()
    }

    /// Resolves when the database is seen down (at once if it is).
    pub async fn down(&self) {
        let mut rx = self.state.subscribe();
        // The sender lives as long as `self`: the wait cannot fail.
        let _ = rx.wait_for(|d| *d == Database::Down).await;
    }

    /// Watches the pool's database from now on, for the process's life.
    pub fn spawn(&self, pool: &PgPool) -> tokio::task::JoinHandle<()> {
        let options = (*pool.connect_options()).clone();
        tokio::spawn(watch_database(self.state.clone(), options))
    }
}

async fn watch_database(state: Arc<watch::Sender<Database>>, options: PgConnectOptions) {
    let mut conn: Option<PgConnection> = None;
    let mut slow = 0;
    loop {
        let seen = match check(&mut conn, &options).await {
            Check::Answered => {
                slow = 0;
                Database::Answering
            }
            Check::Refused => Database::Down,
            Check::Slow => {
                slow += 1;
                if slow >= SLOW_IN_A_ROW {
                    Database::Down
                } else {
                    *state.borrow()
                }
            }
        };
        state.send_if_modified(|last| {
            let changed = *last != seen;
            if changed {
                match seen {
                    Database::Down => tracing::error!(
                        "the database does not answer: requests are answered 503 until it does"
                    ),
                    Database::Answering => tracing::info!("the database answers again"),
                }
                *last = seen;
            }
            changed
        });
        tokio::time::sleep(EVERY).await;
    }
}

/// What one check saw.
#[derive(Debug, PartialEq, Eq)]
enum Check {
    Answered,
    /// No connection could be had, or Postgres says it cannot serve.
    Refused,
    Slow,
}

/// Asks on the kept connection; when that one fails (a DBA ended it, a
/// proxy reset it) a new one is asked in the same check before the
/// database is said to be down: one lost connection is not an outage.
async fn check(conn: &mut Option<PgConnection>, options: &PgConnectOptions) -> Check {
    if let Some(c) = conn.as_mut() {
        match tokio::time::timeout(ANSWER, crate::platform::db::ping_connection(c)).await {
            Ok(Ok(())) => return Check::Answered,
            Ok(Err(_)) => *conn = None,
            Err(_) => {
                *conn = None;
                return Check::Slow;
            }
        }
    }
    let mut c = match tokio::time::timeout(CONNECT, options.connect()).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return refused_or_answered(&e),
        Err(_) => return Check::Slow,
    };
    let seen =
        match tokio::time::timeout(ANSWER, crate::platform::db::ping_connection(&mut c)).await {
            Ok(Ok(())) => Check::Answered,
            Ok(Err(e)) => return refused_or_answered(&e),
            Err(_) => return Check::Slow,
        };
    *conn = Some(c);
    seen
}

/// An error Postgres itself answered (too many clients, a role's
/// connection limit, a password refused) means the database answers:
/// the pool's requests get an answer, not a hang. Save Postgres saying it
/// cannot serve: shutting down or starting up (SQLSTATE class 57).
fn refused_or_answered(e: &sqlx::Error) -> Check {
    match e {
        sqlx::Error::Database(d) if !d.code().is_some_and(|c| c.starts_with("57")) => {
            Check::Answered
        }
        _ => Check::Refused,
    }
}
