//! Email as a team's channel, against a real SMTP server (aiosmtpd, see
//! `support/smtp.rs`) through the operator's mail settings: a flag raised
//! then resolved is two messages to the team's address, one thread (the
//! second answers the first), each with a plain-text and an HTML part; a
//! test to a server refusing the address says what it answered and marks
//! the channel broken; STARTTLS asked of a server without it is an error,
//! nothing sent in clear. A burst is one digest listing every flag, each
//! flag's delivery log naming it; `notify test` from the command line goes
//! through the mail server serve's settings name.

mod support;

use axum::http::{Method, StatusCode};
use lettre::message::Mailbox;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::smtp::{Security, Smtp, SmtpSettings};
use streamkeeper_server::clients::webhook::Webhooks;
use streamkeeper_server::flags::lifecycle::{self, FlagSource, Route};
use streamkeeper_server::notify::send::Senders;
use streamkeeper_server::platform::errors::Db;
use support::TestApp;
use support::smtp::{Mode, Sink, header};

fn smtp(sink: &Sink, security: Security) -> SmtpSettings {
    SmtpSettings {
        host: "127.0.0.1".into(),
        port: sink.port,
        security,
        credentials: None,
        from: "Streamkeeper <streamkeeper@example.com>"
            .parse::<Mailbox>()
            .expect("from"),
        ca_pem: None,
        egress: EgressPolicy::LOOPBACK,
        timeout: Duration::from_secs(5),
    }
}

/// The console with `settings` as its mail server, an admin's token and
/// a team.
async fn setup(pool: &PgPool, settings: &SmtpSettings) -> (TestApp, String, Route) {
    let mut cfg = support::config();
    cfg.smtp = Some(settings.clone());
    let t = TestApp::with_config(pool.clone(), cfg).await;
    let ada = t.user("ada", &[Role::Admin]).await;
    let token = t.token(ada).await;
    let id = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(pool)
        .await
        .expect("team");
    (t, token, (id, "payments".into(), None))
}

async fn add(t: &TestApp, token: &str, team: i64, to: &str) -> Value {
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/teams/{team}/channels"),
            token,
            Some(json!({"name": "mail", "kind": "email", "endpoint": to})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()
}

struct Watcher {
    cluster: i64,
    route: Route,
}

#[async_trait::async_trait]
impl FlagSource for Watcher {
    fn cluster(&self) -> (i64, &str) {
        (self.cluster, "prod")
    }
    fn evaluated(&self, _: &FlagKey) -> bool {
        true
    }
    fn worse(&self, _: &FlagKey, _: &str, _: &str) -> bool {
        false
    }
    async fn route(&self, _: &PgPool, _: &FlagKey) -> Result<Option<Route>, Db> {
        Ok(Some(self.route.clone()))
    }
    fn receipts(&self, _: &mut Observation) {}
}

fn stopped(group: &str) -> Observation {
    Observation {
        key: FlagKey {
            subject_kind: "group".into(),
            subject: group.into(),
            rule: "lag".into(),
        },
        kind: "STOP".into(),
        reason: format!("{group} <stopped> & silent"),
        onset_ms: chrono::Utc::now().timestamp_millis() - 60_000,
        evidence: json!({}),
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_flag_raised_then_resolved_is_two_threaded_messages_to_the_team(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let settings = smtp(&sink, Security::None);
    let (t, token, route) = setup(&pool, &settings).await;
    add(&t, &token, route.0, " oncall@example.com, ops@example.com ").await;
    let cluster = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let mut w = Watcher { cluster, route };
    let senders = Senders {
        webhooks: Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks"),
        mail: Some(Smtp::new(settings)),
    };
    let policy = support::config().outbound.credentials;
    let pass = || async {
        streamkeeper_server::notify::routine::pass_with(
            &pool,
            "https://sk.example",
            &senders,
            &policy,
        )
        .await
        .expect("notify")
    };

    lifecycle::reconcile(&pool, &mut w, vec![stopped("billing")])
        .await
        .expect("raised");
    pass().await;
    lifecycle::reconcile(&pool, &mut w, vec![])
        .await
        .expect("resolved");
    pass().await;

    let kept = sink.wait_for(2).await;
    assert_eq!(kept.len(), 2, "one message per transition");
    let (flag, onset): (i64, chrono::DateTime<chrono::Utc>) =
        sqlx::query_as("SELECT id, onset_at FROM flags WHERE subject = 'billing'")
            .fetch_one(&pool)
            .await
            .expect("flag");
    let thread = format!(
        "<streamkeeper.flag-{flag}.{}@sk.example>",
        onset.timestamp_millis()
    );
    let (one, two) = (
        kept[0]["data"].as_str().expect("data"),
        kept[1]["data"].as_str().expect("data"),
    );
    for m in &kept {
        assert_eq!(
            m["rcpt_tos"],
            json!(["oncall@example.com", "ops@example.com"]),
            "{m}"
        );
        assert_eq!(m["mail_from"], "streamkeeper@example.com");
    }
    assert_eq!(header(one, "Message-ID").as_deref(), Some(thread.as_str()));
    assert_eq!(header(one, "In-Reply-To"), None);
    assert!(header(one, "Subject").is_some_and(|s| s.contains("[STOP] group billing")));
    assert_ne!(header(two, "Message-ID").as_deref(), Some(thread.as_str()));
    assert_eq!(header(two, "In-Reply-To").as_deref(), Some(thread.as_str()));
    assert_eq!(header(two, "References").as_deref(), Some(thread.as_str()));
    assert!(header(two, "Subject").is_some_and(|s| s.contains("[RESOLVED]")));
    for data in [one, two] {
        assert!(
            header(data, "Content-Type").is_some_and(|c| c.starts_with("multipart/alternative")),
            "{data}"
        );
        assert!(data.contains("Content-Type: text/plain"), "{data}");
        assert!(data.contains("Content-Type: text/html"), "{data}");
        assert!(
            data.contains("&lt;stopped&gt; &amp; silent"),
            "escaped: {data}"
        );
        assert!(
            data.contains(&format!("https://sk.example/flags/{flag}")),
            "{data}"
        );
    }
    // The flag's delivery log keeps the mail server's answer.
    let answers: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT answer FROM deliveries WHERE channel_id IS NOT NULL ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("deliveries");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|a| a.as_deref().is_some_and(|a| a.starts_with("250"))),
        "{answers:?}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_test_says_what_a_refusing_server_answered_and_bad_addresses_are_refused(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let (t, token, route) = setup(&pool, &smtp(&sink, Security::None)).await;
    let path = format!("/api/v1/teams/{}/channels", route.0);
    for bad in [
        "",
        "oncall@example.com\r\nBcc: x@example.com",
        "not an address",
        "Ada <ada@example.com>",
    ] {
        let r = t
            .api(
                Method::POST,
                &path,
                &token,
                Some(json!({"name": "bad", "kind": "email", "endpoint": bad})),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad:?}: {}",
            r.body
        );
    }
    let c = add(&t, &token, route.0, "refused@example.com").await;
    assert_eq!(c["host"], "refused@example.com", "the recipients are shown");
    let a = t
        .api(
            Method::POST,
            &format!("{path}/{}/test", c["id"]),
            &token,
            None,
        )
        .await
        .json();
    assert_eq!(a["ok"], false, "{a}");
    assert_eq!(a["channel"], "mail", "{a}");
    let answer = a["answer"].as_str().expect("answer");
    assert!(
        answer.contains("550") && answer.contains("Recipient address rejected: no such mailbox"),
        "word for word: {a}"
    );
    assert_eq!(a["broken"], true, "{a}");
    let list = t.api(Method::GET, &path, &token, None).await.json();
    assert!(
        list[0]["broken_answer"]
            .as_str()
            .is_some_and(|b| b.contains("no such mailbox")),
        "{list}"
    );
    assert!(sink.messages().is_empty());
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn starttls_asked_of_a_server_without_it_is_an_error_and_nothing_goes_in_clear(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let (t, token, route) = setup(&pool, &smtp(&sink, Security::StartTls)).await;
    let path = format!("/api/v1/teams/{}/channels", route.0);
    let c = add(&t, &token, route.0, "oncall@example.com").await;
    let a = t
        .api(
            Method::POST,
            &format!("{path}/{}/test", c["id"]),
            &token,
            None,
        )
        .await
        .json();
    assert_eq!(a["ok"], false, "{a}");
    assert!(
        a["answer"]
            .as_str()
            .is_some_and(|s| s.contains("does not offer STARTTLS")),
        "{a}"
    );
    assert_eq!(
        a["broken"], false,
        "the operator's relay, not the channel: {a}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(sink.messages().is_empty(), "nothing went in clear");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn without_a_mail_server_an_email_channel_is_refused(pool: PgPool) {
    let t = TestApp::with_config(pool.clone(), support::config()).await;
    let ada = t.user("ada", &[Role::Admin]).await;
    let token = t.token(ada).await;
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/teams/{team}/channels"),
            &token,
            Some(json!({"name": "mail", "kind": "email", "endpoint": "oncall@example.com"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("No mail server is set"), "{}", r.body);
}

/// A replica without a mail server (one is being set up) does not spend
/// an email message's attempts: it waits, and goes once one is set.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn without_a_mail_server_a_queued_message_waits_its_attempts_unspent(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let settings = smtp(&sink, Security::None);
    let (t, token, route) = setup(&pool, &settings).await;
    add(&t, &token, route.0, "oncall@example.com").await;
    let cluster = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let mut w = Watcher { cluster, route };
    let policy = support::config().outbound.credentials;
    let webhooks = Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks");
    lifecycle::reconcile(&pool, &mut w, vec![stopped("billing")])
        .await
        .expect("raised");
    for _ in 0..3 {
        streamkeeper_server::notify::routine::pass(&pool, "https://sk.example", &webhooks, &policy)
            .await
            .expect("notify");
        sqlx::query("UPDATE deliveries SET next_attempt_at = now()")
            .execute(&pool)
            .await
            .expect("due");
    }
    let (attempts, failed, error): (i32, bool, Option<String>) =
        sqlx::query_as("SELECT attempts, failed_at IS NOT NULL, last_error FROM deliveries")
            .fetch_one(&pool)
            .await
            .expect("delivery");
    assert_eq!((attempts, failed), (0, false), "{error:?}");
    assert!(
        error.is_some_and(|e| e.contains("no mail server")),
        "why it waits is shown"
    );
    let senders = Senders {
        webhooks,
        mail: Some(Smtp::new(settings)),
    };
    streamkeeper_server::notify::routine::pass_with(&pool, "https://sk.example", &senders, &policy)
        .await
        .expect("notify");
    assert_eq!(sink.wait_for(1).await.len(), 1, "sent once a server is set");
}

/// More than five flags due to an email channel at once are one digest:
/// its subject counts them, both parts list each flag with its link, and
/// it is one delivery every flag's log names.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_burst_is_one_digest_each_flags_log_naming_it(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let settings = smtp(&sink, Security::None);
    let (t, token, route) = setup(&pool, &settings).await;
    add(&t, &token, route.0, "oncall@example.com").await;
    let cluster = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let mut w = Watcher { cluster, route };
    let senders = Senders {
        webhooks: Webhooks::new(EgressPolicy::LOOPBACK).expect("webhooks"),
        mail: Some(Smtp::new(settings)),
    };
    let policy = support::config().outbound.credentials;
    let pass = || async {
        streamkeeper_server::notify::routine::pass_with(
            &pool,
            "https://sk.example",
            &senders,
            &policy,
        )
        .await
        .expect("notify")
    };
    // Two flags: two messages, one thread each (five or fewer are not a burst).
    let first = vec![stopped("old-1"), stopped("old-2")];
    lifecycle::reconcile(&pool, &mut w, first)
        .await
        .expect("raised");
    pass().await;
    assert_eq!(sink.wait_for(2).await.len(), 2);
    // Then 37 groups stop and the first two come back, in one round.
    let burst: Vec<Observation> = (0..37).map(|i| stopped(&format!("g{i}"))).collect();
    lifecycle::reconcile(&pool, &mut w, burst)
        .await
        .expect("burst");
    pass().await;
    let kept = sink.wait_for(3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sink.messages().len(), 3, "one digest, not 39 messages");
    let data = kept[2]["data"].as_str().expect("data");
    assert_eq!(
        header(data, "Subject").as_deref(),
        Some("Streamkeeper: 37 flags raised, 2 resolved on cluster prod"),
        "{data}"
    );
    let id = header(data, "Message-ID").expect("Message-ID");
    assert!(id.starts_with("<streamkeeper.digest-"), "{id}");
    assert_eq!(header(data, "In-Reply-To"), None);
    assert!(data.contains("Content-Type: text/html"), "{data}");
    let flags: Vec<(i64, String)> = sqlx::query_as("SELECT id, subject FROM flags ORDER BY id")
        .fetch_all(&pool)
        .await
        .expect("flags");
    assert_eq!(flags.len(), 39);
    for (f, _) in &flags[2..] {
        assert!(
            data.contains(&format!("https://sk.example/flags/{f}\r\n")),
            "{f}: {data}"
        );
    }
    // One delivery listing all 39, answered 250; each flag's log names it.
    let rows: Vec<(String, Vec<i64>, Option<String>)> = sqlx::query_as(
        "SELECT transition, flag_ids, answer FROM deliveries
          WHERE channel_id IS NOT NULL ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("deliveries");
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[2].0, "digest");
    assert_eq!(rows[2].1.len(), 39);
    let unnotified: i64 =
        sqlx::query_scalar("SELECT count(*) FROM flags WHERE notified_at IS NULL")
            .fetch_one(&pool)
            .await
            .expect("notified");
    assert_eq!(unnotified, 0, "a raise told in a digest was notified");
    for (f, transition) in [(flags[0].0, "resolve"), (flags[10].0, "raise")] {
        let log = t
            .api(
                Method::GET,
                &format!("/api/v1/flags/{f}/deliveries"),
                &token,
                None,
            )
            .await
            .json();
        let latest = &log[0];
        assert_eq!(latest["transition"], transition, "{log}");
        let answer = latest["answer"].as_str().expect("answer");
        assert!(
            answer.starts_with(&format!("in digest {id}: 250")),
            "{answer}"
        );
    }
}

/// `notify test` from the command line reads the mail server as `serve`
/// does (`STREAMKEEPER_SMTP_*`) and prints what it answered.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_command_lines_test_goes_through_serves_mail_server(pool: PgPool) {
    let sink = Sink::start(Mode::Plain, None, None).await;
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL for tests");
    let mut url = url::Url::parse(&base).expect("DATABASE_URL");
    url.set_path(pool.connect_options().get_database().unwrap_or("postgres"));
    let port = sink.port.to_string();
    let cli = |args: &[&str]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
        c.env("DATABASE_URL", url.as_str())
            .env("STREAMKEEPER_SMTP_HOST", "127.0.0.1")
            .env("STREAMKEEPER_SMTP_PORT", &port)
            .env("STREAMKEEPER_SMTP_SECURITY", "none")
            .env("STREAMKEEPER_SMTP_INSECURE", "true")
            .env(
                "STREAMKEEPER_SMTP_FROM",
                "Streamkeeper <streamkeeper@example.com>",
            )
            .env("STREAMKEEPER_EGRESS_ALLOW", "loopback")
            .env_remove("STREAMKEEPER_AUDIT_KEY")
            .args(args);
        c.output().expect("run streamkeeper")
    };
    let team = team.to_string();
    for (name, to) in [
        ("mail", "oncall@example.com"),
        ("gone", "refused@example.com"),
    ] {
        let add = cli(&[
            "notify",
            "add",
            "--team",
            &team,
            "--name",
            name,
            "--kind",
            "email",
            "--endpoint",
            to,
        ]);
        assert!(
            add.status.success(),
            "{}",
            String::from_utf8_lossy(&add.stderr)
        );
    }
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM notify_channels ORDER BY id")
        .fetch_all(&pool)
        .await
        .expect("ids");
    let ok = cli(&[
        "notify",
        "test",
        "--team",
        &team,
        "--id",
        &ids[0].to_string(),
    ]);
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(out.starts_with("250"), "the server's answer: {out}");
    let kept = sink.wait_for(1).await;
    assert_eq!(kept[0]["rcpt_tos"], json!(["oncall@example.com"]));
    let refused = cli(&[
        "notify",
        "test",
        "--team",
        &team,
        "--id",
        &ids[1].to_string(),
    ]);
    let out = String::from_utf8_lossy(&refused.stdout);
    assert_eq!(refused.status.code(), Some(1), "{out}");
    assert!(
        out.contains("550") && out.contains("no such mailbox"),
        "word for word: {out}"
    );
}
