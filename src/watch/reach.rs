//! Why a cluster could not be reached, told apart from what librdkafka
//! reports while it tries: a name that does not resolve, a port nobody
//! listens on, TLS that does not agree, credentials refused, or silence.
//! librdkafka's own error for a failed metadata request says only
//! "transport failure" or "timed out"; the reasons it logs on the way say
//! which.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unreachable {
    /// The bootstrap host's name does not resolve.
    Dns,
    /// The host answers, but nothing listens on the port.
    Refused,
    /// The TLS handshake failed.
    Tls,
    /// The broker refused the credentials.
    Authentication,
    /// Nothing answered in time.
    Timeout,
    /// Something else; the reasons say what.
    Other,
}

impl Unreachable {
    /// From librdkafka's reasons during one attempt, in order (its error
    /// events, then the request's own error).
    pub fn of(reasons: &[String]) -> Self {
        // librdkafka names a broker `sasl_ssl://host:port/bootstrap` when
        // the protocol is not PLAINTEXT: the name says nothing of the cause.
        static BROKER: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"[a-z_]+://\S*").expect("a valid pattern"));
        let all = BROKER
            .replace_all(&reasons.join("\n").to_ascii_lowercase(), "")
            .into_owned();
        let any = |words: &[&str]| words.iter().any(|w| all.contains(w));
        // A refused connection never got as far as TLS or a sign-in.
        if any(&[
            "failed to resolve",
            "name or service not known",
            "nodename nor servname",
            "no address associated",
            "temporary failure in name resolution",
        ]) {
            Unreachable::Dns
        } else if any(&["connection refused"]) {
            Unreachable::Refused
        } else if any(&["sasl", "authentication"]) {
            Unreachable::Authentication
        } else if any(&["ssl", "tls", "certificate", "handshake"]) {
            Unreachable::Tls
        } else if any(&["timed out", "timeout"]) {
            Unreachable::Timeout
        } else {
            Unreachable::Other
        }
    }

    /// What it means and what to check, for the connection test.
    pub fn sentence(self) -> &'static str {
        match self {
            Unreachable::Dns => {
                "The bootstrap host name does not resolve (DNS): check the name, and that this server can resolve it."
            }
            Unreachable::Refused => {
                "The host answers but nothing listens on that port (connection refused): check the port, and that the broker runs."
            }
            Unreachable::Tls => {
                "The TLS handshake failed: the listener does not speak TLS (or speaks it where PLAINTEXT was chosen), or its certificate is not trusted."
            }
            Unreachable::Authentication => {
                "The broker refused the sign-in (SASL): check the security protocol, the mechanism and the credentials' references."
            }
            Unreachable::Timeout => {
                "Nothing answered in time (timeout): a firewall, an address this server cannot route to, or a broker that hangs."
            }
            Unreachable::Other => "The cluster could not be read; librdkafka said why below.",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(lines: &[&str]) -> Unreachable {
        Unreachable::of(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn librdkafkas_reasons_tell_the_causes_apart() {
        assert_eq!(
            of(&[
                "Local: Host resolution failure: nohost.invalid:9092/bootstrap: Failed to resolve 'nohost.invalid:9092': Name or service not known (after 2ms in state CONNECT)"
            ]),
            Unreachable::Dns
        );
        assert_eq!(
            of(&[
                "Local: Broker transport failure: 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)"
            ]),
            Unreachable::Refused
        );
        assert_eq!(
            of(&[
                "Local: SSL error: ssl://127.0.0.1:9092/bootstrap: SSL handshake failed: error:0A00010B:SSL routines::wrong version number"
            ]),
            Unreachable::Tls
        );
        assert_eq!(
            of(&[
                "Local: Authentication failure: 127.0.0.1:9092/bootstrap: SASL authentication error: Authentication failed"
            ]),
            Unreachable::Authentication
        );
        // Over SASL_SSL the broker's name holds both words; the cause is the port.
        assert_eq!(
            of(&[
                "sasl_ssl://127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)"
            ]),
            Unreachable::Refused
        );
        assert_eq!(
            of(&[
                "sasl_ssl://127.0.0.1:9092/bootstrap: Connection setup timed out in state CONNECT"
            ]),
            Unreachable::Timeout
        );
        assert_eq!(
            of(&["Meta data fetch error: OperationTimedOut (Local: Timed out)"]),
            Unreachable::Timeout
        );
        assert_eq!(
            of(&["Local: All broker connections are down"]),
            Unreachable::Other
        );
    }
}
