//! One connection of the protocol client: requests framed (a 4-byte size,
//! then the header and body), sent one at a time and matched to their
//! answers by correlation id, each bounded by the pass's deadline; signed
//! in first if the cluster asks for it, and again before the broker's
//! session ends (KIP-368).

use super::link::{self, Io, Login, Security};
use super::{WireError, sasl};
use kafka_protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kafka_protocol::messages::list_offsets_request::ListOffsetsRequest;
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequest;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorResponse, ListOffsetsResponse,
    OffsetFetchResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// The largest answer accepted. An OffsetFetch of `GROUPS_PER_REQUEST`
/// groups of a few thousand partitions each is a few MiB; a size beyond
/// this is a broken stream, not an answer.
const MAX_FRAME: usize = 256 << 20;

/// A request this client sends, with the answer it expects. (The crate's
/// own `Request` trait needs its broker side compiled in too.)
pub trait Call: Encodable + HeaderVersion {
    const KEY: ApiKey;
    type Answer: Decodable + HeaderVersion;
}

impl Call for ApiVersionsRequest {
    const KEY: ApiKey = ApiKey::ApiVersions;
    type Answer = ApiVersionsResponse;
}

impl Call for FindCoordinatorRequest {
    const KEY: ApiKey = ApiKey::FindCoordinator;
    type Answer = FindCoordinatorResponse;
}

impl Call for OffsetFetchRequest {
    const KEY: ApiKey = ApiKey::OffsetFetch;
    type Answer = OffsetFetchResponse;
}

impl Call for ListOffsetsRequest {
    const KEY: ApiKey = ApiKey::ListOffsets;
    type Answer = ListOffsetsResponse;
}

/// One connection: requests go one at a time, each answer checked against
/// its request's correlation id. Signed in, if the cluster asks for it,
/// and again before the session ends (KIP-368).
pub struct Conn<S> {
    stream: S,
    addr: String,
    next_id: i32,
    login: Option<Arc<Login>>,
    /// When to sign in again; `None`: the session does not end.
    renew_at: Option<Instant>,
}

impl Conn<Box<dyn Io>> {
    /// A connection to `addr`, over TLS and signed in as `security` says.
    pub async fn open(
        addr: &str,
        security: &Security,
        deadline: Instant,
    ) -> Result<Self, WireError> {
        let stream = link::connect(addr, security, deadline).await?;
        Conn::signed_in(stream, addr, security.login().cloned(), deadline).await
    }
}

impl<S: Io> Conn<S> {
    /// A connection on `stream`, signed in with `login` if there is one.
    pub async fn signed_in(
        stream: S,
        addr: &str,
        login: Option<Arc<Login>>,
        deadline: Instant,
    ) -> Result<Self, WireError> {
        let mut conn = Conn::new(stream, addr);
        conn.login = login;
        conn.sign_in(deadline).await?;
        Ok(conn)
    }

    pub fn new(stream: S, addr: &str) -> Self {
        Conn {
            stream,
            addr: addr.to_string(),
            next_id: 1,
            login: None,
            renew_at: None,
        }
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    async fn sign_in(&mut self, deadline: Instant) -> Result<(), WireError> {
        let Some(login) = self.login.clone() else {
            return Ok(());
        };
        let asked = Instant::now();
        let lifetime = sasl::sign_in(self, &login, deadline).await?;
        self.renew_at = lifetime.map(|l| sasl::renewal(asked, l));
        Ok(())
    }

    /// Sends `request` at `version` and waits, until `deadline`, for its
    /// answer; signs in again first if the session is about to end.
    pub async fn call<R: Call>(
        &mut self,
        request: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<R::Answer, WireError> {
        if self.renew_at.is_some_and(|at| Instant::now() >= at) {
            self.sign_in(deadline).await?;
        }
        self.send(request, version, deadline).await
    }

    /// One request and its answer, as they are (the sign-in's own
    /// exchanges too).
    pub(super) async fn send<R: Call>(
        &mut self,
        request: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<R::Answer, WireError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let frame = encode_frame(request, version, id).map_err(|message| WireError::Codec {
            addr: self.addr.clone(),
            what: "a request",
            message,
        })?;
        let exchange = async {
            self.stream.write_all(&frame).await?;
            read_frame(&mut self.stream).await
        };
        let body = tokio::time::timeout_at(deadline, exchange)
            .await
            .map_err(|_| WireError::Timeout(self.addr.clone()))?
            .map_err(|e| match e {
                FrameError::Io(source) => link::client_certificate_refused(&self.addr, &source)
                    .unwrap_or_else(|| WireError::Io {
                        addr: self.addr.clone(),
                        source,
                    }),
                FrameError::Size(size) => WireError::FrameSize {
                    addr: self.addr.clone(),
                    size,
                },
            })?;
        decode_answer::<R::Answer>(&body, version, id).map_err(|e| match e {
            AnswerError::Correlation(got) => WireError::Correlation {
                addr: self.addr.clone(),
                got,
                expected: id,
            },
            AnswerError::Codec(message) => WireError::Codec {
                addr: self.addr.clone(),
                what: "an answer",
                message,
            },
        })
    }
}

/// A request as it goes on the wire: its size, its header, its body.
pub(super) fn encode_frame<R: Call>(request: &R, version: i16, id: i32) -> Result<Vec<u8>, String> {
    let header = RequestHeader::default()
        .with_request_api_key(R::KEY as i16)
        .with_request_api_version(version)
        .with_correlation_id(id)
        .with_client_id(Some(StrBytes::from_static_str("streamkeeper")));
    let mut buf = vec![0_u8; 4];
    header
        .encode(&mut buf, R::header_version(version))
        .map_err(|e| e.to_string())?;
    request
        .encode(&mut buf, version)
        .map_err(|e| e.to_string())?;
    let size = i32::try_from(buf.len() - 4).map_err(|_| "request too large".to_string())?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf)
}

#[derive(Debug)]
pub(super) enum FrameError {
    Io(std::io::Error),
    Size(i64),
}

impl From<std::io::Error> for FrameError {
    fn from(e: std::io::Error) -> Self {
        FrameError::Io(e)
    }
}

/// One answer's bytes after its size; a size below a header's or above
/// [`MAX_FRAME`] is refused before anything is allocated.
pub(super) async fn read_frame<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<Vec<u8>, FrameError> {
    let mut size = [0_u8; 4];
    stream.read_exact(&mut size).await?;
    let size = i32::from_be_bytes(size);
    let len = usize::try_from(size)
        .ok()
        .filter(|n| (4..=MAX_FRAME).contains(n))
        .ok_or(FrameError::Size(i64::from(size)))?;
    let mut body = vec![0_u8; len];
    stream.read_exact(&mut body).await?;
    Ok(body)
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum AnswerError {
    Correlation(i32),
    Codec(String),
}

pub(super) fn decode_answer<T: Decodable + HeaderVersion>(
    body: &[u8],
    version: i16,
    id: i32,
) -> Result<T, AnswerError> {
    let mut buf = body;
    let header = ResponseHeader::decode(&mut buf, T::header_version(version))
        .map_err(|e| AnswerError::Codec(e.to_string()))?;
    if header.correlation_id != id {
        return Err(AnswerError::Correlation(header.correlation_id));
    }
    T::decode(&mut buf, version).map_err(|e| AnswerError::Codec(e.to_string()))
}
