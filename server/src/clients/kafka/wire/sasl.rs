//! The wire client's SASL sign-in: SaslHandshake names the mechanism, then
//! SaslAuthenticate carries the mechanism's messages (KIP-152), made by
//! rsasl (SCRAM-SHA-256/-512 per RFC 5802/7677, PLAIN per RFC 4616). The
//! broker's answer says how long the session lives (KIP-368): the
//! connection signs in again before then (see `Conn::call`).

use super::link::Login;
use super::{Call, Conn, Io, WireError};
use kafka_protocol::ResponseError;
use kafka_protocol::messages::{
    ApiKey, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use rsasl::prelude::{Mechname, MessageSent, SASLClient, SASLConfig, State};
use std::time::Duration;
use streamkeeper::watch::reach::Unreachable;
use tokio::time::Instant;

/// SaslHandshake v1: the mechanism's messages then go in SaslAuthenticate
/// requests (v0 sent them raw). SaslAuthenticate v1: the first with the
/// session's lifetime (KIP-368); v2 only changes the encoding. Every broker
/// the wire client reads (OffsetFetch v8: Kafka 3.0 and later) speaks both.
pub(super) const HANDSHAKE_VERSION: i16 = 1;
pub(super) const AUTHENTICATE_VERSION: i16 = 1;

impl Call for SaslHandshakeRequest {
    const KEY: ApiKey = ApiKey::SaslHandshake;
    type Answer = SaslHandshakeResponse;
}

impl Call for SaslAuthenticateRequest {
    const KEY: ApiKey = ApiKey::SaslAuthenticate;
    type Answer = SaslAuthenticateResponse;
}

/// Signs in on `conn` with `login`; the session's lifetime, if the broker
/// bounds it. A refusal reads as the connection test says it, with the
/// broker's own words (which name the mechanism, never the password).
pub(super) async fn sign_in<S: Io>(
    conn: &mut Conn<S>,
    login: &Login,
    deadline: Instant,
) -> Result<Option<Duration>, WireError> {
    let addr = conn.addr().to_string();
    let refused = |why: Unreachable, detail: String| WireError::SignIn {
        addr: addr.clone(),
        why,
        detail,
    };
    let handshake = conn
        .send(
            &SaslHandshakeRequest::default()
                .with_mechanism(StrBytes::from_static_str(login.mechanism)),
            HANDSHAKE_VERSION,
            deadline,
        )
        .await?;
    if let Some(error) = ResponseError::try_from_code(handshake.error_code) {
        let offered: Vec<&str> = handshake.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err(refused(
            Unreachable::Mechanism,
            format!(
                "{error}; it offers {}",
                if offered.is_empty() {
                    "none".to_string()
                } else {
                    offered.join(", ")
                }
            ),
        ));
    }
    let mut session = start(login).map_err(|e| refused(Unreachable::Mechanism, e))?;
    let mut input: Option<Vec<u8>> = None;
    let mut lifetime = None;
    loop {
        let mut out = Vec::new();
        let state = session
            .step(input.as_deref(), &mut out)
            .map_err(|e| refused(Unreachable::Authentication, e.to_string()))?;
        if state == State::Finished(MessageSent::No) {
            return Ok(lifetime);
        }
        let answer = conn
            .send(
                &SaslAuthenticateRequest::default().with_auth_bytes(out.into()),
                AUTHENTICATE_VERSION,
                deadline,
            )
            .await?;
        if let Some(error) = ResponseError::try_from_code(answer.error_code) {
            let said = answer
                .error_message
                .as_ref()
                .map_or_else(|| error.to_string(), |m| m.to_string());
            return Err(refused(Unreachable::Authentication, said));
        }
        lifetime = u64::try_from(answer.session_lifetime_ms)
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis);
        if state == State::Finished(MessageSent::Yes) {
            return Ok(lifetime);
        }
        input = Some(answer.auth_bytes.to_vec());
    }
}

/// A client session of `login`'s mechanism.
fn start(login: &Login) -> Result<rsasl::prelude::Session, String> {
    let config = SASLConfig::with_credentials(None, login.username.clone(), login.password.clone())
        .map_err(|e| e.to_string())?;
    let name = Mechname::parse(login.mechanism.as_bytes()).map_err(|e| e.to_string())?;
    SASLClient::new(config)
        .start_suggested(&[name])
        .map_err(|e| e.to_string())
}

/// When to sign in again: at 85% of the session's lifetime from when the
/// sign-in was asked for, as Kafka's own clients do (KIP-368: between 85%
/// and 95%), so a request never meets an expired session.
pub(super) fn renewal(asked: Instant, lifetime: Duration) -> Instant {
    asked + lifetime.mul_f64(0.85)
}
