//! The pilot a manager reviews at day 30: what it covers (clusters, streams
//! or domains), when it started, the baseline of each metric with where the
//! baseline came from, and the metrics themselves, computed from the
//! product's own records (flags, checks, review items), never typed in.
//! [`stats`] turns those records into weekly p50/p90 against the baseline;
//! [`ratio`] words a figure against its baseline; [`receipts`] says what
//! Streamkeeper would have done in a domain that only watches or suggests.

pub mod history;
pub mod ratio;
pub mod receipts;
pub mod stats;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A timed metric: from the moment something needed doing to the moment
/// it was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Lag flagged to its owner: a flag's onset (the first bad sample) →
    /// its owner notified (webhook delivered, or seen in the app).
    LagFlagged,
    /// Producer change checked: a check submitted → its verdict against
    /// every consumer.
    ChangeChecked,
    /// Producer change through review: proposed → approved or applied.
    ChangeReviewed,
    /// Lineage question answered: impact asked → answer shown.
    LineageAnswered,
    /// Lineage question's owners notified: impact asked → owners notified.
    LineageNotified,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::LagFlagged,
        Metric::ChangeChecked,
        Metric::ChangeReviewed,
        Metric::LineageAnswered,
        Metric::LineageNotified,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::LagFlagged => "lag_flagged",
            Metric::ChangeChecked => "change_checked",
            Metric::ChangeReviewed => "change_reviewed",
            Metric::LineageAnswered => "lineage_answered",
            Metric::LineageNotified => "lineage_notified",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Metric::LagFlagged => "consumer lag flagged to its owner (onset → owner notified)",
            Metric::ChangeChecked => {
                "producer change checked against consumers (submitted → verdict)"
            }
            Metric::ChangeReviewed => {
                "producer change through review (proposed → approved or applied)"
            }
            Metric::LineageAnswered => "stream lineage question answered (asked → answer shown)",
            Metric::LineageNotified => {
                "stream lineage question's owners notified (asked → notified)"
            }
        }
    }

    /// The seed's "before" figures: lag flagged in about 2 h, a producer
    /// change checked in about 8 h, a lineage question answered in about 2
    /// days. A manager replaces them with their own, saying where from.
    pub fn default_baseline_ms(self) -> i64 {
        const HOUR: i64 = 3_600_000;
        match self {
            Metric::LagFlagged => 2 * HOUR,
            Metric::ChangeChecked | Metric::ChangeReviewed => 8 * HOUR,
            Metric::LineageAnswered | Metric::LineageNotified => 48 * HOUR,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = PilotError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| PilotError::UnknownMetric(s.to_string()))
    }
}

/// What the pilot covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    /// Cluster names.
    Clusters,
    /// Streams as `cluster/topic`.
    Streams,
    /// Domains (a stream's domain).
    Domains,
}

impl ScopeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Clusters => "clusters",
            ScopeKind::Streams => "streams",
            ScopeKind::Domains => "domains",
        }
    }
}

impl FromStr for ScopeKind {
    type Err = PilotError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "clusters" => Ok(ScopeKind::Clusters),
            "streams" => Ok(ScopeKind::Streams),
            "domains" => Ok(ScopeKind::Domains),
            other => Err(PilotError::UnknownScope(other.to_string())),
        }
    }
}

/// One metric's baseline: how long it took before the pilot, and where
/// that figure came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Baseline {
    pub metric: Metric,
    pub ms: i64,
    /// Where the figure came from ("median of Q3 incident tickets"); the
    /// defaults say they are the defaults. Read as empty when left out, so
    /// a baseline without one is refused by [`baselines`] (422), as one
    /// with an empty note is, not by the JSON decoder (400).
    #[serde(default)]
    pub note: String,
}

impl Baseline {
    pub fn default_for(metric: Metric) -> Self {
        Self {
            metric,
            ms: metric.default_baseline_ms(),
            note: "the default (no baseline entered)".into(),
        }
    }
}

/// The pilot as it is set up (nothing until a manager sets it up).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PilotSettings {
    /// Whether a pilot is set up; until then the rest are the defaults.
    pub set_up: bool,
    pub scope_kind: Option<ScopeKind>,
    /// Cluster names, `cluster/topic` streams, or domains.
    pub scope: Vec<String>,
    /// Its day 1 (UTC).
    pub started_on: Option<chrono::NaiveDate>,
    /// Every metric's baseline, entered or default, in metric order.
    pub baselines: Vec<Baseline>,
    pub updated_by: Option<String>,
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The pilot as a manager sets it up: it replaces what was set, and a
/// metric whose baseline is left out has its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PilotInput {
    pub scope_kind: ScopeKind,
    pub scope: Vec<String>,
    pub started_on: chrono::NaiveDate,
    #[serde(default)]
    pub baselines: Vec<Baseline>,
}

/// A flag dismissed as wrong, with its reason, for the review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Dismissal {
    pub flag_id: i64,
    pub cluster: String,
    pub subject: String,
    pub kind: String,
    pub reason: String,
    pub by: String,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// A domain of the pilot: its autonomy level now, and its review record
/// since the pilot's start (the approvals given, the items rejected, the
/// flags its owners dismissed as wrong).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DomainRecord {
    pub domain: String,
    /// `watch`, `suggest`, `act_after_approval` or `autonomous` (a domain
    /// nobody configured is at `suggest`).
    pub autonomy: String,
    pub approvals: i64,
    pub rejections: i64,
    pub dismissed: i64,
}

/// The pilot's page: its settings, figures and counts, the dismissals,
/// and each domain's level with its review record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PilotReport {
    pub settings: PilotSettings,
    pub report: stats::Report,
    pub dismissed: Vec<Dismissal>,
    pub domains: Vec<DomainRecord>,
}

/// How many scope entries a pilot may name.
pub const MAX_SCOPE: usize = 500;
/// The longest scope entry (a `cluster/topic`).
pub const MAX_SCOPE_ENTRY: usize = 400;
/// The longest note on a baseline.
pub const MAX_NOTE: usize = 1000;
/// A baseline's bounds: a second to a year.
pub const MIN_BASELINE_MS: i64 = 1000;
pub const MAX_BASELINE_MS: i64 = 366 * 24 * 3_600_000;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PilotError {
    #[error(
        "unknown metric '{0}' (expected one of lag_flagged, change_checked, change_reviewed, lineage_answered, lineage_notified)"
    )]
    UnknownMetric(String),
    #[error("unknown scope '{0}' (expected clusters, streams or domains)")]
    UnknownScope(String),
    #[error("name at least one {0} the pilot covers")]
    EmptyScope(&'static str),
    #[error("a pilot covers at most {MAX_SCOPE} entries")]
    ScopeTooLarge,
    #[error("a scope entry is at most {MAX_SCOPE_ENTRY} characters")]
    EntryTooLong,
    #[error("a stream is named as cluster/topic; '{0}' is not")]
    Stream(String),
    #[error("a baseline is between 1 s and 366 days; {0} ms is not")]
    BaselineRange(i64),
    #[error("say where the {0} baseline comes from (a note of at most {MAX_NOTE} characters)")]
    Note(Metric),
    #[error("the {0} baseline is given twice")]
    Twice(Metric),
    #[error("the {0} baseline is a whole number of minutes; '{1}' is not")]
    Minutes(Metric, String),
}

/// A baseline as the settings form sends it: minutes and a note. Left as
/// the default (its minutes unchanged and no note), it is not entered and
/// the metric keeps its default; otherwise it is entered, and
/// [`baselines`] asks for its note and checks its range.
pub fn form_baseline(
    metric: Metric,
    minutes: &str,
    note: &str,
) -> Result<Option<Baseline>, PilotError> {
    let minutes = minutes.trim();
    let ms = if minutes.is_empty() {
        metric.default_baseline_ms()
    } else {
        minutes
            .parse::<i64>()
            .ok()
            .and_then(|m| m.checked_mul(60_000))
            .ok_or_else(|| PilotError::Minutes(metric, minutes.to_string()))?
    };
    let note = note.trim();
    Ok(
        (ms != metric.default_baseline_ms() || !note.is_empty()).then(|| Baseline {
            metric,
            ms,
            note: note.to_string(),
        }),
    )
}

/// Checks a scope as entered: trimmed, de-duplicated, sorted entries, at
/// least one, streams as `cluster/topic`.
pub fn checked_scope(kind: ScopeKind, entries: &[String]) -> Result<Vec<String>, PilotError> {
    let mut out: Vec<String> = entries
        .iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    out.sort();
    out.dedup();
    if out.is_empty() {
        return Err(PilotError::EmptyScope(match kind {
            ScopeKind::Clusters => "cluster",
            ScopeKind::Streams => "stream",
            ScopeKind::Domains => "domain",
        }));
    }
    if out.len() > MAX_SCOPE {
        return Err(PilotError::ScopeTooLarge);
    }
    for e in &out {
        if e.len() > MAX_SCOPE_ENTRY {
            return Err(PilotError::EntryTooLong);
        }
        if kind == ScopeKind::Streams
            && !e
                .split_once('/')
                .is_some_and(|(c, t)| !c.is_empty() && !t.is_empty())
        {
            return Err(PilotError::Stream(e.clone()));
        }
    }
    Ok(out)
}

/// Every metric's baseline: the ones entered (checked: in range, with a
/// note, each metric once), the defaults for the rest, in metric order.
pub fn baselines(entered: &[Baseline]) -> Result<Vec<Baseline>, PilotError> {
    let mut out: Vec<Baseline> = Metric::ALL.into_iter().map(Baseline::default_for).collect();
    let mut seen = Vec::new();
    for b in entered {
        if seen.contains(&b.metric) {
            return Err(PilotError::Twice(b.metric));
        }
        seen.push(b.metric);
        if !(MIN_BASELINE_MS..=MAX_BASELINE_MS).contains(&b.ms) {
            return Err(PilotError::BaselineRange(b.ms));
        }
        let note = b.note.trim();
        if note.is_empty() || note.chars().count() > MAX_NOTE {
            return Err(PilotError::Note(b.metric));
        }
        if let Some(slot) = out.iter_mut().find(|o| o.metric == b.metric) {
            *slot = Baseline {
                metric: b.metric,
                ms: b.ms,
                note: note.to_string(),
            };
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_baselines_are_the_seeds_two_hours_eight_hours_and_two_days() {
        let b = baselines(&[]).expect("defaults");
        let ms: Vec<i64> = b.iter().map(|b| b.ms).collect();
        assert_eq!(
            ms,
            vec![7_200_000, 28_800_000, 28_800_000, 172_800_000, 172_800_000]
        );
    }

    #[test]
    fn an_entered_baseline_needs_a_note_and_a_sane_value() {
        let lag = |ms, note: &str| Baseline {
            metric: Metric::LagFlagged,
            ms,
            note: note.into(),
        };
        let b = baselines(&[lag(5_400_000, " on-call tickets, Q3 ")]).expect("entered");
        assert_eq!(b[0].ms, 5_400_000);
        assert_eq!(b[0].note, "on-call tickets, Q3");
        assert_eq!(b[1], Baseline::default_for(Metric::ChangeChecked));
        assert_eq!(
            baselines(&[lag(5_400_000, "  ")]),
            Err(PilotError::Note(Metric::LagFlagged))
        );
        assert_eq!(baselines(&[lag(0, "x")]), Err(PilotError::BaselineRange(0)));
        assert_eq!(
            baselines(&[lag(5_000, "x"), lag(6_000, "y")]),
            Err(PilotError::Twice(Metric::LagFlagged))
        );
    }

    #[test]
    fn a_form_baseline_left_at_its_default_is_not_entered() {
        let m = Metric::LagFlagged;
        assert_eq!(form_baseline(m, "120", " "), Ok(None));
        assert_eq!(form_baseline(m, "", ""), Ok(None));
        assert_eq!(
            form_baseline(m, "90", " Q3 tickets "),
            Ok(Some(Baseline {
                metric: m,
                ms: 5_400_000,
                note: "Q3 tickets".into()
            }))
        );
        // Changed without a note: entered, so `baselines` asks for one.
        let b = form_baseline(m, "90", "")
            .expect("parsed")
            .expect("entered");
        assert_eq!(baselines(&[b]), Err(PilotError::Note(m)));
        // The default's figure with a note says where it came from.
        assert_eq!(
            form_baseline(m, "120", "ours too").map(|b| b.map(|b| b.ms)),
            Ok(Some(7_200_000))
        );
        assert_eq!(
            form_baseline(m, "2h", ""),
            Err(PilotError::Minutes(m, "2h".into()))
        );
    }

    #[test]
    fn a_scope_is_trimmed_sorted_and_streams_name_their_cluster() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            checked_scope(ScopeKind::Domains, &s(&[" payments", "orders", "payments"])),
            Ok(s(&["orders", "payments"]))
        );
        assert_eq!(
            checked_scope(ScopeKind::Streams, &s(&["prod/orders"])),
            Ok(s(&["prod/orders"]))
        );
        assert_eq!(
            checked_scope(ScopeKind::Streams, &s(&["orders"])),
            Err(PilotError::Stream("orders".into()))
        );
        assert_eq!(
            checked_scope(ScopeKind::Clusters, &s(&[" "])),
            Err(PilotError::EmptyScope("cluster"))
        );
        assert_eq!("clusters".parse(), Ok(ScopeKind::Clusters));
        assert!("teams".parse::<ScopeKind>().is_err());
        assert_eq!("lag_flagged".parse(), Ok(Metric::LagFlagged));
    }
}
