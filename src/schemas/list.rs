//! The order of a registry's subjects list.

use crate::platform::sort::{Column, Sorted};

/// The columns a registry's subjects sort by; by subject unless asked.
/// `latest` is the latest version's schema id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubjectColumn {
    Subject,
    Versions,
    Latest,
    Level,
}

impl Column for SubjectColumn {
    fn all() -> &'static [Self] {
        use SubjectColumn::*;
        &[Subject, Versions, Latest, Level]
    }
    fn as_str(self) -> &'static str {
        match self {
            SubjectColumn::Subject => "subject",
            SubjectColumn::Versions => "versions",
            SubjectColumn::Latest => "latest",
            SubjectColumn::Level => "level",
        }
    }
    fn descending_first(self) -> bool {
        matches!(self, SubjectColumn::Versions | SubjectColumn::Latest)
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: SubjectColumn::Subject,
            descending: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_sort_by_name_and_the_most_versions_first() {
        let shown = SubjectColumn::default_order();
        assert_eq!(shown.param(), "subject");
        assert_eq!(shown.toggled(SubjectColumn::Versions).param(), "-versions");
        assert_eq!(shown.toggled(SubjectColumn::Level).param(), "level");
    }
}
