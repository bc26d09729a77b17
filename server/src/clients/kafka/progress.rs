//! How far a pass's read has got, shared with the routine waiting on it:
//! librdkafka's calls cannot be cancelled, so when a read outlasts its
//! budget the routine gives up waiting and says which phase held it, from
//! what the read has finished so far.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A read's phases in the order it runs them (the reader's `lap` names).
pub const PHASES: [&str; 5] = [
    "metadata",
    "list groups",
    "committed offsets, log start alongside",
    "log end",
    "last messages",
];

/// The phases a read has finished, with how long each took.
#[derive(Clone, Default)]
pub struct Progress(Arc<Mutex<Vec<(&'static str, Duration)>>>);

impl Progress {
    pub fn finished(&self, phase: &'static str, took: Duration) {
        if let Ok(mut done) = self.0.lock() {
            done.push((phase, took));
        }
    }

    /// The phase the read is in: the one after the last it finished.
    pub fn current(&self) -> &'static str {
        let last = self.0.lock().ok().and_then(|d| d.last().map(|p| p.0));
        let next = last.map_or(0, |l| {
            PHASES.iter().position(|p| *p == l).map_or(0, |i| i + 1)
        });
        PHASES.get(next).copied().unwrap_or("storing")
    }

    /// "still reading log end (metadata 0.1 s, list groups 0.3 s, …)".
    pub fn held_by(&self) -> String {
        let done = self.0.lock().map(|d| d.clone()).unwrap_or_default();
        let took: Vec<String> = done
            .iter()
            .map(|(p, d)| format!("{p} {:.1} s", d.as_secs_f64()))
            .collect();
        if took.is_empty() {
            format!("still reading {}", self.current())
        } else {
            format!("still reading {} after {}", self.current(), took.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_held_is_the_one_after_the_last_finished() {
        let p = Progress::default();
        assert_eq!(p.held_by(), "still reading metadata");
        p.finished("metadata", Duration::from_millis(120));
        p.finished("list groups", Duration::from_millis(300));
        assert_eq!(p.current(), "committed offsets, log start alongside");
        p.finished(
            "committed offsets, log start alongside",
            Duration::from_secs(2),
        );
        assert_eq!(
            p.held_by(),
            "still reading log end after metadata 0.1 s; list groups 0.3 s; committed offsets, log start alongside 2.0 s"
        );
    }
}
