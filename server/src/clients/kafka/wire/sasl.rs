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

#[cfg(test)]
mod tests {
    //! Against exchanges recorded from a real nisshi 0.8.1 (fixtures/, by
    //! fixtures/record.py, which speaks the protocol by hand) and against
    //! hand-built ones where nisshi cannot answer: PLAIN (it offers SCRAM
    //! only) and a short session lifetime (its own is 60 s).
    use super::super::{decode_answer, encode_frame};
    use super::*;
    use kafka_protocol::messages::ApiVersionsRequest;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    const RECORDED: &str = include_str!("fixtures/nisshi-sasl.frames");
    const PASSWORD: &str = "recorder-secret-1";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    /// The recorded exchange under `title`: (frames sent, frames received).
    fn recorded(title: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let section = RECORDED
            .split("\n# ")
            .find(|s| s.starts_with(title))
            .expect("a recorded exchange");
        let (mut sent, mut got) = (Vec::new(), Vec::new());
        for line in section.lines() {
            if let Some(h) = line.strip_prefix("> ") {
                sent.push(unhex(h));
            } else if let Some(h) = line.strip_prefix("< ") {
                got.push(unhex(h));
            }
        }
        (sent, got)
    }

    /// The auth bytes of a SaslAuthenticate v1 request or answer frame.
    fn auth_bytes_at(frame: &[u8], start: usize) -> (usize, Vec<u8>) {
        let len = i32::from_be_bytes(frame[start..start + 4].try_into().expect("4 bytes"));
        let len = usize::try_from(len).expect("a length");
        (start + 4 + len, frame[start + 4..start + 4 + len].to_vec())
    }

    /// Where a SaslAuthenticate v1 answer's auth bytes start: after size,
    /// correlation id, error code and the error message.
    fn answer_auth_start(frame: &[u8]) -> usize {
        let n = i16::from_be_bytes(frame[10..12].try_into().expect("2 bytes"));
        12 + usize::try_from(n.max(0)).expect("a length")
    }

    /// `answer` with its auth bytes replaced, sizes put right.
    fn with_auth_bytes(answer: &[u8], auth: &[u8]) -> Vec<u8> {
        let start = answer_auth_start(answer);
        let (end, _) = auth_bytes_at(answer, start);
        let mut body = answer[4..start].to_vec();
        body.extend(i32::try_from(auth.len()).expect("len").to_be_bytes());
        body.extend(auth);
        body.extend(&answer[end..]);
        let mut frame = i32::try_from(body.len())
            .expect("len")
            .to_be_bytes()
            .to_vec();
        frame.extend(body);
        frame
    }

    async fn read_request(broker: &mut DuplexStream) -> Option<Vec<u8>> {
        let mut size = [0_u8; 4];
        broker.read_exact(&mut size).await.ok()?;
        let mut body = vec![0_u8; usize::try_from(i32::from_be_bytes(size)).ok()?];
        broker.read_exact(&mut body).await.ok()?;
        Some(body)
    }

    /// A broker on the other end of a pipe: each request's body (header
    /// included) goes to `answer`, which returns the frame to send back.
    fn broker<F>(mut answer: F) -> (DuplexStream, tokio::task::JoinHandle<Vec<i16>>)
    where
        F: FnMut(i16, i32, &[u8]) -> Vec<u8> + Send + 'static,
    {
        let (client, mut broker) = tokio::io::duplex(1 << 16);
        let task = tokio::spawn(async move {
            let mut keys = Vec::new();
            while let Some(body) = read_request(&mut broker).await {
                let key = i16::from_be_bytes([body[0], body[1]]);
                let id = i32::from_be_bytes(body[4..8].try_into().expect("4 bytes"));
                keys.push(key);
                let frame = answer(key, id, &body);
                if broker.write_all(&frame).await.is_err() {
                    break;
                }
            }
            keys
        });
        (client, task)
    }

    /// The recorded broker, its answers given in turn; the client's nonce
    /// (random, where the recording's was fixed) put in the server's first
    /// message, as a broker would echo it.
    fn replaying(title: &str) -> (DuplexStream, tokio::task::JoinHandle<Vec<i16>>) {
        let (sent, got) = recorded(title);
        // No client-first recorded (a mechanism refused): nothing to echo.
        let fixed = sent.get(1).map_or_else(String::new, |f| {
            let (_, first) = auth_bytes_at(f, 4 + 8 + 2 + 12);
            let first = String::from_utf8(first).expect("utf-8");
            first.rsplit_once("r=").expect("a nonce").1.to_string()
        });
        let mut answers = got.into_iter();
        broker(move |key, _, body| {
            let frame = answers.next().expect("a recorded answer");
            if key != ApiKey::SaslAuthenticate as i16 {
                return frame;
            }
            let (_, ours) = auth_bytes_at(body, 8 + 2 + 12);
            let ours = String::from_utf8(ours).expect("utf-8");
            let Some((_, nonce)) = ours.split_once(",r=") else {
                return frame;
            };
            let (_, theirs) = auth_bytes_at(&frame, answer_auth_start(&frame));
            let theirs = String::from_utf8(theirs).expect("utf-8");
            with_auth_bytes(&frame, theirs.replacen(&fixed, nonce, 1).as_bytes())
        })
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    fn login(mechanism: &'static str, password: &str) -> Option<Arc<Login>> {
        Some(Arc::new(Login::new(mechanism, "recorder", password)))
    }

    #[test]
    fn our_requests_are_the_recorded_bytes() {
        for (title, mechanism) in [
            ("SCRAM-SHA-512, user recorder", "SCRAM-SHA-512"),
            ("SCRAM-SHA-256, user recorder", "SCRAM-SHA-256"),
            ("PLAIN, user recorder", "PLAIN"),
        ] {
            let (sent, _) = recorded(title);
            let handshake = SaslHandshakeRequest::default()
                .with_mechanism(StrBytes::from_static_str(mechanism));
            assert_eq!(
                encode_frame(&handshake, HANDSHAKE_VERSION, 1).expect("frame"),
                sent[0],
                "{title}"
            );
        }
        let (sent, _) = recorded("SCRAM-SHA-512, user recorder");
        for (i, frame) in sent.iter().enumerate().skip(1) {
            let (_, auth) = auth_bytes_at(frame, 4 + 8 + 2 + 12);
            let request = SaslAuthenticateRequest::default().with_auth_bytes(auth.into());
            let id = i32::try_from(i + 1).expect("id");
            assert_eq!(
                encode_frame(&request, AUTHENTICATE_VERSION, id).expect("frame"),
                *frame
            );
        }
    }

    #[test]
    fn the_brokers_answers_decode() {
        let (_, got) = recorded("SCRAM-SHA-512, user recorder");
        let hs = decode_answer::<SaslHandshakeResponse>(&got[0][4..], HANDSHAKE_VERSION, 1)
            .expect("handshake");
        assert_eq!(hs.error_code, 0);
        let offered: Vec<&str> = hs.mechanisms.iter().map(|m| m.as_str()).collect();
        assert_eq!(offered, ["SCRAM-SHA-512", "SCRAM-SHA-256"]);
        let first =
            decode_answer::<SaslAuthenticateResponse>(&got[1][4..], AUTHENTICATE_VERSION, 2)
                .expect("server-first");
        assert_eq!(first.error_code, 0);
        assert!(first.auth_bytes.starts_with(b"r=fixedclientnonce"));
        // nisshi bounds a session to a minute (KIP-368).
        assert_eq!(first.session_lifetime_ms, 60_000);
        let last = decode_answer::<SaslAuthenticateResponse>(&got[2][4..], AUTHENTICATE_VERSION, 3)
            .expect("server-final");
        assert!(last.auth_bytes.starts_with(b"v="));
        assert_eq!(last.session_lifetime_ms, 60_000);
    }

    async fn refused(title: &str, mechanism: &'static str, password: &str) -> WireError {
        let (client, _broker) = replaying(title);
        Conn::signed_in(client, "nisshi:9092", login(mechanism, password), far())
            .await
            .err()
            .expect("refused")
    }

    #[tokio::test]
    async fn a_wrong_password_reads_as_the_connection_test_says() {
        let wrong = "not-the-password";
        let e = refused(
            "SCRAM-SHA-512, user recorder, wrong password",
            "SCRAM-SHA-512",
            wrong,
        )
        .await;
        let said = e.to_string();
        assert!(
            matches!(
                e,
                WireError::SignIn {
                    why: Unreachable::Authentication,
                    ..
                }
            ),
            "{said}"
        );
        assert!(
            said.starts_with(&format!(
                "nisshi:9092: {}",
                Unreachable::Authentication.sentence()
            )),
            "{said}"
        );
        assert!(said.contains("invalid proof"), "{said}");
        assert!(!said.contains(wrong), "{said}");
    }

    #[tokio::test]
    async fn an_unknown_user_and_a_mechanism_not_offered_are_said() {
        let e = refused("SCRAM-SHA-512, user nobody", "SCRAM-SHA-512", PASSWORD).await;
        assert!(
            matches!(
                e,
                WireError::SignIn {
                    why: Unreachable::Authentication,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("unknown user"), "{e}");
        let e = refused("PLAIN, user recorder", "PLAIN", PASSWORD).await;
        assert!(
            matches!(
                e,
                WireError::SignIn {
                    why: Unreachable::Mechanism,
                    ..
                }
            ),
            "{e}"
        );
        let said = e.to_string();
        assert!(said.contains(Unreachable::Mechanism.sentence()), "{said}");
        assert!(
            said.contains("it offers SCRAM-SHA-512, SCRAM-SHA-256"),
            "{said}"
        );
    }

    /// Hand-built answers (SaslHandshake v1, SaslAuthenticate v1 and
    /// ApiVersions v0 as the protocol guide lays them out): PLAIN accepted,
    /// the session bounded to `lifetime_ms`.
    fn plain_broker(
        lifetime_ms: i64,
        seen: std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    ) -> impl FnMut(i16, i32, &[u8]) -> Vec<u8> + Send + 'static {
        move |key, id, body| {
            let mut out = id.to_be_bytes().to_vec();
            out.extend(0_i16.to_be_bytes());
            if key == ApiKey::SaslHandshake as i16 {
                out.extend(1_i32.to_be_bytes());
                out.extend(5_i16.to_be_bytes());
                out.extend(b"PLAIN");
            } else if key == ApiKey::SaslAuthenticate as i16 {
                let (_, auth) = auth_bytes_at(body, 8 + 2 + 12);
                if let Ok(mut s) = seen.lock() {
                    s.push(auth);
                }
                out.extend((-1_i16).to_be_bytes());
                out.extend(0_i32.to_be_bytes());
                out.extend(lifetime_ms.to_be_bytes());
            } else {
                out.extend(0_i32.to_be_bytes());
            }
            let mut frame = i32::try_from(out.len())
                .expect("len")
                .to_be_bytes()
                .to_vec();
            frame.extend(out);
            frame
        }
    }

    #[tokio::test]
    async fn plain_sends_its_one_message() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (client, task) = broker(plain_broker(0, seen.clone()));
        let mut conn = Conn::signed_in(client, "pkc:9092", login("PLAIN", "s3cret"), far())
            .await
            .expect("signed in");
        conn.call(&ApiVersionsRequest::default(), 0, far())
            .await
            .expect("answer");
        drop(conn);
        let keys = task.await.expect("broker");
        assert_eq!(keys, [17, 36, 18]);
        // RFC 4616: authzid (none), NUL, authcid, NUL, password.
        assert_eq!(
            *seen.lock().expect("seen"),
            [b"\0recorder\0s3cret".to_vec()]
        );
    }

    #[tokio::test]
    async fn a_session_about_to_end_is_signed_in_again() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (client, task) = broker(plain_broker(200, seen.clone()));
        let mut conn = Conn::signed_in(client, "pkc:9092", login("PLAIN", "s3cret"), far())
            .await
            .expect("signed in");
        // Well within the session: no new sign-in.
        conn.call(&ApiVersionsRequest::default(), 0, far())
            .await
            .expect("answer");
        // Past 85% of it: signed in again before the request.
        tokio::time::sleep(Duration::from_millis(180)).await;
        conn.call(&ApiVersionsRequest::default(), 0, far())
            .await
            .expect("answer");
        drop(conn);
        let keys = task.await.expect("broker");
        assert_eq!(keys, [17, 36, 18, 17, 36, 18]);
        assert_eq!(seen.lock().expect("seen").len(), 2);
    }

    #[test]
    fn renewal_is_at_85_percent_of_the_lifetime() {
        let now = Instant::now();
        assert_eq!(
            renewal(now, Duration::from_secs(60)),
            now + Duration::from_secs(51)
        );
    }
}
