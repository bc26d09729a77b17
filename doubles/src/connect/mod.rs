//! A Kafka Connect double: the worker REST API of
//! `reference/schema-registry-and-connect.md` §4 and
//! `reference/openlineage-and-connect.md` B2 over in-memory connectors, with
//! Connect's status codes, `{"error_code","message"}` bodies, states and
//! quirks (204 or 202 restarts, tasks that vanish when stopped, 409s during
//! a rebalance, validate answering 200 even when invalid, `expand`).
//!
//! It answers under two prefixes: a self-managed worker's (`/connectors`…)
//! and Confluent Cloud's managed connectors'
//! (`/connect/v1/environments/{env}/clusters/{cluster}/connectors`…), where
//! errors come as `{"error":{"code","message"}}` (ccloud-sdk-go-v2
//! `connect/v1/docs/ConnectV1ConnectorError.md`).
//!
//! Its validation is its own, written from each connector's documented
//! required keys and enumerations ([`validate`]); it never calls the
//! product's rules, so a test of the product against it tests two readings.
//!
//! From a test, [`spawn`] starts it on a free loopback port and returns its
//! base URL and a [`ConnectHandle`] that fails tasks, injects faults and
//! rebalances; from the command line, `connect-double --listen …`.

mod gate;
mod routes;
mod state;
mod validate;

pub use crate::registry::DoubleAuth;
pub use gate::Fault;
pub use state::State;

use axum::Router;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::net::TcpListener;

/// The environment and cluster IDs the Cloud prefix answers for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloudIds {
    pub environment: String,
    pub cluster: String,
}

impl Default for CloudIds {
    fn default() -> Self {
        CloudIds {
            environment: "env-12345".into(),
            cluster: "lkc-67890".into(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub auth: DoubleAuth,
    pub cloud: CloudIds,
}

/// Drives the double from a test: its connectors' fates, faults and
/// rebalances. Cheap to clone; every clone drives the same double.
#[derive(Clone, Debug, Default)]
pub struct ConnectHandle {
    pub(crate) store: Arc<Mutex<state::Store>>,
    pub(crate) faults: Arc<Mutex<std::collections::VecDeque<Fault>>>,
    /// How many writes still answer 409 (`u64::MAX`: until cleared).
    pub(crate) rebalancing: Arc<AtomicU64>,
    pub(crate) requests: Arc<AtomicU64>,
}

impl ConnectHandle {
    pub(crate) fn store(&self) -> MutexGuard<'_, state::Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next `n` requests fail with `fault`, after any queued before.
    pub fn fail_next(&self, n: usize, fault: Fault) {
        self.faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(std::iter::repeat_n(fault, n));
    }

    /// The next `n` writes answer 409, as during a worker rebalance.
    pub fn rebalance_next(&self, n: u64) {
        self.rebalancing.store(n, Ordering::SeqCst);
    }

    /// Every write answers 409 until [`ConnectHandle::rebalance_next`]`(0)`.
    pub fn rebalance_forever(&self) {
        self.rebalancing.store(u64::MAX, Ordering::SeqCst);
    }

    /// Requests answered so far (faults included).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Adds (or replaces) a running connector without validating it, as if
    /// it had been there before the test; tasks as `tasks.max` says.
    pub fn put(&self, name: &str, config: &[(&str, &str)]) {
        let config: BTreeMap<String, String> = config
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .chain([("name".to_owned(), name.to_owned())])
            .collect();
        self.store().upsert(name, config, State::Running);
    }

    /// Deletes the connector, as `DELETE /connectors/{n}` would.
    pub fn remove(&self, name: &str) {
        self.store().remove(name);
    }

    /// The connector's stored config, in clear, as the worker keeps it.
    pub fn config(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.store().get(name).map(|c| c.config.clone())
    }

    /// The task fails with `trace`; a restart makes it run again.
    pub fn fail_task(&self, name: &str, task: usize, trace: &str) {
        self.store()
            .set_task(name, task, State::Failed, Some(trace.to_owned()));
    }

    /// The task fails with `trace`, and again after every restart.
    pub fn keep_failing(&self, name: &str, task: usize, trace: &str) {
        let mut store = self.store();
        store.set_task(name, task, State::Failed, Some(trace.to_owned()));
        if let Some(c) = store.get_mut(name) {
            c.sticky.insert(task, trace.to_owned());
        }
    }

    /// Failures stop coming back after restarts.
    pub fn heal(&self, name: &str) {
        if let Some(c) = self.store().get_mut(name) {
            c.sticky.clear();
        }
    }

    pub fn fail_connector(&self, name: &str, trace: &str) {
        self.store()
            .set_connector(name, State::Failed, Some(trace.to_owned()));
    }

    /// Sets a task's state (UNASSIGNED while no worker has it, RUNNING…).
    pub fn set_task(&self, name: &str, task: usize, state: State) {
        self.store().set_task(name, task, state, None);
    }

    /// The topics the worker tracks as used by the connector.
    pub fn set_topics(&self, name: &str, topics: &[&str]) {
        if let Some(c) = self.store().get_mut(name) {
            c.topics = topics.iter().map(|t| (*t).to_owned()).collect();
        }
    }

    /// The connector's committed offsets, as `GET …/offsets` lists them.
    pub fn set_offsets(&self, name: &str, offsets: Vec<Value>) {
        if let Some(c) = self.store().get_mut(name) {
            c.offsets = offsets;
        }
    }

    /// Restart requests the connector and its tasks received.
    pub fn restarts(&self, name: &str) -> u32 {
        self.store().get(name).map(|c| c.restarts).unwrap_or(0)
    }

    /// The connector's state and its tasks' states, as status would say.
    pub fn states(&self, name: &str) -> Option<(State, Vec<State>)> {
        let mut store = self.store();
        store.settle();
        store
            .get(name)
            .map(|c| (c.connector.state, c.tasks.iter().map(|t| t.state).collect()))
    }
}

/// The double's routes, and the handle that drives them.
pub fn router(options: Options) -> (Router, ConnectHandle) {
    let handle = ConnectHandle::default();
    let router = routes::router(options.clone(), handle.clone()).layer(
        axum::middleware::from_fn_with_state(
            gate::Gate {
                handle: handle.clone(),
                auth: options.auth,
            },
            gate::gate,
        ),
    );
    (router, handle)
}

/// Starts a double with default options on a free loopback port.
pub async fn spawn() -> (String, ConnectHandle) {
    spawn_with(Options::default()).await
}

/// Starts a double on a free loopback port and returns its base URL
/// (`http://127.0.0.1:PORT`). It runs until the test's runtime ends.
///
/// # Panics
/// When no loopback port can be had: a test cannot go on without it.
pub async fn spawn_with(options: Options) -> (String, ConnectHandle) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port for the connect double");
    let addr = listener.local_addr().expect("the connect double's address");
    let (router, handle) = router(options);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("connect double stopped: {e}");
        }
    });
    (format!("http://{addr}"), handle)
}
