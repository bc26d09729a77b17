//! Notifications' server functions: a team's channels and repeat interval,
//! a cluster's silences, what mutes a page's subject, a flag's delivery
//! log. Each authorizes through the notify port (which audits refusals);
//! a form that fails keeps what was typed for the page it goes back to.

// One argument per form field; the generated client function cannot carry
// an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::error::AppError;
use crate::notify::model::{ChannelView, DeliveryView, SilenceView, TeamNotify, TestAnswer};
use leptos::prelude::*;

/// The kept form of the add-a-channel form.
pub const CHANNEL_FORM: &str = "notify-channel";
/// The kept form of the mute form.
pub const SILENCE_FORM: &str = "notify-silence";

#[server(prefix = "/fn", endpoint = "read_team_notify")]
pub async fn read_team_notify(team_id: i64) -> Result<TeamNotify, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    let notify = backend()?.notify;
    let settings = notify.settings(&who, team_id).await?;
    let channels = notify.channels(&who, team_id).await?;
    Ok(TeamNotify {
        team_id,
        settings,
        channels,
    })
}

#[server(prefix = "/fn", endpoint = "add_notify_channel")]
pub async fn add_notify_channel(
    team_id: i64,
    name: String,
    kind: String,
    endpoint: String,
    secret: String,
    kinds: String,
    min_severity: String,
    clusters: String,
) -> Result<ChannelView, AppError> {
    use crate::notify::model::NewChannel;
    use crate::port::{backend, client_addr, principal};
    use crate::ui::flash::{KeptForm, kept_on_error, noted};
    let new = NewChannel {
        name,
        kind,
        endpoint,
        secret,
        kinds,
        min_severity,
        clusters,
    };
    // Kept for the form only as references: a key or a webhook URL pasted
    // by mistake (the likeliest refusal) is a secret's value, never kept
    // in the session nor drawn back. Alertmanager's, PagerDuty's, a
    // plain webhook's endpoints and an email channel's addresses hold no
    // token.
    let reference = |v: &str| {
        let v = v.trim();
        v.starts_with("env:") || v.starts_with("file:")
    };
    let plain_endpoint = matches!(
        new.kind.trim(),
        "alertmanager" | "pagerduty" | "webhook" | "email"
    );
    let endpoint = if plain_endpoint || reference(&new.endpoint) {
        new.endpoint.clone()
    } else {
        String::new()
    };
    let secret = if reference(&new.secret) {
        new.secret.clone()
    } else {
        String::new()
    };
    let kept = KeptForm {
        form: CHANNEL_FORM.to_string(),
        fields: [
            ("name", &new.name),
            ("kind", &new.kind),
            ("endpoint", &endpoint),
            ("secret", &secret),
            ("kinds", &new.kinds),
            ("min_severity", &new.min_severity),
            ("clusters", &new.clusters),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect(),
    };
    let who = principal().await?;
    let added = backend()?
        .notify
        .add_channel(&who, &client_addr().await, team_id, &new)
        .await;
    let added = kept_on_error(added, || kept).await;
    noted(added, |c| {
        format!("Added the {} channel {}.", c.kind, c.name)
    })
    .await
}

#[server(prefix = "/fn", endpoint = "remove_notify_channel")]
pub async fn remove_notify_channel(team_id: i64, id: i64) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let removed = backend()?
        .notify
        .remove_channel(&who, &client_addr().await, team_id, id)
        .await;
    crate::ui::flash::noted(removed, |()| "Removed the channel.".to_string()).await
}

/// Sends a test message; the note says exactly what the receiver answered.
#[server(prefix = "/fn", endpoint = "test_notify_channel")]
pub async fn test_notify_channel(team_id: i64, id: i64) -> Result<TestAnswer, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let answer = backend()?
        .notify
        .test_channel(&who, &client_addr().await, team_id, id)
        .await;
    crate::ui::flash::noted(answer, test_words).await
}

/// What a test's note says: the stored channel's name (never one the form
/// posted), the receiver's status and the start of its answer, word for
/// word — a mail server's reply is its own status.
pub fn test_words(a: &TestAnswer) -> String {
    let verdict = if a.ok {
        "it took the test message"
    } else {
        "it did not take the test message"
    };
    match a.status {
        Some(s) => format!(
            "Test sent to {}: the receiver answered HTTP {s}, {verdict}. Its answer: {}",
            a.channel, a.answer
        ),
        None => format!(
            "Test sent to {}: {verdict}. The answer: {}",
            a.channel, a.answer
        ),
    }
}

/// Sets the team's repeat interval, given in minutes.
#[server(prefix = "/fn", endpoint = "set_notify_repeat")]
pub async fn set_notify_repeat(
    team_id: i64,
    repeat_minutes: String,
) -> Result<crate::notify::model::NotifySettings, AppError> {
    use crate::notify::model::NotifySettings;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let minutes: i64 = repeat_minutes.trim().parse().map_err(|_| {
        AppError::Invalid(format!(
            "The repeat interval is a whole number of minutes, not '{}'.",
            repeat_minutes.trim()
        ))
    })?;
    let new = NotifySettings {
        team: String::new(),
        repeat_s: minutes.saturating_mul(60),
    };
    let set = backend()?
        .notify
        .set_settings(&who, &client_addr().await, team_id, &new)
        .await;
    crate::ui::flash::noted(set, |s| {
        format!(
            "Open flags nobody acknowledged are told again every {}.",
            repeat_words(s.repeat_s)
        )
    })
    .await
}

/// An interval as people say it: "4 h", "90 min", "2 days".
pub fn repeat_words(s: i64) -> String {
    match s {
        s if s % 86_400 == 0 => format!("{} day(s)", s / 86_400),
        s if s % 3_600 == 0 => format!("{} h", s / 3_600),
        s => format!("{} min", s / 60),
    }
}

#[server(prefix = "/fn", endpoint = "list_silences")]
pub async fn list_silences(cluster_id: i64) -> Result<Vec<SilenceView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.notify.silences(&who, cluster_id).await
}

#[server(prefix = "/fn", endpoint = "add_silence")]
pub async fn add_silence(
    cluster_id: i64,
    scope: String,
    name: String,
    until: String,
    reason: String,
) -> Result<SilenceView, AppError> {
    use crate::notify::model::NewSilence;
    use crate::port::{backend, client_addr, principal};
    use crate::ui::flash::{KeptForm, kept_on_error, noted};
    let kept = KeptForm {
        form: SILENCE_FORM.to_string(),
        fields: [
            ("scope", &scope),
            ("name", &name),
            ("until", &until),
            ("reason", &reason),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect(),
    };
    let who = principal().await?;
    let from = client_addr().await;
    let made = match streamkeeper::notify::parse_until(&until) {
        Ok(until) => {
            let new = NewSilence {
                scope,
                name,
                until,
                reason,
            };
            backend()?
                .notify
                .silence(&who, &from, cluster_id, &new)
                .await
        }
        Err(e) => Err(AppError::Invalid(e.to_string())),
    };
    let made = kept_on_error(made, || kept).await;
    noted(made, |s| {
        format!("Muted {} until {}.", what(s), until_words(s))
    })
    .await
}

#[server(prefix = "/fn", endpoint = "end_silence")]
pub async fn end_silence(cluster_id: i64, id: i64) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let ended = backend()?
        .notify
        .unsilence(&who, &client_addr().await, cluster_id, id)
        .await;
    crate::ui::flash::noted(ended, |()| "Ended the silence.".to_string()).await
}

/// The silence holding a page's subject's flags now (`subject_kind`
/// `cluster`, `topic` or `group`), as delivery holds them.
#[server(prefix = "/fn", endpoint = "muted_by")]
pub async fn muted_by(
    cluster_id: i64,
    subject_kind: String,
    subject: String,
) -> Result<Option<SilenceView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?
        .notify
        .muted(&who, cluster_id, &subject_kind, &subject)
        .await
}

#[server(prefix = "/fn", endpoint = "flag_deliveries")]
pub async fn flag_deliveries(flag_id: i64) -> Result<Vec<DeliveryView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.notify.deliveries(&who, flag_id).await
}

/// What a silence mutes, in words.
pub fn what(s: &SilenceView) -> String {
    match s.scope.as_str() {
        "cluster" => "the whole cluster".to_string(),
        scope => format!("the {scope} {}", s.name),
    }
}

/// A silence's end as its pages show it.
pub fn until_words(s: &SilenceView) -> String {
    s.until.format("%Y-%m-%d %H:%M UTC").to_string()
}
