//! A cluster whose broker refuses the console's sign-in: a cause to fix
//! (a rotated password not given, a mechanism withdrawn), not an outage.
//! A failed pass says so first, with since when: the first refused pass
//! after the last pass that read, kept across passes (a pass that failed
//! for another reason in between signed in no more than the refused ones)
//! until a pass reads again.

use chrono::{DateTime, Utc};

/// How a refused pass's problem starts, which is how it is told apart
/// from the other failed passes in the store.
pub const REFUSED: &str = "sign-in refused";

/// A refused pass's problem: "sign-in refused since 2026-12-07 18:05:51
/// UTC: The broker refused … (what the read said)". The time is the
/// first refusal's; every later refused pass says the same, so the flag's
/// reason stays put while the refusal lasts.
pub fn refused_problem(since: DateTime<Utc>, sentence: &str, error: &str) -> String {
    format!(
        "{REFUSED} since {}: {sentence} ({error})",
        since.format("%Y-%m-%d %H:%M:%S UTC")
    )
}

/// Whether a failed pass's problem is a refused sign-in.
pub fn is_refusal(problem: &str) -> bool {
    problem.starts_with(REFUSED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 7, h, m, 5)
            .single()
            .expect("a valid moment")
    }

    #[test]
    fn a_refusal_says_since_when_and_is_known_again_by_its_start() {
        let p = refused_problem(at(18, 5), "The broker refused the sign-in.", "unreachable");
        assert_eq!(
            p,
            "sign-in refused since 2026-12-07 18:05:05 UTC: The broker refused the sign-in. (unreachable)"
        );
        assert!(is_refusal(&p));
        assert!(!is_refusal("the pass took longer than 4 s"));
    }
}
