//! The mail sender against a real SMTP server (aiosmtpd, PyPI) with
//! STARTTLS and TLS under a certificate openssl made for the test: the
//! message's parts and threading headers as the server received them,
//! credentials by reference sent only under TLS, and STARTTLS asked of a
//! server that does not offer it refused, with nothing sent.

mod support;

use lettre::message::Mailbox;
use std::time::Duration;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::kafka::settings::SecretRef;
use streamkeeper_server::clients::smtp::{Email, Security, Smtp, SmtpError, SmtpSettings};
use support::smtp::{Certs, Mode, Sink, header};

fn settings(sink: &Sink, security: Security, certs: Option<&Certs>) -> SmtpSettings {
    SmtpSettings {
        host: "127.0.0.1".into(),
        port: sink.port,
        security,
        credentials: None,
        from: "Streamkeeper <streamkeeper@example.com>"
            .parse::<Mailbox>()
            .expect("from"),
        ca_pem: certs.map(|c| std::fs::read(c.ca()).expect("ca")),
        egress: EgressPolicy::LOOPBACK,
        timeout: Duration::from_secs(5),
    }
}

fn email(n: u32, in_reply_to: Option<&str>) -> Email {
    Email {
        to: "Ada <ada@example.com>".into(),
        subject: format!("orders-value v{n} waits for your approval"),
        text: format!("Open it: http://127.0.0.1:3000/review/{n}\n"),
        html: format!("<p><a href=\"http://127.0.0.1:3000/review/{n}\">Open it</a></p>"),
        message_id: format!("<review-{n}.t{n}@streamkeeper.example.com>"),
        in_reply_to: in_reply_to.map(str::to_string),
    }
}

#[tokio::test]
async fn starttls_delivers_text_and_html_threaded_and_logs_in_by_reference() {
    let certs = Certs::make();
    let sink = Sink::start(Mode::StartTls, Some(&certs), Some("mailer:s3cret-pw")).await;
    // Credentials as mounted secrets: files in a folder the policy allows.
    let secrets = certs.dir.0.join("secrets");
    std::fs::create_dir_all(&secrets).expect("secrets");
    std::fs::write(secrets.join("smtp-user"), "mailer\n").expect("user");
    std::fs::write(secrets.join("smtp-password"), "s3cret-pw\n").expect("password");
    let dir = secrets.to_str().expect("utf-8");
    let policy = CredentialPolicy::new("STREAMKEEPER_CRED_", [dir]).expect("policy");
    let by_ref = |name: &str| {
        SecretRef::checked(&format!("file:{dir}/{name}"), &policy).expect("a reference")
    };
    let mut s = settings(&sink, Security::StartTls, Some(&certs));
    s.credentials = Some((by_ref("smtp-user"), by_ref("smtp-password")));
    let smtp = Smtp::new(s);
    let first = email(1, None);
    smtp.send(&first).await.expect("the first is sent");
    smtp.send(&email(2, Some(&first.message_id)))
        .await
        .expect("the second is sent");

    let kept = sink.wait_for(2).await;
    assert_eq!(kept.len(), 2);
    for m in &kept {
        assert_eq!(m["tls"], true, "under TLS: {m}");
        assert_eq!(m["login"], "mailer", "authenticated: {m}");
        assert_eq!(m["mail_from"], "streamkeeper@example.com");
        assert_eq!(m["rcpt_tos"], serde_json::json!(["ada@example.com"]));
    }
    let one = kept[0]["data"].as_str().expect("data");
    let two = kept[1]["data"].as_str().expect("data");
    assert_eq!(
        header(one, "Message-ID").as_deref(),
        Some("<review-1.t1@streamkeeper.example.com>")
    );
    assert_eq!(header(one, "In-Reply-To"), None);
    assert_eq!(
        header(two, "In-Reply-To").as_deref(),
        Some("<review-1.t1@streamkeeper.example.com>")
    );
    assert_eq!(
        header(two, "References").as_deref(),
        Some("<review-1.t1@streamkeeper.example.com>")
    );
    assert!(
        header(one, "Content-Type").is_some_and(|c| c.starts_with("multipart/alternative")),
        "{one}"
    );
    assert!(one.contains("Content-Type: text/plain"), "{one}");
    assert!(one.contains("Content-Type: text/html"), "{one}");
    assert!(one.contains("http://127.0.0.1:3000/review/1"), "{one}");
    assert_eq!(
        header(one, "Subject").as_deref(),
        Some("orders-value v1 waits for your approval")
    );
}

#[tokio::test]
async fn implicit_tls_delivers() {
    let certs = Certs::make();
    let sink = Sink::start(Mode::Tls, Some(&certs), None).await;
    Smtp::new(settings(&sink, Security::Tls, Some(&certs)))
        .send(&email(3, None))
        .await
        .expect("sent over TLS");
    assert_eq!(sink.wait_for(1).await[0]["tls"], true);
}

#[tokio::test]
async fn starttls_asked_of_a_server_without_it_is_refused_and_nothing_is_sent() {
    let certs = Certs::make();
    let sink = Sink::start(Mode::Plain, None, None).await;
    let e = Smtp::new(settings(&sink, Security::StartTls, Some(&certs)))
        .send(&email(4, None))
        .await
        .expect_err("no fall-back to plain text");
    assert!(matches!(e, SmtpError::NoStartTls), "{e:?}");
    assert!(!e.is_permanent(), "a relay may be fixed: retried");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(sink.messages().is_empty(), "nothing went in clear");
}

#[tokio::test]
async fn a_certificate_the_client_does_not_trust_is_a_tls_error() {
    let certs = Certs::make();
    let sink = Sink::start(Mode::StartTls, Some(&certs), None).await;
    let e = Smtp::new(settings(&sink, Security::StartTls, None))
        .send(&email(5, None))
        .await
        .expect_err("an unknown CA");
    assert!(matches!(e, SmtpError::Tls(_)), "{e:?}");
    assert!(sink.messages().is_empty());
}

#[tokio::test]
async fn the_egress_rule_applies_to_the_mail_server() {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let mut s = settings(&sink, Security::None, None);
    s.egress = EgressPolicy::STRICT;
    let e = Smtp::new(s)
        .send(&email(6, None))
        .await
        .expect_err("loopback refused");
    assert!(matches!(e, SmtpError::Egress(_)), "{e:?}");
    assert!(e.to_string().contains("STREAMKEEPER_EGRESS_ALLOW"), "{e}");
}

#[tokio::test]
async fn plain_text_when_allowed_delivers() {
    let sink = Sink::start(Mode::Plain, None, None).await;
    Smtp::new(settings(&sink, Security::None, None))
        .send(&email(7, None))
        .await
        .expect("sent in clear, as configured");
    assert_eq!(sink.wait_for(1).await[0]["tls"], false);
}
