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

use governor::clock::Clock;
use governor::clock::DefaultClock;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use streamkeeper::accounts::account::MAX_USERNAME_LEN;
use streamkeeper::platform::client_addr::throttle_key;

type Keyed = RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>;

/// Only failed tries pay: governor counts them, and a key whose budget a
/// failure found spent is locked until governor's next cell (governor
/// cannot be asked without paying, so the lock is kept here).
#[derive(Clone)]
pub struct LoginLimiter {
    per_account: Arc<Keyed>,
    per_address: Arc<Keyed>,
    locked: Arc<Mutex<HashMap<String, Instant>>>,
}

fn quota(burst: u32, every: Duration) -> Quota {
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(every)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(burst)
}

/// How long an overlong name waits: it is never tried at all.
const OVERLONG: Duration = Duration::from_secs(60);

fn account_key(account: &str) -> String {
    format!("account:{}", account.trim().to_lowercase())
}

fn address_key(address: &str) -> String {
    format!("address:{}", throttle_key(address))
}

impl LoginLimiter {
    /// 10 failures, then one a minute per account (≤ 70 an hour); 50, then
    /// one every 2 s per address. Successful sign-ins cost nothing.
    pub fn new() -> Self {
        Self {
            per_account: Arc::new(RateLimiter::keyed(quota(10, Duration::from_secs(60)))),
            per_address: Arc::new(RateLimiter::keyed(quota(50, Duration::from_secs(2)))),
            locked: Arc::default(),
        }
    }

    fn locks(&self) -> MutexGuard<'_, HashMap<String, Instant>> {
        // A panic elsewhere while holding it leaves the map usable.
        self.locked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a try for `account` from `address` must wait, and how long:
    /// `None` lets it go ahead. A name longer than any username always
    /// waits and touches no budget.
    pub fn wait(&self, account: &str, address: &str) -> Option<Duration> {
        if account.trim().chars().count() > MAX_USERNAME_LEN {
            return Some(OVERLONG);
        }
        let now = Instant::now();
        let locks = self.locks();
        [address_key(address), account_key(account)]
            .iter()
            .filter_map(|k| locks.get(k))
            .filter(|until| **until > now)
            .map(|until| *until - now)
            .max()
    }

    /// Records a failed try. The address pays first; the account pays only
    /// for failures its address had budget for, so an attacker whose own
    /// address is spent cannot go on locking other people's accounts.
    pub fn failed(&self, account: &str, address: &str) {
        if account.trim().chars().count() > MAX_USERNAME_LEN {
            return;
        }
        let address = address_key(address);
        if let Err(not_until) = self.per_address.check_key(&address) {
            let until = Instant::now() + not_until.wait_time_from(DefaultClock::default().now());
            self.locks().insert(address, until);
            return;
        }
        let account = account_key(account);
        if let Err(not_until) = self.per_account.check_key(&account) {
            let until = Instant::now() + not_until.wait_time_from(DefaultClock::default().now());
            self.locks().insert(account, until);
        }
    }

    /// Forgets keys whose budget is full again and locks that ended, so
    /// memory stays bounded; answers how many keys are still held.
    pub fn shrink(&self) -> usize {
        self.per_account.retain_recent();
        self.per_address.retain_recent();
        let now = Instant::now();
        self.locks().retain(|_, until| *until > now);
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

    fn fail(l: &LoginLimiter, account: &str, address: &str, n: usize) {
        for _ in 0..n {
            l.failed(account, address);
        }
    }

    #[test]
    fn throttles_one_account_after_its_failures_not_others() {
        let l = LoginLimiter::new();
        fail(&l, "alice", "10.0.0.1", 10);
        assert_eq!(l.wait("alice", "10.0.0.1"), None, "ten failures are free");
        l.failed("alice", "10.0.0.1");
        let wait = l.wait("alice", "10.0.0.2").expect("locked");
        assert!(
            wait > Duration::from_secs(50) && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
        assert!(
            l.wait("ALICE", "10.0.0.3").is_some(),
            "names are one account whatever their case"
        );
        assert_eq!(l.wait("bob", "10.0.0.1"), None);
    }

    #[test]
    fn successful_sign_ins_cost_nothing() {
        let l = LoginLimiter::new();
        for _ in 0..1000 {
            assert_eq!(l.wait("alice", "10.0.0.1"), None);
        }
        assert_eq!(l.keys(), 0);
    }

    #[test]
    fn overlong_names_touch_no_budget() {
        let l = LoginLimiter::new();
        let long = "a".repeat(2 * 1024 * 1024);
        for _ in 0..100 {
            assert!(l.wait(&long, "10.0.0.1").is_some());
            l.failed(&long, "10.0.0.1");
        }
        assert_eq!(l.keys(), 0, "nothing kept for them");
        assert_eq!(l.wait(&"a".repeat(MAX_USERNAME_LEN), "10.0.0.1"), None);
    }

    #[test]
    fn a_throttled_address_spends_no_account_budget() {
        let l = LoginLimiter::new();
        for i in 0..51 {
            l.failed(&format!("guess{i}"), "203.0.113.7");
        }
        assert!(
            l.wait("alice", "203.0.113.7").is_some(),
            "the address is spent"
        );
        // Hammering alice from it does not lock her out elsewhere.
        fail(&l, "alice", "203.0.113.7", 100);
        assert_eq!(l.wait("alice", "198.51.100.1"), None);
    }

    #[test]
    fn an_ipv6_slash_64_is_one_address() {
        let l = LoginLimiter::new();
        for i in 0..51 {
            l.failed(&format!("u{i}"), &format!("2001:db8:1:2::{i:x}"));
        }
        assert!(l.wait("u99", "2001:db8:1:2:ffff::1").is_some());
        assert_eq!(l.wait("u99", "2001:db8:1:3::1"), None);
    }

    #[test]
    fn ended_locks_are_forgotten() {
        let l = LoginLimiter::new();
        l.locks().insert(
            account_key("alice"),
            Instant::now() - Duration::from_secs(1),
        );
        assert_eq!(
            l.wait("alice", "10.0.0.1"),
            None,
            "an ended lock does not hold"
        );
        l.shrink();
        assert!(l.locks().is_empty());
    }
}
