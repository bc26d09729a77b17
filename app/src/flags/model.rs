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
    pub resolved_at: Option<DateTime<Utc>>,
    /// Whether the caller may acknowledge or dismiss it.
    pub actionable: bool,
}
