//! Login throttling per account and per client address (ASVS 6.3.1: well
//! under 100 failed attempts an hour per account). In memory, per replica:
//! with N replicas an attacker gets at most N times the budget, which stays
//! far below what guessing a policy-compliant password needs.
//!
//! Memory stays bounded: an account key is a username of at most
//! [`MAX_USERNAME_LEN`] characters (longer ones are refused before any
//! budget is touched), and an account's budget is spent only when the
//! address's allowed the try, so one address (an IPv6 /64) can add at most
//! its own budget's worth of account keys.

use governor::clock::DefaultClock;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use streamkeeper::accounts::account::MAX_USERNAME_LEN;
use streamkeeper::platform::client_addr::throttle_key;

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

    /// Whether an attempt for `account` from `address` may go ahead. The
    /// address pays first; the account pays only for tries its address was
    /// allowed, so an attacker whose own address is throttled cannot go on
    /// locking other people's accounts. A name longer than any username is
    /// refused without touching either budget.
    pub fn allow(&self, account: &str, address: &str) -> bool {
        let account = account.trim();
        if account.chars().count() > MAX_USERNAME_LEN {
            return false;
        }
        if self.per_address.check_key(&throttle_key(address)).is_err() {
            return false;
        }
        self.per_account.check_key(&account.to_lowercase()).is_ok()
    }

    /// Forgets keys whose budget is full again, so memory stays bounded;
    /// answers how many keys are still held.
    pub fn shrink(&self) -> usize {
        self.per_account.retain_recent();
        self.per_address.retain_recent();
        self.keys()
    }

    /// How many accounts and addresses are being throttled or counted.
    pub fn keys(&self) -> usize {
        self.per_account.len() + self.per_address.len()
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

    #[test]
    fn overlong_names_touch_no_budget() {
        let l = LoginLimiter::new();
        let long = "a".repeat(2 * 1024 * 1024);
        for _ in 0..100 {
            assert!(!l.allow(&long, "10.0.0.1"));
        }
        assert_eq!(l.keys(), 0, "nothing kept for them");
        assert!(l.allow(&"a".repeat(MAX_USERNAME_LEN), "10.0.0.1"));
    }

    #[test]
    fn a_throttled_address_spends_no_account_budget() {
        let l = LoginLimiter::new();
        for i in 0..50 {
            assert!(l.allow(&format!("guess{i}"), "203.0.113.7"));
        }
        // The attacker's address is spent; hammering alice from it does
        // not lock her out.
        for _ in 0..100 {
            assert!(!l.allow("alice", "203.0.113.7"));
        }
        for _ in 0..10 {
            assert!(l.allow("alice", "198.51.100.1"));
        }
    }

    #[test]
    fn an_ipv6_slash_64_is_one_address() {
        let l = LoginLimiter::new();
        for i in 0..50 {
            assert!(l.allow(&format!("u{i}"), &format!("2001:db8:1:2::{i:x}")));
        }
        assert!(!l.allow("u99", "2001:db8:1:2:ffff::1"));
        assert!(l.allow("u99", "2001:db8:1:3::1"));
    }
}
