//! How the wire client reaches a broker: TCP, then TLS when the cluster
//! speaks it, with the trust settings librdkafka is given (the cluster's
//! CA bundle, else the system's roots; the broker's name checked), then a
//! SASL sign-in when the cluster asks for one (sasl.rs). A certificate
//! refused here reads as the connection test says it (tls.rs, reach.rs).

use super::WireError;
use crate::clients::kafka::settings::{ClusterSettings, SettingsError};
use crate::clients::kafka::tls::{self, TlsSetupError};
use rustls::ClientConfig;
use std::sync::Arc;
use streamkeeper::watch::reach::{self, Unreachable};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A byte stream to a broker, plain or TLS.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A SASL login, resolved from its references when the pass starts (a
/// rotated password is used at the next pass). Its `Debug` names the
/// mechanism and the user only.
pub struct Login {
    pub(super) mechanism: &'static str,
    pub(super) username: String,
    pub(super) password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Login {
    pub fn new(mechanism: &'static str, username: &str, password: &str) -> Self {
        Login {
            mechanism,
            username: username.to_string(),
            password: password.to_string(),
        }
    }
}

/// A cluster's security for the wire client: TLS, a login, both or
/// neither. Cheap to clone: every connection of a pass shares it.
#[derive(Clone, Debug, Default)]
pub struct Security {
    tls: Option<Arc<ClientConfig>>,
    login: Option<Arc<Login>>,
}

impl Security {
    /// Plaintext, no login.
    pub fn plaintext() -> Self {
        Security::default()
    }

    /// As the cluster's settings say, its references resolved now. The
    /// settings already refused credentials without TLS unless the
    /// operator allowed it (`insecure_credentials`).
    pub fn of(settings: &ClusterSettings) -> Result<Self, TlsSetupError> {
        let tls = if settings.protocol.tls() {
            Some(tls::client_config(settings)?)
        } else {
            None
        };
        let login = if settings.protocol.sasl() {
            let (Some(user), Some(pass)) = (&settings.username, &settings.password) else {
                return Err(SettingsError::MissingCredentials.into());
            };
            Some(Arc::new(Login::new(
                settings.mechanism_name(),
                &user.resolve()?,
                &pass.resolve()?,
            )))
        } else {
            None
        };
        Ok(Security { tls, login })
    }

    pub(super) fn login(&self) -> Option<&Arc<Login>> {
        self.login.as_ref()
    }
}

/// A stream to `addr`, TLS set up if the cluster speaks it; no later than
/// `deadline`.
pub(super) async fn connect(
    addr: &str,
    security: &Security,
    deadline: Instant,
) -> Result<Box<dyn Io>, WireError> {
    let timeout = || WireError::Timeout(addr.to_string());
    let io = |source| WireError::Io {
        addr: addr.to_string(),
        source,
    };
    let tcp = tokio::time::timeout_at(deadline, TcpStream::connect(addr))
        .await
        .map_err(|_| timeout())?
        .map_err(io)?;
    // Small requests, one at a time: waiting to fill a segment only adds latency.
    tcp.set_nodelay(true).map_err(io)?;
    let Some(config) = &security.tls else {
        return Ok(Box::new(tcp));
    };
    match tokio::time::timeout_at(deadline, tls::connect(config.clone(), addr, tcp)).await {
        Err(_) => Err(timeout()),
        Ok(Ok(stream)) => Ok(Box::new(stream)),
        Ok(Err(e)) => Err(refused(addr, &e)),
    }
}

/// A read or write that failed because the broker refused this console's
/// client certificate (mutual TLS): said as the connection test says it.
/// Over TLS 1.3 the broker's alert comes on the first read after the
/// handshake, so any exchange may meet it.
pub(super) fn client_certificate_refused(addr: &str, e: &std::io::Error) -> Option<WireError> {
    tls::client_certificate_refused(e).then(|| WireError::Tls {
        addr: addr.to_string(),
        why: Unreachable::ClientCertificate,
        sentence: Unreachable::ClientCertificate.sentence().to_string(),
        detail: e.to_string(),
    })
}

/// A failed handshake, said as the connection test says it: a wrong name,
/// an unknown authority, an expired certificate, a client certificate
/// refused, or a listener that does not speak TLS; the handshake's own
/// error kept after it.
fn refused(addr: &str, e: &std::io::Error) -> WireError {
    if let Some(refused) = client_certificate_refused(addr, e) {
        return refused;
    }
    let rustls_error = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    let (why, sentence) = match rustls_error {
        // A plain listener answers a ClientHello with something that is
        // not TLS, or closes (nisshi resets) the connection.
        Some(rustls::Error::InvalidMessage(_)) => (
            Unreachable::TlsToPlaintext,
            Unreachable::TlsToPlaintext.sentence().to_string(),
        ),
        _ if matches!(
            e.kind(),
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
        ) =>
        {
            (
                Unreachable::TlsToPlaintext,
                Unreachable::TlsToPlaintext.sentence().to_string(),
            )
        }
        _ => reach::refine(Unreachable::Tls, true, tls::finding_of(e, addr).as_ref()),
    };
    WireError::Tls {
        addr: addr.to_string(),
        why,
        sentence,
        detail: e.to_string(),
    }
}
