//! What the stores share (unique violations, search patterns, orders) and the
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

/// An `ORDER BY` list from a sorted column's SQL keys, each the way
/// asked with rows lacking a value last either way, then `unique` (a
/// unique key, ascending), so pages neither repeat nor skip rows and equal
/// values keep one order both ways. The keys are the store's own fixed
/// fragments per column, never text from the request.
pub fn order_by(keys: &[&'static str], descending: bool, unique: &'static str) -> String {
    let way = if descending { "DESC" } else { "ASC" };
    keys.iter()
        .map(|k| format!("{k} {way} NULLS LAST"))
        .chain([unique.to_string()])
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::{contains_pattern, order_by};

    #[test]
    fn orders_the_keys_the_same_way_with_nulls_last_then_the_unique_key() {
        assert_eq!(
            order_by(&["g.total_lag", "g.members"], true, "g.name"),
            "g.total_lag DESC NULLS LAST, g.members DESC NULLS LAST, g.name"
        );
        assert_eq!(
            order_by(&["u.username"], false, "u.id"),
            "u.username ASC NULLS LAST, u.id"
        );
    }

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
