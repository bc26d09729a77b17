//! The sampler's window in memory (`watch::kept`) against the window read
//! from Postgres: the same windows, the same judgements and flags, and a
//! window read back when another replica's passes are in the store.

use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;
use std::collections::BTreeMap;
use streamkeeper::watch::window::by_group;
use streamkeeper_server::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use streamkeeper_server::watch::judge::{self, PassResult};
use streamkeeper_server::watch::kept::{self, KeptWindow, Source};
use streamkeeper_server::watch::store::{self as clusters, ClusterRow, samples};

async fn cluster(pool: &PgPool, name: &str) -> ClusterRow {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ($1, '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .bind(name)
    .fetch_one(pool)
    .await
    .expect("cluster");
    clusters::by_id(pool, id).await.expect("db").expect("row")
}

/// Pass `n` of a scenario with every kind of sample: "steady" keeps up on
/// a 3-partition topic, "stops" stops committing at pass 4 with no
/// members, "never" has a partition it never committed, "flaky" cannot be
/// read on every third pass (a gap), and "orphan" commits on a topic the
/// metadata does not list (no log offsets).
fn scenario(n: i64, at: DateTime<Utc>) -> Reading {
    let end = 1_000 + 40 * n;
    let topic = |name: &str, parts: i32| TopicReading {
        name: name.into(),
        partitions: (0..parts)
            .map(|p| PartitionReading {
                partition: p,
                leader: Some(1),
                replicas: vec![1],
                isr: vec![1],
                log_start: Some(i64::from(p)),
                log_end: Some(end + i64::from(p)),
            })
            .collect(),
        last_message_at: None,
        wire: None,
    };
    let group =
        |name: &str, members: usize, offsets: BTreeMap<(String, i32), Option<i64>>| GroupReading {
            name: name.into(),
            state: if members > 0 { "Stable" } else { "Empty" }.into(),
            members,
            offsets,
            error: None,
            assigned: Default::default(),
        };
    let on = |t: &str, parts: i32, c: Option<i64>| -> BTreeMap<(String, i32), Option<i64>> {
        (0..parts).map(|p| ((t.to_string(), p), c)).collect()
    };
    let mut never = on("orders", 3, Some(end - 5));
    never.insert(("orders".into(), 2), None);
    let mut flaky = group("flaky", 1, on("payments", 2, Some(end - 100)));
    if n % 3 == 2 {
        flaky.offsets.clear();
        flaky.error = Some("coordinator not available".into());
    }
    Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: vec![topic("orders", 3), topic("payments", 2)],
        groups: vec![
            group("steady", 2, on("orders", 3, Some(end - 10))),
            group(
                "stops",
                usize::from(n < 4),
                on("orders", 3, Some(1_000 + 40 * n.min(4))),
            ),
            group("never", 1, never),
            flaky,
            group("orphan", 1, on("gone-topic", 1, Some(7))),
        ],
        groups_listed: true,
        problems: vec![],
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("synthetic".into()),
    }
}

/// A flag as compared: subject kind, subject, kind, state, reason, evidence.
type FlagRow = (String, String, String, String, String, serde_json::Value);
/// A group's judgement: name, status, total lag, largest time lag.
type GroupRow = (String, Option<String>, Option<i64>, Option<f64>);

/// What a cluster's evaluation left: each group's judgement and each flag.
async fn outcome(pool: &PgPool, cluster_id: i64) -> (Vec<String>, Vec<String>) {
    let groups: Vec<GroupRow> = sqlx::query_as(
        "SELECT name, status, total_lag, max_time_lag_s FROM consumer_groups
         WHERE cluster_id = $1 ORDER BY name",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await
    .expect("groups");
    // The onset of trouble the window cannot date is the evaluation's
    // clock, which differs between two evaluations: left out, as is the
    // cluster's name (the subject of its own flags).
    let flags: Vec<FlagRow> = sqlx::query_as(
        "SELECT subject_kind, CASE subject_kind WHEN 'cluster' THEN '' ELSE subject END,
                kind, state, reason, evidence FROM flags
         WHERE cluster_id = $1 ORDER BY subject_kind, subject, rule",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await
    .expect("flags");
    (
        groups.iter().map(|g| format!("{g:?}")).collect(),
        flags
            .into_iter()
            .map(|(kind, subject, k, state, reason, evidence)| {
                format!("{:?}", (kind, subject, k, state, reason, gist(evidence)))
            })
            .collect(),
    )
}

/// Receipts without each partition's samples and sentence: what a flag's
/// receipts must say the same way however they were judged (the samples
/// themselves are rewritten only now and then from memory; see
/// `a_flags_receipts_are_rewritten_when_the_trouble_changes`).
fn gist(mut evidence: serde_json::Value) -> serde_json::Value {
    if let Some(parts) = evidence["partitions"].as_array_mut() {
        for p in parts.iter_mut().filter_map(|p| p.as_object_mut()) {
            p.remove("samples");
            p.remove("reason");
        }
    }
    evidence
}

/// Two clusters fed the same passes, one judged from a window kept in
/// memory pass after pass, the other from a window read from Postgres
/// every pass: the windows, judgements and flags are the same throughout,
/// through failed passes and gaps, and past the window's ten passes.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_window_in_memory_judges_as_the_one_read_from_postgres(pool: PgPool) {
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    let (mem, pg) = (
        cluster(&pool, "memory").await,
        cluster(&pool, "postgres").await,
    );
    let mut kept = KeptWindow::default();
    let start = Utc::now() - Duration::seconds(15 * 16);
    let mut flagged = 0;
    for n in 0..16i64 {
        let at = start + Duration::seconds(15 * n);
        if n == 6 || n == 7 {
            // Two passes that read nothing.
            let id = clusters::record_failure(&pool, mem.id, at, "unreachable")
                .await
                .expect("failure");
            kept.push_failed(id);
            clusters::record_failure(&pool, pg.id, at, "unreachable")
                .await
                .expect("failure");
            for (c, k) in [(&mem, &mut kept), (&pg, &mut KeptWindow::default())] {
                judge::after_pass(&pool, c, PassResult::Failed("unreachable"), k)
                    .await
                    .expect("judge");
            }
        } else {
            let r = scenario(n, at);
            let stored = clusters::record_reading(&pool, mem.id, &r)
                .await
                .expect("store");
            kept.push_read(stored.pass_id, r.finished, &stored.samples);
            clusters::record_reading(&pool, pg.id, &r)
                .await
                .expect("store");

            let source = kept::current(&pool, mem.id, &mut kept)
                .await
                .expect("windows");
            assert_eq!(source, Source::Memory, "pass {n}");
            let from_memory = kept.windows();
            let mut read = KeptWindow::default();
            let source = kept::current(&pool, pg.id, &mut read)
                .await
                .expect("windows");
            assert_eq!(source, Source::Postgres, "pass {n}");
            let from_store = read.windows();
            // Both as the evaluation read it before the memory: the store's
            // rows split by group (the two clusters' pass ids differ, so
            // the samples are compared without them).
            let rows = samples::cluster_window(&pool, pg.id, 10)
                .await
                .expect("rows");
            let old = by_group(rows);
            for (from, kept_windows) in [("memory", from_memory), ("store", from_store)] {
                assert_eq!(
                    old.keys().collect::<Vec<_>>(),
                    kept_windows.keys().collect::<Vec<_>>(),
                    "{from}, pass {n}"
                );
                for (group, windows) in &old {
                    let mine = &kept_windows[group];
                    assert_eq!(windows.len(), mine.len(), "{from}: {group}, pass {n}");
                    for (key, series) in windows {
                        let got: Vec<_> = mine[key]
                            .iter()
                            .map(|s| {
                                use streamkeeper::watch::window::WindowSample;
                                (s.at_ms(), s.committed(), s.log_start(), s.log_end())
                            })
                            .collect();
                        let want: Vec<_> = series
                            .iter()
                            .map(|s| (s.at.timestamp_millis(), s.committed, s.log_start, s.log_end))
                            .collect();
                        assert_eq!(got, want, "{from}: {group} {key:?}, pass {n}");
                    }
                }
            }

            judge::after_pass(&pool, &mem, PassResult::Read(&r), &mut kept)
                .await
                .expect("judge");
            judge::after_pass(&pool, &pg, PassResult::Read(&r), &mut KeptWindow::default())
                .await
                .expect("judge");
        }
        assert_eq!(
            kept.ids().len(),
            usize::try_from((n + 1).min(10)).expect("small")
        );
        let (m, p) = (outcome(&pool, mem.id).await, outcome(&pool, pg.id).await);
        assert_eq!(m, p, "pass {n}");
        flagged = flagged.max(m.1.len());
    }
    // The scenario does raise flags (else the comparison proves little).
    assert!(flagged >= 2, "{flagged} flags");
}

/// A replica that takes a cluster over has no window in memory, or an old
/// one: it reads the window back from Postgres, with the passes the other
/// replica recorded, and keeps it from then on.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_takeover_reads_the_window_back(pool: PgPool) {
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    let c = cluster(&pool, "shared").await;
    let (mut first, mut second) = (KeptWindow::default(), KeptWindow::default());
    let start = Utc::now() - Duration::seconds(15 * 12);
    let pass = |n: i64| scenario(n, start + Duration::seconds(15 * n));

    // The first replica samples four passes from memory.
    for n in 0..4 {
        let r = pass(n);
        let stored = clusters::record_reading(&pool, c.id, &r)
            .await
            .expect("store");
        first.push_read(stored.pass_id, r.finished, &stored.samples);
        let source = kept::current(&pool, c.id, &mut first)
            .await
            .expect("windows");
        assert_eq!(source, Source::Memory);
    }
    let mine = first.windows();
    assert_eq!(mine["steady"][&("orders".to_string(), 0)].len(), 4);

    // The second takes the lease: its first evaluation reads the window
    // from Postgres, with the first replica's four passes in it.
    let r = pass(4);
    let stored = clusters::record_reading(&pool, c.id, &r)
        .await
        .expect("store");
    second.push_read(stored.pass_id, r.finished, &stored.samples);
    let source = kept::current(&pool, c.id, &mut second)
        .await
        .expect("windows");
    let w = second.windows().clone();
    assert_eq!(source, Source::Postgres);
    assert_eq!(w["steady"][&("orders".to_string(), 0)].len(), 5);
    assert_eq!(second.ids().len(), 5);
    judge::after_pass(&pool, &c, PassResult::Read(&r), &mut second)
        .await
        .expect("judge");
    // From then on it keeps it.
    let r = pass(5);
    let stored = clusters::record_reading(&pool, c.id, &r)
        .await
        .expect("store");
    second.push_read(stored.pass_id, r.finished, &stored.samples);
    let source = kept::current(&pool, c.id, &mut second)
        .await
        .expect("windows");
    let w = second.windows().clone();
    assert_eq!(source, Source::Memory);
    assert_eq!(w["steady"][&("orders".to_string(), 0)].len(), 6);

    // The first takes it back: its memory lacks the second's passes, so
    // it reads the window again, and it has all six.
    let r = pass(6);
    let stored = clusters::record_reading(&pool, c.id, &r)
        .await
        .expect("store");
    first.push_read(stored.pass_id, r.finished, &stored.samples);
    let source = kept::current(&pool, c.id, &mut first)
        .await
        .expect("windows");
    let w = first.windows().clone();
    assert_eq!(source, Source::Postgres);
    assert_eq!(w["steady"][&("orders".to_string(), 0)].len(), 7);
    let source = kept::current(&pool, c.id, &mut first)
        .await
        .expect("windows");
    assert_eq!(source, Source::Memory);
    assert_eq!(first.windows(), &w);
}

/// The newest sample time in the receipts of group `group`'s lag flag.
async fn receipts_of(pool: &PgPool, cluster_id: i64, group: &str) -> Option<DateTime<Utc>> {
    let evidence: Option<serde_json::Value> = sqlx::query_scalar(
        "SELECT evidence FROM flags WHERE cluster_id = $1 AND subject = $2 AND rule = 'lag'
           AND state = 'open'",
    )
    .bind(cluster_id)
    .bind(group)
    .fetch_optional(pool)
    .await
    .expect("flag");
    evidence?["partitions"]
        .as_array()?
        .iter()
        .flat_map(|p| p["samples"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["at"].as_str()?.parse().ok())
        .max()
}

/// A flag whose trouble stays the same keeps its receipts, rewritten at its
/// turn once every `REFRESH_EVALUATIONS` passes, not every pass; a sampler
/// that starts again (no memory) writes them at once.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_flags_receipts_are_rewritten_when_the_trouble_changes(pool: PgPool) {
    use streamkeeper::flags::receipts::REFRESH_EVALUATIONS;
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    let c = cluster(&pool, "receipts").await;
    let mut kept = KeptWindow::default();
    let passes = 2 * i64::try_from(REFRESH_EVALUATIONS).expect("small") + 15;
    let start = Utc::now() - Duration::seconds(15 * (passes + 2));
    let mut rewritten = Vec::new();
    let mut last_seen = None;
    let mut last_pass = start;
    for n in 0..passes {
        let at = start + Duration::seconds(15 * n);
        let r = scenario(n, at);
        let stored = clusters::record_reading(&pool, c.id, &r)
            .await
            .expect("store");
        kept.push_read(stored.pass_id, r.finished, &stored.samples);
        judge::after_pass(&pool, &c, PassResult::Read(&r), &mut kept)
            .await
            .expect("judge");
        // "stops" stopped at pass 4 with no members: once its window holds
        // only the standing offset its trouble no longer changes.
        if n >= 15 {
            let of = receipts_of(&pool, c.id, "stops")
                .await
                .expect("a STOP flag");
            assert!(
                at - of
                    <= Duration::seconds(15 * i64::try_from(REFRESH_EVALUATIONS).expect("small")),
                "pass {n}: receipts of {of} are older than the refresh period"
            );
            if last_seen != Some(of) {
                rewritten.push(n);
                last_seen = Some(of);
            }
        }
        last_pass = at;
    }
    let watched = usize::try_from(passes - 15).expect("positive");
    assert!(
        (2..=4).contains(&rewritten.len()),
        "receipts written at passes {rewritten:?} of {watched}: at their turn, not every pass"
    );
    // The kept sentence follows every pass all the same.
    let reason: String = sqlx::query_scalar(
        "SELECT reason FROM flags WHERE cluster_id = $1 AND subject = 'stops' AND rule = 'lag'",
    )
    .bind(c.id)
    .fetch_one(&pool)
    .await
    .expect("reason");
    assert!(!reason.is_empty());

    // A sampler with no memory (a restart) writes every open flag's receipts.
    let mut fresh = KeptWindow::default();
    let at = last_pass + Duration::seconds(15);
    let r = scenario(passes, at);
    let stored = clusters::record_reading(&pool, c.id, &r)
        .await
        .expect("store");
    fresh.push_read(stored.pass_id, r.finished, &stored.samples);
    judge::after_pass(&pool, &c, PassResult::Read(&r), &mut fresh)
        .await
        .expect("judge");
    let of = receipts_of(&pool, c.id, "stops")
        .await
        .expect("a STOP flag");
    assert_eq!(
        of.timestamp(),
        at.timestamp(),
        "written at once after a restart"
    );
}
