//! Size caps on what users hand the parsers (schemas, clusters files),
//! checked before any parser reads a byte: the parsers' own recursion
//! limits stop deep input, these stop big input, and the refusal says
//! how big it was and what the limit is.

use std::fmt;

/// Input over its cap: `what` is how the refusal names it ("the
/// schema", "the clusters file c.toml").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TooLarge {
    pub what: String,
    pub bytes: u64,
    pub limit: u64,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {} ({} bytes); the limit is {}",
            self.what,
            shown(self.bytes),
            grouped(self.bytes),
            shown(self.limit)
        )
    }
}

/// Refuses `bytes` over `limit`.
pub fn cap(what: impl Into<String>, bytes: u64, limit: u64) -> Result<(), TooLarge> {
    if bytes <= limit {
        Ok(())
    } else {
        Err(TooLarge {
            what: what.into(),
            bytes,
            limit,
        })
    }
}

/// A size as people read it, in binary units: `512 bytes`, `64 KiB`,
/// `5.2 MiB` (whole units without a decimal, others to one decimal, cut
/// rather than rounded so a size over a limit never shows as the limit).
pub fn shown(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let tenths = u128::from(bytes) * 10 / u128::from(unit);
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{}.{} {name}", tenths / 10, tenths % 10)
            };
        }
    }
    if bytes == 1 {
        "1 byte".into()
    } else {
        format!("{bytes} bytes")
    }
}

/// `5452595` as `5,452,595`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(shown(0), "0 bytes");
        assert_eq!(shown(1), "1 byte");
        assert_eq!(shown(1023), "1023 bytes");
        assert_eq!(shown(1024), "1 KiB");
        assert_eq!(shown(1 << 20), "1 MiB");
        assert_eq!(shown(5_452_595), "5.1 MiB");
        assert_eq!(shown(3 << 30), "3 GiB");
        assert_eq!(shown(u64::MAX), "17179869183.9 GiB");
    }

    #[test]
    fn just_over_the_limit_does_not_read_as_the_limit() {
        assert_eq!(shown((1 << 20) + 1), "1.0 MiB");
        let e = cap("the schema", (1 << 20) + 1, 1 << 20).expect_err("over");
        assert_eq!(
            e.to_string(),
            "the schema is 1.0 MiB (1,048,577 bytes); the limit is 1 MiB"
        );
    }

    #[test]
    fn the_limit_itself_is_allowed() {
        assert_eq!(cap("x", 1 << 20, 1 << 20), Ok(()));
        assert_eq!(cap("x", 0, 0), Ok(()));
        assert!(cap("x", 1, 0).is_err());
    }

    #[test]
    fn byte_counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(5_452_595), "5,452,595");
    }
}
