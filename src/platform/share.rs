//! How replicas share a per-cluster routine's targets: each takes at most
//! its fair share (targets ÷ live replicas, rounded up), and one holding
//! more than the spread allows gives one target up after its run, so a
//! replica that joins gets work within a few intervals. Pure: the runner
//! feeds it the live replicas and the leases each holds, as Postgres last
//! said them.

/// The most targets one replica takes: `targets` ÷ `replicas`, rounded up
/// (all of them when no replica is known alive, so work never stalls on a
/// heartbeat that has not been written yet).
pub fn fair_share(targets: usize, replicas: usize) -> usize {
    if replicas == 0 {
        targets
    } else {
        targets.div_ceil(replicas)
    }
}

/// Whether a replica holding `held` targets may take one more.
pub fn may_take(held: usize, targets: usize, replicas: usize) -> bool {
    held < fair_share(targets, replicas)
}

/// One live replica's holding of a routine's targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub replica: String,
    pub held: usize,
}

/// Whether `me` should give one target up now. It does when it holds more
/// than its fair share plus `slack` (replicas left or the share shrank), or
/// when the spread is uneven — a live replica holds less than the even
/// share (`targets` ÷ replicas, rounded down) while `me` holds more than
/// it — and `me` is the one holding the most (ties go to the first name),
/// so one replica moves one target at a time and the shares converge
/// without two replicas letting go together.
pub fn should_shed(me: &str, holdings: &[Holding], targets: usize, slack: usize) -> bool {
    let replicas = holdings.len();
    let Some(mine) = holdings.iter().find(|h| h.replica == me) else {
        return false;
    };
    if mine.held > fair_share(targets, replicas) + slack {
        return true;
    }
    let even = targets / replicas.max(1);
    let starved = holdings.iter().any(|h| h.held < even);
    let most = holdings
        .iter()
        .max_by(|a, b| a.held.cmp(&b.held).then_with(|| b.replica.cmp(&a.replica)));
    starved && mine.held > even && most.is_some_and(|m| m.replica == me)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holdings(of: &[(&str, usize)]) -> Vec<Holding> {
        of.iter()
            .map(|(r, n)| Holding {
                replica: (*r).to_string(),
                held: *n,
            })
            .collect()
    }

    #[test]
    fn a_fair_share_is_targets_over_replicas_rounded_up() {
        assert_eq!(fair_share(4, 3), 2);
        assert_eq!(fair_share(50, 3), 17);
        assert_eq!(fair_share(3, 3), 1);
        assert_eq!(fair_share(0, 3), 0);
        // No heartbeat read yet: a lone starting replica takes everything.
        assert_eq!(fair_share(4, 0), 4);
    }

    #[test]
    fn a_replica_takes_up_to_its_share_and_no_more() {
        assert!(may_take(0, 4, 3));
        assert!(may_take(1, 4, 3));
        assert!(!may_take(2, 4, 3));
        // Enough room over the replicas for every target.
        for targets in 0..60 {
            for replicas in 1..7 {
                assert!(fair_share(targets, replicas) * replicas >= targets);
            }
        }
    }

    #[test]
    fn one_holding_everything_sheds_until_the_spread_is_even() {
        // 4 targets, 3 replicas, one of them holding all: it sheds.
        let h = holdings(&[("a", 4), ("b", 0), ("c", 0)]);
        assert!(should_shed("a", &h, 4, 1));
        assert!(!should_shed("b", &h, 4, 1));
        // Two holding the share, the newcomer none: the first name sheds, only it.
        let h = holdings(&[("a", 2), ("b", 2), ("c", 0)]);
        assert!(should_shed("a", &h, 4, 1));
        assert!(!should_shed("b", &h, 4, 1));
        // Even within one: nobody moves (2, 1, 1 is as even as 4 over 3 gets).
        let h = holdings(&[("a", 2), ("b", 1), ("c", 1)]);
        assert!(["a", "b", "c"].iter().all(|me| !should_shed(me, &h, 4, 1)));
    }

    #[test]
    fn a_replica_over_share_and_slack_sheds_even_when_nobody_starves() {
        // A replica left: 6 targets on 2 replicas, one holds 5.
        let h = holdings(&[("a", 5), ("b", 1)]);
        assert!(should_shed("a", &h, 6, 1));
        // Within share + slack and nobody under the even share: kept.
        let h = holdings(&[("a", 4), ("b", 3)]);
        assert!(!should_shed("a", &h, 7, 1));
    }

    #[test]
    fn a_replica_not_known_alive_sheds_nothing() {
        let h = holdings(&[("a", 2), ("b", 0)]);
        assert!(!should_shed("ghost", &h, 2, 1));
    }
}
