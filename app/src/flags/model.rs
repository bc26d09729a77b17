//! A flag as the screens and the REST API show it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A flag with its receipts and timings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FlagView {
    pub id: i64,
    pub cluster_id: i64,
    pub cluster: String,
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    /// open, acknowledged, dismissed or resolved.
    pub state: String,
    pub team: Option<String>,
    pub reason: String,
    /// The samples, rule, threshold and window that raised it.
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub evidence: serde_json::Value,
    pub onset_at: DateTime<Utc>,
    pub raised_at: DateTime<Utc>,
    pub notified_at: Option<DateTime<Utc>>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub acknowledged_by: Option<String>,
    pub dismissed_at: Option<DateTime<Utc>>,
    pub dismissed_by: Option<String>,
    pub dismissed_reason: Option<String>,
    /// Why it was dismissed: `wrong` (there was no trouble) or `expected`.
    pub dismissal: Option<String>,
    /// A dismissal with a snooze holds the trouble back until then.
    pub snoozed_until: Option<DateTime<Utc>>,
    /// When the dismissal stopped holding the trouble back (it cleared, or
    /// the snooze ended).
    pub released_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Whether the caller may acknowledge or dismiss it.
    pub actionable: bool,
}

/// A dismissal: while the trouble lasts nothing is raised again and nobody
/// is paged; it comes back after the trouble clears and returns, or when
/// the snooze ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Dismissal {
    /// Why: stays on the record.
    pub reason: String,
    /// `wrong` (the flag was wrong) or `expected` (the trouble is real
    /// and expected).
    pub dismissal: String,
    /// Raise the trouble again at this time if it still lasts (at most
    /// 90 days ahead).
    pub snooze_until: Option<DateTime<Utc>>,
}
