//! The review screens rendered by the server against a fake port, through
//! the same Leptos routes the server mounts: what each person sees on the
//! inbox and an item, and the forms posted the way a browser without
//! JavaScript posts them (a redirect back to the item, or to it with the
//! error).
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used)]

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use chrono::{TimeZone, Utc};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list};
use std::sync::{Arc, Mutex};
use streamkeeper::account::{Credential, Principal};
use streamkeeper::page::{Page, PageRequest};
use streamkeeper::review::{Autonomy, Base, Content, Kind, State};
use streamkeeper::role::Role;
use streamkeeper::schema::{Mode, SchemaType, Verdict};
use streamkeeper_app::app::{App, shell};
use streamkeeper_app::error::AppError;
use streamkeeper_app::model::*;
use streamkeeper_app::port::{Accounts, Audit, Backend, Flags, Reviews, Schemas, Watch};
use tower::ServiceExt;

const HASH: &str = "5f1b7c0e9a8d6b4c3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d";

fn person(id: i64, name: &str, roles: Vec<Role>) -> Principal {
    Principal {
        user_id: id,
        username: name.into(),
        display_name: name.into(),
        roles,
        via: Credential::Session,
    }
}

fn who(name: &str) -> Option<Principal> {
    match name {
        "ann" => Some(person(1, "ann", vec![Role::Owner])),
        "bob" => Some(person(2, "bob", vec![Role::Approver])),
        "root" => Some(person(3, "root", vec![Role::Admin])),
        _ => None,
    }
}

fn nothing() -> AppError {
    AppError::Unavailable("not in this test".into())
}

struct Nothing;

#[async_trait::async_trait]
impl Accounts for Nothing {
    async fn me(&self, who: &Principal) -> Result<Me, AppError> {
        Ok(Me {
            principal: who.clone(),
            teams: Vec::new(),
        })
    }
    async fn list_users(
        &self,
        _who: &Principal,
        _query: Option<String>,
        _page: PageRequest,
    ) -> Result<Page<UserSummary>, AppError> {
        Err(nothing())
    }
    async fn user(&self, _who: &Principal, _id: i64) -> Result<UserDetail, AppError> {
        Err(nothing())
    }
    async fn create_user(
        &self,
        _who: &Principal,
        _from: &str,
        _new: NewUser,
    ) -> Result<UserSummary, AppError> {
        Err(nothing())
    }
    async fn update_user(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
        _update: UserUpdate,
    ) -> Result<UserSummary, AppError> {
        Err(nothing())
    }
    async fn list_teams(
        &self,
        _who: &Principal,
        _page: PageRequest,
    ) -> Result<Page<TeamSummary>, AppError> {
        Err(nothing())
    }
    async fn team(&self, _who: &Principal, _id: i64) -> Result<TeamDetail, AppError> {
        Err(nothing())
    }
    async fn create_team(
        &self,
        _who: &Principal,
        _from: &str,
        _new: NewTeam,
    ) -> Result<TeamSummary, AppError> {
        Err(nothing())
    }
    async fn add_member(
        &self,
        _who: &Principal,
        _from: &str,
        _team_id: i64,
        _username: &str,
    ) -> Result<(), AppError> {
        Err(nothing())
    }
    async fn remove_member(
        &self,
        _who: &Principal,
        _from: &str,
        _team_id: i64,
        _user_id: i64,
    ) -> Result<(), AppError> {
        Err(nothing())
    }
}

#[async_trait::async_trait]
impl Audit for Nothing {
    async fn entries(
        &self,
        _who: &Principal,
        _filter: AuditFilter,
        _page: PageRequest,
    ) -> Result<Page<AuditRow>, AppError> {
        Err(nothing())
    }
}

#[async_trait::async_trait]
impl Watch for Nothing {
    async fn clusters(
        &self,
        _who: &Principal,
    ) -> Result<Vec<streamkeeper_app::model::ClusterView>, AppError> {
        Err(nothing())
    }
    async fn cluster(
        &self,
        _who: &Principal,
        _id: i64,
    ) -> Result<streamkeeper_app::model::ClusterDetail, AppError> {
        Err(nothing())
    }
    async fn group_lag(
        &self,
        _who: &Principal,
        _id: i64,
        _group: &str,
    ) -> Result<streamkeeper_app::model::GroupLagView, AppError> {
        Err(nothing())
    }
    async fn groups(
        &self,
        _who: &Principal,
        _id: i64,
        _filter: streamkeeper_app::model::GroupFilter,
        _page: PageRequest,
    ) -> Result<Page<streamkeeper_app::model::GroupSummary>, AppError> {
        Err(nothing())
    }
    async fn create_cluster(
        &self,
        _who: &Principal,
        _from: &str,
        _new: streamkeeper_app::model::NewCluster,
    ) -> Result<streamkeeper_app::model::ClusterView, AppError> {
        Err(nothing())
    }
    async fn test_connection(
        &self,
        _who: &Principal,
        _new: streamkeeper_app::model::NewCluster,
    ) -> Result<streamkeeper_app::model::ConnectionReport, AppError> {
        Err(nothing())
    }
    async fn streams(
        &self,
        _who: &Principal,
        _filter: streamkeeper_app::model::StreamFilter,
        _page: PageRequest,
    ) -> Result<Page<streamkeeper_app::model::StreamSummary>, AppError> {
        Err(nothing())
    }
    async fn stream(
        &self,
        _who: &Principal,
        _cluster_id: i64,
        _topic: &str,
        _hours: i64,
    ) -> Result<streamkeeper_app::model::StreamDetail, AppError> {
        Err(nothing())
    }
    async fn describe_stream(
        &self,
        _who: &Principal,
        _from: &str,
        _cluster_id: i64,
        _topic: &str,
        _spec: streamkeeper_app::model::StreamSpec,
    ) -> Result<streamkeeper_app::model::TopicView, AppError> {
        Err(nothing())
    }
    async fn lag_series(
        &self,
        _who: &Principal,
        _id: i64,
        _group: &str,
        _hours: i64,
    ) -> Result<Vec<streamkeeper_app::model::LagPoint>, AppError> {
        Err(nothing())
    }
}

#[async_trait::async_trait]
impl Flags for Nothing {
    async fn list(
        &self,
        _who: &Principal,
        _mine: bool,
        _live_only: bool,
        _page: PageRequest,
    ) -> Result<Page<streamkeeper_app::model::FlagView>, AppError> {
        Err(nothing())
    }
    async fn get(
        &self,
        _who: &Principal,
        _id: i64,
    ) -> Result<streamkeeper_app::model::FlagView, AppError> {
        Err(nothing())
    }
    async fn acknowledge(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
    ) -> Result<streamkeeper_app::model::FlagView, AppError> {
        Err(nothing())
    }
    async fn dismiss(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
        _reason: &str,
    ) -> Result<streamkeeper_app::model::FlagView, AppError> {
        Err(nothing())
    }
}

#[async_trait::async_trait]
impl Schemas for Nothing {
    async fn stream_schemas(
        &self,
        _who: &Principal,
        _cluster_id: i64,
        _topic: &str,
    ) -> Result<streamkeeper_app::model::StreamSchemas, AppError> {
        Err(nothing())
    }
    async fn record_schema(
        &self,
        _who: &Principal,
        _from: &str,
        _cluster_id: i64,
        _topic: &str,
        _group: Option<&str>,
        _new: streamkeeper_app::model::NewCatalogSchema,
    ) -> Result<streamkeeper_app::model::CatalogSchema, AppError> {
        Err(nothing())
    }
    async fn check(
        &self,
        _who: &Principal,
        _cluster_id: i64,
        _topic: &str,
        _proposed: streamkeeper_app::model::ProposedSchema,
    ) -> Result<streamkeeper_app::model::CompatibilityReport, AppError> {
        Err(nothing())
    }
    async fn registry_subjects(
        &self,
        _who: &Principal,
        _cluster_id: i64,
    ) -> Result<streamkeeper_app::model::RegistrySubjects, AppError> {
        Err(nothing())
    }
    async fn subject_diff(
        &self,
        _who: &Principal,
        _cluster_id: i64,
        _subject: &str,
        _left: Option<u32>,
        _right: Option<u32>,
    ) -> Result<streamkeeper_app::model::SubjectDiff, AppError> {
        Err(nothing())
    }
    async fn registries(
        &self,
        _who: &Principal,
    ) -> Result<Vec<streamkeeper_app::model::RegistryStatus>, AppError> {
        Err(nothing())
    }
    async fn check_report(
        &self,
        _who: &Principal,
        _id: i64,
    ) -> Result<streamkeeper_app::model::CompatibilityReport, AppError> {
        Err(nothing())
    }
}

/// One item, proposed by ann, that bob approves; at act_after_approval it
/// is applied when approved.
struct FakeReviews {
    item: Mutex<ReviewItem>,
}

fn item() -> ReviewItem {
    let at = Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap();
    let old = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
    let new = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null}]}"#;
    ReviewItem {
        summary: ReviewSummary {
            id: 7,
            kind: Kind::ProducerChange,
            title: "Add note to orders".into(),
            cluster_id: 1,
            cluster: "local".into(),
            topic: "orders".into(),
            subject: "orders-value".into(),
            domain: "payments".into(),
            author: "ann".into(),
            state: State::InReview,
            revision: 1,
            verdict: Verdict::Compatible,
            approval_count: 0,
            required: 1,
            waiting_for_me: false,
            created_at: at,
            updated_at: at,
        },
        content: Content {
            cluster_id: 1,
            topic: "orders".into(),
            subject: "orders-value".into(),
            schema_type: SchemaType::Avro,
            schema: new.into(),
            references: Vec::new(),
        },
        content_hash: HASH.into(),
        base: Base {
            version: Some(2),
            schema_id: Some(11),
        },
        base_schema: Some(old.into()),
        diff: vec![
            DiffLine {
                left: Some("{".into()),
                right: Some("{".into()),
            },
            DiffLine {
                left: None,
                right: Some(r#"  "name": "note""#.into()),
            },
        ],
        check: Some(CompatibilityReport {
            id: 40,
            cluster_id: 1,
            cluster: "local".into(),
            topic: "orders".into(),
            schema_type: SchemaType::Avro,
            verdict: Verdict::Compatible,
            summary: "Every consumer group can read it.".into(),
            consumers: vec![ConsumerVerdict {
                group: "billing".into(),
                owner: Some("payments".into()),
                reader: ReaderSource::Declared,
                reader_note: "declared".into(),
                verdict: Verdict::Compatible,
                reasons: Vec::new(),
            }],
            history: HistoryVerdict {
                subject: "orders-value".into(),
                source: "registry".into(),
                mode: Mode::Backward,
                versions: 2,
                verdict: Verdict::Compatible,
                findings: Vec::new(),
                note: "compatible with the latest version".into(),
            },
            registry: None,
            submitted_by: "ann".into(),
            submitted_at: at,
            elapsed_ms: 12,
        }),
        approvers: vec!["bob".into()],
        eligible_approvers: 1,
        editors: Vec::new(),
        approvals: Vec::new(),
        comments: Vec::new(),
        trail: Vec::new(),
        state_reason: String::new(),
        autonomy: Autonomy::ActAfterApproval,
        applied_version: None,
        applied_schema_id: None,
        manual_apply: None,
        actions: ItemActions::default(),
    }
}

impl FakeReviews {
    /// The item as `who` sees it: what they may do depends on who they are.
    fn seen_by(&self, who: &Principal) -> ReviewItem {
        let mut i = self.item.lock().unwrap().clone();
        let open = i.summary.state == State::InReview;
        i.summary.waiting_for_me = open && who.username == "bob";
        i.actions = ItemActions {
            approve: open && who.username == "bob",
            reject: open && who.username == "bob",
            edit: open,
            withdraw: open && who.username == "ann",
            apply: false,
            approve_refusal: (open && who.username == "ann")
                .then(|| "You proposed this change, so you may not approve it.".into()),
        };
        i
    }
}

#[async_trait::async_trait]
impl Reviews for FakeReviews {
    async fn list(
        &self,
        who: &Principal,
        filter: ReviewFilter,
        page: PageRequest,
    ) -> Result<Page<ReviewSummary>, AppError> {
        let i = self.seen_by(who);
        let shown = match filter.scope {
            InboxScope::Waiting => i.summary.waiting_for_me,
            InboxScope::Mine => i.summary.author == who.username,
            InboxScope::All => true,
        } && filter.state.is_none_or(|s| s == i.summary.state);
        let items: Vec<ReviewSummary> = shown.then_some(i.summary).into_iter().collect();
        let total = items.len() as u64;
        Ok(Page::new(items, page, total))
    }
    async fn get(&self, who: &Principal, id: i64) -> Result<ReviewItem, AppError> {
        if id == 7 {
            Ok(self.seen_by(who))
        } else {
            Err(AppError::NotFound("That review item".into()))
        }
    }
    async fn propose(
        &self,
        _who: &Principal,
        _from: &str,
        new: NewReviewItem,
    ) -> Result<ReviewItem, AppError> {
        assert_eq!(new.kind, Kind::ProducerChange);
        let mut i = item();
        i.summary.id = 8;
        Ok(i)
    }
    async fn edit(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
        _edit: ReviewEdit,
    ) -> Result<ReviewItem, AppError> {
        Err(nothing())
    }
    async fn approve(
        &self,
        who: &Principal,
        _from: &str,
        _id: i64,
        approval: Approval,
    ) -> Result<ReviewItem, AppError> {
        if approval.password.as_deref() != Some("right") {
            return Err(AppError::Invalid("That password is not right.".into()));
        }
        assert_eq!(approval.content_hash, HASH, "the page's hash is sent");
        let mut i = self.item.lock().unwrap();
        i.summary.state = State::Applied;
        i.summary.approval_count = 1;
        i.applied_version = Some(3);
        i.applied_schema_id = Some(12);
        let approved_at = i.summary.updated_at;
        i.approvals.push(ApprovalView {
            approver: who.username.clone(),
            revision: 1,
            content_hash: HASH.into(),
            approved_at,
            current: true,
        });
        Ok(i.clone())
    }
    async fn reject(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
        _reason: &str,
    ) -> Result<ReviewItem, AppError> {
        Err(nothing())
    }
    async fn withdraw(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
    ) -> Result<ReviewItem, AppError> {
        Err(nothing())
    }
    async fn comment(
        &self,
        _who: &Principal,
        _from: &str,
        _id: i64,
        _body: &str,
    ) -> Result<CommentView, AppError> {
        Err(nothing())
    }
    async fn apply(&self, _who: &Principal, _from: &str, _id: i64) -> Result<ReviewItem, AppError> {
        Err(nothing())
    }
    async fn domains(&self, who: &Principal) -> Result<Vec<DomainSettings>, AppError> {
        if !who.has(Role::Admin) {
            return Err(AppError::Forbidden("change review settings".into()));
        }
        Ok(vec![DomainSettings {
            domain: "payments".into(),
            autonomy: Autonomy::ActAfterApproval,
            required_approvals: 2,
            approver_users: vec!["bob".into()],
            approver_teams: Vec::new(),
            effective_approvers: vec!["bob".into()],
            streams: 3,
            updated_by: Some("root".into()),
            updated_at: None,
        }])
    }
    async fn set_domain(
        &self,
        _who: &Principal,
        _from: &str,
        _domain: &str,
        _spec: DomainSpec,
    ) -> Result<DomainSettings, AppError> {
        Err(nothing())
    }
    async fn notifications(
        &self,
        _who: &Principal,
        page: PageRequest,
    ) -> Result<Page<NotificationView>, AppError> {
        Ok(Page::new(Vec::new(), page, 0))
    }
    async fn mark_read(&self, _who: &Principal) -> Result<(), AppError> {
        Ok(())
    }
    async fn counts(&self, who: &Principal) -> Result<InboxCounts, AppError> {
        let waiting = i64::from(self.seen_by(who).summary.waiting_for_me);
        Ok(InboxCounts { waiting, unread: 0 })
    }
}

/// The app's routes with the fake port; `x-user` names who is signed in.
fn app() -> Router {
    let nothing = Arc::new(Nothing);
    let backend = Backend {
        accounts: nothing.clone(),
        audit: nothing.clone(),
        watch: nothing.clone(),
        flags: nothing.clone(),
        schemas: nothing,
        reviews: Arc::new(FakeReviews {
            item: Mutex::new(item()),
        }),
    };
    let options = LeptosOptions::builder()
        .output_name("streamkeeper")
        .site_root("target/site")
        .build();
    let routes = generate_route_list(App);
    let shell_options = options.clone();
    Router::new()
        .leptos_routes_with_context(
            &options,
            routes,
            move || provide_context(backend.clone()),
            move || shell(shell_options.clone()),
        )
        .layer(middleware::from_fn(sign_in))
        .with_state(options)
}

async fn sign_in(mut req: Request, next: Next) -> axum::response::Response {
    let user = req
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .and_then(who);
    if let Some(p) = user {
        req.extensions_mut().insert(p);
    }
    next.run(req).await
}

async fn get(app: &Router, user: &str, path: &str) -> (StatusCode, String) {
    let req = Request::get(path)
        .header("x-user", user)
        .header(header::ACCEPT, "text/html")
        .body(Body::empty())
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

/// A form posted by a browser without JavaScript: answers with where it
/// sends the browser next.
async fn post(
    app: &Router,
    user: &str,
    path: &str,
    from: &str,
    form: &str,
) -> (StatusCode, String) {
    let req = Request::post(path)
        .header("x-user", user)
        .header(header::ACCEPT, "text/html,application/xhtml+xml")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::REFERER, format!("http://localhost{from}"))
        .body(Body::from(form.to_string()))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let to = res
        .headers()
        .get(header::LOCATION)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, to)
}

#[tokio::test]
async fn the_approver_finds_the_item_waiting_and_the_badge_counts_it() {
    let app = app();
    let (status, html) = get(&app, "bob", "/review").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(r#"data-item="7""#), "{html}");
    assert!(html.contains("0 of 1"));
    assert!(html.contains(r#"data-testid="inbox-badge""#));
    assert!(
        html.contains(r#"data-testid="tab-waiting" aria-current="page""#)
            || html.contains(r#"aria-current="page" data-testid="tab-waiting""#),
        "{html}"
    );

    let (_, html) = get(&app, "ann", "/review").await;
    assert!(
        html.contains(r#"data-testid="inbox-empty""#),
        "nothing waits for the author"
    );
    assert!(!html.contains(r#"data-testid="inbox-badge""#));
}

#[tokio::test]
async fn the_author_sees_why_they_may_not_approve() {
    let app = app();
    let (status, html) = get(&app, "ann", "/review/7").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("in review"));
    assert!(html.contains(HASH), "the full hash");
    assert!(html.contains("version 2 (schema id 11)"));
    assert!(!html.contains(r#"data-testid="approve-form""#));
    assert!(html.contains("You proposed this change"));
    assert!(html.contains(r#"data-testid="withdraw-form""#));
    assert!(html.contains(r#"data-testid="edit-form""#));
    assert!(
        html.contains(r#"href="/schema-checks/40""#),
        "the check's report is linked"
    );
    assert!(
        html.contains(r#"data-group="billing""#),
        "each group's verdict"
    );
}

#[tokio::test]
async fn approving_without_javascript_redirects_back_with_the_error_or_the_new_state() {
    let app = app();
    let (status, html) = get(&app, "bob", "/review/7").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"data-testid="approve-form""#), "{html}");
    assert!(
        html.contains(&format!(r#"name="content_hash" value="{HASH}""#)),
        "{html}"
    );
    assert!(html.contains("Confirm with your password"));

    let wrong = format!("item_id=7&content_hash={HASH}&password=wrong");
    let (status, to) = post(&app, "bob", "/fn/approve_review", "/review/7", &wrong).await;
    assert_eq!(status, StatusCode::FOUND);
    assert!(
        to.starts_with("http://localhost/review/7?") && to.contains("__err="),
        "{to}"
    );
    let path = to.trim_start_matches("http://localhost");
    let (_, html) = get(&app, "bob", path).await;
    assert!(html.contains("That password is not right."), "{html}");
    assert!(html.contains("in review"));

    let right = format!("item_id=7&content_hash={HASH}&password=right");
    let (status, to) = post(&app, "bob", "/fn/approve_review", path, &right).await;
    assert_eq!((status, to.as_str()), (StatusCode::FOUND, "/review/7"));
    let (_, html) = get(&app, "bob", "/review/7").await;
    assert!(
        html.contains(r#"data-testid="applied-version">3<"#),
        "{html}"
    );
    assert!(!html.contains(r#"data-testid="approve-form""#));
    assert!(html.contains("counts"));
}

#[tokio::test]
async fn proposing_from_the_check_page_opens_the_new_item() {
    let app = app();
    let form = "cluster_id=1&topic=orders&schema_type=AVRO&schema=%7B%7D&propose=on";
    let (status, to) = post(
        &app,
        "ann",
        "/fn/check_schema",
        "/clusters/1/stream/check?name=orders",
        form,
    )
    .await;
    assert_eq!((status, to.as_str()), (StatusCode::FOUND, "/review/8"));
    let (status, html) = get(&app, "ann", "/clusters/1/stream/check?name=orders").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"data-testid="propose-review""#));
}

#[tokio::test]
async fn review_settings_are_for_admins() {
    let app = app();
    let (status, html) = get(&app, "bob", "/settings/review").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
    let (status, html) = get(&app, "root", "/settings/review").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(r#"data-domain="payments""#));
    assert!(
        html.contains("Fewer than the required approvals"),
        "2 required, 1 can approve"
    );
    assert!(html.contains(r#"data-testid="new-domain""#));
}
