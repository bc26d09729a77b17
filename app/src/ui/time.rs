//! One way to show a moment on every page: UTC, to the second.

use chrono::{DateTime, Utc};

/// `2026-12-02 00:41:07 UTC`.
pub fn stamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}
