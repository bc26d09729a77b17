//! The demo's pilot history (`streamkeeper_server::demo_history`) played
//! into a test database through the real code paths, then read as the
//! manager reads it: every figure of the pilot's page is what the script
//! says (computed here from the script, not copied), and the serving
//! path's clock is untouched afterwards.

mod support;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::collections::BTreeMap;
use streamkeeper::accounts::role::Role;
use streamkeeper::pilot::Metric;
use streamkeeper::pilot::history::{self, Answer, GROUPS, MANAGER, TOPIC};
use streamkeeper::pilot::stats::{figure, week_of};
use streamkeeper_doubles::registry;
use streamkeeper_server::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use streamkeeper_server::demo_history::{Stage, play};
use streamkeeper_server::platform::clock;
use support::TestApp;

/// How far a duration may be from the script's: each stamp is the
/// scripted time plus the real time between the player moving the clock
/// and the statement that stamps (a few ms; generous for a loaded machine).
const SLACK_MS: i64 = 2_000;

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

fn csv_rows(body: &str) -> Vec<BTreeMap<String, String>> {
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

/// A pass at the machine's time, as the sampler stores and judges one.
async fn real_pass(
    pool: &PgPool,
    cluster: &streamkeeper_server::watch::store::ClusterRow,
    kept: &mut streamkeeper_server::watch::kept::KeptWindow,
    log_end: i64,
    committed: i64,
) {
    let now = Utc::now();
    let reading = Reading {
        started: now,
        finished: now,
        brokers: 1,
        topics: vec![TopicReading {
            name: "late".into(),
            partitions: vec![PartitionReading {
                partition: 0,
                leader: Some(1),
                replicas: vec![1],
                isr: vec![1],
                log_start: Some(0),
                log_end: Some(log_end),
            }],
            last_message_at: None,
            wire: None,
        }],
        groups: vec![GroupReading {
            name: "late-reader".into(),
            state: "Empty".into(),
            members: 0,
            offsets: BTreeMap::from([(("late".to_string(), 0), Some(committed))]),
            error: None,
            assigned: Default::default(),
        }],
        groups_listed: false,
        problems: Vec::new(),
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("a pass the test makes up".into()),
    };
    let stored = streamkeeper_server::watch::store::record_reading(pool, cluster.id, &reading)
        .await
        .expect("stored");
    kept.push_read(stored.pass_id, reading.finished, &stored.samples);
    streamkeeper_server::watch::judge::after_pass(
        pool,
        cluster,
        streamkeeper_server::watch::judge::PassResult::Read(&reading),
        kept,
    )
    .await
    .expect("judged");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_played_history_is_what_the_pilot_page_shows(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": "127.0.0.1:9092"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let cluster_id = r.json()["id"].as_i64().expect("id");
    let (registry_url, _registry) = registry::spawn().await;
    let day1 = Utc::now().date_naive() - chrono::Duration::days(history::DAYS);

    let played = play(&Stage {
        database_url: &url_of(&pool),
        cluster: "local",
        registry_url: &registry_url,
        admin: "ada",
        day1,
    })
    .await
    .expect("the history plays");
    assert_eq!(clock::offset_ms(), 0, "the clock is back");
    let script = history::script();
    assert_eq!(played.reviews.len(), script.reviews.len());
    // The relay took each flag's webhook, each resolution's (a dismissed
    // flag has none) and each "notify owners" sent to the team.
    let dismissed = script
        .stops
        .iter()
        .filter(|s| matches!(s.answer, Answer::Dismiss(_)))
        .count();
    assert_eq!(
        played.delivered,
        2 * script.stops.len() - dismissed + script.questions.len()
    );

    // The manager reads the page.
    let mona = streamkeeper_server::accounts::store::users::by_username(&pool, MANAGER)
        .await
        .expect("read")
        .expect("the manager");
    let mt = t.token(mona.id).await;
    let r = t.api(Method::GET, "/api/v1/pilot", &mt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = r.json();
    let report = &page["report"];
    assert_eq!(report["day"], history::DAYS + 1, "today is day 11");
    assert_eq!(page["settings"]["started_on"], json!(day1));

    // The scripted durations, by metric, each with its start.
    let at = |t: i64| history::instant(day1, t);
    let mut scripted: BTreeMap<Metric, Vec<(DateTime<Utc>, i64)>> = BTreeMap::new();
    for s in &script.stops {
        scripted
            .entry(Metric::LagFlagged)
            .or_default()
            .push((at(s.onset()), s.flagged_ms()));
    }
    for rv in &script.reviews {
        scripted
            .entry(Metric::ChangeReviewed)
            .or_default()
            .push((at(rv.proposed), rv.approve_after_s * 1_000));
    }
    let baseline = |m: Metric| m.default_baseline_ms();
    let within = |got: &Value, want: Option<i64>, what: &str| {
        let got = got.as_i64();
        match (got, want) {
            (Some(g), Some(w)) => assert!(
                (w - SLACK_MS..=w + SLACK_MS).contains(&g),
                "{what}: {g} ms, the script says {w} ms"
            ),
            _ => assert_eq!(got, want, "{what}"),
        }
    };
    // The table over the whole pilot, and each week.
    for (m, events) in &scripted {
        let f = figure(events.iter().map(|e| e.1).collect(), baseline(*m));
        let row = report["table"]
            .as_array()
            .expect("table")
            .iter()
            .find(|r| r["metric"] == m.as_str())
            .expect("row");
        assert_eq!(row["now"]["events"], f.events, "{m}");
        within(&row["now"]["p50_ms"], f.p50_ms, &format!("{m} p50"));
        within(&row["now"]["p90_ms"], f.p90_ms, &format!("{m} p90"));
        assert!(
            row["baseline_note"]
                .as_str()
                .is_some_and(|n| n.contains("demo")),
            "{row}"
        );
        for week in [1_u32, 2] {
            let f = figure(
                events
                    .iter()
                    .filter(|e| week_of(day1, e.0) == Some(week))
                    .map(|e| e.1)
                    .collect(),
                baseline(*m),
            );
            let got = &report["weeks"][week as usize - 1]["figures"][m.as_str()];
            assert_eq!(got["events"], f.events, "{m} week {week}");
            within(&got["p50_ms"], f.p50_ms, &format!("{m} week {week} p50"));
            within(&got["p90_ms"], f.p90_ms, &format!("{m} week {week} p90"));
        }
    }
    assert_eq!(report["weeks"].as_array().map(Vec::len), Some(2));
    // The first week is slower than the second: the trend the page shows.
    let p50 = |w: usize| report["weeks"][w]["figures"]["lag_flagged"]["p50_ms"].as_i64();
    assert!(p50(0) > p50(1), "{:?} vs {:?}", p50(0), p50(1));

    // What the services take themselves: as many as the script asks for.
    let row = |m: &str| -> Value {
        report["table"]
            .as_array()
            .expect("table")
            .iter()
            .find(|r| r["metric"] == m)
            .cloned()
            .expect("row")
    };
    // Each proposal is checked too.
    assert_eq!(
        row("change_checked")["now"]["events"],
        script.checks.len() + script.reviews.len()
    );
    for m in ["lineage_answered", "lineage_notified"] {
        assert_eq!(row(m)["now"]["events"], script.questions.len(), "{m}");
    }
    for m in ["change_checked", "lineage_answered", "lineage_notified"] {
        let p90 = row(m)["now"]["p90_ms"].as_i64().expect("p90");
        assert!((0..SLACK_MS).contains(&p90), "{m}: {p90} ms");
    }

    // The counts.
    let counts = &report["counts"];
    let answered = |f: fn(&Answer) -> bool| script.stops.iter().filter(|s| f(&s.answer)).count();
    assert_eq!(counts["flags_raised"], script.stops.len());
    assert_eq!(
        counts["flags_acknowledged"],
        answered(|a| matches!(a, Answer::Acknowledge))
    );
    assert_eq!(
        counts["flags_dismissed"],
        answered(|a| matches!(a, Answer::Dismiss(_)))
    );
    assert_eq!(
        counts["checks_breaking"],
        script.checks.iter().filter(|c| c.breaking).count()
    );
    assert_eq!(counts["changes_applied"], script.reviews.len());
    assert_eq!(counts["connector_restarts"], 0);
    let reason = script
        .stops
        .iter()
        .find_map(|s| match s.answer {
            Answer::Dismiss(r) => Some(r),
            _ => None,
        })
        .expect("a dismissal");
    assert_eq!(page["dismissed"][0]["reason"], reason);
    assert_eq!(page["dismissed"][0]["by"], history::OWNER);

    // Event by event: each stop's flag dates from its onset (the samples'
    // own time) and reached its owner when the script says.
    let r = t
        .api(Method::GET, "/api/v1/pilot/events.csv", &mt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let lag: Vec<(DateTime<Utc>, i64, String)> = csv_rows(&r.body)
        .into_iter()
        .filter(|e| e["metric"] == "lag_flagged")
        .map(|e| {
            (
                e["started_at"].parse().expect("time"),
                e["duration_ms"].parse().expect("ms"),
                e["subject"].clone(),
            )
        })
        .collect();
    assert_eq!(lag.len(), script.stops.len());
    for (s, (started, ms, subject)) in script.stops.iter().zip(&lag) {
        assert_eq!(*started, at(s.onset()));
        assert_eq!(subject, s.group);
        assert!(
            (s.flagged_ms() - SLACK_MS..=s.flagged_ms() + SLACK_MS).contains(ms),
            "{subject} at {started}: {ms} ms, the script says {}",
            s.flagged_ms()
        );
    }
    // Every flag resolved or dismissed: none left open for the console.
    let open: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM flags WHERE state IN ('open', 'acknowledged') AND subject = ANY ($1)",
    )
    .bind(GROUPS.map(String::from).to_vec())
    .fetch_one(&pool)
    .await
    .expect("flags");
    assert_eq!(open, 0);
    // The applied changes are in the registry, after v1.
    let versions: Value = reqwest::get(format!("{registry_url}/subjects/{TOPIC}-value/versions"))
        .await
        .expect("registry")
        .json()
        .await
        .expect("versions");
    assert_eq!(
        versions.as_array().map(Vec::len),
        Some(1 + script.reviews.len())
    );

    // The serving path: a pool that never set the offset, a normal pass,
    // and the flag carries the machine's time.
    let now_in_sql: DateTime<Utc> = sqlx::query_scalar("SELECT streamkeeper_now()")
        .fetch_one(&pool)
        .await
        .expect("now");
    assert!((Utc::now() - now_in_sql).num_seconds().abs() < 5);
    let cluster = streamkeeper_server::watch::store::by_id(&pool, cluster_id)
        .await
        .expect("read")
        .expect("cluster");
    let mut kept = streamkeeper_server::watch::kept::KeptWindow::default();
    let before = Utc::now();
    real_pass(&pool, &cluster, &mut kept, 10, 10).await;
    real_pass(&pool, &cluster, &mut kept, 20, 10).await;
    real_pass(&pool, &cluster, &mut kept, 30, 10).await;
    let after = Utc::now();
    let (onset, raised, notified): (DateTime<Utc>, DateTime<Utc>, Option<DateTime<Utc>>) =
        sqlx::query_as(
            "SELECT onset_at, raised_at, notified_at FROM flags WHERE subject = 'late-reader'",
        )
        .fetch_one(&pool)
        .await
        .expect("a flag raised by a normal pass");
    for stamp in [Some(onset), Some(raised), notified] {
        let stamp = stamp.expect("stamped");
        assert!(
            stamp >= before - chrono::Duration::milliseconds(5) && stamp <= after,
            "{stamp} is not between {before} and {after}"
        );
    }
}
