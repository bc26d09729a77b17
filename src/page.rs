//! Server-side pagination: every list in the console and the API is a page.

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
}
