//! Notifications where on-call lives: a team's channels (Slack, Teams,
//! PagerDuty, Alertmanager, a signed webhook, email), each with its own filter,
//! managed by admins and the team's members (refusals audited); the
//! flags' transitions fanned out to them (`fanout`), sent (`send`) by the
//! `notify` routine (`routine`). Secrets are references, resolved only
//! when a message is sent and never shown back. The rules are
//! `streamkeeper::notify`.

pub mod api;
pub mod cli;
pub mod fanout;
pub mod routine;
mod screens;
pub mod send;
mod silences;
pub mod store;
pub mod tell;

use crate::audit::{audited, record_refusal};
use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::SecretRef;
use crate::clients::smtp::Smtp;
use crate::clients::webhook::Webhooks;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use send::CHANNELS_SCOPE;
use serde_json::json;
use sqlx::PgPool;
use store::ChannelRow;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::notify::{ChannelKind, Filter, FlagNotice, Notice, Severity, Transition};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::page::Choice;
use streamkeeper_app::error::AppError;
use streamkeeper_app::notify::model::{
    BrokenChannel, ChannelView, DeliveryView, NewChannel, NewSilence, NotifySettings, SilenceView,
    TestAnswer,
};

#[derive(Clone)]
pub struct NotifyService {
    pool: PgPool,
    outbound: Outbound,
    /// The operator's mail server, for email channels.
    mail: Option<Smtp>,
}

fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .and_then(|u| u.host_str().map(str::to_owned))
}

fn view(c: ChannelRow) -> ChannelView {
    // An email channel's endpoint is its recipients, shown as they are.
    let host = match ChannelKind::parse(&c.kind) {
        Some(ChannelKind::Email) => c.endpoint.clone(),
        _ => c.endpoint.as_deref().and_then(host_of),
    };
    ChannelView {
        id: c.id,
        team_id: c.team_id,
        name: c.name,
        kind: c.kind,
        host,
        secret_set: c.secret_ref.is_some(),
        kinds: c.kinds,
        min_severity: c.min_severity,
        clusters: c.clusters,
        broken_at: c.broken_at,
        broken_answer: c.broken_answer,
    }
}

/// A refusal of a channel's settings: what was wrong, for the 422 and the
/// audit log (never the secret: references only).
struct Refused(String);

impl NotifyService {
    pub fn new(pool: PgPool, outbound: Outbound) -> Self {
        Self {
            pool,
            outbound,
            mail: None,
        }
    }

    /// Email channels' tests go through this mail server.
    pub fn with_mail(mut self, mail: Option<Smtp>) -> Self {
        self.mail = mail;
        self
    }

    /// Who may see a team's channels (`Stewardship::Act`: admins and the
    /// team's members) and who may change or try them (`Steer`: admins and
    /// the team's owners), with the credential references a change may
    /// name: an admin any of the notification channels' (`within
    /// "notify"`), an owner only their team's — so no one sends a secret
    /// that is not the channel's to an endpoint they chose. A missing team
    /// is a 404, audited (403s are audited by the web layer).
    async fn may_manage(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        what: Stewardship,
    ) -> Result<CredentialPolicy, AppError> {
        let Some(team) = store::team_name(&self.pool, team_id).await? else {
            let e = AppError::NotFound(format!("Team {team_id}"));
            record_refusal(
                &self.pool,
                who,
                from,
                "notify.channel.refused",
                format!("team:{team_id}"),
                json!({ "refused": e.to_string() }),
            )
            .await;
            return Err(e);
        };
        let facts = Facts::load(&self.pool, who).await?;
        let steward = facts.steward(who);
        if !may_steward(steward, Some(team_id), what) {
            return Err(AppError::Forbidden(match what {
                Stewardship::Act => "see another team's notification channels".into(),
                _ => "set up notification channels: a team's owners and admins do".into(),
            }));
        }
        let channels = self.outbound.credentials.within(CHANNELS_SCOPE);
        Ok(if steward.admin {
            channels
        } else {
            channels.within(&team)
        })
    }

    /// The URL a plain endpoint names, under the egress rule.
    fn plain_url(&self, raw: &str) -> Result<String, Refused> {
        let host = host_of(raw)
            .ok_or_else(|| Refused("The endpoint must be an http:// or https:// URL.".into()))?;
        self.outbound
            .egress
            .check_saved(&host)
            .map_err(|e| Refused(format!("The endpoint cannot be used: {e}.")))?;
        Ok(raw.to_owned())
    }

    /// An email channel's recipients, and a mail server to reach them.
    fn recipients(&self, raw: &str) -> Result<String, Refused> {
        if self.mail.is_none() {
            return Err(Refused(
                "No mail server is set (STREAMKEEPER_SMTP_HOST): an email channel could not send."
                    .into(),
            ));
        }
        streamkeeper::notify::email::recipients(raw).map_err(|e| Refused(e.to_string()))
    }

    /// A credential reference under the operator's policy; `resolve` also
    /// reads it now (a URL held by reference is checked against the egress
    /// rule the same as a plain one).
    fn reference(raw: &str, what: &str, policy: &CredentialPolicy) -> Result<SecretRef, Refused> {
        SecretRef::checked(raw, policy).map_err(|e| Refused(format!("The {what}: {e}.")))
    }

    fn checked(
        &self,
        team_id: i64,
        n: &NewChannel,
        policy: &CredentialPolicy,
    ) -> Result<ChannelRow, Refused> {
        let name = n.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(Refused("A channel's name is 1 to 100 characters.".into()));
        }
        let kind = ChannelKind::parse(n.kind.trim()).ok_or_else(|| {
            Refused("The kind is slack, teams, pagerduty, alertmanager, webhook or email.".into())
        })?;
        let needs = kind.needs();
        let endpoint = n.endpoint.trim();
        let (plain, by_ref) = match (needs.endpoint_is_secret, endpoint.is_empty()) {
            _ if kind == ChannelKind::Email => (Some(self.recipients(endpoint)?), None),
            (true, true) => {
                return Err(Refused(
                    "Give the webhook URL by reference (env:NAME or file:/path): it holds its token."
                        .into(),
                ));
            }
            (true, false) => {
                let url = Self::reference(endpoint, "endpoint reference", policy)?
                    .resolve()
                    .map_err(|e| Refused(format!("The endpoint reference: {e}.")))?;
                self.plain_url(&url)?;
                (None, Some(endpoint.to_owned()))
            }
            (false, true) if needs.default_endpoint.is_some() => (None, None),
            (false, true) => return Err(Refused("The endpoint URL is missing.".into())),
            (false, false) => (Some(self.plain_url(endpoint)?), None),
        };
        let secret = n.secret.trim();
        let secret_ref = match (needs.secret, secret.is_empty()) {
            (Some(true), true) => {
                return Err(Refused(
                    "PagerDuty needs its routing key by reference (env:NAME or file:/path).".into(),
                ));
            }
            (Some(_), false) => {
                Self::reference(secret, "secret reference", policy)?;
                Some(secret.to_owned())
            }
            (None, false) => {
                return Err(Refused(format!(
                    "A {} channel takes no secret.",
                    kind.as_str()
                )));
            }
            (_, true) => None,
        };
        let severity = match n.min_severity.trim() {
            "" => Severity::Info,
            s => Severity::parse(s).ok_or_else(|| {
                Refused("The least severity is info, warning, error or critical.".into())
            })?,
        };
        let filter =
            Filter::parse(&n.kinds, severity, &n.clusters).map_err(|e| Refused(e.to_string()))?;
        Ok(ChannelRow {
            id: 0,
            team_id,
            name: name.to_owned(),
            kind: kind.as_str().to_owned(),
            endpoint: plain,
            endpoint_ref: by_ref,
            secret_ref,
            kinds: filter.kinds,
            min_severity: filter.min_severity.as_str().to_owned(),
            clusters: filter.clusters,
            broken_at: None,
            broken_answer: None,
        })
    }
}

impl NotifyService {
    /// Sends the test message(s) to `c` now: what the receiver answered,
    /// the first failure's if any. PagerDuty's test triggers and at once
    /// resolves its own incident; Alertmanager's alert ends within minutes.
    async fn try_channel(&self, c: &ChannelRow) -> Result<TestAnswer, AppError> {
        let kind = ChannelKind::parse(&c.kind)
            .ok_or_else(|| AppError::Internal(format!("stored kind {}", c.kind)))?;
        let notice = test_notice(&format!("team {}", c.team_id));
        let now_ms = crate::platform::clock::now().timestamp_millis();
        let mut bodies = kind.payload(&notice, now_ms);
        if kind == ChannelKind::PagerDuty {
            bodies.extend(streamkeeper::notify::pagerduty::events(&Notice {
                transition: Transition::Resolve,
                ..notice.clone()
            }));
        }
        let target = send::Target {
            kind: &c.kind,
            endpoint: c.endpoint.as_deref(),
            endpoint_ref: c.endpoint_ref.as_deref(),
            secret_ref: c.secret_ref.as_deref(),
        };
        if kind == ChannelKind::Email {
            return Ok(self.try_mail(c, &target, &bodies, now_ms).await);
        }
        let webhooks = Webhooks::new(self.outbound.egress)
            .map_err(|e| AppError::Unavailable(format!("no HTTP client: {e}")))?;
        let (mut parts, mut status, mut ok) = (Vec::new(), None, true);
        for (i, body) in bodies.iter().enumerate() {
            let key = format!("test-{}-{now_ms}-{i}", c.id);
            let credentials = &self.outbound.credentials;
            match send::send(&webhooks, &target, &key, body, credentials).await {
                Ok(a) => {
                    (status, ok) = (Some(a.status), a.ok());
                    parts.push(a.shown());
                }
                Err(e) => {
                    (status, ok) = (None, false);
                    parts.push(e.to_string());
                }
            }
            if !ok {
                break;
            }
        }
        Ok(TestAnswer {
            channel: c.name.clone(),
            status,
            answer: parts.join("; then "),
            ok,
            broken: !ok && status.is_some_and(streamkeeper::notify::broken_by),
        })
    }

    /// An email channel's test: the test flag's message, with an id of
    /// its own (each test is a message of its own, never a duplicate a
    /// mailbox would drop), and the mail server's answer word for word.
    async fn try_mail(
        &self,
        c: &ChannelRow,
        target: &send::Target<'_>,
        bodies: &[serde_json::Value],
        now_ms: i64,
    ) -> TestAnswer {
        let mut body = bodies.first().cloned().unwrap_or_default();
        body["message_id"] = json!(format!(
            "<streamkeeper.test-{}.{now_ms}@streamkeeper.invalid>",
            c.id
        ));
        let (answer, ok, broken) = match send::mail(self.mail.as_ref(), target, &body).await {
            Ok(a) => (a, true, false),
            Err(e) => (e.to_string(), false, e.breaks_channel()),
        };
        TestAnswer {
            channel: c.name.clone(),
            status: None,
            answer,
            ok,
            broken,
        }
    }
}

/// The message a test sends: one made-up flag, marked as a test.
fn test_notice(team: &str) -> Notice {
    Notice {
        transition: Transition::Raise,
        cluster: "test".into(),
        flags: vec![FlagNotice {
            id: 0,
            cluster: "test".into(),
            subject_kind: "group".into(),
            subject: "streamkeeper-test".into(),
            kind: "WARN".into(),
            was: None,
            reason: "A test message from Streamkeeper: this channel is reached.".into(),
            team: Some(team.to_owned()),
            url: "about:blank".into(),
            onset_ms: crate::platform::clock::now().timestamp_millis(),
            topics: Vec::new(),
            label_topics: None,
        }],
        by: None,
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Notify for NotifyService {
    #[tracing::instrument(skip_all, fields(user = %who.username, team_id))]
    async fn channels(&self, who: &Principal, team_id: i64) -> Result<Vec<ChannelView>, AppError> {
        self.may_manage(who, "", team_id, Stewardship::Act).await?;
        Ok(store::channels(&self.pool, team_id)
            .await?
            .into_iter()
            .map(view)
            .collect())
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id))]
    async fn add_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        new: &NewChannel,
    ) -> Result<ChannelView, AppError> {
        let policy = self
            .may_manage(who, from, team_id, Stewardship::Steer)
            .await?;
        let row = match self.checked(team_id, new, &policy) {
            Ok(r) => r,
            Err(Refused(why)) => {
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "notify.channel.refused",
                    format!("team:{team_id}"),
                    json!({ "kind": new.kind, "refused": why }),
                )
                .await;
                return Err(AppError::Invalid(why));
            }
        };
        let mut tx = begin(&self.pool).await?;
        let Some(id) = store::add_channel(&mut tx, &row).await? else {
            return Err(AppError::Conflict(format!(
                "The team has a channel named {} already.",
                row.name
            )));
        };
        // References and hosts only: a secret never reaches the log.
        let detail = json!({ "name": row.name, "kind": row.kind,
            "host": row.endpoint.as_deref().and_then(host_of), "kinds": row.kinds,
            "min_severity": row.min_severity, "clusters": row.clusters });
        audited(
            &mut tx,
            who,
            from,
            "notify.channel.add",
            format!("channel:{id}"),
            detail,
        )
        .await?;
        commit(tx).await?;
        Ok(view(ChannelRow { id, ..row }))
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id, id))]
    async fn remove_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        id: i64,
    ) -> Result<(), AppError> {
        self.may_manage(who, from, team_id, Stewardship::Steer)
            .await?;
        let mut tx = begin(&self.pool).await?;
        if !store::remove_channel(&mut tx, team_id, id).await? {
            return Err(AppError::NotFound(format!("Channel {id}")));
        }
        let target = format!("channel:{id}");
        audited(
            &mut tx,
            who,
            from,
            "notify.channel.remove",
            target,
            json!({ "team_id": team_id }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id, id))]
    async fn test_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        id: i64,
    ) -> Result<TestAnswer, AppError> {
        self.may_manage(who, from, team_id, Stewardship::Steer)
            .await?;
        let c = store::channel(&self.pool, team_id, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Channel {id}")))?;
        let answer = self.try_channel(&c).await?;
        let broken = answer.broken.then(|| answer.answer.clone());
        // A refusal for good marks it broken (a webhook's 4xx other than
        // 408/429, a mail server's 5xx other than a refused sign-in) and a
        // success mends it; anything else (a webhook's 5xx, a mail
        // server's 4xx, a timeout, a refusal by the egress rule) says
        // nothing of its settings.
        if answer.ok || broken.is_some() {
            store::set_broken(&self.pool, c.id, broken.as_deref()).await?;
        }
        let mut tx = begin(&self.pool).await?;
        let detail = json!({ "status": answer.status, "ok": answer.ok });
        audited(
            &mut tx,
            who,
            from,
            "notify.channel.test",
            format!("channel:{id}"),
            detail,
        )
        .await?;
        commit(tx).await?;
        Ok(answer)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id))]
    async fn silences(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Vec<SilenceView>, AppError> {
        crate::platform::authz::require(
            who,
            streamkeeper::accounts::role::Action::Read,
            "see silences",
        )?;
        self.cluster(who, "", cluster_id).await?;
        Ok(store::silences(&self.pool, cluster_id)
            .await?
            .into_iter()
            .map(silences::view)
            .collect())
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id))]
    async fn muted(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject_kind: &str,
        subject: &str,
    ) -> Result<Option<SilenceView>, AppError> {
        self.muted_now(who, cluster_id, subject_kind, subject).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id))]
    async fn silence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        new: &NewSilence,
    ) -> Result<SilenceView, AppError> {
        self.make_silence(who, from, cluster_id, new).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id, id))]
    async fn unsilence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        id: i64,
    ) -> Result<(), AppError> {
        self.end_silence(who, from, cluster_id, id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, flag_id))]
    async fn deliveries(
        &self,
        who: &Principal,
        flag_id: i64,
    ) -> Result<Vec<DeliveryView>, AppError> {
        crate::platform::authz::require(
            who,
            streamkeeper::accounts::role::Action::Read,
            "see flags",
        )?;
        let Some(team) = store::team_of_flag(&self.pool, flag_id).await? else {
            return Err(AppError::NotFound(format!("Flag {flag_id}")));
        };
        // Its channels' names and their receivers' answers are the team's:
        // those who may act on the flag see them (`Stewardship::Act`).
        let facts = Facts::load(&self.pool, who).await?;
        if !may_steward(facts.steward(who), team, Stewardship::Act) {
            return Err(AppError::Forbidden(
                "see where another team's flag was delivered".into(),
            ));
        }
        self.flag_deliveries(flag_id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id))]
    async fn settings(&self, who: &Principal, team_id: i64) -> Result<NotifySettings, AppError> {
        self.team_settings(who, team_id).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id))]
    async fn set_settings(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        new: &NotifySettings,
    ) -> Result<NotifySettings, AppError> {
        self.set_team_settings(who, from, team_id, new).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn broken_channels(&self, who: &Principal) -> Result<Vec<BrokenChannel>, AppError> {
        self.broken(who).await
    }
}
