//! TLS checked the way librdkafka is told to check it: the cluster's CA
//! bundle (else the system's trust store) and the broker's name against its
//! certificate. The connection test makes a handshake of its own with it,
//! because librdkafka says only "certificate verify failed" for an unknown
//! authority and a wrong name alike, where rustls's error says which.

use super::settings::{ClusterSettings, SettingsError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use std::sync::Arc;
use std::time::Duration;
use streamkeeper::watch::reach::TlsFinding;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("the CA bundle holds no PEM certificate")]
    NoCertificates,
    #[error("the client certificate reference holds no PEM certificate")]
    NoClientCertificate,
    #[error("the client key reference holds no PEM private key")]
    NoClientKey,
    #[error("TLS cannot be set up: {0}")]
    Config(#[from] rustls::Error),
    #[error("'{0}' is not a host name or address TLS can check")]
    BadName(String),
}

/// The client configuration for a cluster: its CA bundle resolved now (a
/// rotated bundle is read at the next pass), else the system's roots; its
/// client certificate and key too, when it has them (mutual TLS).
pub fn client_config(settings: &ClusterSettings) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    match &settings.ca {
        Some(ca) => {
            let pem = ca.resolve()?;
            let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| TlsSetupError::NoCertificates)?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(TlsSetupError::NoCertificates);
            }
        }
        // The system's store, as OpenSSL (librdkafka's) reads it; a
        // certificate it cannot parse is skipped, as OpenSSL would.
        None => {
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    // ring: the provider the rest of the build already links (sqlx, reqwest).
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let config = match &settings.client_cert {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let pem = client.cert.resolve()?;
            let chain = CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| TlsSetupError::NoClientCertificate)?;
            if chain.is_empty() {
                return Err(TlsSetupError::NoClientCertificate);
            }
            let key = PrivateKeyDer::from_pem_slice(client.key.resolve()?.as_bytes())
                .map_err(|_| TlsSetupError::NoClientKey)?;
            builder.with_client_auth_cert(chain, key)?
        }
    };
    Ok(Arc::new(config))
}

/// The host part of `host:port` (an IPv6 address without its brackets).
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// A TLS session over `tcp` to the broker at `addr`, its name checked.
pub async fn connect(
    config: Arc<ClientConfig>,
    addr: &str,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, std::io::Error> {
    let host = host_of(addr);
    let name = ServerName::try_from(host.to_string()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            TlsSetupError::BadName(host.to_string()),
        )
    })?;
    TlsConnector::from(config).connect(name, tcp).await
}

/// What a handshake with the first bootstrap server finds: with TLS
/// chosen, why its certificate was refused; without, whether the listener
/// answers in TLS all the same. `None`: nothing to add (no connection, or
/// a handshake that says nothing more).
pub async fn diagnose(settings: &ClusterSettings, timeout: Duration) -> Option<TlsFinding> {
    let addr = settings.bootstrap.split(',').next()?.trim();
    let config = client_config(settings).ok()?;
    let tcp = tokio::time::timeout(timeout, TcpStream::connect(addr))
        .await
        .ok()?
        .ok()?;
    let shook = tokio::time::timeout(timeout, connect(config, addr, tcp))
        .await
        .ok()?;
    let refused = match shook {
        Ok(_) => None,
        Err(e) => Some(refused_certificate(&e)?),
    };
    if !settings.protocol.tls() {
        // It sent a certificate, trusted or not: it speaks TLS.
        return Some(TlsFinding::SpeaksTls);
    }
    refused.and_then(|c| finding(&c, host_of(addr)))
}

/// Why a handshake's certificate was refused, if that is why it failed.
fn refused_certificate(e: &std::io::Error) -> Option<CertificateError> {
    match e.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(c) => Some(c.clone()),
        _ => None,
    }
}

/// Whether the broker refused this console's client certificate, or
/// wanted one and got none: the alert it sent. Over TLS 1.3 it comes after
/// the client's side of the handshake is done, so on the first read.
pub fn client_certificate_refused(e: &std::io::Error) -> bool {
    use rustls::AlertDescription as A;
    matches!(
        e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()),
        Some(rustls::Error::AlertReceived(
            A::CertificateRequired
                | A::UnknownCA
                | A::BadCertificate
                | A::CertificateUnknown
                | A::CertificateExpired
                | A::CertificateRevoked
                | A::UnsupportedCertificate
        ))
    )
}

/// What a failed handshake with the broker at `addr` found (the wire
/// client's, said as the connection test's own handshake says it).
pub fn finding_of(e: &std::io::Error, addr: &str) -> Option<TlsFinding> {
    finding(&refused_certificate(e)?, host_of(addr))
}

/// A name as webpki presents it, `DnsName("broker-1.example")` or
/// `IpAddress(10.0.0.5)`, without its kind.
fn bare(presented: &str) -> String {
    presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .map_or(presented, |inner| inner.trim_matches('"'))
        .to_string()
}

fn finding(e: &CertificateError, host: &str) -> Option<TlsFinding> {
    Some(match e {
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => TlsFinding::Name {
            expected: expected.to_str().into_owned(),
            presented: presented.iter().map(|n| bare(n)).collect(),
        },
        CertificateError::NotValidForName => TlsFinding::Name {
            expected: host.to_string(),
            presented: Vec::new(),
        },
        CertificateError::UnknownIssuer | CertificateError::BadSignature => TlsFinding::Untrusted,
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => TlsFinding::Expired,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustls_refusals_become_findings() {
        let name = CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("10.0.0.5").expect("an address"),
            presented: vec!["DnsName(\"broker-1.example\")".into()],
        };
        assert_eq!(
            finding(&name, "10.0.0.5"),
            Some(TlsFinding::Name {
                expected: "10.0.0.5".into(),
                presented: vec!["broker-1.example".into()]
            })
        );
        assert_eq!(
            finding(&CertificateError::UnknownIssuer, "h"),
            Some(TlsFinding::Untrusted)
        );
        assert_eq!(
            finding(&CertificateError::Expired, "h"),
            Some(TlsFinding::Expired)
        );
        assert_eq!(finding(&CertificateError::Revoked, "h"), None);
        let alert = |a| std::io::Error::other(rustls::Error::AlertReceived(a));
        assert!(client_certificate_refused(&alert(
            rustls::AlertDescription::CertificateRequired
        )));
        assert!(client_certificate_refused(&alert(
            rustls::AlertDescription::UnknownCA
        )));
        assert!(!client_certificate_refused(&alert(
            rustls::AlertDescription::HandshakeFailure
        )));
        assert_eq!(bare("IpAddress(10.0.0.6)"), "10.0.0.6");
        assert_eq!(bare("plain.example"), "plain.example");
        assert_eq!(host_of("[::1]:9093"), "::1");
        assert_eq!(host_of("broker-1.example:9093"), "broker-1.example");
    }
}
