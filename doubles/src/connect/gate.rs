//! What stands before the worker's resources: injected faults (as a load
//! balancer or a struggling worker would answer), authentication, then the
//! rebalance a test switched on, which answers every write with 409.

use super::ConnectHandle;
use super::routes::error;
use crate::registry::DoubleAuth;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

/// How the next request fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 401, as for wrong credentials.
    Unauthorized,
    /// 500 with Connect's error body, as when the herder times out.
    ServerError,
    /// 502 with an HTML page, as a proxy in front of a dead worker.
    BadGatewayHtml,
    /// 200 with an HTML page: a proxy's sign-in page, never an answer.
    HtmlOk,
    /// No answer, ever: the client's timeout has to end it.
    Hang,
    /// The connection closes without an answer.
    Close,
}

#[derive(Clone, Debug)]
pub(super) struct Gate {
    pub handle: ConnectHandle,
    pub auth: DoubleAuth,
}

pub(super) const REBALANCE: &str =
    "Cannot complete request because of a conflicting operation (e.g. worker rebalance)";

pub(super) async fn gate(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    gate.handle.requests.fetch_add(1, Ordering::SeqCst);
    let cloud = request.uri().path().starts_with("/connect/v1/");
    let fault = gate
        .handle
        .faults
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop_front();
    if let Some(fault) = fault {
        return answer(fault, cloud).await;
    }
    if !gate.auth.admits(request.headers()) {
        return error(cloud, 401, "Unauthorized".into());
    }
    // Validation is not a herder write: it is answered during a rebalance.
    let write = request.method() != Method::GET && !request.uri().path().ends_with("/validate");
    if write {
        let left = gate
            .handle
            .rebalancing
            .try_update(Ordering::SeqCst, Ordering::SeqCst, |n| match n {
                0 => None,
                u64::MAX => Some(u64::MAX),
                n => Some(n - 1),
            });
        if left.is_ok() {
            return error(cloud, 409, REBALANCE.into());
        }
    }
    next.run(request).await
}

const HTML: &str = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";

async fn answer(fault: Fault, cloud: bool) -> Response {
    match fault {
        Fault::Unauthorized => error(cloud, 401, "Unauthorized".into()),
        Fault::ServerError => error(
            cloud,
            500,
            "Request timed out. The worker is currently ensuring membership in the cluster".into(),
        ),
        Fault::BadGatewayHtml => (
            StatusCode::BAD_GATEWAY,
            [(header::CONTENT_TYPE, "text/html")],
            HTML,
        )
            .into_response(),
        Fault::HtmlOk => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html")],
            "<html><body>Sign in to continue</body></html>",
        )
            .into_response(),
        Fault::Hang => std::future::pending().await,
        // As in the registry double: unwinding the connection's task drops
        // it without an answer, and `resume_unwind` prints nothing.
        Fault::Close => {
            std::panic::resume_unwind(Box::new("connect double: closing the connection"))
        }
    }
}
