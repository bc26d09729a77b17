//! TOTP secrets sealed at rest under `STREAMKEEPER_TOTP_KEY`: a secret
//! stored in plain form (before the key, or before this release) is sealed
//! when the binary starts with the key, sign-in with a code still works
//! through the sealed form, and a start without the key (or with another)
//! is refused once a secret is sealed. One test in its own binary: the key
//! is process-wide, as the audit key is.

mod support;

use axum::http::StatusCode;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::second_factor::{STEP_SECONDS, time_step};
use streamkeeper_server::platform::seal::SealKey;
use support::{PASSWORD, TestApp};

const SECRET: &str = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const KEY: &str = "a-test-totp-key-of-at-least-32-bytes-long";

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

/// `streamkeeper user list` on this database, with `key` as the TOTP key.
fn start(pool: &PgPool, key: Option<&str>) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
    for var in [
        "STREAMKEEPER_BIND",
        "STREAMKEEPER_AUDIT_KEY",
        "STREAMKEEPER_TOTP_KEY",
        "STREAMKEEPER_PUBLIC_URL",
    ] {
        c.env_remove(var);
    }
    if let Some(k) = key {
        c.env("STREAMKEEPER_TOTP_KEY", k);
    }
    c.env("DATABASE_URL", url_of(pool))
        .args(["user", "list"])
        .output()
        .expect("run")
}

fn code_at(step: u64) -> String {
    let bytes = totp_rs::Secret::try_from_base32(SECRET).expect("base32");
    let totp = totp_rs::Builder::new()
        .with_secret(bytes.as_ref().to_vec())
        .build()
        .expect("totp");
    totp.generate(step * STEP_SECONDS).to_string()
}

async fn stored(pool: &PgPool) -> (Option<String>, Option<String>) {
    sqlx::query_as("SELECT totp_secret, totp_sealed FROM users WHERE username = 'tess'")
        .fetch_one(pool)
        .await
        .expect("tess")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_plain_totp_secret_is_sealed_at_start_and_still_signs_in(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    t.user("tess", &[Role::Viewer]).await;
    // A secret as an older release stored it: in plain form.
    sqlx::query("UPDATE users SET totp_secret = $1 WHERE username = 'tess'")
        .bind(SECRET)
        .execute(&pool)
        .await
        .expect("plain secret");

    // Without a key and nothing sealed, the server starts (and warns).
    let o = start(&pool, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stored(&pool).await, (Some(SECRET.into()), None));

    // With the key, the plain secret is sealed at start-up.
    let o = start(&pool, Some(KEY));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (plain, sealed) = stored(&pool).await;
    assert_eq!(plain, None, "no plain secret left");
    let sealed = sealed.expect("sealed");
    assert!(!sealed.contains(SECRET), "{sealed}");

    // Once a secret is sealed, no start without the key, nor with another.
    let o = start(&pool, None);
    assert!(!o.status.success(), "refused without the key");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("STREAMKEEPER_TOTP_KEY"), "{err}");
    let o = start(&pool, Some("another-key-that-is-also-32-bytes-or-more"));
    assert!(!o.status.success(), "refused with another key");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not open"), "{err}");
    assert!(!err.contains(SECRET) && !err.contains(KEY), "{err}");

    // The server with the key signs tess in with a code from the secret.
    streamkeeper_server::accounts::second_factor::use_key(Some(
        SealKey::new(KEY.as_bytes()).expect("key"),
    ));
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "tess"),
                ("password", PASSWORD),
                ("next", "/streams"),
            ],
        )
        .await;
    assert_eq!(r.location(), "/login/code?next=%2Fstreams", "the code next");
    let pending = r.cookie().expect("a pending session");
    let step = time_step(chrono::Utc::now().timestamp());
    let r = t
        .post_form("/login/code", Some(&pending), &[("code", &code_at(step))])
        .await;
    assert_eq!(r.location(), "/streams", "{}", r.body);
    let session = r.cookie().expect("signed in");
    assert_eq!(
        t.get("/api/v1/me", Some(&session)).await.status,
        StatusCode::OK
    );
}
