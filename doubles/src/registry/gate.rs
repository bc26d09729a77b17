//! What stands before the registry's resources: injected faults first (as
//! a load balancer or Confluent Cloud would answer), then authentication.

use super::CONTENT_TYPE_V1;
use super::errors::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// How the next request fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 401, as for wrong credentials.
    Unauthorized,
    /// 429 with `Retry-After` in seconds, as Confluent Cloud throttles.
    RateLimited { retry_after_secs: u64 },
    /// 500 with error code 50001 (the backing store failed).
    ServerError,
    /// No answer, ever: the client's timeout has to end it.
    Hang,
    /// The connection closes without an answer.
    Close,
}

/// Who may call the registry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DoubleAuth {
    #[default]
    None,
    Basic {
        user: String,
        password: String,
    },
    Bearer(String),
}

impl DoubleAuth {
    pub(crate) fn admits(&self, headers: &HeaderMap) -> bool {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match self {
            DoubleAuth::None => true,
            DoubleAuth::Basic { user, password } => {
                let expected =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                given.and_then(|g| g.strip_prefix("Basic ")) == Some(expected.as_str())
            }
            DoubleAuth::Bearer(token) => {
                given.and_then(|g| g.strip_prefix("Bearer ")) == Some(token.as_str())
            }
        }
    }
}

/// Makes the double fail on purpose. Cheap to clone; every clone drives
/// the same double.
#[derive(Clone, Debug, Default)]
pub struct RegistryHandle {
    faults: Arc<Mutex<VecDeque<Fault>>>,
}

impl RegistryHandle {
    /// The next `n` requests fail with `fault`, after any queued before.
    pub fn fail_next(&self, n: usize, fault: Fault) {
        self.faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(std::iter::repeat_n(fault, n));
    }

    fn take(&self) -> Option<Fault> {
        self.faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }
}

#[derive(Clone, Debug)]
pub(super) struct Gate {
    pub handle: RegistryHandle,
    pub auth: DoubleAuth,
}

pub(super) async fn gate(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    if let Some(fault) = gate.handle.take() {
        return answer(fault).await;
    }
    if !gate.auth.admits(request.headers()) {
        return unauthorized(&gate.auth);
    }
    next.run(request).await
}

fn unauthorized(auth: &DoubleAuth) -> Response {
    let challenge = match auth {
        DoubleAuth::Bearer(_) => "Bearer",
        DoubleAuth::None | DoubleAuth::Basic { .. } => "Basic realm=\"SchemaRegistry\"",
    };
    let mut response = ApiError::new(401, "Unauthorized").into_response();
    if let Ok(value) = challenge.parse() {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

async fn answer(fault: Fault) -> Response {
    match fault {
        Fault::Unauthorized => unauthorized(&DoubleAuth::None),
        Fault::RateLimited { retry_after_secs } => (
            StatusCode::TOO_MANY_REQUESTS,
            [
                (header::CONTENT_TYPE, CONTENT_TYPE_V1.to_string()),
                (header::RETRY_AFTER, retry_after_secs.to_string()),
            ],
            r#"{"error_code":429,"message":"Too Many Requests"}"#,
        )
            .into_response(),
        Fault::ServerError => ApiError::new(
            50001,
            "Error while retrieving schema from the backend Kafka store",
        )
        .into_response(),
        Fault::Hang => std::future::pending().await,
        // hyper has no way for a service to drop its connection without an
        // answer; unwinding the connection's task does just that, and
        // `resume_unwind` skips the panic hook, so nothing is printed.
        Fault::Close => {
            std::panic::resume_unwind(Box::new("registry double: closing the connection"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(value).expect("header"),
        );
        h
    }

    #[test]
    fn basic_and_bearer_admit_only_their_credentials() {
        let basic = DoubleAuth::Basic {
            user: "key".into(),
            password: "secret".into(),
        };
        assert!(basic.admits(&with("Basic a2V5OnNlY3JldA==")));
        assert!(!basic.admits(&with("Basic a2V5Ondyb25n")));
        assert!(!basic.admits(&HeaderMap::new()));
        let bearer = DoubleAuth::Bearer("t0ken".into());
        assert!(bearer.admits(&with("Bearer t0ken")));
        assert!(!bearer.admits(&with("Bearer other")));
        assert!(DoubleAuth::None.admits(&HeaderMap::new()));
    }

    #[test]
    fn faults_come_in_the_order_queued() {
        let h = RegistryHandle::default();
        h.fail_next(2, Fault::ServerError);
        h.fail_next(1, Fault::Hang);
        assert_eq!(h.take(), Some(Fault::ServerError));
        assert_eq!(h.take(), Some(Fault::ServerError));
        assert_eq!(h.take(), Some(Fault::Hang));
        assert_eq!(h.take(), None);
    }
}
