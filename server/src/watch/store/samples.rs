//! Lag samples: the raw per-pass rows in daily partitions, the per-minute
//! and per-hour rollups of each group's total lag, and their retention.

use crate::platform::errors::Db;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use sqlx::{FromRow, PgConnection, PgPool, Postgres, Transaction};
use std::collections::BTreeMap;
use streamkeeper::watch::window::WindowSample;

/// Raw samples are kept this long: the lag windows need minutes, the
/// 1-hour chart an hour, and a day of margin lets an operator look back.
pub const RAW_DAYS: i64 = 3;
/// Minute rollups feed the 24-hour chart; kept for a week and a day.
pub const MINUTE_DAYS: i64 = 8;
/// Hour rollups feed the 7-day chart and longer looks back: kept as long
/// as a cluster's history is (a removed cluster's too).
pub const HOUR_DAYS: i64 = streamkeeper::watch::cluster::HISTORY_DAYS;
/// Day partitions made ahead of time, so a pass never waits on DDL.
const DAYS_AHEAD: i64 = 2;

/// The columns of one pass's samples, in insert order.
#[derive(Debug, Default)]
pub struct SampleColumns {
    pub groups: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub committed: Vec<Option<i64>>,
    pub log_start: Vec<Option<i64>>,
    pub log_end: Vec<Option<i64>>,
}

impl SampleColumns {
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Each group's total lag over the partitions it could be measured on;
    /// a group with no measurable partition has no total (a gap, not 0).
    pub fn group_totals(&self) -> BTreeMap<&str, i64> {
        let mut totals = BTreeMap::new();
        for i in 0..self.len() {
            if let (Some(c), Some(s), Some(e)) =
                (self.committed[i], self.log_start[i], self.log_end[i])
            {
                *totals.entry(self.groups[i].as_str()).or_insert(0) += (e - c.max(s)).max(0);
            }
        }
        totals
    }
}

/// Writes one pass's samples and folds each group's total lag into the
/// minute and hour rollups, inside the pass's transaction.
pub async fn insert(
    tx: &mut Transaction<'_, Postgres>,
    cluster_id: i64,
    pass_id: i64,
    at: DateTime<Utc>,
    s: &SampleColumns,
) -> Result<(), Db> {
    copy_samples(tx, cluster_id, pass_id, at, s).await?;
    fold_rollups(tx, cluster_id, at, s).await
}

/// The raw samples, by COPY rather than a multi-row INSERT: about twice
/// the rows a second, which a pass of a large cluster needs
/// (BENCHMARKS.md).
pub async fn copy_samples(
    tx: &mut Transaction<'_, Postgres>,
    cluster_id: i64,
    pass_id: i64,
    at: DateTime<Utc>,
    s: &SampleColumns,
) -> Result<(), Db> {
    let mut copy = tx
        .copy_in_raw(
            "COPY lag_samples (cluster_id, pass_id, at, group_name, topic, partitions, committed, log_start, log_end) FROM STDIN",
        )
        .await?;
    copy.send(copy_text(cluster_id, pass_id, at, s).into_bytes())
        .await?;
    Ok(copy.finish().await.map(drop)?)
}

/// Each group's total lag of this pass into its minute and hour buckets.
pub async fn fold_rollups(
    tx: &mut Transaction<'_, Postgres>,
    cluster_id: i64,
    at: DateTime<Utc>,
    s: &SampleColumns,
) -> Result<(), Db> {
    let totals = s.group_totals();
    let names: Vec<&str> = totals.keys().copied().collect();
    let lags: Vec<i64> = totals.values().copied().collect();
    for (table, unit) in [("lag_rollup_1m", "minute"), ("lag_rollup_1h", "hour")] {
        // Table and unit come from the list above, never from input.
        sqlx::query(&format!(
            "INSERT INTO {table} AS r (cluster_id, group_name, bucket, lag_max, lag_sum, samples)
             SELECT $1, g, date_trunc('{unit}', $2::timestamptz), l, l, 1
             FROM UNNEST($3::text[], $4::bigint[]) AS u(g, l)
             ON CONFLICT (cluster_id, group_name, bucket) DO UPDATE
                SET lag_max = GREATEST(r.lag_max, EXCLUDED.lag_max),
                    lag_sum = r.lag_sum + EXCLUDED.lag_sum,
                    samples = r.samples + 1"
        ))
        .bind(cluster_id)
        .bind(at)
        .bind(&names)
        .bind(&lags)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The samples in COPY's text format: a line per group and topic (its
/// partitions' values as array literals), tab-separated. Written here
/// because sqlx sends COPY data but does not encode rows; only names need
/// escaping (group ids are arbitrary strings). `s` lists each group's
/// partitions of a topic next to each other, as the reading does.
fn copy_text(cluster_id: i64, pass_id: i64, at: DateTime<Utc>, s: &SampleColumns) -> String {
    use std::fmt::Write;
    let at = at.to_rfc3339();
    let mut out = String::with_capacity(s.len() * 24);
    let mut start = 0;
    while start < s.len() {
        let same = |i: &usize| s.groups[*i] == s.groups[start] && s.topics[*i] == s.topics[start];
        let end = (start..s.len()).find(|i| !same(i)).unwrap_or(s.len());
        let run = start..end;
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{cluster_id}\t{pass_id}\t{at}\t{}\t{}\t{}\t{}\t{}\t{}",
            copy_escape(&s.groups[start]),
            copy_escape(&s.topics[start]),
            array(
                s.partitions[run.clone()]
                    .iter()
                    .map(|p| Some(i64::from(*p)))
            ),
            array(s.committed[run.clone()].iter().copied()),
            array(s.log_start[run.clone()].iter().copied()),
            array(s.log_end[run].iter().copied()),
        );
        start = end;
    }
    out
}

/// A Postgres array literal of numbers, `NULL` for absent values.
fn array(values: impl Iterator<Item = Option<i64>>) -> String {
    let items: Vec<String> = values
        .map(|v| v.map_or_else(|| "NULL".to_owned(), |v| v.to_string()))
        .collect();
    format!("{{{}}}", items.join(","))
}

/// Escapes a value for COPY's text format.
fn copy_escape(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '\t', '\n', '\r']) {
        return v.into();
    }
    let mut out = String::with_capacity(v.len() + 4);
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.into()
}

#[derive(Debug, Clone, FromRow)]
pub struct SampleRow {
    pub pass_id: i64,
    pub at: DateTime<Utc>,
    pub group_name: String,
    pub topic: String,
    pub partition: i32,
    pub committed: Option<i64>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
}

impl WindowSample for SampleRow {
    fn group(&self) -> &str {
        &self.group_name
    }
    fn topic(&self) -> &str {
        &self.topic
    }
    fn partition(&self) -> i32 {
        self.partition
    }
    fn at_ms(&self) -> i64 {
        self.at.timestamp_millis()
    }
    fn committed(&self) -> Option<i64> {
        self.committed
    }
    fn log_start(&self) -> Option<i64> {
        self.log_start
    }
    fn log_end(&self) -> Option<i64> {
        self.log_end
    }
}

/// A group's samples over the last `passes` passes of its cluster, oldest
/// first per partition.
pub async fn group_window(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    passes: i64,
) -> Result<Vec<SampleRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT s.pass_id, s.at, s.group_name, s.topic, u.partition, u.committed, u.log_start, u.log_end
         FROM lag_samples s,
              unnest(s.partitions, s.committed, s.log_start, s.log_end)
                  AS u(partition, committed, log_start, log_end)
         WHERE s.cluster_id = $1 AND s.group_name = $2
           AND s.pass_id = ANY(ARRAY(SELECT id FROM cluster_passes WHERE cluster_id = $1
                                       AND started_at >= (SELECT COALESCE(window_from, '-infinity')
                                                          FROM clusters WHERE id = $1)
                                     ORDER BY started_at DESC LIMIT $3))
         ORDER BY s.topic, u.partition, s.at",
    )
    .bind(cluster_id)
    .bind(group)
    .bind(passes)
    .fetch_all(pool)
    .await?)
}

/// Every group's samples over the last `passes` passes of a cluster, in
/// one read: the evaluation after a pass judges all groups at once.
pub async fn cluster_window(
    pool: &PgPool,
    cluster_id: i64,
    passes: i64,
) -> Result<Vec<SampleRow>, Db> {
    Ok(sqlx::query_as(
        "WITH recent AS (SELECT id, started_at FROM cluster_passes WHERE cluster_id = $1
                           AND started_at >= (SELECT COALESCE(window_from, '-infinity')
                                              FROM clusters WHERE id = $1)
                         ORDER BY started_at DESC LIMIT $2)
         SELECT s.pass_id, s.at, s.group_name, s.topic, u.partition, u.committed, u.log_start, u.log_end
         FROM lag_samples s,
              unnest(s.partitions, s.committed, s.log_start, s.log_end)
                  AS u(partition, committed, log_start, log_end)
         WHERE s.cluster_id = $1
           AND s.at >= (SELECT min(started_at) FROM recent)
           AND s.pass_id = ANY(ARRAY(SELECT id FROM recent))
         ORDER BY s.group_name, s.topic, u.partition, s.at",
    )
    .bind(cluster_id)
    .bind(passes)
    .fetch_all(pool)
    .await?)
}

/// Per pass since `since`: when it finished, whether it read the cluster,
/// and the group's total lag in it (NULL when the pass had no measurable
/// sample for the group).
pub async fn pass_series(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    since: DateTime<Utc>,
) -> Result<Vec<(DateTime<Utc>, String, Option<i64>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT p.finished_at, p.outcome, s.total
         FROM cluster_passes p
         LEFT JOIN (
             SELECT s.pass_id, sum(GREATEST(u.log_end - GREATEST(u.committed, u.log_start), 0))::bigint AS total
             FROM lag_samples s,
                  unnest(s.committed, s.log_start, s.log_end) AS u(committed, log_start, log_end)
             WHERE s.cluster_id = $1 AND s.group_name = $2 AND s.at >= $3
               AND u.committed IS NOT NULL AND u.log_end IS NOT NULL AND u.log_start IS NOT NULL
             GROUP BY s.pass_id
         ) s ON s.pass_id = p.id
         WHERE p.cluster_id = $1 AND p.started_at >= $3
         ORDER BY p.started_at",
    )
    .bind(cluster_id)
    .bind(group)
    .bind(since)
    .fetch_all(pool)
    .await?)
}

/// One partition's lag since `since`: per pass (`None`), as
/// [`pass_series`] for the whole group, or its largest lag per minute or
/// hour bucket (every bucket listed, an empty one `None`), read from the
/// samples themselves (the rollups keep only each group's total).
pub async fn partition_series(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    (topic, partition): (&str, i32),
    since: DateTime<Utc>,
    rollup: Option<Rollup>,
) -> Result<Vec<(DateTime<Utc>, Option<i64>)>, Db> {
    // The partition's lag in each sample of the window; a sample without
    // a committed offset or an end is no figure (a gap), never a zero.
    const LAGS: &str = "SELECT s.pass_id, s.at,
                GREATEST(u.log_end - GREATEST(u.committed, u.log_start), 0)::bigint AS lag
             FROM lag_samples s,
                  unnest(s.partitions, s.committed, s.log_start, s.log_end)
                      AS u(partition, committed, log_start, log_end)
             WHERE s.cluster_id = $1 AND s.group_name = $2 AND s.topic = $3 AND s.at >= $5
               AND u.partition = $4 AND u.committed IS NOT NULL AND u.log_end IS NOT NULL
               AND u.log_start IS NOT NULL";
    let sql = match rollup {
        None => format!(
            "SELECT p.finished_at, CASE WHEN p.outcome = 'UNREACHABLE' THEN NULL ELSE l.lag END
             FROM cluster_passes p
             LEFT JOIN ({LAGS}) l ON l.pass_id = p.id
             WHERE p.cluster_id = $1 AND p.started_at >= $5
             ORDER BY p.started_at"
        ),
        Some(r) => {
            let unit = match r {
                Rollup::Minute => "minute",
                Rollup::Hour => "hour",
            };
            format!(
                "SELECT b.bucket, l.lag
                 FROM generate_series(date_trunc('{unit}', $5::timestamptz), date_trunc('{unit}', now()),
                                      interval '1 {unit}') AS b(bucket)
                 LEFT JOIN (SELECT date_trunc('{unit}', at) AS bucket, max(lag) AS lag
                            FROM ({LAGS}) x GROUP BY 1) l ON l.bucket = b.bucket
                 ORDER BY b.bucket"
            )
        }
    };
    Ok(sqlx::query_as(&sql)
        .bind(cluster_id)
        .bind(group)
        .bind(topic)
        .bind(partition)
        .bind(since)
        .fetch_all(pool)
        .await?)
}

/// When the group was first seen on the cluster (the end of that pass),
/// if it ever was.
pub async fn group_first_seen(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
) -> Result<Option<DateTime<Utc>>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT first_seen FROM consumer_groups WHERE cluster_id = $1 AND name = $2",
    )
    .bind(cluster_id)
    .bind(group)
    .fetch_optional(pool)
    .await?)
}

/// The resolution of a rollup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollup {
    Minute,
    Hour,
}

/// A group's largest total lag per bucket since `since`, every bucket
/// listed: a bucket without a row is `None`, drawn as a gap.
pub async fn rollup_series(
    pool: &PgPool,
    cluster_id: i64,
    group: &str,
    since: DateTime<Utc>,
    rollup: Rollup,
) -> Result<Vec<(DateTime<Utc>, Option<i64>)>, Db> {
    let (table, unit) = match rollup {
        Rollup::Minute => ("lag_rollup_1m", "minute"),
        Rollup::Hour => ("lag_rollup_1h", "hour"),
    };
    Ok(sqlx::query_as(&format!(
        "SELECT b.bucket, r.lag_max
         FROM generate_series(date_trunc('{unit}', $3::timestamptz), date_trunc('{unit}', now()),
                              interval '1 {unit}') AS b(bucket)
         LEFT JOIN {table} r ON r.cluster_id = $1 AND r.group_name = $2 AND r.bucket = b.bucket
         ORDER BY b.bucket"
    ))
    .bind(cluster_id)
    .bind(group)
    .bind(since)
    .fetch_all(pool)
    .await?)
}

/// The name of the partition holding `day`'s samples.
fn partition_name(day: NaiveDate) -> String {
    format!("lag_samples_p{}", day.format("%Y%m%d"))
}

/// The day a partition name stands for, if it is one of ours.
fn partition_day(name: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(name.strip_prefix("lag_samples_p")?, "%Y%m%d").ok()
}

/// Makes the day partitions from today to [`DAYS_AHEAD`] days on. Replicas
/// may run this at once: an advisory lock makes them take turns.
pub async fn ensure_partitions(pool: &PgPool, now: DateTime<Utc>) -> Result<(), Db> {
    let mut tx = pool.begin().await?;
    lock_partitions(&mut tx).await?;
    let today = now.date_naive();
    for d in 0..=DAYS_AHEAD {
        let day = today + Duration::days(d);
        let next = day + Duration::days(1);
        // Names and bounds are formatted from dates, never from input.
        sqlx::query(&format!(
            "CREATE TABLE IF NOT EXISTS {} PARTITION OF lag_samples
             FOR VALUES FROM ('{day} 00:00:00+00') TO ('{next} 00:00:00+00')",
            partition_name(day)
        ))
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx.commit().await?)
}

async fn lock_partitions(conn: &mut PgConnection) -> Result<(), Db> {
    Ok(
        sqlx::query(
            "SELECT pg_advisory_xact_lock(hashtext('streamkeeper.lag_samples.partitions'))",
        )
        .execute(conn)
        .await
        .map(drop)?,
    )
}

/// What retention removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Expired {
    pub partitions: usize,
    pub rollup_rows: u64,
}

/// Drops day partitions older than [`RAW_DAYS`], deletes rollups past
/// their own retention and passes past the minute rollups' retention.
pub async fn expire(pool: &PgPool, now: DateTime<Utc>) -> Result<Expired, Db> {
    let mut tx = pool.begin().await?;
    lock_partitions(&mut tx).await?;
    let children: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         WHERE p.relname = 'lag_samples'",
    )
    .fetch_all(&mut *tx)
    .await?;
    let oldest_kept = (now - Duration::days(RAW_DAYS)).date_naive();
    let mut out = Expired::default();
    for name in children {
        if partition_day(&name).is_some_and(|d| d < oldest_kept) {
            sqlx::query(&format!("DROP TABLE {name}"))
                .execute(&mut *tx)
                .await?;
            out.partitions += 1;
        }
    }
    // The default partition only holds rows no day partition took.
    sqlx::query("DELETE FROM lag_samples_default WHERE at < $1")
        .bind(now - Duration::days(RAW_DAYS))
        .execute(&mut *tx)
        .await?;
    for (table, days) in [
        ("lag_rollup_1m", MINUTE_DAYS),
        ("lag_rollup_1h", HOUR_DAYS),
        // The freshness SLOs' burn windows reach back 6 hours.
        ("stream_slo_1m", 1),
        ("stream_slo_1h", HOUR_DAYS),
    ] {
        out.rollup_rows += sqlx::query(&format!("DELETE FROM {table} WHERE bucket < $1"))
            .bind(now - Duration::days(days))
            .execute(&mut *tx)
            .await?
            .rows_affected();
    }
    // Passes outlive raw samples: they date the last good pass.
    sqlx::query("DELETE FROM cluster_passes WHERE started_at < $1")
        .bind(now - Duration::days(MINUTE_DAYS))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_round_trip() {
        let d = NaiveDate::from_ymd_opt(2026, 11, 30).expect("a date");
        assert_eq!(partition_name(d), "lag_samples_p20261130");
        assert_eq!(partition_day(&partition_name(d)), Some(d));
        assert_eq!(partition_day("lag_samples_default"), None);
    }

    #[test]
    fn copy_rows_escape_names_and_mark_nulls() {
        let s = SampleColumns {
            groups: vec!["a\tb\\c\nd".into(), "a\tb\\c\nd".into(), "g".into()],
            topics: vec!["t".into(), "t".into(), "t".into()],
            partitions: vec![0, 3, 0],
            committed: vec![Some(5), None, Some(1)],
            log_start: vec![Some(0), Some(0), None],
            log_end: vec![Some(9), Some(9), None],
        };
        let at = DateTime::from_timestamp(0, 0).expect("epoch");
        assert_eq!(
            copy_text(1, 2, at, &s),
            "1\t2\t1970-01-01T00:00:00+00:00\ta\\tb\\\\c\\nd\tt\t{0,3}\t{5,NULL}\t{0,0}\t{9,9}\n\
             1\t2\t1970-01-01T00:00:00+00:00\tg\tt\t{0}\t{1}\t{NULL}\t{NULL}\n"
        );
    }

    #[test]
    fn totals_skip_unmeasurable_partitions() {
        let s = SampleColumns {
            groups: vec!["a".into(), "a".into(), "b".into()],
            topics: vec!["t".into(); 3],
            partitions: vec![0, 1, 0],
            committed: vec![Some(5), None, None],
            log_start: vec![Some(0), Some(0), Some(0)],
            log_end: vec![Some(9), Some(9), Some(9)],
        };
        let t = s.group_totals();
        assert_eq!(t.get("a"), Some(&4));
        assert_eq!(t.get("b"), None);
    }
}
