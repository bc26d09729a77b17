//! Durations as people say them, the same in every sentence and table.

/// `45 s`, `1 min 40 s`, `9 min`, `2 h 5 min`, `2 d 3 h`: the two largest
/// units, rounded down, so a sentence never claims more time than passed.
pub fn human(ms: i64) -> String {
    let s = ms / 1000;
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) if s % 60 == 0 => format!("{m} min"),
        (0, 0, m) => format!("{m} min {} s", s % 60),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// As [`human`], but a duration under a second in milliseconds (`340 ms`),
/// where `human` would say `0 s`: for figures that are often that short
/// (an answer shown, a check's verdict) and for the axes that draw them.
pub fn fine(ms: i64) -> String {
    if (0..1000).contains(&ms) {
        format!("{ms} ms")
    } else {
        human(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_a_second_reads_in_milliseconds() {
        assert_eq!(fine(0), "0 ms");
        assert_eq!(fine(340), "340 ms");
        assert_eq!(fine(1_000), "1 s");
        assert_eq!(fine(100_999), "1 min 40 s");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human(45_000), "45 s");
        assert_eq!(human(100_999), "1 min 40 s");
        assert_eq!(human(540_000), "9 min");
        assert_eq!(human(7_200_000), "2 h");
        assert_eq!(human(7_500_000), "2 h 5 min");
        assert_eq!(human(172_800_000), "2 d");
        assert_eq!(human(183_600_000), "2 d 3 h");
    }
}
