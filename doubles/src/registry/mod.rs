//! A Confluent Schema Registry double: the REST API of
//! `reference/schema-registry-and-connect.md` §1 over in-memory state, with
//! the registry's status codes, error bodies, messages and quirks, and
//! compatibility decided by `streamkeeper::schemas::check`.
//!
//! From a test, [`spawn`] starts it on a free loopback port and returns
//! its base URL and a [`RegistryHandle`] to inject faults; from the
//! command line, `registry-double --listen 127.0.0.1:8081`.

mod canonical;
mod errors;
mod gate;
mod messages;
mod routes;
mod store;

pub use gate::{DoubleAuth, Fault, RegistryHandle};

use axum::Router;
use tokio::net::TcpListener;

/// The media type of every answer.
pub const CONTENT_TYPE_V1: &str = "application/vnd.schemaregistry.v1+json";

/// The `error_code` of an incompatible schema (always HTTP 409).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncompatibleCode {
    /// `409`, up to Confluent 8.0.3 and 8.1.1.
    Legacy,
    /// `40901`, from 8.0.4, 8.1.2 and 8.2.
    #[default]
    Current,
}

impl IncompatibleCode {
    pub fn code(self) -> u32 {
        match self {
            IncompatibleCode::Legacy => 409,
            IncompatibleCode::Current => 40901,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub incompatible_code: IncompatibleCode,
    pub auth: DoubleAuth,
}

/// The double's routes, and the handle that injects faults into them.
pub fn router(options: Options) -> (Router, RegistryHandle) {
    let handle = RegistryHandle::default();
    let gate = gate::Gate {
        handle: handle.clone(),
        auth: options.auth.clone(),
    };
    let router =
        routes::router(options).layer(axum::middleware::from_fn_with_state(gate, gate::gate));
    (router, handle)
}

/// Starts a double with default options on a free loopback port.
pub async fn spawn() -> (String, RegistryHandle) {
    spawn_with(Options::default()).await
}

/// Starts a double on a free loopback port and returns its base URL
/// (`http://127.0.0.1:PORT`). It runs until the test's runtime ends.
///
/// # Panics
/// When no loopback port can be had: a test cannot go on without it.
pub async fn spawn_with(options: Options) -> (String, RegistryHandle) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port for the registry double");
    let addr = listener
        .local_addr()
        .expect("the registry double's address");
    let (router, handle) = router(options);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("registry double stopped: {e}");
        }
    });
    (format!("http://{addr}"), handle)
}
