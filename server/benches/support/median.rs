//! The middle of a bench's timings.

use std::time::Duration;

pub fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}
