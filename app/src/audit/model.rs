//! Audit entries and refusal tallies as the screens and the REST API show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub source: String,
}

/// Refusals by unauthenticated sources (cross-site requests, failed
/// sign-ins, unknown tokens), counted per source, action and minute beside
/// the chained entries; the row shows the latest attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RefusalTally {
    pub source: String,
    pub action: String,
    /// The minute counted (UTC, start of the minute).
    pub minute: DateTime<Utc>,
    pub actor: String,
    pub target: String,
    pub detail: String,
    pub count: i64,
    pub first_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
}

/// Filters for the audit log; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
}
