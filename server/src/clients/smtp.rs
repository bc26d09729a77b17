//! The mail sender (lettre, over rustls): one message per call, a plain
//! text and an HTML part, threaded by `Message-ID`, `In-Reply-To` and
//! `References`. STARTTLS, when asked for, is required: a server that does
//! not offer it is an error and nothing goes in clear. The server's name
//! is resolved under the egress rule and the connection made to an
//! address it allows, with TLS still checking the certificate against the
//! name. Errors carry the server's answer and never a credential.

pub mod settings;

use crate::clients::egress::{ResolveError, Resolver};
use lettre::message::{Mailbox, Mailboxes, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
pub use settings::{Security, SmtpSettings};

/// One message to one person (queued as JSON until it is sent).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Email {
    /// One address, or several separated by commas (a team's channel).
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
    /// `<unique@host>`, as RFC 5322 writes a message id.
    pub message_id: String,
    /// The thread's first message, which this one answers.
    pub in_reply_to: Option<String>,
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SmtpError {
    #[error("the recipient '{0}' is not an email address")]
    BadRecipient(String),
    #[error("the message cannot be built: {0}")]
    Message(String),
    #[error("the mail server may not be reached: {0}")]
    Egress(#[from] ResolveError),
    #[error("the mail server's name resolves to no address")]
    NoAddress,
    #[error("a credential cannot be read: {0}")]
    Credential(#[from] crate::clients::kafka::settings::SettingsError),
    #[error(
        "the mail server does not offer STARTTLS, which is required: nothing was sent in clear"
    )]
    NoStartTls,
    #[error("TLS with the mail server failed: {0}")]
    Tls(String),
    #[error("the mail server did not answer in time")]
    Timeout,
    #[error("the mail server answered {code} (temporary): {text}")]
    Transient { code: String, text: String },
    #[error("the mail server answered {code}: {text}")]
    Permanent { code: String, text: String },
    #[error("the mail server could not be reached: {0}")]
    Unreachable(String),
}

impl SmtpError {
    /// Whether trying again later cannot help: a refusal of this message
    /// or of its recipient will be the same next time. A refused sign-in
    /// (530–539: a rotated or wrong password, auth required) is the
    /// server's settings, not the message's: the message waits for the
    /// operator's fix and is retried.
    pub fn is_permanent(&self) -> bool {
        match self {
            SmtpError::BadRecipient(_) | SmtpError::Message(_) => true,
            SmtpError::Permanent { code, .. } => !code.starts_with("53"),
            _ => false,
        }
    }
}

/// The sender of one server's settings.
#[derive(Clone, Debug)]
pub struct Smtp {
    settings: SmtpSettings,
}

impl Smtp {
    pub fn new(settings: SmtpSettings) -> Self {
        Smtp { settings }
    }

    pub fn from(&self) -> &Mailbox {
        &self.settings.from
    }

    /// Sends one message, on a connection of its own; what the server
    /// answered to it (`250 2.0.0 Ok: queued as …`).
    pub async fn send(&self, email: &Email) -> Result<String, SmtpError> {
        let message = self.message(email)?;
        let transport = self.transport().await?;
        let answer = transport.send(message).await.map_err(of_lettre)?;
        Ok(format!(
            "{} {}",
            answer.code(),
            answer.message().collect::<Vec<_>>().join(" ")
        ))
    }

    fn message(&self, email: &Email) -> Result<Message, SmtpError> {
        let bad = || SmtpError::BadRecipient(email.to.clone());
        let to: Mailboxes = email.to.parse().map_err(|_| bad())?;
        if to.iter().next().is_none() {
            return Err(bad());
        }
        let mut builder = Message::builder().from(self.settings.from.clone());
        for mailbox in to {
            builder = builder.to(mailbox);
        }
        let mut builder = builder
            .subject(email.subject.clone())
            .message_id(Some(email.message_id.clone()));
        if let Some(first) = &email.in_reply_to {
            builder = builder.in_reply_to(first.clone()).references(first.clone());
        }
        builder
            .multipart(MultiPart::alternative_plain_html(
                email.text.clone(),
                email.html.clone(),
            ))
            .map_err(|e| SmtpError::Message(e.to_string()))
    }

    /// A transport to an address the egress rule allows, TLS checked
    /// against the configured name.
    async fn transport(&self) -> Result<AsyncSmtpTransport<Tokio1Executor>, SmtpError> {
        let s = &self.settings;
        let address = Resolver::new(s.egress)
            .lookup(&s.host)
            .await?
            .into_iter()
            .next()
            .ok_or(SmtpError::NoAddress)?;
        let tls = || {
            let mut params = TlsParameters::builder(s.host.clone());
            if let Some(pem) = &s.ca_pem {
                let ca = Certificate::from_pem(pem).map_err(|e| SmtpError::Tls(e.to_string()))?;
                params = params.add_root_certificate(ca);
            }
            params.build().map_err(|e| SmtpError::Tls(e.to_string()))
        };
        let mode = match s.security {
            Security::StartTls => Tls::Required(tls()?),
            Security::Tls => Tls::Wrapper(tls()?),
            Security::None => Tls::None,
        };
        // builder_dangerous only means "no TLS preset": TLS is set here.
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(address.ip().to_string())
                .port(s.port)
                .tls(mode)
                .timeout(Some(s.timeout));
        if let Some((user, password)) = &s.credentials {
            builder = builder.credentials(Credentials::new(user.resolve()?, password.resolve()?));
        }
        Ok(builder.build())
    }
}

/// lettre's error as ours. Its client error for a missing STARTTLS, and
/// a certificate rustls refused during the handshake (a connection error
/// to lettre), have no kind of their own, so they are told by their text.
fn of_lettre(e: lettre::transport::smtp::Error) -> SmtpError {
    let whole = e.to_string();
    let text = || {
        std::error::Error::source(&e)
            .map(ToString::to_string)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let code = || e.status().map(|c| c.to_string()).unwrap_or_default();
    if e.is_client() && whole.contains("STARTTLS") {
        SmtpError::NoStartTls
    } else if e.is_timeout() {
        SmtpError::Timeout
    } else if e.is_tls() {
        SmtpError::Tls(text())
    } else if whole.contains("certificate") || whole.contains("handshake") {
        SmtpError::Tls(whole.trim_start_matches("Connection error: ").to_string())
    } else if e.is_transient() {
        SmtpError::Transient {
            code: code(),
            text: text(),
        }
    } else if e.is_permanent() {
        SmtpError::Permanent {
            code: code(),
            text: text(),
        }
    } else {
        SmtpError::Unreachable(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::SmtpError;

    #[test]
    fn a_refused_sign_in_is_retried_and_a_refused_recipient_is_not() {
        let refused = |code: &str| SmtpError::Permanent {
            code: code.into(),
            text: "no".into(),
        };
        assert!(!refused("535").is_permanent(), "bad credentials: retried");
        assert!(!refused("530").is_permanent(), "auth required: retried");
        assert!(refused("550").is_permanent(), "no such mailbox");
        assert!(refused("554").is_permanent());
        assert!(SmtpError::BadRecipient("x".into()).is_permanent());
        assert!(!SmtpError::Timeout.is_permanent());
    }
}
