//! The order of the audit log's list.

use crate::platform::sort::{Column, Sorted};

/// The columns the audit log sorts by; the newest entry first unless
/// asked. `#` is the entry's place in the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditColumn {
    Id,
    At,
    Actor,
    Action,
    Target,
    Source,
}

impl Column for AuditColumn {
    fn all() -> &'static [Self] {
        use AuditColumn::*;
        &[Id, At, Actor, Action, Target, Source]
    }
    fn as_str(self) -> &'static str {
        match self {
            AuditColumn::Id => "id",
            AuditColumn::At => "at",
            AuditColumn::Actor => "actor",
            AuditColumn::Action => "action",
            AuditColumn::Target => "target",
            AuditColumn::Source => "source",
        }
    }
    fn descending_first(self) -> bool {
        matches!(self, AuditColumn::Id | AuditColumn::At)
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: AuditColumn::Id,
            descending: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_reads_newest_first_and_names_sort_a_to_z_first() {
        let shown = AuditColumn::default_order();
        assert_eq!(shown.param(), "-id");
        assert_eq!(shown.toggled(AuditColumn::Id).param(), "id");
        assert_eq!(shown.toggled(AuditColumn::Actor).param(), "actor");
        assert_eq!(shown.toggled(AuditColumn::At).param(), "-at");
    }
}
