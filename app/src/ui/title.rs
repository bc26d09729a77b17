//! Page titles name their thing first, `orders · Streams`, so a tab, a
//! bookmark or the browser's history says which stream it was (the shell
//! adds `· Streamkeeper`).

/// `orders · Streams`; the section alone when the address names nothing
/// (such a page answers "not found").
pub fn page_title(thing: Option<&str>, section: &str) -> String {
    match thing.map(str::trim).filter(|t| !t.is_empty()) {
        Some(thing) => format!("{thing} · {section}"),
        None => section.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_names_its_thing_before_its_section() {
        assert_eq!(page_title(Some("orders"), "Streams"), "orders · Streams");
        assert_eq!(page_title(Some(" "), "Streams"), "Streams");
        assert_eq!(page_title(None, "Consumer groups"), "Consumer groups");
    }
}
