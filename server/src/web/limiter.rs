//! Login throttling per account and per client address (ASVS 6.3.1: well
//! under 100 failed attempts an hour per account). In memory, per replica:
//! with N replicas an attacker gets at most N times the budget, which stays
//! far below what guessing a policy-compliant password needs.

use governor::clock::DefaultClock;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

type Keyed = RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>;

#[derive(Clone)]
pub struct LoginLimiter {
    per_account: Arc<Keyed>,
    per_address: Arc<Keyed>,
}

fn quota(burst: u32, every: Duration) -> Quota {
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(every)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(burst)
}

impl LoginLimiter {
    /// 10 attempts, then one a minute per account (≤ 70 an hour); 50, then
    /// one every 2 s per address.
    pub fn new() -> Self {
        Self {
            per_account: Arc::new(RateLimiter::keyed(quota(10, Duration::from_secs(60)))),
            per_address: Arc::new(RateLimiter::keyed(quota(50, Duration::from_secs(2)))),
        }
    }

    /// Whether an attempt for `account` from `address` may go ahead. Every
    /// attempt spends from both budgets.
    pub fn allow(&self, account: &str, address: &str) -> bool {
        let a = self.per_account.check_key(&account.to_lowercase()).is_ok();
        let b = self.per_address.check_key(&address.to_string()).is_ok();
        a && b
    }

    /// Forgets keys whose budget is full again, so memory stays bounded.
    pub fn shrink(&self) {
        self.per_account.retain_recent();
        self.per_address.retain_recent();
    }
}

impl Default for LoginLimiter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttles_one_account_not_others() {
        let l = LoginLimiter::new();
        for _ in 0..10 {
            assert!(l.allow("alice", "10.0.0.1"));
        }
        assert!(!l.allow("alice", "10.0.0.2"));
        assert!(!l.allow("ALICE", "10.0.0.3"));
        assert!(l.allow("bob", "10.0.0.1"));
    }
}
