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
    /// The broker's certificate does not name the host connected to.
    TlsName,
    /// The broker's certificate is signed by an authority not trusted here.
    TlsUntrusted,
    /// The broker's certificate has expired or is not valid yet.
    TlsExpired,
    /// TLS was spoken to a listener that does not speak it.
    TlsToPlaintext,
    /// The listener speaks TLS but PLAINTEXT (or SASL_PLAINTEXT) was chosen.
    PlaintextToTls,
    /// The broker refused this console's client certificate, or wanted
    /// one and got none (mutual TLS).
    ClientCertificate,
    /// The broker does not offer the SASL mechanism chosen.
    Mechanism,
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
        } else if any(&["connecting to a plaintext broker listener"]) {
            Unreachable::TlsToPlaintext
        } else if any(CLIENT_CERTIFICATE_ALERTS) {
            Unreachable::ClientCertificate
        } else if any(&["mechanism handshake failed", "unsupported sasl mechanism"]) {
            Unreachable::Mechanism
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

    /// Whether the cause is the cluster refusing who this console says it
    /// is (a login, or a client certificate), not an outage: flagged as a
    /// refused sign-in, to fix in the cluster's settings.
    pub fn is_refused_identity(self) -> bool {
        matches!(
            self,
            Unreachable::Authentication | Unreachable::Mechanism | Unreachable::ClientCertificate
        )
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
            Unreachable::TlsName => {
                "The broker's certificate is for another name than the one connected to: connect by a name it holds, or give the broker a certificate for this one."
            }
            Unreachable::TlsUntrusted => {
                "The broker's certificate is signed by an authority this console does not trust; give the cluster's CA (its CA bundle reference)."
            }
            Unreachable::TlsExpired => {
                "The broker's certificate has expired or is not valid yet: renew it, or check this server's clock."
            }
            Unreachable::TlsToPlaintext => {
                "TLS was spoken to a listener without TLS: choose PLAINTEXT (or SASL_PLAINTEXT), or give the cluster's TLS port."
            }
            Unreachable::PlaintextToTls => {
                "The listener speaks TLS, but the security protocol chosen does not: choose SSL (or SASL_SSL)."
            }
            Unreachable::ClientCertificate => {
                "The broker refused this console's client certificate (mutual TLS): give a certificate and key signed by an authority the broker trusts (the client certificate and key references), and check that it has not expired."
            }
            Unreachable::Mechanism => {
                "The broker does not offer the SASL mechanism chosen: choose one it offers (its reasons below list them)."
            }
            Unreachable::Authentication => {
                "The broker refused the sign-in (SASL): check the username and password references, and the mechanism."
            }
            Unreachable::Timeout => {
                "Nothing answered in time (timeout): a firewall, an address this server cannot route to, or a broker that hangs."
            }
            Unreachable::Other => "The cluster could not be read; librdkafka said why below.",
        }
    }
}

/// The TLS alerts a broker sends when it refuses a client's certificate,
/// or gets none where it requires one, as OpenSSL (librdkafka's) logs
/// them received: "tlsv13 alert certificate required", "tlsv1 alert
/// unknown ca", "sslv3 alert bad certificate"… A client that refuses the
/// broker's certificate logs "certificate verify failed" instead.
const CLIENT_CERTIFICATE_ALERTS: &[&str] = &[
    "alert certificate required",
    "alert unknown ca",
    "alert bad certificate",
    "alert certificate unknown",
    "alert certificate expired",
    "alert certificate revoked",
    "alert unsupported certificate",
];

/// What a TLS handshake of the console's own found at the first
/// bootstrap server, where librdkafka says only "certificate verify
/// failed" (for an unknown authority and a wrong name alike) or that the
/// connection closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsFinding {
    /// The certificate names `presented`, not `expected`.
    Name {
        expected: String,
        presented: Vec<String>,
    },
    Untrusted,
    Expired,
    /// The listener answered in TLS (with a certificate).
    SpeaksTls,
}

/// Why a test failed and the sentence that says so: the TLS finding, when
/// it says more than librdkafka's reasons (`why`) did.
pub fn refine(
    why: Unreachable,
    tls_chosen: bool,
    finding: Option<&TlsFinding>,
) -> (Unreachable, String) {
    let named = |expected: &str, presented: &[String]| {
        let names = if presented.is_empty() {
            "no name".to_string()
        } else {
            presented.join(", ")
        };
        format!(
            "The broker's certificate is for {names}, not {expected}: connect by a name it holds, or give the broker a certificate for this one."
        )
    };
    match (why, finding) {
        (
            Unreachable::Tls | Unreachable::Other,
            Some(TlsFinding::Name {
                expected,
                presented,
            }),
        ) if tls_chosen => (Unreachable::TlsName, named(expected, presented)),
        (Unreachable::Tls | Unreachable::Other, Some(TlsFinding::Untrusted)) if tls_chosen => (
            Unreachable::TlsUntrusted,
            Unreachable::TlsUntrusted.sentence().into(),
        ),
        (Unreachable::Tls | Unreachable::Other, Some(TlsFinding::Expired)) if tls_chosen => (
            Unreachable::TlsExpired,
            Unreachable::TlsExpired.sentence().into(),
        ),
        // Without TLS, a listener that answers a TLS hello with its
        // certificate is why the plain requests went unanswered.
        (Unreachable::Other | Unreachable::Timeout | Unreachable::Tls, Some(_)) if !tls_chosen => (
            Unreachable::PlaintextToTls,
            Unreachable::PlaintextToTls.sentence().into(),
        ),
        _ => (why, why.sentence().into()),
    }
}

/// How long the connection test waits for an answer, in seconds.
pub const TEST_TIMEOUT_S: u64 = 5;

/// A step of connecting, in the order librdkafka takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Resolve,
    Connect,
    Tls,
    Authenticate,
    Metadata,
}

impl Step {
    pub fn label(self) -> &'static str {
        match self {
            Step::Resolve => "Resolving the bootstrap host",
            Step::Connect => "Connecting to its port",
            Step::Tls => "The TLS handshake",
            Step::Authenticate => "Signing in (SASL)",
            Step::Metadata => "Reading metadata",
        }
    }

    /// The steps a connection with `protocol` takes: TLS only for the SSL
    /// protocols, a sign-in only for the SASL ones.
    pub fn for_protocol(protocol: &str) -> Vec<Step> {
        let p = protocol.to_ascii_uppercase();
        let mut steps = vec![Step::Resolve, Step::Connect];
        if p.contains("SSL") {
            steps.push(Step::Tls);
        }
        if p.starts_with("SASL") {
            steps.push(Step::Authenticate);
        }
        steps.push(Step::Metadata);
        steps
    }
}

/// How a step of the test went, as far as the outcome tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    Passed,
    Failed,
    /// Nothing answered in time: this step or a later one hung.
    NoAnswer,
    /// The reasons do not say whether it got this far.
    Unknown,
    NotTried,
}

impl StepOutcome {
    pub fn word(self) -> &'static str {
        match self {
            StepOutcome::Passed => "passed",
            StepOutcome::Failed => "failed",
            StepOutcome::NoAnswer => "no answer in time",
            StepOutcome::Unknown => "not known",
            StepOutcome::NotTried => "not tried",
        }
    }
}

/// Each step of a test with `protocol` and how it went: all passed when
/// the cluster was `reached`, else the cause (`failed`) decides which step
/// failed; with no cause the first metadata request answered and reading
/// the rest failed. A name that did not resolve would
/// have said so, so a timeout got past resolving, but not necessarily
/// further: the next step is the one that did not answer.
pub fn trace(
    protocol: &str,
    reached: bool,
    failed: Option<Unreachable>,
) -> Vec<(Step, StepOutcome)> {
    let steps = Step::for_protocol(protocol);
    let failing = match failed.filter(|_| !reached) {
        None if reached => None,
        None => Some((Step::Metadata, StepOutcome::Failed)),
        Some(Unreachable::Dns) => Some((Step::Resolve, StepOutcome::Failed)),
        Some(Unreachable::Refused) => Some((Step::Connect, StepOutcome::Failed)),
        Some(
            Unreachable::Tls
            | Unreachable::TlsName
            | Unreachable::TlsUntrusted
            | Unreachable::TlsExpired
            | Unreachable::TlsToPlaintext
            | Unreachable::PlaintextToTls
            | Unreachable::ClientCertificate,
        ) => Some((Step::Tls, StepOutcome::Failed)),
        Some(Unreachable::Authentication | Unreachable::Mechanism) => {
            Some((Step::Authenticate, StepOutcome::Failed))
        }
        Some(Unreachable::Timeout) => Some((Step::Connect, StepOutcome::NoAnswer)),
        Some(Unreachable::Other) => {
            return steps
                .into_iter()
                .map(|s| (s, StepOutcome::Unknown))
                .collect();
        }
    };
    let Some((at, how)) = failing else {
        return steps
            .into_iter()
            .map(|s| (s, StepOutcome::Passed))
            .collect();
    };
    // A cause whose step this protocol does not take (TLS refused on a
    // PLAINTEXT listener) fails at the step that met it: the first after
    // connecting.
    let at = if steps.contains(&at) {
        at
    } else {
        steps
            .iter()
            .copied()
            .find(|s| !matches!(s, Step::Resolve | Step::Connect))
            .unwrap_or(Step::Metadata)
    };
    let mut seen = false;
    steps
        .into_iter()
        .map(|s| {
            let outcome = if s == at {
                seen = true;
                how
            } else if seen && how == StepOutcome::NoAnswer {
                // The silence may have been at any step from there on.
                StepOutcome::Unknown
            } else if seen {
                StepOutcome::NotTried
            } else {
                StepOutcome::Passed
            };
            (s, outcome)
        })
        .collect()
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
        assert_eq!(
            of(&[
                "ssl://127.0.0.1:58983/bootstrap: SSL handshake failed: Disconnected: connection reset by peer: connecting to a PLAINTEXT broker listener? (after 0ms in state SSL_HANDSHAKE)"
            ]),
            Unreachable::TlsToPlaintext
        );
        assert_eq!(
            of(&[
                "sasl_ssl://127.0.0.1:9092/bootstrap: SASL PLAIN mechanism handshake failed: Broker: Unsupported SASL mechanism: broker's supported mechanisms: SCRAM-SHA-256,SCRAM-SHA-512"
            ]),
            Unreachable::Mechanism
        );
        // A broker that got a client certificate it does not trust (alert
        // 48, OpenSSL's words), and, recorded from stunnel requiring one
        // (broker_mtls.rs), none: librdkafka sends none when the broker
        // asks for another CA's.
        assert_eq!(
            of(&[
                "ssl://127.0.0.1:46763/bootstrap: Receive failed: ssl/record/rec_layer_s3.c:918:ssl3_read_bytes error:0A000418:SSL routines::tlsv1 alert unknown ca: SSL alert number 48 (after 0ms in state APIVERSION_QUERY)"
            ]),
            Unreachable::ClientCertificate
        );
        assert_eq!(
            of(&[
                "ssl://127.0.0.1:46763/bootstrap: Receive failed: ssl/record/rec_layer_s3.c:918:ssl3_read_bytes error:0A00045C:SSL routines::tlsv13 alert certificate required: SSL alert number 116 (after 0ms in state APIVERSION_QUERY)"
            ]),
            Unreachable::ClientCertificate
        );
        // Refusing the broker's certificate is not the broker refusing ours.
        assert_eq!(
            of(&[
                "ssl://127.0.0.1:9093/bootstrap: SSL handshake failed: error:0A000086:SSL routines::tls_post_process_server_certificate:certificate verify failed: broker certificate could not be verified"
            ]),
            Unreachable::Tls
        );
        assert!(Unreachable::ClientCertificate.is_refused_identity());
        assert!(!Unreachable::TlsUntrusted.is_refused_identity());
    }

    #[test]
    fn a_tls_finding_says_what_librdkafka_could_not() {
        let name = TlsFinding::Name {
            expected: "10.0.0.5".into(),
            presented: vec!["broker-1.example".into()],
        };
        assert_eq!(
            refine(Unreachable::Tls, true, Some(&name)),
            (
                Unreachable::TlsName,
                "The broker's certificate is for broker-1.example, not 10.0.0.5: connect by a name it holds, or give the broker a certificate for this one.".into()
            )
        );
        assert_eq!(
            refine(Unreachable::Tls, true, Some(&TlsFinding::Untrusted)).1,
            "The broker's certificate is signed by an authority this console does not trust; give the cluster's CA (its CA bundle reference)."
        );
        assert_eq!(
            refine(Unreachable::Other, false, Some(&TlsFinding::SpeaksTls)).0,
            Unreachable::PlaintextToTls
        );
        // A refused sign-in stays one, whatever TLS found; nothing found
        // keeps librdkafka's cause.
        assert_eq!(
            refine(
                Unreachable::Authentication,
                true,
                Some(&TlsFinding::Untrusted)
            )
            .0,
            Unreachable::Authentication
        );
        assert_eq!(refine(Unreachable::Tls, true, None).0, Unreachable::Tls);
        assert_eq!(
            trace("SSL", false, Some(Unreachable::TlsName))[2],
            (Step::Tls, StepOutcome::Failed)
        );
        assert_eq!(
            trace("SASL_SSL", false, Some(Unreachable::Mechanism))[3],
            (Step::Authenticate, StepOutcome::Failed)
        );
    }

    #[test]
    fn each_cause_fails_its_own_step_and_the_steps_before_passed() {
        use Step::*;
        use StepOutcome::*;
        assert_eq!(
            trace("SASL_SSL", true, None),
            vec![
                (Resolve, Passed),
                (Connect, Passed),
                (Tls, Passed),
                (Authenticate, Passed),
                (Metadata, Passed)
            ]
        );
        assert_eq!(
            trace("PLAINTEXT", false, Some(Unreachable::Dns)),
            vec![(Resolve, Failed), (Connect, NotTried), (Metadata, NotTried)]
        );
        assert_eq!(
            trace("SASL_SSL", false, Some(Unreachable::Authentication)),
            vec![
                (Resolve, Passed),
                (Connect, Passed),
                (Tls, Passed),
                (Authenticate, Failed),
                (Metadata, NotTried)
            ]
        );
        assert_eq!(
            trace("SSL", false, Some(Unreachable::Timeout)),
            vec![
                (Resolve, Passed),
                (Connect, NoAnswer),
                (Tls, Unknown),
                (Metadata, Unknown)
            ]
        );
        // TLS spoken at a PLAINTEXT listener fails past connecting.
        assert_eq!(
            trace("PLAINTEXT", false, Some(Unreachable::Tls)),
            vec![(Resolve, Passed), (Connect, Passed), (Metadata, Failed)]
        );
        assert!(
            trace("SSL", false, Some(Unreachable::Other))
                .iter()
                .all(|(_, o)| *o == Unknown)
        );
        assert_eq!(
            trace("PLAINTEXT", false, None),
            vec![(Resolve, Passed), (Connect, Passed), (Metadata, Failed)]
        );
        assert_eq!(
            Step::for_protocol("sasl_plaintext"),
            vec![Resolve, Connect, Authenticate, Metadata]
        );
    }
}
