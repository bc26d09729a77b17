//! Who may do what to the things a team steers. The roles say what a kind
//! of user may do anywhere (`crate::accounts::role`); these rules add where: which
//! stream, for which team, in which domain.

pub mod ownership;
pub mod stewardship;
