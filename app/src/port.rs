//! The backend port: what the screens need from the server, one trait for
//! each area. The server implements it (with Postgres); server functions
//! find it in the Leptos context, authenticate, and call it. Every method
//! that acts takes the acting principal and checks it itself, so the REST
//! API and the screens share one authorization point.

use crate::accounts::model::{
    AccountView, Me, NewTeam, NewUser, TeamDetail, TeamSummary, UserDetail, UserSummary, UserUpdate,
};
use crate::audit::model::{AuditFilter, AuditRow, RefusalTally};
use crate::error::AppError;
use axum::Extension;
use std::sync::Arc;
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};

/// Where a request came from, as recorded in the audit log. Set by the
/// server on every request.
#[derive(Clone, Debug)]
pub struct ClientAddr(pub String);

#[async_trait::async_trait]
pub trait Accounts: Send + Sync {
    async fn me(&self, who: &Principal) -> Result<Me, AppError>;
    /// Users whose username or name contains `query`, in the order `sort`
    /// asks (a [`UserColumn`](streamkeeper::accounts::list::UserColumn)).
    async fn list_users(
        &self,
        who: &Principal,
        query: Option<String>,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<UserSummary>, AppError>;
    async fn user(&self, who: &Principal, id: i64) -> Result<UserDetail, AppError>;
    async fn create_user(
        &self,
        who: &Principal,
        from: &str,
        new: NewUser,
    ) -> Result<UserSummary, AppError>;
    async fn update_user(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        update: UserUpdate,
    ) -> Result<UserSummary, AppError>;
    async fn list_teams(
        &self,
        who: &Principal,
        page: PageRequest,
    ) -> Result<Page<TeamSummary>, AppError>;
    async fn team(&self, who: &Principal, id: i64) -> Result<TeamDetail, AppError>;
    async fn create_team(
        &self,
        who: &Principal,
        from: &str,
        new: NewTeam,
    ) -> Result<TeamSummary, AppError>;
    async fn add_member(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        username: &str,
    ) -> Result<(), AppError>;
    async fn remove_member(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        user_id: i64,
    ) -> Result<(), AppError>;
    /// The caller's own account (session only).
    async fn account(&self, who: &Principal) -> Result<AccountView, AppError>;
    /// Changes the caller's password, given the current one; ends their
    /// other sessions and revokes their tokens. Answers the new session
    /// epoch, which the calling session takes on to stay signed in.
    async fn change_password(
        &self,
        who: &Principal,
        from: &str,
        current: &str,
        new: &str,
    ) -> Result<i32, AppError>;
    /// Sets the zone the caller reads times in on the pages (an IANA name).
    async fn set_time_zone(&self, who: &Principal, from: &str, zone: &str) -> Result<(), AppError>;
    /// Sets the caller's own email address and what they hear there.
    async fn set_mail_preferences(
        &self,
        who: &Principal,
        from: &str,
        prefs: crate::accounts::model::MailPreferences,
    ) -> Result<(), AppError>;
    /// Starts an enrolment (no second factor yet) or a renewal of the
    /// recovery codes (with one); the account page shows what to save.
    async fn start_second_factor(&self, who: &Principal, from: &str) -> Result<(), AppError>;
    /// Completes what `start_second_factor` began, given a current code.
    async fn confirm_second_factor(
        &self,
        who: &Principal,
        from: &str,
        code: &str,
    ) -> Result<(), AppError>;
    /// Turns the caller's second factor off, given their password and a
    /// current code or a recovery code.
    async fn disable_second_factor(
        &self,
        who: &Principal,
        from: &str,
        password: &str,
        code: &str,
    ) -> Result<(), AppError>;
    /// Removes a user's second factor (admin; a lost phone).
    /// Sets or clears a team's flag webhook (admin).
    async fn set_webhook(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        url: Option<&str>,
    ) -> Result<(), AppError>;
    /// Chooses the team that receives flags nobody owns (admin).
    async fn set_platform_team(
        &self,
        who: &Principal,
        from: &str,
        team: &str,
    ) -> Result<(), AppError>;
    /// Where unowned flags go, for the warnings that say they go nowhere.
    async fn routing(&self, who: &Principal) -> Result<crate::accounts::model::Routing, AppError>;
    async fn reset_second_factor(
        &self,
        who: &Principal,
        from: &str,
        user_id: i64,
    ) -> Result<(), AppError>;
}

/// The calling session, as the screens use it. Set by the server on
/// requests signed in with a session.
#[async_trait::async_trait]
pub trait SessionKeeper: Send + Sync {
    /// Keeps the session that changed its password signed in: the change
    /// bumps the user's session epoch (ending every session), and this
    /// writes the new epoch into the calling session.
    async fn keep(&self, epoch: i32) -> Result<(), AppError>;
    /// Keeps a success note for the next page this session draws (a form
    /// post is answered with a redirect, so the note cannot ride along).
    async fn set_flash(&self, note: &str) -> Result<(), AppError>;
    /// The note kept for this page, removed as it is read.
    async fn take_flash(&self) -> Result<Option<String>, AppError>;
    /// Keeps what a failed form sent for the page it goes back to.
    async fn set_kept_form(&self, form: &crate::ui::flash::KeptForm) -> Result<(), AppError>;
    /// The failed form kept for this page, removed as it is read.
    async fn take_kept_form(&self) -> Result<Option<crate::ui::flash::KeptForm>, AppError>;
}

#[derive(Clone)]
pub struct SessionHandle(pub Arc<dyn SessionKeeper>);

/// The calling session's handle; [`AppError::Unauthenticated`] without one.
pub async fn session_handle() -> Result<SessionHandle, AppError> {
    leptos_axum::extract::<Option<Extension<SessionHandle>>>()
        .await
        .map_err(|e| AppError::Request(e.to_string()))?
        .map(|Extension(h)| h)
        .ok_or(AppError::Unauthenticated)
}

#[async_trait::async_trait]
pub trait Audit: Send + Sync {
    async fn entries(
        &self,
        who: &Principal,
        filter: AuditFilter,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<AuditRow>, AppError>;
    /// Counted refusals by unauthenticated sources, latest first.
    async fn refusals(
        &self,
        who: &Principal,
        filter: AuditFilter,
        page: PageRequest,
    ) -> Result<Page<RefusalTally>, AppError>;
}

/// Everything the screens need, handed to Leptos as context by the server.
#[derive(Clone)]
pub struct Backend {
    pub accounts: Arc<dyn Accounts>,
    pub audit: Arc<dyn Audit>,
    pub watch: Arc<dyn Watch>,
    pub slo: Arc<dyn Slo>,
    pub flags: Arc<dyn Flags>,
    pub notify: Arc<dyn Notify>,
    pub schemas: Arc<dyn Schemas>,
    pub reviews: Arc<dyn Reviews>,
    pub connect: Arc<dyn Connect>,
    pub pilot: Arc<dyn Pilot>,
    pub lineage: Arc<dyn Lineage>,
    pub routines: Arc<dyn Routines>,
    /// How people sign in here (the sign-in page asks before anyone has).
    pub sign_in: crate::accounts::model::SignInWays,
}

/// The backend, from the Leptos context.
pub fn backend() -> Result<Backend, AppError> {
    leptos::prelude::use_context::<Backend>()
        .ok_or_else(|| AppError::Internal("backend missing from context".into()))
}

/// The principal the server resolved for this request (session or token);
/// [`AppError::Unauthenticated`] when there is none.
pub async fn principal() -> Result<Principal, AppError> {
    leptos_axum::extract::<Option<Extension<Principal>>>()
        .await
        .map_err(|e| AppError::Request(e.to_string()))?
        .map(|Extension(p)| p)
        .ok_or(AppError::Unauthenticated)
}

/// Where this request came from, for the audit log.
pub async fn client_addr() -> String {
    leptos_axum::extract::<Option<Extension<ClientAddr>>>()
        .await
        .ok()
        .flatten()
        .map(|Extension(a)| a.0)
        .unwrap_or_else(|| "unknown".into())
}

/// Sets the HTTP status of the page being rendered to match an error, so a
/// forbidden or missing page answers 403 or 404 and not 200.
pub fn set_status(err: &AppError) {
    if let Some(opts) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>()
        && let Ok(status) = axum::http::StatusCode::from_u16(err.status())
    {
        opts.set_status(status);
    }
}

#[async_trait::async_trait]
pub trait Watch: Send + Sync {
    async fn clusters(
        &self,
        who: &Principal,
    ) -> Result<Vec<crate::watch::model::ClusterView>, AppError>;
    async fn cluster(
        &self,
        who: &Principal,
        id: i64,
    ) -> Result<crate::watch::model::ClusterDetail, AppError>;
    async fn group_lag(
        &self,
        who: &Principal,
        id: i64,
        group: &str,
    ) -> Result<crate::watch::model::GroupLagView, AppError>;
    /// A page of a cluster's consumer groups, the most troubled first.
    async fn groups(
        &self,
        who: &Principal,
        id: i64,
        filter: crate::watch::model::GroupFilter,
        page: PageRequest,
    ) -> Result<Page<crate::watch::model::GroupSummary>, AppError>;
    async fn create_cluster(
        &self,
        who: &Principal,
        from: &str,
        new: crate::watch::model::NewCluster,
    ) -> Result<crate::watch::model::ClusterView, AppError>;
    /// Changes a cluster's connection settings and interval (admin); its
    /// name stays. With `keep_credentials`, its credential references (and
    /// whether they may go without TLS) stay as they are whatever `new`
    /// says: the settings page does not show them.
    async fn update_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        new: crate::watch::model::NewCluster,
        keep_credentials: bool,
    ) -> Result<crate::watch::model::ClusterView, AppError>;
    /// Stops watching a cluster (admin, audited): it is gone from every
    /// list and page, its history kept until it is purged.
    async fn remove_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::watch::model::RemovedCluster, AppError>;
    /// The removed clusters not purged yet (admin).
    async fn removed_clusters(
        &self,
        who: &Principal,
    ) -> Result<Vec<crate::watch::model::RemovedCluster>, AppError>;
    /// Watches a removed cluster again (admin, audited); a conflict when a
    /// watched cluster has its name now.
    async fn restore_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::watch::model::ClusterView, AppError>;
    /// Pauses a cluster (`paused`) or resumes it (admin, audited when it
    /// changes): a paused cluster's routines skip it.
    async fn pause_cluster(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        paused: bool,
    ) -> Result<crate::watch::model::ClusterView, AppError>;
    /// Reads the cluster once, read-only, and says what worked (admin).
    async fn test_connection(
        &self,
        who: &Principal,
        new: crate::watch::model::NewCluster,
    ) -> Result<crate::watch::model::ConnectionReport, AppError>;
    async fn streams(
        &self,
        who: &Principal,
        filter: crate::watch::model::StreamFilter,
        page: PageRequest,
    ) -> Result<Page<crate::watch::model::StreamSummary>, AppError>;
    async fn stream(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        hours: i64,
    ) -> Result<crate::watch::model::StreamDetail, AppError>;
    async fn describe_stream(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        topic: &str,
        spec: crate::watch::model::StreamSpec,
    ) -> Result<crate::watch::model::TopicView, AppError>;
    /// Total lag per pass since `hours` ago (or one partition's, when
    /// given), at most `points` points.
    async fn lag_series(
        &self,
        who: &Principal,
        id: i64,
        group: &str,
        hours: i64,
        partition: Option<&crate::watch::model::PartitionRef>,
    ) -> Result<Vec<crate::watch::model::LagPoint>, AppError>;
}

#[async_trait::async_trait]
pub trait Flags: Send + Sync {
    /// Flags routed to the caller's teams (`mine`), or all; live only or all states.
    async fn list(
        &self,
        who: &Principal,
        mine: bool,
        live_only: bool,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<crate::flags::model::FlagView>, AppError>;
    async fn get(
        &self,
        who: &Principal,
        id: i64,
    ) -> Result<crate::flags::model::FlagView, AppError>;
    async fn acknowledge(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::flags::model::FlagView, AppError>;
    async fn dismiss(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        dismissal: &crate::flags::model::Dismissal,
    ) -> Result<crate::flags::model::FlagView, AppError>;
}

pub use crate::notify::port::Notify;
pub use crate::platform::port::Routines;
pub use crate::watch::port::Slo;

/// Schemas: the catalog's schemas and checks of proposed producer schemas.
#[async_trait::async_trait]
pub trait Schemas: Send + Sync {
    /// A stream's schemas with history, its readers' and its last checks.
    async fn stream_schemas(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
    ) -> Result<crate::schemas::model::StreamSchemas, AppError>;
    /// Records a stream's schema (`group` `None`) or a group's reader schema.
    async fn record_schema(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        topic: &str,
        group: Option<&str>,
        new: crate::schemas::model::NewCatalogSchema,
    ) -> Result<crate::schemas::model::CatalogSchema, AppError>;
    /// Checks a proposed producer schema against every consumer group of
    /// the topic and the subject's history; the verdict is recorded.
    async fn check(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        proposed: crate::schemas::model::ProposedSchema,
    ) -> Result<crate::schemas::model::CompatibilityReport, AppError>;
    /// A page of a cluster's registry subjects with their versions and
    /// levels, as last read (those containing `search` when given).
    async fn registry_subjects(
        &self,
        who: &Principal,
        cluster_id: i64,
        search: Option<String>,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<crate::schemas::model::RegistrySubjects, AppError>;
    /// Two versions of a subject side by side (by default the latest and
    /// the one before).
    async fn subject_diff(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject: &str,
        left: Option<u32>,
        right: Option<u32>,
    ) -> Result<crate::schemas::model::SubjectDiff, AppError>;
    /// Every cluster's registry with its hygiene findings.
    async fn registries(
        &self,
        who: &Principal,
    ) -> Result<Vec<crate::schemas::model::RegistryStatus>, AppError>;
    /// A recorded check.
    async fn check_report(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::schemas::model::CompatibilityReport, AppError>;
    /// "Notify owners": sends a check's downstream breakage to the owner
    /// teams it reaches, through their channels (audited).
    async fn notify_owners(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::schemas::model::OwnersNotice, AppError>;
}

/// The review inbox: proposals, approvals bound to the content hash, the
/// domains' approvers and autonomy levels, and notifications.
#[async_trait::async_trait]
pub trait Reviews: Send + Sync {
    /// Items the caller may read, by scope and filters, newest first.
    async fn list(
        &self,
        who: &Principal,
        filter: crate::review::model::ReviewFilter,
        page: PageRequest,
    ) -> Result<Page<crate::review::model::ReviewSummary>, AppError>;
    /// An item the caller may read; another domain's item is not found.
    async fn get(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    /// Checks a proposal at once and puts it in review.
    async fn propose(
        &self,
        who: &Principal,
        from: &str,
        new: crate::review::model::NewReviewItem,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    /// Puts in review the schema a recorded check was made of (the check's
    /// reader only), so a checked change is proposed without pasting it
    /// again. `title`: the item's, or the default one when blank.
    async fn propose_check(
        &self,
        who: &Principal,
        from: &str,
        check_id: i64,
        title: Option<String>,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    /// A new revision: checked again, every approval voided.
    async fn edit(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        edit: crate::review::model::ReviewEdit,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    async fn approve(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        approval: crate::review::model::Approval,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    async fn reject(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        reason: &str,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    async fn withdraw(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    async fn comment(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        body: &str,
    ) -> Result<crate::review::model::CommentView, AppError>;
    /// Applies an approved item where the domain's level allows, after
    /// checking that its base has not moved.
    async fn apply(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<crate::review::model::ReviewItem, AppError>;
    /// Every domain: streams' domains and configured ones.
    async fn domains(
        &self,
        who: &Principal,
    ) -> Result<Vec<crate::review::model::DomainSettings>, AppError>;
    /// Sets a domain's level, required approvals and approvers (admins).
    async fn set_domain(
        &self,
        who: &Principal,
        from: &str,
        domain: &str,
        spec: crate::review::model::DomainSpec,
    ) -> Result<crate::review::model::DomainSettings, AppError>;
    async fn notifications(
        &self,
        who: &Principal,
        page: PageRequest,
    ) -> Result<Page<crate::review::model::NotificationView>, AppError>;
    async fn mark_read(&self, who: &Principal) -> Result<(), AppError>;
    async fn counts(&self, who: &Principal) -> Result<crate::review::model::InboxCounts, AppError>;
    /// Proposes a connector config (create or update) on Connect cluster
    /// `connect` for review; a draft with errors is refused. The new item's id.
    async fn propose_connector(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        connect: &str,
        config: serde_json::Value,
    ) -> Result<i64, AppError>;
}

/// Kafka Connect: a cluster's Connect clusters and their connectors, read
/// as the connect-status routine last stored them.
#[async_trait::async_trait]
pub trait Connect: Send + Sync {
    /// The Connect clusters of a Kafka cluster, with how many connectors
    /// each runs and how many fail.
    async fn connect_clusters(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Vec<crate::connect::model::ConnectClusterView>, AppError>;
    /// A page of a Connect cluster's connectors, the troubled first;
    /// `q` searches their names.
    async fn connectors(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        q: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<crate::connect::model::ConnectorSummary>, AppError>;
    /// One connector: its masked config, tasks with traces, state history.
    async fn connector(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        connector: &str,
    ) -> Result<crate::connect::model::ConnectorDetail, AppError>;
    /// A draft checked on Connect cluster `name`: the rules with the
    /// cluster's facts beside the worker's own validate answer.
    async fn check_draft(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        config: serde_json::Value,
    ) -> Result<crate::connect::model::DraftCheck, AppError>;
    /// "Change this connector": its running config, as the worker answers
    /// it now (secrets masked), checked as a draft.
    async fn import_draft(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        connector: &str,
    ) -> Result<crate::connect::model::DraftCheck, AppError>;
}

/// The pilot (managers and admins; everyone else is refused, and each
/// refusal audited, reads included).
#[async_trait::async_trait]
pub trait Pilot: Send + Sync {
    /// Its scope, start and every metric's baseline.
    async fn settings(
        &self,
        who: &Principal,
        from: &str,
    ) -> Result<streamkeeper::pilot::PilotSettings, AppError>;
    /// Sets it up or changes it, audited.
    async fn set(
        &self,
        who: &Principal,
        from: &str,
        input: streamkeeper::pilot::PilotInput,
    ) -> Result<streamkeeper::pilot::PilotSettings, AppError>;
    /// The day-30 table, the weeks, the counts, the dismissals and each
    /// domain's record, as of `now`; a 404 until it is set up.
    async fn report(
        &self,
        who: &Principal,
        from: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<streamkeeper::pilot::PilotReport, AppError>;
    /// Every timed event behind the figures, by start, with the pilot's day 1.
    async fn events(
        &self,
        who: &Principal,
        from: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(chrono::NaiveDate, Vec<streamkeeper::pilot::stats::Timed>), AppError>;
    /// The first weeks' receipts, newest first.
    async fn receipts(
        &self,
        who: &Principal,
        from: &str,
        page: PageRequest,
    ) -> Result<Page<streamkeeper::pilot::receipts::Receipt>, AppError>;
}

/// Lineage: the graph around a node, search by name, what breaks if a
/// node changes, and that answer sent to its owner teams.
#[async_trait::async_trait]
pub trait Lineage: Send + Sync {
    /// The node's neighbourhood up- and downstream within the asked depth
    /// and node budget, laid out for drawing, with owners and open flags.
    async fn graph(
        &self,
        who: &Principal,
        ask: &crate::lineage::model::NodeAsk,
    ) -> Result<crate::lineage::model::GraphView, AppError>;
    /// Datasets and jobs whose name contains `q` (case-insensitive).
    async fn search(
        &self,
        who: &Principal,
        q: &str,
    ) -> Result<Vec<crate::lineage::model::NodeHit>, AppError>;
    /// Everything downstream (or upstream) of the node, with owners, paths
    /// and how each is known.
    async fn what_breaks(
        &self,
        who: &Principal,
        ask: &crate::lineage::model::NodeAsk,
    ) -> Result<crate::lineage::model::ImpactView, AppError>;
    /// The impact sent to every owner team it reaches, recorded and
    /// audited; owners of the node's team and admins only.
    async fn send_to_owners(
        &self,
        who: &Principal,
        from: &str,
        ask: &crate::lineage::model::NodeAsk,
    ) -> Result<crate::lineage::model::NoticeView, AppError>;
    /// What one field of the node (a dataset or topic) reaches along
    /// column lineage, with each path and owner (issue 43).
    async fn field_paths(
        &self,
        who: &Principal,
        ask: &crate::lineage::model::NodeAsk,
        field: &str,
    ) -> Result<crate::lineage::model::FieldImpactView, AppError>;
    /// The dataset's columns and where each comes from (issue 43).
    async fn dataset_columns(
        &self,
        who: &Principal,
        ask: &crate::lineage::model::NodeAsk,
    ) -> Result<crate::lineage::model::DatasetColumnsView, AppError>;
    /// The impacts of `node` (a nodeId) in `direction` sent to owners,
    /// newest first.
    async fn sent(
        &self,
        who: &Principal,
        node: &str,
        direction: &str,
    ) -> Result<Vec<crate::lineage::model::SentView>, AppError>;
    /// Gives the node (a nodeId) to `team` (`None`: clears the owner set
    /// on it): admins, and members of that team, for a node no other team
    /// owns. Audited. Answers its owner as the ownership rule now says
    /// ("payments (claimed on 2026-12-07)"), `None` when unowned.
    async fn set_node_owner(
        &self,
        who: &Principal,
        from: &str,
        node: &str,
        team: Option<&str>,
    ) -> Result<Option<String>, AppError>;
}
