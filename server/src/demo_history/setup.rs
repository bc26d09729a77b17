//! The history's stage, set on day 1 through the console: its people with
//! a token each, team risk with its relay, the stream and its schemas, the
//! domain's approver, a streaming job reading the topic, and the pilot.

use axum::http::Method;
use chrono::Utc;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::collections::BTreeMap;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::{Scope, Scopes};
use streamkeeper::pilot::history::{APPROVER, DOMAIN, GROUPS, MANAGER, OWNER, TEAM, TOPIC};

use super::console::{Console, Relay};
use super::schemas::{READER, register_v1};
use super::{HistoryError, Stage, id_of};
use crate::accounts::store::{tokens, users};
use crate::platform::clock;
use crate::watch::store::ClusterRow;

/// The history's people, with a token each, and the approver's password
/// (approvals are made in person).
pub(super) struct People {
    pub(super) admin: String,
    pub(super) owner: String,
    pub(super) approver: String,
    pub(super) approver_password: String,
    pub(super) manager: String,
    pub(super) ids: Vec<i64>,
}

/// The script's people (random passwords nobody is told: they sign in
/// only through this player, with tokens, and the approver in person to
/// approve) and the admin's token.
pub(super) async fn people(pool: &PgPool, admin: &str) -> Result<People, HistoryError> {
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
pub(super) async fn set_stage(
    console: &Console,
    people: &People,
    cluster: &ClusterRow,
    stage: &Stage<'_>,
    relay: &Relay,
) -> Result<(), HistoryError> {
    team_and_stream(console, people, cluster, stage, relay).await?;
    stream_schemas(console, people, cluster, stage).await?;
    streaming_job(console, &people.admin, cluster).await?;
    pilot(console, people, cluster, stage).await
}

/// Team risk with its member and relay, the cluster's registry, the
/// stream owned by the team in its domain, and the domain's approver.
async fn team_and_stream(
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
            put,
            format!("/api/v1/review-domains/{DOMAIN}"),
            json!({"autonomy": "act_after_approval", "required_approvals": 1,
                   "approver_users": [APPROVER]}),
        ),
    ] {
        console.call(what, method, &path, admin, Some(body)).await?;
    }
    Ok(())
}

/// The stream's schema (v1, registered), and fraud-scoring's reader schema.
async fn stream_schemas(
    console: &Console,
    people: &People,
    cluster: &ClusterRow,
    stage: &Stage<'_>,
) -> Result<(), HistoryError> {
    let admin = &people.admin;
    let c = cluster.id;
    let put = Method::PUT;
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
            put,
            &format!(
                "/api/v1/clusters/{c}/groups/{}/reader-schemas/{TOPIC}",
                GROUPS[0]
            ),
            &people.owner,
            Some(json!({"schema_type": "AVRO", "schema": READER})),
        )
        .await?;
    Ok(())
}

/// A streaming job reading the topic, owned by the team (so "notify
/// owners" reaches it), sent as an OpenLineage event.
async fn streaming_job(
    console: &Console,
    admin: &str,
    cluster: &ClusterRow,
) -> Result<(), HistoryError> {
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
    Ok(())
}

/// The pilot of the cluster from day 1, with the demo's baselines.
async fn pilot(
    console: &Console,
    people: &People,
    cluster: &ClusterRow,
    stage: &Stage<'_>,
) -> Result<(), HistoryError> {
    let put = Method::PUT;
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
