//! Server-side pagination: every list in the console and the API is a page.
//! And the choices a list is filtered by, parsed by one rule everywhere.

use serde::{Deserialize, Serialize};

pub const DEFAULT_PER_PAGE: u32 = 25;
pub const MAX_PER_PAGE: u32 = 200;

/// A page request, clamped to sane bounds (pages start at 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRequest {
    pub page: u32,
    pub per_page: u32,
}

impl PageRequest {
    pub fn new(page: Option<u32>, per_page: Option<u32>) -> Self {
        Self {
            page: page.unwrap_or(1).max(1),
            per_page: per_page.unwrap_or(DEFAULT_PER_PAGE).clamp(1, MAX_PER_PAGE),
        }
    }

    pub fn limit(&self) -> i64 {
        i64::from(self.per_page)
    }

    pub fn offset(&self) -> i64 {
        i64::from(self.page - 1) * i64::from(self.per_page)
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        Self::new(None, None)
    }
}

/// One page of items with the total, so a pager can say "page 2 of 7".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page<T> {
    pub items: Vec<T>,
    pub page: u32,
    pub per_page: u32,
    pub total: u64,
}

impl<T> Page<T> {
    pub fn new(items: Vec<T>, req: PageRequest, total: u64) -> Self {
        Self {
            items,
            page: req.page,
            per_page: req.per_page,
            total,
        }
    }

    pub fn pages(&self) -> u64 {
        self.total.div_ceil(u64::from(self.per_page.max(1))).max(1)
    }

    pub fn has_next(&self) -> bool {
        u64::from(self.page) < self.pages()
    }

    pub fn has_prev(&self) -> bool {
        self.page > 1
    }
}

/// A value a query parameter (or a form field) picks from a fixed list:
/// an inbox's scope, a review state, a list's status filter. Every list in
/// the console and the API parses its choices with [`choice`], so they all
/// follow the same rules.
pub trait Choice: Copy + 'static {
    /// The parameter, as an error names it: `scope`, `state`, `status`.
    const NAME: &'static str;
    /// Every value, in the order an error lists them.
    fn all() -> &'static [Self];
    /// The value as a query spells it.
    fn as_str(self) -> &'static str;
}

/// A choice that is none of the allowed values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {name} '{value}' (one of: {allowed})")]
pub struct UnknownChoice {
    pub name: &'static str,
    /// What was asked, cut to [`ECHOED`] characters.
    pub value: String,
    /// The allowed values, comma-separated.
    pub allowed: String,
}

/// How much of an unknown value an error repeats back.
pub const ECHOED: usize = 64;

/// Parses an optional choice: trimmed and case-insensitive, and empty is
/// none (a form's "any" option sends `""`). Anything else is refused with
/// the allowed values listed.
pub fn choice<T: Choice>(value: Option<&str>) -> Result<Option<T>, UnknownChoice> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    T::all()
        .iter()
        .copied()
        .find(|c| c.as_str().eq_ignore_ascii_case(v))
        .map(Some)
        .ok_or_else(|| UnknownChoice {
            name: T::NAME,
            value: v.chars().take(ECHOED).collect(),
            allowed: T::all()
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_requests() {
        let r = PageRequest::new(Some(0), Some(10_000));
        assert_eq!(r.page, 1);
        assert_eq!(r.per_page, MAX_PER_PAGE);
        assert_eq!(PageRequest::new(Some(3), Some(10)).offset(), 20);
    }

    #[test]
    fn counts_pages() {
        let req = PageRequest::new(Some(2), Some(10));
        let p = Page::new(vec![1; 10], req, 21);
        assert_eq!(p.pages(), 3);
        assert!(p.has_next() && p.has_prev());
        let empty: Page<u8> = Page::new(vec![], PageRequest::default(), 0);
        assert_eq!(empty.pages(), 1);
        assert!(!empty.has_next());
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Scope {
        Waiting,
        Mine,
        All,
    }

    impl Choice for Scope {
        const NAME: &'static str = "scope";
        fn all() -> &'static [Self] {
            &[Scope::Waiting, Scope::Mine, Scope::All]
        }
        fn as_str(self) -> &'static str {
            match self {
                Scope::Waiting => "waiting",
                Scope::Mine => "mine",
                Scope::All => "all",
            }
        }
    }

    #[test]
    fn choices_are_trimmed_case_insensitive_and_empty_is_none() {
        assert_eq!(choice::<Scope>(Some("mine")), Ok(Some(Scope::Mine)));
        assert_eq!(choice::<Scope>(Some(" ALL ")), Ok(Some(Scope::All)));
        assert_eq!(choice::<Scope>(Some("Waiting")), Ok(Some(Scope::Waiting)));
        assert_eq!(choice::<Scope>(Some("")), Ok(None));
        assert_eq!(choice::<Scope>(Some("  ")), Ok(None));
        assert_eq!(choice::<Scope>(None), Ok(None));
    }

    #[test]
    fn an_unknown_choice_names_the_parameter_and_the_allowed_values() {
        let refused = choice::<Scope>(Some(" bogus ")).map_err(|e| e.to_string());
        assert_eq!(
            refused,
            Err("unknown scope 'bogus' (one of: waiting, mine, all)".into())
        );
        // Neither a prefix nor a longer word is a match.
        assert!(choice::<Scope>(Some("min")).is_err());
        assert!(choice::<Scope>(Some("mines")).is_err());
        // A long value is cut before it is repeated back.
        let long = "x".repeat(1000);
        let e = choice::<Scope>(Some(&long)).err().map(|e| e.value.len());
        assert_eq!(e, Some(ECHOED));
    }
}
