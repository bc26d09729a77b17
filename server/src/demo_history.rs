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
//! folder, because like `serve` it assembles the router.

use crate::accounts::store::{tokens, users};
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
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::{Scope, Scopes};
use streamkeeper::pilot::history::{
    self, APPROVER, DOMAIN, GROUPS, MANAGER, OWNER, Pass, Step, TEAM, TOPIC,
};
use streamkeeper::platform::egress::EgressPolicy;
use tower::ServiceExt;
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

/// The history's people, with a token each, and the approver's password
/// (approvals are made in person).
struct People {
    admin: String,
    owner: String,
    approver: String,
    approver_password: String,
    manager: String,
    ids: Vec<i64>,
}

/// The receiver of the team's webhooks: takes them (200) while the relay
/// is up, refuses them (503) while it is down.
struct Relay {
    up: Arc<AtomicBool>,
    taken: Arc<std::sync::atomic::AtomicUsize>,
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start() -> Result<Self, HistoryError> {
        let up = Arc::new(AtomicBool::new(true));
        let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (u, t) = (up.clone(), taken.clone());
        let app = Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let (u, t) = (u.clone(), t.clone());
                async move {
                    if u.load(Ordering::Relaxed) {
                        t.fetch_add(1, Ordering::Relaxed);
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(HistoryError::Receiver)?;
        let addr = listener.local_addr().map_err(HistoryError::Receiver)?;
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the history's webhook receiver stopped");
            }
        });
        Ok(Self {
            up,
            taken,
            url: format!("http://{addr}/hook"),
            task,
        })
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The REST API of the console, in process, over the player's pool.
struct Console {
    app: Router,
}

impl Console {
    async fn call(
        &self,
        what: &str,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> Result<Value, HistoryError> {
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        let body = match body {
            Some(v) => {
                b = b.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        self.send(what, b, body).await
    }

    /// An approval as the approver makes it in the console (no token
    /// approves): signed in with the password, confirming with it again.
    async fn approve(
        &self,
        (username, password): (&str, &str),
        path: &str,
        content_hash: &Value,
    ) -> Result<Value, HistoryError> {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("username", username),
                ("password", password),
                ("next", "/"),
            ])
            .finish();
        let login = Request::post("/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ORIGIN, CONSOLE_ORIGIN)
            .header("sec-fetch-site", "same-origin")
            .body(Body::from(form))
            .map_err(|e| HistoryError::Setup(format!("signing in: {e}")))?;
        let res = match self.app.clone().oneshot(login).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        // The session's cookie, among any others the answer sets.
        let cookie = res
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|c| c.to_str().ok())
            .find(|c| c.starts_with("streamkeeper="))
            .and_then(|c| c.split(';').next())
            .ok_or_else(|| HistoryError::Refused {
                what: format!("{username} signing in"),
                status: res.status(),
                body: String::new(),
            })?
            .to_string();
        let b = Request::post(path)
            .header(header::COOKIE, cookie)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ORIGIN, CONSOLE_ORIGIN)
            .header("sec-fetch-site", "same-origin");
        let body = json!({ "content_hash": content_hash, "password": password });
        self.send("an approval", b, Body::from(body.to_string()))
            .await
    }

    async fn send(
        &self,
        what: &str,
        b: axum::http::request::Builder,
        body: Body,
    ) -> Result<Value, HistoryError> {
        let refused = |status, body: String| HistoryError::Refused {
            what: what.to_string(),
            status,
            body,
        };
        let req = b
            .body(body)
            .map_err(|e| HistoryError::Setup(format!("{what}: {e}")))?;
        let res = match self.app.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = res.status();
        let bytes = to_bytes(res.into_body(), 16 * 1024 * 1024)
            .await
            .map_err(|e| refused(status, e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if !status.is_success() {
            return Err(refused(status, text));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// The in-process console's origin, as its `public_url` gives it.
const CONSOLE_ORIGIN: &str = "http://127.0.0.1";

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
    let mut reviews: Vec<i64> = Vec::new();
    for (t, step) in &steps {
        clock::set_to(at(*t));
        match step {
            Step::Pass(p) => pass(&pool, &cluster, p, at(p.at), &mut kept).await?,
            Step::Deliver { relay_up } => {
                relay.up.store(*relay_up, Ordering::Relaxed);
                wait_for_retries(&pool, at(*t)).await?;
                crate::flags::routine::deliver_due(&pool, &webhooks).await?;
            }
            Step::Acknowledge { group } => {
                let id = live_flag(&pool, &cluster, group).await?;
                let path = format!("/api/v1/flags/{id}/acknowledge");
                console
                    .call("acknowledging", Method::POST, &path, &people.owner, None)
                    .await?;
            }
            Step::Dismiss { group, reason } => {
                let id = live_flag(&pool, &cluster, group).await?;
                let path = format!("/api/v1/flags/{id}/dismiss");
                // The script's dismissals say the flag was wrong: the pilot counts them.
                let body = json!({ "reason": reason, "dismissal": "wrong" });
                console
                    .call("dismissing", Method::POST, &path, &people.owner, Some(body))
                    .await?;
            }
            Step::Check { n, breaking } => {
                let path = format!(
                    "/api/v1/clusters/{}/streams/{TOPIC}/compatibility",
                    cluster.id
                );
                let body = json!({"schema_type": "AVRO", "schema": checked(*n, *breaking)});
                console
                    .call("a check", Method::POST, &path, &people.owner, Some(body))
                    .await?;
            }
            Step::Propose { n } => {
                let body = json!({
                    "kind": "producer_change", "cluster_id": cluster.id, "topic": TOPIC,
                    "schema_type": "AVRO", "schema": proposed(*n),
                    "title": format!("{TOPIC}: add an optional {}", review_field(*n)),
                });
                let item = console
                    .call(
                        "a proposal",
                        Method::POST,
                        "/api/v1/review-items",
                        &people.owner,
                        Some(body),
                    )
                    .await?;
                reviews.push(id_of(&item, "the proposal")?);
            }
            Step::Approve { n } => {
                let id = reviews.get(*n).copied().ok_or_else(|| {
                    HistoryError::OffScript(format!("review {n} approved before it was proposed"))
                })?;
                let path = format!("/api/v1/review-items/{id}");
                let item = console
                    .call(
                        "reading an item",
                        Method::GET,
                        &path,
                        &people.approver,
                        None,
                    )
                    .await?;
                console
                    .approve(
                        (APPROVER, &people.approver_password),
                        &format!("{path}/approvals"),
                        &item["content_hash"],
                    )
                    .await?;
            }
            Step::Ask => {
                let body =
                    json!({"topic": TOPIC, "cluster": cluster.name, "direction": "downstream"});
                console
                    .call(
                        "notify owners",
                        Method::POST,
                        "/api/v1/lineage/impact/notify",
                        &people.owner,
                        Some(body),
                    )
                    .await?;
            }
        }
    }
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

/// The script's people (random passwords nobody is told: they sign in
/// only through this player, with tokens, and the approver in person to
/// approve) and the admin's token.
async fn people(pool: &PgPool, admin: &str) -> Result<People, HistoryError> {
    let mut conn = pool.acquire().await?;
    let admin_id = users::by_username(pool, admin)
        .await?
        .ok_or_else(|| HistoryError::NoAdmin(admin.to_string()))?
        .id;
    let mut made = BTreeMap::new();
    let mut approver_password = String::new();
    for (name, display, role) in [
        (OWNER, "Omar Owner", Role::Owner),
        (APPROVER, "Rita Approver", Role::Approver),
        (MANAGER, "Mona Manager", Role::Manager),
    ] {
        if users::by_username(pool, name).await?.is_some() {
            return Err(HistoryError::Played(name.to_string()));
        }
        let password = tokens::generate();
        let hash = crate::platform::password::hash(&password)
            .map_err(|e| HistoryError::Setup(format!("a password: {e}")))?;
        let row = users::insert(&mut conn, name, display, &hash, &[role], false).await?;
        made.insert(name, row.id);
        if name == APPROVER {
            approver_password = password;
        }
    }
    let (a, admin) = token_for(&mut conn, admin_id).await?;
    let (o, owner) = token_for(&mut conn, made[OWNER]).await?;
    let (r, approver) = token_for(&mut conn, made[APPROVER]).await?;
    let (m, manager) = token_for(&mut conn, made[MANAGER]).await?;
    Ok(People {
        admin,
        owner,
        approver,
        approver_password,
        manager,
        ids: vec![a, o, r, m],
    })
}

/// A token for `user_id` with every scope a token may hold, for the next hour (revoked
/// when the history is played; the hour is for a player that failed).
async fn token_for(
    conn: &mut sqlx::PgConnection,
    user_id: i64,
) -> Result<(i64, String), HistoryError> {
    let token = tokens::generate();
    let scopes = Scopes::new(Scope::ALL.into_iter().filter(|s| *s != Scope::Approve))
        .map_err(|_| HistoryError::Setup("a token without scopes".into()))?;
    // Tokens live by the machine's time, not the history's.
    let expires = Utc::now() + chrono::Duration::hours(1);
    let id = tokens::insert(
        conn,
        user_id,
        "pilot history",
        &token,
        &scopes,
        Some(expires),
    )
    .await?;
    Ok((id, token))
}

/// Team risk with its relay, the stream and its schema in the registry,
/// fraud-scoring's reader schema, the domain's approver, a streaming job
/// reading the topic, and the pilot with the demo's baselines.
async fn set_stage(
    console: &Console,
    people: &People,
    cluster: &ClusterRow,
    stage: &Stage<'_>,
    relay: &Relay,
) -> Result<(), HistoryError> {
    let admin = &people.admin;
    let c = cluster.id;
    let team = console
        .call(
            "the team",
            Method::POST,
            "/api/v1/teams",
            admin,
            Some(json!({"name": TEAM, "description": "card risk (the pilot's history)"})),
        )
        .await?;
    let team = id_of(&team, "the team")?;
    let put = Method::PUT;
    for (what, method, path, body) in [
        (
            "the team's member",
            Method::POST,
            format!("/api/v1/teams/{team}/members"),
            json!({"username": OWNER}),
        ),
        (
            "the team's webhook",
            put.clone(),
            format!("/api/v1/teams/{team}/webhook"),
            json!({"url": relay.url}),
        ),
        (
            "the registry",
            put.clone(),
            format!("/api/v1/clusters/{c}/registry"),
            json!({"url": stage.registry_url}),
        ),
        (
            "the stream",
            put.clone(),
            format!("/api/v1/clusters/{c}/streams/{TOPIC}"),
            json!({"owner_team": TEAM, "domain": DOMAIN}),
        ),
        (
            "the domain",
            put.clone(),
            format!("/api/v1/review-domains/{DOMAIN}"),
            json!({"autonomy": "act_after_approval", "required_approvals": 1,
                   "approver_users": [APPROVER]}),
        ),
    ] {
        console.call(what, method, &path, admin, Some(body)).await?;
    }
    register_v1(stage.registry_url).await?;
    console
        .call(
            "the stream's schema",
            put.clone(),
            &format!("/api/v1/clusters/{c}/streams/{TOPIC}/schema"),
            admin,
            Some(json!({"subject": format!("{TOPIC}-value"), "version": 1})),
        )
        .await?;
    console
        .call(
            "fraud-scoring's reader schema",
            put.clone(),
            &format!(
                "/api/v1/clusters/{c}/groups/{}/reader-schemas/{TOPIC}",
                GROUPS[0]
            ),
            &people.owner,
            Some(json!({"schema_type": "AVRO", "schema": READER})),
        )
        .await?;
    let event = json!({
        "eventTime": clock::now().to_rfc3339(), "eventType": "START",
        "inputs": [{"facets": {}, "inputFacets": {}, "name": TOPIC,
                    "namespace": format!("kafka://{}", cluster.bootstrap)}],
        // Owned by the team, so "notify owners" reaches it.
        "job": {"facets": {"ownership": {
                    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/flink",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/OwnershipJobFacet.json#/$defs/OwnershipJobFacet",
                    "owners": [{"name": TEAM, "type": "team"}]}},
                "name": GROUPS[0], "namespace": "flink"},
        "outputs": [{"facets": {}, "name": "fraud.alerts", "namespace": "postgres://fraud-db:5432",
                     "outputFacets": {}}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/flink",
        "run": {"facets": {}, "runId": "0194b3a2-7c1e-7000-8000-00000000de70"},
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    });
    console
        .call(
            "the streaming job",
            Method::POST,
            "/api/v1/lineage",
            admin,
            Some(event),
        )
        .await?;
    let note = "the demo's: a made-up figure of the months before the pilot";
    let baselines: Vec<Value> = streamkeeper::pilot::Metric::ALL
        .into_iter()
        .map(|m| json!({"metric": m, "ms": m.default_baseline_ms(), "note": note}))
        .collect();
    console
        .call(
            "the pilot",
            put,
            "/api/v1/pilot/settings",
            &people.manager,
            Some(json!({"scope_kind": "clusters", "scope": [cluster.name],
                        "started_on": stage.day1, "baselines": baselines})),
        )
        .await?;
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

/// The topic's first schema, registered before the history starts.
async fn register_v1(registry: &str) -> Result<(), HistoryError> {
    let url = format!(
        "{}/subjects/{TOPIC}-value/versions",
        registry.trim_end_matches('/')
    );
    let fail = |e: String| HistoryError::Registry(registry.to_string(), e);
    let res = reqwest::Client::new()
        .post(&url)
        .header(
            header::CONTENT_TYPE,
            "application/vnd.schemaregistry.v1+json",
        )
        .body(json!({ "schema": schema(&[]) }).to_string())
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    if !res.status().is_success() {
        return Err(fail(res.status().to_string()));
    }
    Ok(())
}

/// What fraud-scoring reads: it needs `merchant_id`.
const READER: &str = r#"{"type":"record","name":"Authorization","namespace":"cards","fields":[{"name":"id","type":"string"},{"name":"merchant_id","type":"string"}]}"#;

/// The topic's schema: id, amount, merchant_id, then optional `extra`
/// fields (each a string with a null default).
fn schema(extra: &[String]) -> String {
    let mut fields = vec![
        json!({"name": "id", "type": "string"}),
        json!({"name": "amount", "type": "double"}),
        json!({"name": "merchant_id", "type": "string"}),
    ];
    fields.extend(
        extra
            .iter()
            .map(|f| json!({"name": f, "type": ["null", "string"], "default": null})),
    );
    json!({"type": "record", "name": "Authorization", "namespace": "cards", "fields": fields})
        .to_string()
}

fn review_field(n: usize) -> String {
    format!("review_{n}")
}

/// The `n`th proposal: every field proposed before, and one more.
fn proposed(n: usize) -> String {
    schema(&(0..=n).map(review_field).collect::<Vec<_>>())
}

/// The `n`th check's schema: one optional field more, or `merchant_id`
/// dropped (fraud-scoring cannot read that).
fn checked(n: usize, breaking: bool) -> String {
    if breaking {
        json!({"type": "record", "name": "Authorization", "namespace": "cards", "fields": [
            {"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]})
        .to_string()
    } else {
        schema(&[format!("check_{n}")])
    }
}
