//! What the stores share (unique violations, search patterns) and the
//! schema's hand-over to the runtime role. Each feature's queries are in
//! its own `store`.

pub mod ownership;

/// Whether an error is a unique-constraint violation (Postgres 23505).
pub fn is_unique_violation(e: &crate::platform::errors::Db) -> bool {
    e.0.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "23505")
}

/// An ILIKE pattern matching `q` anywhere, with LIKE's wildcards escaped;
/// `None` for a blank or absent query (no filter).
pub fn contains_pattern(q: Option<&str>) -> Option<String> {
    q.map(str::trim).filter(|q| !q.is_empty()).map(|q| {
        format!(
            "%{}%",
            q.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::contains_pattern;

    #[test]
    fn escapes_like_wildcards() {
        assert_eq!(
            contains_pattern(Some(" a_b%c ")),
            Some("%a\\_b\\%c%".into())
        );
        assert_eq!(contains_pattern(Some("  ")), None);
        assert_eq!(contains_pattern(None), None);
    }
}
