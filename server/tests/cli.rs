//! The `streamkeeper` binary: configuration errors, user and token
//! management, and `audit verify`, against a fresh database per test.

use sqlx::PgPool;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
    for var in [
        "DATABASE_URL",
        "STREAMKEEPER_BIND",
        "STREAMKEEPER_PUBLIC_URL",
        "STREAMKEEPER_CRED_ENV_PREFIX",
        "STREAMKEEPER_CRED_DIRS",
        "STREAMKEEPER_EGRESS_ALLOW",
        "STREAMKEEPER_AUDIT_KEY",
        "STREAMKEEPER_SITE_ROOT",
    ] {
        c.env_remove(var);
    }
    c
}

/// The URL of this test's own database.
fn url_of(pool: &PgPool) -> String {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL for tests");
    let db = pool
        .connect_options()
        .get_database()
        .unwrap_or("postgres")
        .to_string();
    let mut u = url::Url::parse(&base).expect("DATABASE_URL");
    u.set_path(&db);
    u.to_string()
}

fn run(pool: &PgPool, args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = bin();
    c.env("DATABASE_URL", url_of(pool)).args(args);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    if let Some(input) = stdin
        && let Some(mut s) = child.stdin.take()
    {
        s.write_all(input.as_bytes()).expect("stdin");
    }
    child.wait_with_output().expect("wait")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn missing_or_wrong_settings_are_named() {
    let o = bin().arg("migrate").output().expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("DATABASE_URL"), "{}", text(&o));

    let o = bin()
        .args(["serve", "--bind", "not-an-address"])
        .env("DATABASE_URL", "postgres://x@127.0.0.1:1/x")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("STREAMKEEPER_BIND"), "{}", text(&o));

    let o = bin()
        .env("DATABASE_URL", "postgres://x@127.0.0.1:1/x")
        .env("STREAMKEEPER_SESSION_IDLE_MINUTES", "soon")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("session-idle-minutes"), "{}", text(&o));

    let o = bin()
        .args(["--log-level", "[", "migrate"])
        .env("DATABASE_URL", "postgres://x@127.0.0.1:1/x")
        .output()
        .expect("run");
    assert!(text(&o).contains("STREAMKEEPER_LOG"), "{}", text(&o));
}

#[test]
fn a_build_that_carries_no_site_needs_a_site_root_to_serve() {
    // Test builds carry none (server/build.rs); a release build from
    // scripts/release does, and the end-to-end run serves from it.
    if streamkeeper_server::http::site::Site::carried() {
        return;
    }
    let o = bin()
        .arg("serve")
        .env("DATABASE_URL", "postgres://x@127.0.0.1:1/x")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("carries no site"), "{}", text(&o));
    assert!(text(&o).contains("STREAMKEEPER_SITE_ROOT"), "{}", text(&o));
}

#[test]
fn unreachable_postgres_is_retried_then_reported() {
    let started = std::time::Instant::now();
    let o = bin()
        .args(["--db-connect-timeout", "2", "migrate"])
        .env("DATABASE_URL", "postgres://sk:secret-pw@127.0.0.1:1/sk")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let out = text(&o);
    assert!(out.contains("could not reach Postgres"), "{out}");
    assert!(
        !out.contains("secret-pw"),
        "secrets are never printed: {out}"
    );
    assert!(
        started.elapsed().as_secs_f64() >= 1.0,
        "it retried for a while"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn users_tokens_and_audit_from_the_command_line(pool: PgPool) {
    let o = run(
        &pool,
        &[
            "user", "add", "ada", "--role", "admin", "--role", "approver",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let pw = out
        .lines()
        .find_map(|l| l.strip_prefix("password (shown once): "))
        .expect("generated password printed once");
    assert_eq!(pw.len(), 20);

    let o = run(
        &pool,
        &["user", "add", "bob", "--password-stdin"],
        Some("short\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("at least 12 characters"), "{}", text(&o));
    let o = run(
        &pool,
        &["user", "add", "bob", "--password-stdin"],
        Some("correct-horse-battery-staple\n"),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("shown once"));
    let o = run(&pool, &["user", "add", "bob"], None);
    assert!(text(&o).contains("already exists"), "{}", text(&o));

    let o = run(&pool, &["user", "list"], None);
    let out = text(&o);
    assert!(
        out.contains("ada") && out.contains("approver,admin") && out.contains("bob"),
        "{out}"
    );

    let o = run(
        &pool,
        &["token", "create", "--user", "bob", "--name", "ci"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let token = text(&o)
        .lines()
        .find(|l| l.starts_with("sk_"))
        .expect("token")
        .to_string();
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM api_tokens")
        .fetch_one(&pool)
        .await
        .expect("token row");
    assert_eq!(
        stored,
        streamkeeper_server::accounts::store::tokens::digest(&token),
        "only the hash is stored"
    );
    let o = run(&pool, &["token", "list"], None);
    assert!(
        text(&o).contains("live") && !text(&o).contains(&token),
        "{}",
        text(&o)
    );
    let o = run(&pool, &["token", "revoke", "1"], None);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&pool, &["token", "revoke", "1"], None);
    assert_eq!(o.status.code(), Some(2));

    let o = run(&pool, &["user", "passwd", "bob"], None);
    assert!(text(&o).contains("sessions are ended"), "{}", text(&o));
    let o = run(&pool, &["user", "disable", "bob"], None);
    assert!(o.status.success());
    let o = run(&pool, &["user", "disable", "nobody"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no user named nobody"));

    let o = run(&pool, &["audit", "verify"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("6 entries verified"), "{}", text(&o));
    // The head, kept outside the database, checks the log still ends there.
    let o = run(&pool, &["audit", "head"], None);
    assert!(o.status.success(), "{}", text(&o));
    let head = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(head.starts_with("6:"), "{head}");
    let o = run(&pool, &["audit", "verify", "--expect-head", &head], None);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &pool,
        &["audit", "verify", "--expect-head", "6:nothex"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    sqlx::query("ALTER TABLE audit_log DISABLE TRIGGER USER")
        .execute(&pool)
        .await
        .expect("superuser");
    sqlx::query("UPDATE audit_log SET actor = 'mallory' WHERE id = 4")
        .execute(&pool)
        .await
        .expect("tamper");
    let o = run(&pool, &["audit", "verify"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("BROKEN at entry 4"), "{}", text(&o));
    sqlx::query("DELETE FROM audit_log WHERE id >= 4")
        .execute(&pool)
        .await
        .expect("cut the tail");
    let o = run(&pool, &["audit", "verify"], None);
    assert!(o.status.success(), "a cut log still links: {}", text(&o));
    let o = run(&pool, &["audit", "verify", "--expect-head", &head], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("cut off"), "{}", text(&o));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn clusters_follow_a_clusters_file(pool: PgPool) {
    let dir = std::env::temp_dir().join(format!("sk-clusters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join(format!(
        "clusters-{}.toml",
        pool.connect_options().get_database().unwrap_or("x")
    ));
    let path = file.to_str().expect("utf-8 path");
    let write = |text: &str| std::fs::write(&file, text).expect("write clusters file");

    // A cluster added by hand stays, and is named as not in the file.
    let o = run(
        &pool,
        &["cluster", "add", "manual", "--bootstrap", "127.0.0.1:1"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));

    write(
        r#"
        [[cluster]]
        name = "cloud"
        bootstrap = "pkc.example:9092"
        security_protocol = "SASL_SSL"
        sasl_mechanism = "PLAIN"
        username = "env:STREAMKEEPER_CRED_CC_KEY"
        password = "env:STREAMKEEPER_CRED_CC_SECRET"
        "#,
    );
    let o = run(&pool, &["cluster", "apply", path, "--dry-run"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("would create: cloud"), "{}", text(&o));
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM clusters WHERE removed_at IS NULL")
            .fetch_one(&pool)
            .await
            .expect("count")
    };
    assert_eq!(count().await, 1, "a dry run changes nothing");

    let o = run(&pool, &["cluster", "apply", path], None);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("created: cloud"), "{out}");
    assert!(out.contains("not in the file, left alone: manual"), "{out}");
    let o = run(&pool, &["cluster", "apply", path], None);
    assert!(text(&o).contains("unchanged: cloud"), "{}", text(&o));

    // `cluster remove` stops watching one, by name, and says until when its
    // history is kept; an unknown name is an error, and the file's cluster
    // stays.
    let manual: i64 = sqlx::query_scalar("SELECT id FROM clusters WHERE name = 'manual'")
        .fetch_one(&pool)
        .await
        .expect("manual");
    let o = run(&pool, &["cluster", "remove", "manual"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("stopped watching manual"), "{}", text(&o));
    assert!(
        text(&o).contains("its history is kept until")
            && text(&o).contains(&format!("cluster restore {manual}")),
        "{}",
        text(&o)
    );
    assert_eq!(count().await, 1);
    let o = run(&pool, &["cluster", "list", "--removed"], None);
    assert!(o.status.success(), "{}", text(&o));
    let line = text(&o)
        .lines()
        .find(|l| l.contains("manual"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("manual is not listed: {}", text(&o)));
    assert!(line.starts_with(&manual.to_string()), "{line}");
    let o = run(&pool, &["cluster", "list"], None);
    assert!(!text(&o).contains("manual"), "{}", text(&o));
    let o = run(&pool, &["cluster", "remove", "manual"], None);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("no cluster named \"manual\""),
        "{}",
        text(&o)
    );
    let o = run(
        &pool,
        &["cluster", "add", "manual", "--bootstrap", "127.0.0.1:1"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    // The new manual holds the name: the removed one cannot come back.
    let o = run(&pool, &["cluster", "restore", &manual.to_string()], None);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("named manual"), "{}", text(&o));

    // A change in the file updates the cluster and is audited.
    write(
        r#"
        [[cluster]]
        name = "cloud"
        bootstrap = "pkc.example:9092"
        security_protocol = "SASL_SSL"
        sasl_mechanism = "PLAIN"
        username = "env:STREAMKEEPER_CRED_CC_KEY"
        password = "env:STREAMKEEPER_CRED_CC_SECRET"
        interval_s = 60
        "#,
    );
    let o = run(&pool, &["cluster", "apply", path], None);
    assert!(text(&o).contains("updated: cloud"), "{}", text(&o));
    let interval: i32 = sqlx::query_scalar("SELECT interval_s FROM clusters WHERE name = 'cloud'")
        .fetch_one(&pool)
        .await
        .expect("interval");
    assert_eq!(interval, 60);
    let audited: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'cluster.update' AND target = 'cluster:cloud'",
    )
    .fetch_one(&pool)
    .await
    .expect("audit");
    assert_eq!(audited, 1);

    // A bad entry changes nothing, and says which entry and why: here a
    // password given as a value, not a reference, and a misspelt key.
    write(
        r#"
        [[cluster]]
        name = "cloud"
        bootstrap = "pkc.example:9092"
        interval_s = 30

        [[cluster]]
        name = "leaky"
        bootstrap = "b:9092"
        security_protocol = "SASL_SSL"
        sasl_mechanism = "PLAIN"
        username = "env:STREAMKEEPER_CRED_K"
        password = "hunter2"
        "#,
    );
    let o = run(&pool, &["cluster", "apply", path], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("leaky"), "{}", text(&o));
    assert!(
        !text(&o).contains("hunter2"),
        "a secret is never echoed: {}",
        text(&o)
    );
    assert_eq!(count().await, 2);
    let o = run(&pool, &["cluster", "apply", path], None);
    assert_eq!(o.status.code(), Some(2));
    write("[[cluster]]\nname = 'x'\nbootstrap = 'b:1'\npasword = 'env:X'\n");
    let o = run(&pool, &["cluster", "apply", path], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("pasword"), "{}", text(&o));
    let _ = std::fs::remove_file(&file);
}

/// With a migration role apart from the runtime role, the runtime role
/// owns what it manages (it makes the samples' partitions) but may only
/// read and append to the audit log: it can neither rewrite it nor disable
/// its append-only triggers.
#[sqlx::test(migrations = false)]
async fn the_runtime_role_only_appends_to_the_audit_log(pool: PgPool) {
    let db = pool
        .connect_options()
        .get_database()
        .expect("a test database")
        .to_string();
    // Roles are the Postgres cluster's, not the database's: named after
    // this test's database so parallel tests do not meet.
    let tag = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        db.hash(&mut h);
        format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
    };
    let (owner, runtime) = (format!("sk_owner_{tag}"), format!("sk_app_{tag}"));
    for sql in [
        format!("DROP ROLE IF EXISTS {owner}"),
        format!("DROP ROLE IF EXISTS {runtime}"),
        format!("CREATE ROLE {owner} LOGIN"),
        format!("CREATE ROLE {runtime} LOGIN"),
        format!("GRANT {runtime} TO {owner}"),
        format!("ALTER DATABASE \"{db}\" OWNER TO {owner}"),
    ] {
        sqlx::query(&sql).execute(&pool).await.expect(&sql);
    }
    let as_role = |role: &str| {
        let mut u = url::Url::parse(&url_of(&pool)).expect("url");
        u.set_username(role).expect("user");
        u.to_string()
    };
    let migrate = || {
        bin()
            .env("DATABASE_URL", as_role(&runtime))
            .env("STREAMKEEPER_MIGRATE_DATABASE_URL", as_role(&owner))
            .arg("migrate")
            .output()
            .expect("run")
    };
    let o = migrate();
    assert!(o.status.success(), "{}", text(&o));
    // Again, as every start does.
    let o = migrate();
    assert!(o.status.success(), "{}", text(&o));

    let app = PgPool::connect(&as_role(&runtime))
        .await
        .expect("runtime role");
    sqlx::query("INSERT INTO teams (name) VALUES ('payments')")
        .execute(&app)
        .await
        .expect("the runtime role writes its tables");
    streamkeeper_server::watch::store::samples::ensure_partitions(&app, chrono::Utc::now())
        .await
        .expect("and makes the day partitions");
    let ev = streamkeeper_server::audit::store::Event {
        actor: "alice",
        action: "team.create",
        target: "team:payments".into(),
        detail: serde_json::json!({}),
        source: "cli",
    };
    streamkeeper_server::audit::store::record(&app, ev)
        .await
        .expect("and appends to the audit log");
    for sql in [
        "UPDATE audit_log SET actor = 'mallory'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
        "ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_or_delete",
        "DROP TABLE audit_log",
    ] {
        let e = sqlx::query(sql).execute(&app).await.expect_err(sql);
        let m = e.to_string();
        assert!(
            m.contains("permission denied") || m.contains("must be owner"),
            "{sql}: {m}"
        );
    }
    app.close().await;
    let o = run(&pool, &["audit", "verify"], None);
    assert!(text(&o).contains("1 entry verified"), "{}", text(&o));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn clusters_name_only_allowed_credentials(pool: PgPool) {
    let dir = std::env::temp_dir().join(format!("sk-cred-refs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join(format!(
        "clusters-{}.toml",
        pool.connect_options().get_database().unwrap_or("x")
    ));
    let path = file.to_str().expect("utf-8 path");
    let entry = |user: &str, pass: &str| {
        format!(
            "[[cluster]]\nname = 'cloud'\nbootstrap = 'pkc.example:9092'\nsecurity_protocol = 'SASL_SSL'\nsasl_mechanism = 'PLAIN'\nusername = '{user}'\npassword = '{pass}'\n"
        )
    };
    let ok_user = "env:STREAMKEEPER_CRED_CC_API_KEY";
    for (pass, rule) in [
        ("file:/etc/passwd", "STREAMKEEPER_CRED_DIRS"),
        ("file:/run/secrets/../../etc/passwd", "it names /etc/passwd"),
        ("env:DATABASE_URL", "STREAMKEEPER_CRED_ENV_PREFIX"),
    ] {
        std::fs::write(&file, entry(ok_user, pass)).expect("write");
        let o = run(&pool, &["cluster", "apply", path], None);
        assert_eq!(o.status.code(), Some(2), "{pass}: {}", text(&o));
        assert!(text(&o).contains(rule), "{pass}: {}", text(&o));
        assert!(text(&o).contains("cloud"), "names the entry: {}", text(&o));
    }
    // The directories and the prefix are the operator's to set.
    std::fs::write(&file, entry(ok_user, "file:/etc/passwd")).expect("write");
    let o = bin()
        .env("DATABASE_URL", url_of(&pool))
        .env(
            "STREAMKEEPER_CRED_DIRS",
            "/etc/streamkeeper/creds:/run/secrets",
        )
        .args(["cluster", "apply", path])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("/etc/streamkeeper/creds or /run/secrets"),
        "{}",
        text(&o)
    );
    std::fs::write(&file, entry(ok_user, "file:/run/secrets/cc-api-secret")).expect("write");
    let o = run(&pool, &["cluster", "apply", path], None);
    assert!(
        o.status.success(),
        "a file under /run/secrets: {}",
        text(&o)
    );
    let refused: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'cluster.apply.refused' AND target = 'cluster:cloud'",
    )
    .fetch_one(&pool)
    .await
    .expect("audit");
    assert_eq!(refused, 4, "every refused file is audited");

    // `cluster add`: the same rules, and clear text only when asked for.
    let add = |extra: &[&str]| {
        let mut args = vec![
            "cluster",
            "add",
            "local",
            "--bootstrap",
            "127.0.0.1:9092",
            "--security-protocol",
            "SASL_PLAINTEXT",
            "--sasl-mechanism",
            "PLAIN",
        ];
        args.extend_from_slice(extra);
        run(&pool, &args, None)
    };
    let o = add(&[
        "--username",
        "env:HOME",
        "--password",
        "env:STREAMKEEPER_CRED_PW",
        "--insecure-credentials",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("STREAMKEEPER_CRED_ENV_PREFIX"),
        "{}",
        text(&o)
    );
    let o = add(&[
        "--username",
        "env:STREAMKEEPER_CRED_USER",
        "--password",
        "env:STREAMKEEPER_CRED_PW",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("SASL_SSL or SSL"), "{}", text(&o));
    let o = add(&[
        "--username",
        "env:STREAMKEEPER_CRED_USER",
        "--password",
        "env:STREAMKEEPER_CRED_PW",
        "--insecure-credentials",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn tokens_have_scopes_an_expiry_and_die_with_the_password(pool: PgPool) {
    let o = run(&pool, &["user", "add", "ci-bot"], None);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &pool,
        &[
            "token",
            "create",
            "--user",
            "ci-bot",
            "--name",
            "ci",
            "--scope",
            "check",
            "--scope",
            "read",
            "--expires-days",
            "30",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("scopes read,check, until 20"),
        "{}",
        text(&o)
    );
    let o = run(
        &pool,
        &["token", "create", "--user", "ci-bot", "--name", "dashboard"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &pool,
        &[
            "token", "create", "--user", "ci-bot", "--name", "x", "--scope", "admin",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("lineage:write"), "{}", text(&o));
    // The retired approve scope is refused with the reason: approvals are
    // done by people in the console.
    let o = run(
        &pool,
        &[
            "token", "create", "--user", "ci-bot", "--name", "x", "--scope", "approve",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("approvals are done by a person in the console"),
        "{}",
        text(&o)
    );
    let o = run(
        &pool,
        &[
            "token",
            "create",
            "--user",
            "ci-bot",
            "--name",
            "x",
            "--expires-days",
            "0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    let o = run(&pool, &["token", "list"], None);
    let out = text(&o);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_owned()
    };
    let expires = (chrono::Utc::now() + chrono::Duration::days(30))
        .format("%Y-%m-%d")
        .to_string();
    let ci = line("ci");
    assert!(ci.contains("read,check") && ci.contains(&expires), "{ci}");
    assert!(ci.contains("live"), "{ci}");
    let dashboard = line("dashboard");
    assert!(
        dashboard.contains(" read ") && dashboard.contains("never"),
        "the default scope is read, with no expiry: {dashboard}"
    );

    let o = run(&pool, &["user", "passwd", "ci-bot"], None);
    assert!(text(&o).contains("tokens revoked"), "{}", text(&o));
    let o = run(&pool, &["token", "list"], None);
    let out = text(&o);
    assert_eq!(
        out.matches("revoked (password changed or user disabled)")
            .count(),
        2,
        "{out}"
    );
    assert!(!out.contains("live"), "{out}");
}

/// With STREAMKEEPER_AUDIT_KEY the chain is sealed with a key kept outside
/// the database: someone who can write the table (here, a superuser past
/// the append-only trigger) recomputes what they changed, and `audit
/// verify` still names the entry; a process without the key, or with
/// another, may not append to a keyed log.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_keyed_audit_log_cannot_be_rewritten_without_its_key(pool: PgPool) {
    let dir = std::env::temp_dir().join(format!(
        "sk-audit-key-{}",
        pool.connect_options().get_database().unwrap_or("db")
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let secret = "a-secret-of-forty-bytes-0123456789abcdef";
    let key_file = dir.join("audit-key");
    std::fs::write(&key_file, format!("{secret}\n")).expect("key file");
    let other_file = dir.join("other-key");
    std::fs::write(&other_file, "b".repeat(40)).expect("other key file");
    let keyed = |file: &std::path::Path, args: &[&str]| {
        bin()
            .env("DATABASE_URL", url_of(&pool))
            .env("STREAMKEEPER_AUDIT_KEY", format!("file:{}", file.display()))
            .args(args)
            .output()
            .expect("run")
    };
    fn add(name: &str) -> [&str; 5] {
        ["user", "add", name, "--role", "viewer"]
    }

    // One entry before the key was set, two after.
    let o = run(&pool, &add("ada"), None);
    assert!(o.status.success(), "{}", text(&o));
    for name in ["bob", "cy"] {
        let o = keyed(&key_file, &add(name));
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = keyed(&key_file, &["audit", "verify"]);
    assert!(
        o.status.success() && text(&o).contains("3 entries verified (keyed from entry 2 on"),
        "{}",
        text(&o)
    );

    // Without the key nothing is appended, and verifying says what it lacks.
    let o = run(&pool, &add("dee"), None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("keyed from entry 2 on: set STREAMKEEPER_AUDIT_KEY"),
        "{}",
        text(&o)
    );
    let o = run(&pool, &["audit", "verify"], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("entry 2: it is keyed, and checking it needs the audit key"),
        "{}",
        text(&o)
    );
    // Another key is refused before it writes anything.
    let o = keyed(&other_file, &add("dee"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("does not match the audit log's newest keyed entry (3)"),
        "{}",
        text(&o)
    );
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE username = 'dee'")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(users, 0, "refused before any change");

    // A superuser rewrites entry 3 and recomputes its hash, as anyone
    // without the key can: plain SHA-256.
    sqlx::query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_or_delete")
        .execute(&pool)
        .await
        .expect("superuser");
    let (prev, content): (Vec<u8>, streamkeeper::audit::EntryContent) = {
        let r: (Vec<u8>, chrono::DateTime<chrono::Utc>, String, String, String, String, String) =
            sqlx::query_as(
                "SELECT prev_hash, at, actor, action, target, detail, source FROM audit_log WHERE id = 3",
            )
            .fetch_one(&pool)
            .await
            .expect("entry 3");
        let content = streamkeeper::audit::EntryContent {
            at: r.1,
            actor: "mallory".into(),
            action: r.3,
            target: r.4,
            detail: r.5,
            source: r.6,
        };
        (r.0, content)
    };
    let prev_hash: [u8; 32] = prev.as_slice().try_into().expect("32 bytes");
    let forged = streamkeeper::audit::entry_hash(&prev_hash, 3, &content);
    for keyed_flag in [false, true] {
        sqlx::query("UPDATE audit_log SET actor = 'mallory', hash = $1, keyed = $2 WHERE id = 3")
            .bind(forged.as_slice())
            .bind(keyed_flag)
            .execute(&pool)
            .await
            .expect("tamper");
        let o = keyed(&key_file, &["audit", "verify"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let want = if keyed_flag {
            "entry 3: its content does not match its keyed hash"
        } else {
            "entry 3: it is not keyed, though the log is keyed from entry 2 on"
        };
        assert!(text(&o).contains(want), "{}", text(&o));
    }

    // Bad settings are named, and the key never shows.
    let o = bin()
        .env("DATABASE_URL", url_of(&pool))
        .env("STREAMKEEPER_AUDIT_KEY", "too-short-a-secret")
        .args(["audit", "verify"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("STREAMKEEPER_AUDIT_KEY (--audit-key): the audit key has 18 bytes")
            && !text(&o).contains("too-short-a-secret"),
        "{}",
        text(&o)
    );
    let o = keyed(&dir.join("missing"), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("cannot be read: entity not found"),
        "{}",
        text(&o)
    );
    for o in [
        keyed(&key_file, &["audit", "verify"]),
        keyed(&other_file, &["user", "list"]),
    ] {
        assert!(!text(&o).contains(secret), "{}", text(&o));
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn routines_lists_each_routine_with_its_last_run_and_lease(pool: PgPool) {
    sqlx::query("INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('east', '127.0.0.1:1', 'PLAINTEXT')")
        .execute(&pool)
        .await
        .expect("cluster");
    sqlx::query(
        "INSERT INTO routines (name, scope, lease, every_ms) VALUES
            ('sample', 'cluster', 'exclusive', 15000), ('webhooks', 'global', 'everywhere', 1000)",
    )
    .execute(&pool)
    .await
    .expect("routines");
    sqlx::query(
        "INSERT INTO routine_runs (routine, cluster_id, holder, finished_at, outcome, error, next_at)
         SELECT 'sample', id, 'pod-a-1-abc', now(), 'failed', 'the broker is away', now() + interval '15 s'
           FROM clusters",
    )
    .execute(&pool)
    .await
    .expect("run");
    sqlx::query(
        "INSERT INTO routine_leases (routine, cluster_id, holder, expires_at)
         SELECT 'sample', id, 'pod-a-1-abc', now() + interval '20 s' FROM clusters",
    )
    .execute(&pool)
    .await
    .expect("lease");

    let o = run(&pool, &["routines"], None);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let sample = out
        .lines()
        .find(|l| l.starts_with("sample "))
        .unwrap_or_else(|| panic!("{out}"));
    for part in [" east ", " failed ", " pod-a-1-abc ", "the broker is away"] {
        assert!(sample.contains(part), "{part} in {sample}");
    }
    let webhooks = out
        .lines()
        .find(|l| l.starts_with("webhooks "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        webhooks.split_whitespace().skip(1).all(|w| w == "-"),
        "never ran, no lease: {webhooks}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn routines_are_scheduled_and_run_now_from_the_command_line(pool: PgPool) {
    for sql in [
        "INSERT INTO routines (name, scope, lease, every_ms) VALUES ('sample', 'cluster', 'exclusive', 15000)",
        "INSERT INTO clusters (name, bootstrap) VALUES ('east', '127.0.0.1:1'), ('west', '127.0.0.1:2')",
    ] {
        sqlx::query(sql).execute(&pool).await.expect("setup");
    }
    let o = run(&pool, &["routines", "schedule", "sample", "5m"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("sample: every 5 min"), "{}", text(&o));
    let o = run(
        &pool,
        &["routines", "schedule", "sample", "*/10 * * * *"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &pool,
        &["routines", "schedule", "sample", "61 * * * *"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a cron expression"), "{}", text(&o));
    let o = run(&pool, &["routines", "run", "sample"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("on 2 target(s)"), "{}", text(&o));
    let o = run(
        &pool,
        &["routines", "run", "sample", "--cluster", "north"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(&pool, &["routines"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("cron */10 * * * * (UTC)"), "{}", text(&o));
    let audited: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, action FROM audit_log WHERE action LIKE 'routine.%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(
        audited,
        vec![
            ("cli".to_string(), "routine.schedule".to_string()),
            ("cli".to_string(), "routine.schedule".to_string()),
            ("cli".to_string(), "routine.run_now".to_string()),
        ]
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_teams_channels_from_the_command_line(pool: PgPool) {
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    let team = team.to_string();
    let add = run(
        &pool,
        &[
            "notify",
            "add",
            "--team",
            &team,
            "--name",
            "am",
            "--kind",
            "alertmanager",
            "--endpoint",
            "https://alertmanager.example/api/v2/alerts",
            "--min-severity",
            "error",
        ],
        None,
    );
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    // A literal routing key is refused, and says how to give one.
    let literal = run(
        &pool,
        &[
            "notify",
            "add",
            "--team",
            &team,
            "--name",
            "pd",
            "--kind",
            "pagerduty",
            "--secret",
            "0123456789abcdef0123456789abcdef",
        ],
        None,
    );
    assert!(!literal.status.success());
    let err = String::from_utf8_lossy(&literal.stderr);
    assert!(
        err.contains("reference") && !err.contains("0123456789abcdef"),
        "{err}"
    );
    let list = run(&pool, &["notify", "channels", "--team", &team], None);
    let out = String::from_utf8_lossy(&list.stdout);
    assert!(out.contains("alertmanager") && out.contains("am"), "{out}");
    let id: i64 = sqlx::query_scalar("SELECT id FROM notify_channels")
        .fetch_one(&pool)
        .await
        .expect("id");
    let rm = run(
        &pool,
        &["notify", "remove", "--team", &team, "--id", &id.to_string()],
        None,
    );
    assert!(
        rm.status.success(),
        "{}",
        String::from_utf8_lossy(&rm.stderr)
    );
    let actions: Vec<String> =
        sqlx::query_scalar("SELECT action FROM audit_log WHERE action LIKE 'notify.%' ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("audit");
    assert_eq!(
        actions,
        [
            "notify.channel.add",
            "notify.channel.refused",
            "notify.channel.remove"
        ]
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn silences_from_the_command_line(pool: PgPool) {
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let cluster = cluster.to_string();
    let until = (chrono::Utc::now() + chrono::Duration::hours(2)).to_rfc3339();
    let add = |extra: &[&str]| {
        let mut args = vec!["notify", "silence", "add", "--cluster", &cluster];
        args.extend_from_slice(extra);
        run(&pool, &args, None)
    };
    let o = add(&[
        "--group", "billing", "--until", &until, "--reason", "deploy",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).starts_with("silence "), "{}", text(&o));
    // A stream and a group at once is clap's refusal; a past end the rule's.
    let o = add(&[
        "--group", "billing", "--stream", "orders", "--until", &until, "--reason", "x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let past = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    let o = add(&["--until", &past, "--reason", "deploy"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("that time has passed"), "{}", text(&o));
    let o = add(&[
        "--stream", "orders", "--until", &until, "--reason", "replay",
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let o = run(&pool, &["notify", "silences", "--cluster", &cluster], None);
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        listed.contains("group billing") && listed.contains("by cli: deploy"),
        "{listed}"
    );
    assert!(listed.contains("stream orders"), "{listed}");
    let id: i64 = sqlx::query_scalar("SELECT id FROM notify_silences WHERE name = 'billing'")
        .fetch_one(&pool)
        .await
        .expect("id");
    let o = run(
        &pool,
        &[
            "notify",
            "silence",
            "end",
            "--cluster",
            &cluster,
            &id.to_string(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&pool, &["notify", "silences", "--cluster", &cluster], None);
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        !listed.contains("billing") && listed.contains("orders"),
        "{listed}"
    );
    let audited: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, action FROM audit_log WHERE action LIKE 'notify.silence%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    let cli = |a: &str| ("cli".to_string(), a.to_string());
    assert_eq!(
        audited,
        [
            cli("notify.silence"),
            cli("notify.silence.refused"),
            cli("notify.silence"),
            cli("notify.silence.end")
        ]
    );
}
