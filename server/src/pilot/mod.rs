//! The pilot: a manager (or an admin) sets its scope, start and baselines;
//! its figures come from the records the other features keep (flags and
//! their notifications, compatibility checks, review items, connector
//! restarts), turned into weekly p50/p90 against the baseline by
//! `streamkeeper::pilot::stats`; the first weeks' receipts list what
//! Streamkeeper would have done where it only watches or suggests. Only
//! managers and admins read it; every refusal is audited, reads included.

pub mod api;
pub mod cli;
pub mod store;

use crate::audit::{audited, record_refusal};
use crate::platform::db::{begin, commit};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::pilot::receipts::{Receipt, Would, would_restart};
use streamkeeper::pilot::stats::{Timed, human, report};
use streamkeeper::pilot::{
    PilotInput, PilotReport, PilotSettings, ScopeKind, baselines, checked_scope,
};
use streamkeeper::platform::durations::fine;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::error::AppError;

/// How many dismissals the page lists (the CSV of events has them all in
/// its counts; the list is for reading the reasons).
const DISMISSALS: i64 = 200;

#[derive(Clone)]
pub struct PilotService {
    pool: PgPool,
}

impl PilotService {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Lets a manager or admin through; records anyone else's attempt.
    async fn allow(
        &self,
        who: &Principal,
        from: &str,
        action: Action,
        name: &str,
        what: &str,
    ) -> Result<(), AppError> {
        if who.may(action) {
            return Ok(());
        }
        record_refusal(
            &self.pool,
            who,
            from,
            name,
            "pilot".into(),
            json!({ "refused": format!("only managers and admins {what}") }),
        )
        .await;
        Err(AppError::Forbidden(format!("{what} (managers and admins)")))
    }

    async fn load(&self) -> Result<PilotSettings, AppError> {
        let row = store::pilot(&self.pool).await?;
        let entered = store::baselines(&self.pool).await?;
        let all = baselines(&entered).map_err(|e| AppError::Invalid(e.to_string()))?;
        Ok(match row {
            None => PilotSettings {
                set_up: false,
                scope_kind: None,
                scope: Vec::new(),
                started_on: None,
                baselines: all,
                updated_by: None,
                updated_at: None,
            },
            Some(r) => PilotSettings {
                set_up: true,
                scope_kind: r.scope_kind.parse().ok(),
                scope: r.scope,
                started_on: Some(r.started_on),
                baselines: all,
                updated_by: Some(r.updated_by),
                updated_at: Some(r.updated_at),
            },
        })
    }

    /// Rebuilds the day tally from the records (`streamkeeper pilot
    /// rebuild`, a command for whoever runs the server).
    pub async fn rebuild_tally(&self) -> Result<(), AppError> {
        Ok(store::rebuild(&self.pool).await?)
    }

    /// The settings of a pilot that is set up, or a 404 that says how to.
    async fn set_up(&self) -> Result<(PilotSettings, ScopeKind, DateTime<Utc>), AppError> {
        let s = self.load().await?;
        let not_yet = || {
            AppError::NotFound(
                "A pilot (a manager sets one up with PUT /api/v1/pilot/settings)".into(),
            )
        };
        let (Some(kind), Some(start)) = (s.scope_kind, s.started_on) else {
            return Err(not_yet());
        };
        let from = start.and_time(chrono::NaiveTime::MIN).and_utc();
        Ok((s, kind, from))
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Pilot for PilotService {
    /// The pilot's settings (managers and admins).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn settings(&self, who: &Principal, from: &str) -> Result<PilotSettings, AppError> {
        self.allow(
            who,
            from,
            Action::ReadPilot,
            "pilot.read.refused",
            "read the pilot",
        )
        .await?;
        self.load().await
    }

    /// Sets the pilot up, or changes it (managers and admins); audited with
    /// what it was and what it is.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn set(
        &self,
        who: &Principal,
        from: &str,
        input: PilotInput,
    ) -> Result<PilotSettings, AppError> {
        self.allow(
            who,
            from,
            Action::SetPilot,
            "pilot.set.refused",
            "set the pilot up",
        )
        .await?;
        let invalid = |e: streamkeeper::pilot::PilotError| AppError::Invalid(e.to_string());
        let scope = checked_scope(input.scope_kind, &input.scope).map_err(invalid)?;
        let all = baselines(&input.baselines).map_err(invalid)?;
        let entered: Vec<_> = all
            .into_iter()
            .filter(|b| input.baselines.iter().any(|e| e.metric == b.metric))
            .collect();
        let before = self.load().await?;
        let mut tx = begin(&self.pool).await?;
        store::set(
            &mut tx,
            input.scope_kind,
            &scope,
            input.started_on,
            &entered,
            &who.username,
        )
        .await?;
        audited(
            &mut tx,
            who,
            from,
            "pilot.set",
            "pilot".into(),
            json!({
                "from": {"scope_kind": before.scope_kind, "scope": before.scope,
                         "started_on": before.started_on, "baselines": before.baselines},
                "to": {"scope_kind": input.scope_kind, "scope": scope,
                       "started_on": input.started_on, "baselines": entered},
            }),
        )
        .await?;
        commit(tx).await?;
        self.load().await
    }

    /// The pilot's page: the day-30 table, the weeks, the counts, the
    /// dismissals with their reasons (managers and admins).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn report(
        &self,
        who: &Principal,
        from: &str,
        now: DateTime<Utc>,
    ) -> Result<PilotReport, AppError> {
        self.allow(
            who,
            from,
            Action::ReadPilot,
            "pilot.read.refused",
            "read the pilot",
        )
        .await?;
        let (settings, kind, start) = self.set_up().await?;
        let within = store::Within {
            kind,
            scope: &settings.scope,
            from: start,
        };
        store::fresh(&self.pool).await?;
        // Three reads of one scope, each on its own connection at once.
        let (tally, dismissed, domains) = tokio::try_join!(
            store::tally(&self.pool, &within, now),
            store::dismissed(&self.pool, &within, DISMISSALS),
            store::domains(&self.pool, &within),
        )?;
        let report = report(start.date_naive(), now, &settings.baselines, tally, &[]);
        Ok(PilotReport {
            settings,
            report,
            dismissed,
            domains,
        })
    }

    /// Every timed event behind the figures, by start (managers and admins).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn events(
        &self,
        who: &Principal,
        from: &str,
        now: DateTime<Utc>,
    ) -> Result<(chrono::NaiveDate, Vec<Timed>), AppError> {
        self.allow(
            who,
            from,
            Action::ReadPilot,
            "pilot.read.refused",
            "read the pilot",
        )
        .await?;
        let (settings, kind, start) = self.set_up().await?;
        let within = store::Within {
            kind,
            scope: &settings.scope,
            from: start,
        };
        let events = store::timed(&self.pool, &within, now).await?;
        Ok((start.date_naive(), events))
    }

    /// The first weeks' receipts, newest first (managers and admins).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn receipts(
        &self,
        who: &Principal,
        from: &str,
        page: PageRequest,
    ) -> Result<Page<Receipt>, AppError> {
        self.allow(
            who,
            from,
            Action::ReadPilot,
            "pilot.read.refused",
            "read the pilot",
        )
        .await?;
        let (settings, kind, start) = self.set_up().await?;
        let within = store::Within {
            kind,
            scope: &settings.scope,
            from: start,
        };
        store::fresh(&self.pool).await?;
        // Each source's first offset + limit rows hold the merged page.
        let (rows, total) =
            store::first_weeks(&self.pool, &within, page.offset() + page.limit()).await?;
        let mut all: Vec<Receipt> = rows
            .into_iter()
            .filter_map(|r| {
                let (would, reference, evidence, what) = match r.source.as_str() {
                    "flag" => (Would::Flag, format!("flag:{}", r.id), r.evidence, r.what),
                    "restart" => {
                        let request = would_restart(&r.subject_kind, &r.kind, &r.evidence)?;
                        (
                            Would::Restart,
                            format!("flag:{}", r.id),
                            json!({ "request": request, "flag": r.evidence }),
                            format!("would have restarted it: {}", r.what),
                        )
                    }
                    _ => (Would::Block, format!("check:{}", r.id), r.evidence, r.what),
                };
                Some(Receipt {
                    would,
                    domain: r.domain,
                    autonomy: r.autonomy,
                    reference,
                    cluster: r.cluster,
                    subject: r.subject,
                    at: r.at,
                    what,
                    evidence,
                })
            })
            .collect();
        all.sort_by(|a, b| {
            b.at.cmp(&a.at)
                .then_with(|| a.would.cmp(&b.would))
                .then_with(|| b.reference.cmp(&a.reference))
        });
        let items = all
            .into_iter()
            .skip(usize::try_from(page.offset()).unwrap_or(0))
            .take(usize::try_from(page.limit()).unwrap_or(0))
            .collect();
        Ok(Page::new(items, page, total.unsigned_abs()))
    }
}

/// One row of data, each cell kept from being read as a formula: group
/// names and baseline notes are people's text.
fn record<const N: usize>(w: &mut csv::Writer<Vec<u8>>, cells: [String; N]) -> csv::Result<()> {
    use streamkeeper::platform::csv_cell::neutralise;
    w.write_record(cells.iter().map(|c| neutralise(c).into_owned()))
}

/// The day-30 table as CSV: one row per metric, the same figures as the
/// JSON's `report.table`.
pub fn table_csv(r: &PilotReport) -> Result<Vec<u8>, AppError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| crate::platform::errors::internal("writing the pilot's CSV", e);
    w.write_record([
        "metric",
        "description",
        "baseline_ms",
        "baseline",
        "baseline_note",
        "p50_ms",
        "p90_ms",
        "p50",
        "ratio_p50",
        "ratio_p90",
        "events",
        "note",
    ])
    .map_err(fail)?;
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    let ratio = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for row in &r.report.table {
        record(
            &mut w,
            [
                row.metric.as_str().to_string(),
                row.description.clone(),
                row.baseline_ms.to_string(),
                human(row.baseline_ms),
                row.baseline_note.clone(),
                opt(row.now.p50_ms),
                opt(row.now.p90_ms),
                row.now.p50_ms.map(fine).unwrap_or_default(),
                ratio(row.now.ratio_p50),
                ratio(row.now.ratio_p90),
                row.now.events.to_string(),
                row.now.note.clone(),
            ],
        )
        .map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| crate::platform::errors::internal("writing the pilot's CSV", e.error()))
}

/// The events behind the figures as CSV, one row each.
pub fn events_csv(start: chrono::NaiveDate, events: &[Timed]) -> Result<Vec<u8>, AppError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| crate::platform::errors::internal("writing the pilot's CSV", e);
    w.write_record([
        "metric",
        "reference",
        "subject",
        "started_at",
        "ended_at",
        "duration_ms",
        "week",
    ])
    .map_err(fail)?;
    for e in events {
        record(
            &mut w,
            [
                e.metric.as_str().to_string(),
                e.reference.clone(),
                e.subject.clone(),
                e.started_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                e.ended_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                e.ms().to_string(),
                streamkeeper::pilot::stats::week_of(start, e.started_at)
                    .map(|w| w.to_string())
                    .unwrap_or_default(),
            ],
        )
        .map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| crate::platform::errors::internal("writing the pilot's CSV", e.error()))
}
