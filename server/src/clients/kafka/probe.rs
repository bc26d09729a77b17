//! One metadata request that keeps what librdkafka reports on the way:
//! its error logs and events say why a cluster cannot be reached, where
//! the request's own error says only that it could not.

use super::settings::ClusterSettings;
use rdkafka::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use std::sync::Mutex;
use std::time::Duration;
use streamkeeper::watch::reach::{self, Unreachable};

/// What one client reported, in order: its failures, warnings and errors
/// as logged, and its error events.
#[derive(Default)]
struct Recording(Mutex<Vec<String>>);

impl Recording {
    /// Keeps a line once: a broker tried again fails the same way.
    fn keep(&self, line: String) {
        if let Ok(mut seen) = self.0.lock()
            && !seen.contains(&line)
        {
            seen.push(line);
        }
    }
}

impl ClientContext for Recording {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        // librdkafka says why a connection failed only in its debug log
        // (facility FAIL); warnings and errors come as they are.
        if (level as i32) <= (RDKafkaLogLevel::Warning as i32) || fac == "FAIL" {
            self.keep(log_message.to_string());
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.keep(format!("{error}: {reason}"));
    }
}

impl ConsumerContext for Recording {}

/// Asks for the cluster's metadata once: `Ok` when it answered, else every
/// reason librdkafka gave, the request's own error last.
pub fn attempt(settings: &ClusterSettings) -> Result<(), Vec<String>> {
    let mut config = settings.client_config().map_err(|e| vec![e.to_string()])?;
    // The broker debug log holds the reasons; the crate takes its log
    // level from the `log` crate's, which may be off, so it is set here.
    config
        .set("log_level", "7")
        .set("debug", "broker")
        .set_log_level(RDKafkaLogLevel::Debug);
    let client: BaseConsumer<Recording> = config
        .create_with_context(Recording::default())
        .map_err(|e| vec![e.to_string()])?;
    // A second past the socket timeout, so a request that timed out is
    // logged (as FAIL) before the wait ends.
    match client.fetch_metadata(None, settings.timeout + Duration::from_secs(1)) {
        Ok(_) => Ok(()),
        Err(e) => {
            // Logs and error events wait on the client's queue until it is
            // served, one per poll (a poll that served a log answers None).
            for _ in 0..200 {
                let _ = client.poll(Duration::ZERO);
            }
            let mut reasons = client
                .context()
                .0
                .lock()
                .map(|r| r.clone())
                .unwrap_or_default();
            reasons.push(e.to_string());
            Err(reasons)
        }
    }
}

/// Why an attempt failed, and the sentence that says it: librdkafka's
/// `reasons`, and for a TLS failure (or a listener that closed on a plain
/// request) the console's own handshake, which tells a wrong name from an
/// unknown authority and a TLS listener from a plain one.
pub async fn explain(settings: &ClusterSettings, reasons: &[String]) -> (Unreachable, String) {
    let why = Unreachable::of(reasons);
    let finding = match why {
        Unreachable::Tls | Unreachable::Other | Unreachable::Timeout => {
            super::tls::diagnose(settings, settings.timeout).await
        }
        _ => None,
    };
    reach::refine(why, settings.protocol.tls(), finding.as_ref())
}
