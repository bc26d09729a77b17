//! An owner as lists show it: the team and why it owns the thing, as the
//! ownership rule said ("payments (by stream orders)").

/// "payments (by stream orders)", "payments" when no reason was given,
/// `none` when unowned.
pub fn owned(owner: Option<&str>, reason: Option<&str>, none: &str) -> String {
    match (owner, reason) {
        (Some(o), Some(r)) => format!("{o} ({r})"),
        (Some(o), None) => o.to_string(),
        (None, _) => none.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_shown_with_its_reason() {
        assert_eq!(
            owned(Some("payments"), Some("by stream orders"), "unowned"),
            "payments (by stream orders)"
        );
        assert_eq!(owned(Some("payments"), None, "unowned"), "payments");
        assert_eq!(owned(None, Some("x"), "unowned"), "unowned");
    }
}
