//! A team's channels: their settings, whether each is broken, and the
//! team's repeat interval.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgPool};

#[derive(Debug, Clone, FromRow)]
pub struct ChannelRow {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    pub kind: String,
    pub endpoint: Option<String>,
    pub endpoint_ref: Option<String>,
    pub secret_ref: Option<String>,
    pub kinds: Vec<String>,
    pub min_severity: String,
    pub clusters: Vec<String>,
    pub broken_at: Option<DateTime<Utc>>,
    pub broken_answer: Option<String>,
}

const CHANNEL: &str = "id, team_id, name, kind, endpoint, endpoint_ref, secret_ref, kinds,
    min_severity, clusters, broken_at, broken_answer";

pub async fn channels(pool: &PgPool, team_id: i64) -> Result<Vec<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = $1 ORDER BY name"
    ))
    .bind(team_id)
    .fetch_all(pool)
    .await?)
}

pub async fn channel(pool: &PgPool, team_id: i64, id: i64) -> Result<Option<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = $1 AND id = $2"
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// The channels of these teams.
pub async fn channels_of(conn: &mut PgConnection, teams: &[i64]) -> Result<Vec<ChannelRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {CHANNEL} FROM notify_channels WHERE team_id = ANY($1) ORDER BY id"
    ))
    .bind(teams)
    .fetch_all(conn)
    .await?)
}

/// Adds a channel; `None` when the team has one of that name already.
pub async fn add_channel(conn: &mut PgConnection, c: &ChannelRow) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar(
        "INSERT INTO notify_channels (team_id, name, kind, endpoint, endpoint_ref, secret_ref,
                                      kinds, min_severity, clusters)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (team_id, name) DO NOTHING RETURNING id",
    )
    .bind(c.team_id)
    .bind(&c.name)
    .bind(&c.kind)
    .bind(&c.endpoint)
    .bind(&c.endpoint_ref)
    .bind(&c.secret_ref)
    .bind(&c.kinds)
    .bind(&c.min_severity)
    .bind(&c.clusters)
    .fetch_optional(conn)
    .await?)
}

pub async fn remove_channel(conn: &mut PgConnection, team_id: i64, id: i64) -> Result<bool, Db> {
    Ok(
        sqlx::query("DELETE FROM notify_channels WHERE team_id = $1 AND id = $2")
            .bind(team_id)
            .bind(id)
            .execute(conn)
            .await?
            .rows_affected()
            > 0,
    )
}

/// Marks a channel broken with the receiver's answer, or mends it.
pub async fn set_broken(pool: &PgPool, id: i64, answer: Option<&str>) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE notify_channels
            SET broken_at = CASE WHEN $2::text IS NULL THEN NULL ELSE streamkeeper_now() END,
                broken_answer = $2
          WHERE id = $1 AND (broken_answer IS DISTINCT FROM $2)",
    )
    .bind(id)
    .bind(answer)
    .execute(pool)
    .await
    .map(drop)?)
}

/// A team's name, `None` when there is no such team.
pub async fn team_name(pool: &PgPool, team_id: i64) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar("SELECT name FROM teams WHERE id = $1")
        .bind(team_id)
        .fetch_optional(pool)
        .await?)
}

/// A team's name and repeat interval (`None`: no such team).
pub async fn team_repeat(pool: &PgPool, team_id: i64) -> Result<Option<(String, i32)>, Db> {
    Ok(
        sqlx::query_as("SELECT name, repeat_s FROM teams WHERE id = $1")
            .bind(team_id)
            .fetch_optional(pool)
            .await?,
    )
}

pub async fn set_repeat(conn: &mut PgConnection, team_id: i64, repeat_s: i32) -> Result<(), Db> {
    Ok(sqlx::query("UPDATE teams SET repeat_s = $2 WHERE id = $1")
        .bind(team_id)
        .bind(repeat_s)
        .execute(conn)
        .await
        .map(drop)?)
}

/// A broken channel with its team's name.
#[derive(Debug, Clone, FromRow)]
pub struct BrokenRow {
    pub team_id: i64,
    pub team: String,
    pub channel_id: i64,
    pub name: String,
    pub kind: String,
    pub broken_at: DateTime<Utc>,
    pub answer: String,
}

/// The broken channels of every team (`all`), or of the teams `user_id`
/// belongs to as an `owner`; every team's when they belong to the
/// platform team.
pub async fn broken_for(
    pool: &PgPool,
    user_id: i64,
    all: bool,
    owner: bool,
) -> Result<Vec<BrokenRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.team_id, t.name AS team, c.id AS channel_id, c.name, c.kind,
                c.broken_at, COALESCE(c.broken_answer, '') AS answer
           FROM notify_channels c JOIN teams t ON t.id = c.team_id
          WHERE c.broken_at IS NOT NULL
            AND ($2 OR EXISTS (
                SELECT 1 FROM memberships m
                 WHERE m.user_id = $1
                   AND ((m.team_id = c.team_id AND $3)
                        OR m.team_id = (SELECT value::bigint FROM settings
                                         WHERE key = 'platform_team_id'))))
          ORDER BY c.broken_at DESC, c.id LIMIT 50",
    )
    .bind(user_id)
    .bind(all)
    .bind(owner)
    .fetch_all(pool)
    .await?)
}
