//! Counts as people write them (`1 partition`, `3 partitions`, never
//! `1 partitions` or `partition(s)`), and reasons quoted as sentences that
//! end once. Hand-written: the few nouns the screens count take an `s`,
//! and a crate for English inflection would bring word lists for words no
//! page uses.

use std::fmt::Display;

/// `1 partition`, `0 partitions`, `12 partitions`: `noun` is the singular
/// and takes an `s` for any other count.
pub fn counted<N: Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `text` as a sentence of its own, ending once: a reason that already
/// ends with a full stop is not given a second one (`runs.. Fix`).
pub fn sentence(text: &str) -> String {
    let text = text.trim();
    if text.ends_with(['.', '!', '?']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1_i64, "partition"), "1 partition");
        assert_eq!(counted(0_u32, "partition"), "0 partitions");
        assert_eq!(counted(12_usize, "message"), "12 messages");
        assert_eq!(counted(-1_i64, "message"), "-1 messages");
        assert_eq!(counted(1_u64, "consumer group"), "1 consumer group");
    }

    #[test]
    fn a_sentence_ends_once() {
        assert_eq!(
            sentence("check that the broker runs."),
            "check that the broker runs."
        );
        assert_eq!(sentence("Nothing answered "), "Nothing answered.");
        assert_eq!(sentence("Is it up?"), "Is it up?");
    }
}
