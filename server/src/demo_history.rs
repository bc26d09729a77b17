//! The demo's pilot history player (issue 15): plays the ten days of
//! `streamkeeper::pilot::history` into a database through the real code
//! paths, each step at the time the script gives, so the pilot's page has
//! a history whose every figure was made by the product itself:
//!
//! - the cluster's passes are scripted readings, stored and judged by the
//!   sampler's own `record_reading` and `judge::after_pass` (flags raised,
//!   updated and resolved by the real evaluation);
//! - the flags' webhooks go out through the deliveries routine's
//!   `deliver_due` to a receiver this player runs (the team's chat relay,
//!   which refuses the first attempts in the first days);
//! - everything people do (the setup, acknowledgements, dismissals,
//!   compatibility checks, proposals, approvals that apply to the Schema
//!   Registry, "notify owners") goes through the REST API of the router
//!   `serve` runs, in process, with tokens of the script's people.
//!
//! Each step moves the console's clock (`platform::clock`) to its time;
//! this player's connections carry the offset to `streamkeeper_now()`.
//! Run it in a process of its own, never in a serving one (the clock is
//! process-wide), and before `serve` starts on the same database: the
//! serving process's deliveries routine would otherwise send the history's
//! webhooks at today's time. It sits beside `serve.rs`, not in a feature
//! folder, because like `serve` it assembles the router; its parts in
//! `demo_history/` (the console and relay, the stage, the schemas) import
//! no router, as the layering step asks of a folder.

mod console;
mod schemas;
mod setup;

use crate::accounts::store::tokens;
use crate::clients::egress::Outbound;
use crate::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use crate::clients::webhook::Webhooks;
use crate::config::ServeConfig;
use crate::http::{AppState, router};
use crate::platform::{clock, db};
use crate::watch::judge::{self, PassResult};
use crate::watch::kept::KeptWindow;
use crate::watch::store::ClusterRow;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, NaiveDate, Utc};
use console::{CONSOLE_ORIGIN, Console, Relay};
use schemas::{checked, proposed, review_field};
use serde_json::{Value, json};
use setup::{People, people, set_stage};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use streamkeeper::pilot::history::{self, APPROVER, GROUPS, Pass, Step, TOPIC};
use streamkeeper::platform::egress::EgressPolicy;
use tower_sessions_sqlx_store::PostgresStore;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("the database: {0}")]
    Db(#[from] crate::platform::errors::Db),
    #[error("connecting to the database: {0}")]
    Connect(#[from] sqlx::Error),
    #[error("no cluster named {0}: add it first (streamkeeper cluster add)")]
    NoCluster(String),
    #[error("user {0} exists already: play the history into a fresh database")]
    Played(String),
    #[error("no user named {0}: the admin who sets the stage must exist")]
    NoAdmin(String),
    #[error("the webhook receiver: {0}")]
    Receiver(std::io::Error),
    /// The player's own setting up failed (a client, a password hash).
    #[error("setting up the player: {0}")]
    Setup(String),
    /// The records did not follow the script.
    #[error("the history went off its script: {0}")]
    OffScript(String),
    #[error("the Schema Registry at {0}: {1}")]
    Registry(String, String),
    #[error("{what}: the console answered {status}: {body}")]
    Refused {
        what: String,
        status: StatusCode,
        body: String,
    },
}

/// Where to play the history.
pub struct Stage<'a> {
    pub database_url: &'a str,
    /// The registered cluster the history's topic is on.
    pub cluster: &'a str,
    /// The cluster's Schema Registry (the demo's double).
    pub registry_url: &'a str,
    /// An admin whose token sets the stage (teams, the registry, the
    /// domain); revoked at the end.
    pub admin: &'a str,
    /// The pilot's day 1: ten days before the demo's day.
    pub day1: NaiveDate,
}

/// What was played.
#[derive(Debug)]
pub struct Played {
    pub steps: usize,
    /// The review items proposed, in the script's order.
    pub reviews: Vec<i64>,
    /// The webhooks the relay took.
    pub delivered: usize,
    pub took: Duration,
}

/// The settings `serve` would have, for the in-process router: outbound
/// requests to loopback (the registry double, the relay).
fn config() -> Result<ServeConfig, HistoryError> {
    let bad = |e: &dyn std::fmt::Display| HistoryError::Setup(e.to_string());
    Ok(ServeConfig {
        bind: "127.0.0.1:0".parse().map_err(|e| bad(&e))?,
        public_url: url::Url::parse(CONSOLE_ORIGIN).map_err(|e| bad(&e))?,
        site: crate::http::site::Site::Carried,
        session_idle: Duration::from_secs(1800),
        session_max: Duration::from_secs(12 * 3600),
        trusted_proxies: Vec::new(),
        clusters_file: None,
        outbound: Outbound {
            egress: EgressPolicy::LOOPBACK,
            ..Outbound::default()
        },
        max_schema_bytes: crate::platform::limits::DEFAULT_MAX_SCHEMA_BYTES,
        metrics_max_series: crate::platform::metrics::DEFAULT_MAX_SERIES,
        lineage_forward: None,
        sso: None,
        local_login: Default::default(),
        smtp: None,
    })
}

/// The player's pool: each connection carries the clock's offset as it is
/// when the connection is taken (the steps run one at a time).
async fn pool(url: &str) -> Result<PgPool, HistoryError> {
    Ok(PgPoolOptions::new()
        .max_connections(4)
        .before_acquire(|conn, _| {
            Box::pin(async move {
                db::set_clock_offset(conn, clock::offset_ms()).await?;
                Ok(true)
            })
        })
        .connect_with(db::connect_options(url)?)
        .await?)
}

/// Plays the history; the clock is back on the machine's time after,
/// whatever happened.
pub async fn play(stage: &Stage<'_>) -> Result<Played, HistoryError> {
    let started = Instant::now();
    let played = play_on(stage).await;
    clock::reset();
    played.map(|p| Played {
        took: started.elapsed(),
        ..p
    })
}

async fn play_on(stage: &Stage<'_>) -> Result<Played, HistoryError> {
    let pool = pool(stage.database_url).await?;
    let script = history::script();
    let at = |t: i64| history::instant(stage.day1, t);
    // The stage is set on day 1, at 08:00.
    clock::set_to(at(history::at(1, 8, 0)));
    let cluster = crate::watch::store::all(&pool)
        .await?
        .into_iter()
        .find(|c| c.name == stage.cluster)
        .ok_or_else(|| HistoryError::NoCluster(stage.cluster.to_string()))?;
    let people = people(&pool, stage.admin).await?;
    let console = Console {
        app: router(
            AppState::new(pool.clone(), config()?),
            PostgresStore::new(pool.clone()),
        ),
    };
    let relay = Relay::start().await?;
    let mut kept = KeptWindow::default();
    // The cluster's first pass over the topic makes it and its groups known.
    let first = Pass {
        at: history::at(1, 8, 0),
        log_end: 0,
        groups: GROUPS.iter().map(|g| (*g, 0, 1)).collect(),
    };
    pass(&pool, &cluster, &first, at(first.at), &mut kept).await?;
    set_stage(&console, &people, &cluster, stage, &relay).await?;

    let webhooks = Webhooks::new(EgressPolicy::LOOPBACK)
        .map_err(|e| HistoryError::Setup(format!("the webhooks' client: {e}")))?;
    let steps = script.steps();
    let mut player = Player {
        pool: &pool,
        cluster: &cluster,
        console: &console,
        people: &people,
        relay: &relay,
        webhooks: &webhooks,
        kept,
        reviews: Vec::new(),
        day1: stage.day1,
    };
    for (t, step) in &steps {
        clock::set_to(at(*t));
        player.play(*t, step).await?;
    }
    let reviews = player.reviews;
    // The tokens were the history's; nobody uses them after.
    let mut conn = pool.acquire().await?;
    for id in &people.ids {
        tokens::revoke(&mut conn, *id).await?;
    }
    Ok(Played {
        steps: steps.len(),
        reviews,
        delivered: relay.taken.load(Ordering::Relaxed),
        took: Duration::ZERO,
    })
}

/// What the history's steps act on: the console's database and router,
/// its people, the chat relay, and the reviews proposed so far.
struct Player<'a> {
    pool: &'a PgPool,
    cluster: &'a ClusterRow,
    console: &'a Console,
    people: &'a People,
    relay: &'a Relay,
    webhooks: &'a Webhooks,
    kept: KeptWindow,
    reviews: Vec<i64>,
    day1: NaiveDate,
}

impl Player<'_> {
    /// Plays one step, at `t` (the clock is already there).
    async fn play(&mut self, t: i64, step: &Step) -> Result<(), HistoryError> {
        let at = history::instant(self.day1, t);
        match step {
            Step::Pass(p) => {
                let when = history::instant(self.day1, p.at);
                pass(self.pool, self.cluster, p, when, &mut self.kept).await?;
            }
            Step::Deliver { relay_up } => {
                self.relay.up.store(*relay_up, Ordering::Relaxed);
                wait_for_retries(self.pool, at).await?;
                crate::flags::routine::deliver_due(self.pool, self.webhooks).await?;
            }
            Step::Acknowledge { group } => self.acknowledge(group).await?,
            Step::Dismiss { group, reason } => self.dismiss(group, reason).await?,
            Step::Check { n, breaking } => self.check(*n, *breaking).await?,
            Step::Propose { n } => self.propose(*n).await?,
            Step::Approve { n } => self.approve(*n).await?,
            Step::Ask => self.ask().await?,
        }
        Ok(())
    }

    async fn acknowledge(&self, group: &str) -> Result<(), HistoryError> {
        let id = live_flag(self.pool, self.cluster, group).await?;
        let path = format!("/api/v1/flags/{id}/acknowledge");
        self.console
            .call(
                "acknowledging",
                Method::POST,
                &path,
                &self.people.owner,
                None,
            )
            .await?;
        Ok(())
    }

    async fn dismiss(&self, group: &str, reason: &str) -> Result<(), HistoryError> {
        let id = live_flag(self.pool, self.cluster, group).await?;
        let path = format!("/api/v1/flags/{id}/dismiss");
        // The script's dismissals say the flag was wrong: the pilot counts them.
        let body = json!({ "reason": reason, "dismissal": "wrong" });
        self.console
            .call(
                "dismissing",
                Method::POST,
                &path,
                &self.people.owner,
                Some(body),
            )
            .await?;
        Ok(())
    }

    async fn check(&self, n: usize, breaking: bool) -> Result<(), HistoryError> {
        let path = format!(
            "/api/v1/clusters/{}/streams/{TOPIC}/compatibility",
            self.cluster.id
        );
        let body = json!({"schema_type": "AVRO", "schema": checked(n, breaking)});
        self.console
            .call(
                "a check",
                Method::POST,
                &path,
                &self.people.owner,
                Some(body),
            )
            .await?;
        Ok(())
    }

    async fn propose(&mut self, n: usize) -> Result<(), HistoryError> {
        let body = json!({
            "kind": "producer_change", "cluster_id": self.cluster.id, "topic": TOPIC,
            "schema_type": "AVRO", "schema": proposed(n),
            "title": format!("{TOPIC}: add an optional {}", review_field(n)),
        });
        let item = self
            .console
            .call(
                "a proposal",
                Method::POST,
                "/api/v1/review-items",
                &self.people.owner,
                Some(body),
            )
            .await?;
        self.reviews.push(id_of(&item, "the proposal")?);
        Ok(())
    }

    async fn approve(&self, n: usize) -> Result<(), HistoryError> {
        let id = self.reviews.get(n).copied().ok_or_else(|| {
            HistoryError::OffScript(format!("review {n} approved before it was proposed"))
        })?;
        let path = format!("/api/v1/review-items/{id}");
        let item = self
            .console
            .call(
                "reading an item",
                Method::GET,
                &path,
                &self.people.approver,
                None,
            )
            .await?;
        self.console
            .approve(
                (APPROVER, &self.people.approver_password),
                &format!("{path}/approvals"),
                &item["content_hash"],
            )
            .await?;
        Ok(())
    }

    async fn ask(&self) -> Result<(), HistoryError> {
        let body = json!({"topic": TOPIC, "cluster": self.cluster.name, "direction": "downstream"});
        self.console
            .call(
                "notify owners",
                Method::POST,
                "/api/v1/lineage/impact/notify",
                &self.people.owner,
                Some(body),
            )
            .await?;
        Ok(())
    }
}

/// Waits until the retries scripted for this second are due. The clock
/// runs from each step's time, so a refused attempt was stamped a few ms
/// into its step, and its retry is due those ms after the step that
/// retries it starts: the deliveries routine, which runs every second,
/// would send it then, so the player waits those ms rather than skip it.
async fn wait_for_retries(pool: &PgPool, step: DateTime<Utc>) -> Result<(), HistoryError> {
    let until = step + chrono::Duration::seconds(1);
    let next = crate::flags::next_delivery_before(pool, until).await?;
    if let Some(wait) = next.and_then(|due| (due - clock::now()).to_std().ok()) {
        tokio::time::sleep(wait).await;
    }
    Ok(())
}

/// Stores one scripted pass and judges it, as the sampler's `pass` does
/// with what it read.
async fn pass(
    pool: &PgPool,
    cluster: &ClusterRow,
    p: &Pass,
    at: DateTime<Utc>,
    kept: &mut KeptWindow,
) -> Result<(), HistoryError> {
    let reading = Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: vec![TopicReading {
            name: TOPIC.into(),
            partitions: vec![PartitionReading {
                partition: 0,
                leader: Some(1),
                replicas: vec![1],
                isr: vec![1],
                log_start: Some(0),
                log_end: Some(p.log_end),
            }],
            last_message_at: None,
            wire: None,
        }],
        groups: p
            .groups
            .iter()
            .map(|(name, committed, members)| GroupReading {
                name: (*name).into(),
                state: if *members > 0 { "Stable" } else { "Empty" }.into(),
                members: *members,
                offsets: BTreeMap::from([((TOPIC.to_string(), 0), Some(*committed))]),
                error: None,
                assigned: Default::default(),
            })
            .collect(),
        // Only the history's groups were read: the others are not gone.
        groups_listed: false,
        problems: Vec::new(),
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("a scripted pass of the demo's history, not read".into()),
    };
    let stored = crate::watch::store::record_reading(pool, cluster.id, &reading).await?;
    kept.push_read(stored.pass_id, reading.finished, &stored.samples);
    judge::after_pass(pool, cluster, PassResult::Read(&reading), kept).await?;
    Ok(())
}

/// The `id` of what the console made.
fn id_of(made: &Value, what: &str) -> Result<i64, HistoryError> {
    made["id"]
        .as_i64()
        .ok_or_else(|| HistoryError::OffScript(format!("{what} came back without an id: {made}")))
}

async fn live_flag(pool: &PgPool, cluster: &ClusterRow, group: &str) -> Result<i64, HistoryError> {
    crate::flags::live_group_flag(pool, cluster.id, group)
        .await?
        .ok_or_else(|| {
            HistoryError::OffScript(format!(
                "{group} has no live flag: the judge did not raise what the script says"
            ))
        })
}
