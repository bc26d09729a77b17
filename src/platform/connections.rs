//! How many client connections a server may hold under its open-file limit
//! (issue 39): one file each, with a reserve kept back for what is not a
//! client (the Postgres pool, Kafka and HTTP clients, logs), so that a
//! crowd of idle sockets can never leave the process without a file.

/// Files kept back for what is not a client.
pub const RESERVE: u64 = 256;
/// A soft limit below this is worth a warning at start-up: it leaves room
/// for only a few thousand clients.
pub const LOW: u64 = 4096;

/// The cap on open connections under a soft open-file limit: the reserve
/// kept back, and never less than half the limit (a tiny limit still
/// serves).
pub fn cap(soft_limit: u64) -> u64 {
    soft_limit.saturating_sub(RESERVE).max(soft_limit / 2)
}

/// Whether a soft limit is low enough to warn about.
pub fn is_low(soft_limit: u64) -> bool {
    soft_limit < LOW
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_a_reserve_below_the_limit() {
        assert_eq!(cap(1024), 768);
        assert_eq!(cap(65_536), 65_280);
        // A tiny limit still serves half of it.
        assert_eq!(cap(400), 200);
        assert_eq!(cap(0), 0);
        assert_eq!(cap(u64::MAX), u64::MAX - RESERVE);
    }

    #[test]
    fn systemds_default_soft_limit_is_low() {
        assert!(is_low(1024));
        assert!(!is_low(65_536));
    }
}
