//! The review inbox: items, approvals, comments, domains and notifications,
//! as the screens and the REST API show them.

use crate::audit::model::AuditRow;
use crate::schemas::model::{CompatibilityReport, DiffLine};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use streamkeeper::review::{Autonomy, Base, Content, Kind, State};
use streamkeeper::schemas::{SchemaType, SubjectReference, Verdict};

/// One line of the inbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReviewSummary {
    pub id: i64,
    pub kind: Kind,
    pub title: String,
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub subject: String,
    pub domain: String,
    pub author: String,
    pub state: State,
    pub revision: i32,
    pub verdict: Verdict,
    /// Approvals of the current revision that count.
    pub approval_count: usize,
    pub required: i16,
    /// The caller is a named approver who has not yet decided it.
    pub waiting_for_me: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An approval as recorded: who, which revision, the hash they approved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ApprovalView {
    pub approver: String,
    pub revision: i32,
    pub content_hash: String,
    pub approved_at: DateTime<Utc>,
    /// Approvals of earlier revisions were voided by an edit or a moved base.
    pub current: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CommentView {
    pub id: i64,
    pub author: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
}

/// What the caller may do with the item now, so the page offers only
/// those forms. The server checks again on every action.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ItemActions {
    pub approve: bool,
    pub reject: bool,
    pub edit: bool,
    pub withdraw: bool,
    pub apply: bool,
    /// Why the caller may not approve, when they are an approver at all.
    pub approve_refusal: Option<String>,
    /// How the caller confirms an approval in the browser.
    #[serde(default)]
    pub confirm: Confirmation,
}

/// How an approval in the browser is confirmed: with the approver's
/// password, or, for those who sign in through single sign-on, by a fresh
/// sign-in at the identity provider (`fresh` once it was made, for five
/// minutes and one approval).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Confirmation {
    #[default]
    Password,
    Provider,
    ProviderFresh,
}

/// A review item with everything its page shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReviewItem {
    #[serde(flatten)]
    pub summary: ReviewSummary,
    pub content: Content,
    /// SHA-256 of the kind, the canonical content and the base; approvals
    /// are bound to it.
    pub content_hash: String,
    pub base: Base,
    /// The base's schema text (none when the subject had no versions).
    pub base_schema: Option<String>,
    /// The base and the proposed schema side by side.
    pub diff: Vec<DiffLine>,
    /// This revision's compatibility check.
    pub check: Option<CompatibilityReport>,
    /// The named approvers frozen with this revision.
    pub approvers: Vec<String>,
    /// How many of them may still approve (not the author, not an editor).
    pub eligible_approvers: usize,
    pub editors: Vec<String>,
    pub approvals: Vec<ApprovalView>,
    pub comments: Vec<CommentView>,
    /// The item's own audit trail, oldest first.
    pub trail: Vec<AuditRow>,
    /// The rejection's reason, the apply's error, why it returned to review.
    pub state_reason: String,
    /// The domain's level now.
    pub autonomy: Autonomy,
    pub applied_version: Option<u32>,
    pub applied_schema_id: Option<u32>,
    /// At *suggest*: the exact registry request to apply it by hand.
    pub manual_apply: Option<String>,
    /// An open schema item whose subject the registry's last reading saw
    /// at another version than its base: apply would send it back to
    /// review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_moved: Option<crate::schemas::model::SubjectSeen>,
    pub actions: ItemActions,
    /// A connector item: its config against the running one it was made
    /// on, secret values left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_diff: Option<streamkeeper::connect::canonical::Diff>,
    /// An applied connector item: whether the connector runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_run: Option<crate::connect::model::RunAfterApply>,
    /// A connector draft's validation of this revision (the rules and the
    /// worker's validate), its counterpart of `check`; its config is the
    /// content, so the check's is left empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<Object>))]
    pub connector_check: Option<crate::connect::model::DraftCheck>,
}

/// A review item as its page reads it: the item, and what the page alone
/// works out from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemPage {
    pub item: ReviewItem,
    /// A schema item sent back to review on a moved base: the fields of
    /// the new base its schema leaves out (registering it drops them).
    pub rebase_drops: Vec<String>,
}

/// A proposal: a producer's new schema for a topic, or a schema to
/// register under a subject (by default the topic's value subject).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewReviewItem {
    pub kind: Kind,
    pub cluster_id: i64,
    pub topic: String,
    #[serde(default)]
    pub subject: Option<String>,
    pub schema_type: SchemaType,
    pub schema: String,
    /// Registered schemas it references.
    #[serde(default)]
    pub references: Vec<SubjectReference>,
    /// A line for the inbox; generated when blank.
    #[serde(default)]
    pub title: Option<String>,
}

/// An edit: the new schema, at the revision the editor loaded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReviewEdit {
    pub loaded_revision: i32,
    pub schema_type: SchemaType,
    pub schema: String,
    #[serde(default)]
    pub references: Vec<SubjectReference>,
}

/// An approval: the hash of the content approved, and (in the browser) the
/// approver's password again, with a TOTP code if they have a second factor. API tokens are their own re-authentication.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Approval {
    pub content_hash: String,
    #[serde(default)]
    pub password: Option<String>,
    /// A current TOTP code, for users with a second factor.
    #[serde(default)]
    pub totp: Option<String>,
}

/// Which items the inbox lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum InboxScope {
    /// In review, the caller a named approver who has not decided.
    #[default]
    Waiting,
    /// Proposed or edited by the caller.
    Mine,
    /// Every item the caller may read.
    All,
}

impl InboxScope {
    pub fn as_str(self) -> &'static str {
        match self {
            InboxScope::Waiting => "waiting",
            InboxScope::Mine => "mine",
            InboxScope::All => "all",
        }
    }
}

impl streamkeeper::platform::page::Choice for InboxScope {
    const NAME: &'static str = "scope";
    fn all() -> &'static [Self] {
        &[InboxScope::Waiting, InboxScope::Mine, InboxScope::All]
    }
    fn as_str(self) -> &'static str {
        InboxScope::as_str(self)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewFilter {
    pub scope: InboxScope,
    pub state: Option<State>,
    pub kind: Option<Kind>,
    pub domain: Option<String>,
}

/// A named approver: a person or a team (its members with the approver role).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DomainSettings {
    pub domain: String,
    pub autonomy: Autonomy,
    pub required_approvals: i16,
    pub approver_users: Vec<String>,
    pub approver_teams: Vec<String>,
    /// Who can approve now: users and team members holding the approver role.
    pub effective_approvers: Vec<String>,
    /// Streams in this domain.
    pub streams: i64,
    pub updated_by: Option<String>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// An admin's settings for a domain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DomainSpec {
    pub autonomy: Autonomy,
    #[serde(default = "one")]
    pub required_approvals: i16,
    #[serde(default)]
    pub approver_users: Vec<String>,
    #[serde(default)]
    pub approver_teams: Vec<String>,
}

fn one() -> i16 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NotificationView {
    pub id: i64,
    pub item_id: Option<i64>,
    pub message: String,
    pub created_at: DateTime<Utc>,
    pub read: bool,
}

/// The header's badge: items waiting for the caller, unread notifications.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct InboxCounts {
    pub waiting: i64,
    pub unread: i64,
}
