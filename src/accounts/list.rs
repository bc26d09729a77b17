//! The order of the users list.

use crate::platform::sort::{Column, Sorted};

/// The columns the users list sorts by; by username unless asked.
/// `status` ascending puts the active users before the disabled ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserColumn {
    Username,
    Name,
    Status,
    Created,
}

impl Column for UserColumn {
    fn all() -> &'static [Self] {
        use UserColumn::*;
        &[Username, Name, Status, Created]
    }
    fn as_str(self) -> &'static str {
        match self {
            UserColumn::Username => "username",
            UserColumn::Name => "name",
            UserColumn::Status => "status",
            UserColumn::Created => "created",
        }
    }
    fn descending_first(self) -> bool {
        self == UserColumn::Created
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: UserColumn::Username,
            descending: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_sort_by_username_and_the_newest_first_when_by_creation() {
        let shown = UserColumn::default_order();
        assert_eq!(shown.param(), "username");
        assert_eq!(shown.toggled(UserColumn::Created).param(), "-created");
        assert_eq!(shown.toggled(UserColumn::Username).param(), "-username");
        assert!(Sorted::<UserColumn>::parse(Some("password")).is_err());
    }
}
