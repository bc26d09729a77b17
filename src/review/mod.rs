//! Review items: a proposed change (a producer's new schema, a schema
//! registration), bound by a SHA-256 to its exact content and the base it
//! changes, approved by named approvers of its domain, and applied only
//! where the domain's autonomy level allows it.
//!
//! The rules here are the field's strongest guarantees put together
//! (field notes B4): approvals never by the author or anyone who edited the
//! item (GitLab's two settings), bound to the content hash and voided by
//! any edit (GitHub's "most recent reviewable push", bors's "approvals that
//! cover all code"), counted once per person, and an apply that refuses a
//! moved base like Terraform's stale saved plan.

mod content;
mod involved;
mod ladder;
pub mod mail;
mod rebase;
mod rules;
mod state;
mod subject;

pub use content::{Base, Content, content_hash};
pub use involved::involved;
pub use ladder::{Autonomy, UnknownAutonomy};
pub use rebase::dropped_fields;
pub use rules::{
    Approver, ItemFacts, Refusal, check_apply, check_approval, check_edit, check_reject,
    check_withdraw, completes, is_routine,
};
pub use state::{Kind, State, UnknownKind, UnknownState};
pub use subject::{SubjectError, proposal_subject};

/// The most approvals a domain may require.
pub const MAX_REQUIRED_APPROVALS: i16 = 10;

/// The longest title an item may be given, in characters: it is a line in
/// the inbox, every notification and every webhook message.
pub const MAX_TITLE_CHARS: usize = 200;
