//! The audit log: appending to the keyed hash chain (in the caller's
//! transaction, or on its own for a refusal), reading it, and its REST
//! routes. The chain's rules are in `streamkeeper::audit`.

pub mod api;
pub mod cli;
pub mod store;

use sqlx::PgPool;
use store::Event;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::audit::list::AuditColumn;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::error::AppError;

use crate::platform::authz::require;

/// Records what `who` did, from where, in the caller's transaction, so the
/// change and its audit entry commit together.
pub async fn audited(
    tx: &mut sqlx::PgConnection,
    who: &Principal,
    from: &str,
    action: &str,
    target: String,
    detail: serde_json::Value,
) -> Result<(), AppError> {
    Ok(store::append(
        tx,
        Event {
            actor: &who.username,
            action,
            target,
            detail,
            source: from,
        },
    )
    .await
    .map(drop)?)
}

/// Records a refused attempt in its own transaction (the attempt's, if
/// any, is rolled back; its trace must not be) and tells the web layer it
/// is recorded. A failure to record is logged; the caller answers with the
/// refusal either way.
pub async fn record_refusal(
    pool: &PgPool,
    who: &Principal,
    from: &str,
    action: &str,
    target: String,
    detail: serde_json::Value,
) {
    let ev = Event {
        actor: &who.username,
        action,
        target,
        detail,
        source: from,
    };
    // Unrecorded, the web layer's generic record is the trace left.
    match store::record(pool, ev).await {
        Ok(_) => refusal_audited(),
        Err(e) => tracing::error!(error = %e, action, "could not record a refusal"),
    }
}

/// The audit log as the routine runner's service writes it
/// (`platform::routine::Trail`): the runner is a leaf and imports no
/// feature, so the server hands it this.
pub struct AuditTrail(pub PgPool);

#[async_trait::async_trait]
impl crate::platform::routine::Trail for AuditTrail {
    async fn append(
        &self,
        conn: &mut sqlx::PgConnection,
        who: &Principal,
        from: &str,
        action: &str,
        target: String,
        detail: serde_json::Value,
    ) -> Result<(), AppError> {
        audited(conn, who, from, action, target, detail).await
    }

    async fn refused(
        &self,
        who: &Principal,
        from: &str,
        action: &str,
        target: String,
        detail: serde_json::Value,
    ) {
        record_refusal(&self.0, who, from, action, target, detail).await;
    }
}

tokio::task_local! {
    /// Whether the request running in this task has had its refusal
    /// written to the audit log already. Every refused write is audited:
    /// the web layer records each 403 it answers to a signed-in caller
    /// (`web::refusals`), unless the service that refused recorded it
    /// itself, with its own action and target, and said so here.
    static REFUSAL_AUDITED: std::cell::Cell<bool>;
}

/// Says that this request's refusal is in the audit log already, so the
/// web layer does not record it a second time. Outside a request (a
/// routine), there is nobody to tell.
pub fn refusal_audited() {
    let _ = REFUSAL_AUDITED.try_with(|a| a.set(true));
}

/// Runs `request` and answers whether it marked its refusal as audited.
pub async fn watch_refusals<F: std::future::Future>(request: F) -> (F::Output, bool) {
    REFUSAL_AUDITED
        .scope(std::cell::Cell::new(false), async move {
            let out = request.await;
            (out, REFUSAL_AUDITED.with(std::cell::Cell::get))
        })
        .await
}

/// The audit log as the screens and the API read it.
#[derive(Clone)]
pub struct AuditService {
    pool: PgPool,
}

impl AuditService {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Audit for AuditService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn entries(
        &self,
        who: &Principal,
        filter: streamkeeper_app::audit::model::AuditFilter,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<streamkeeper_app::audit::model::AuditRow>, AppError> {
        require(who, Action::ReadAudit, "read the audit log")?;
        let order = Sorted::<AuditColumn>::parse(sort.as_deref())?;
        Ok(store::list(&self.pool, &filter, order, page).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn refusals(
        &self,
        who: &Principal,
        filter: streamkeeper_app::audit::model::AuditFilter,
        page: PageRequest,
    ) -> Result<Page<streamkeeper_app::audit::model::RefusalTally>, AppError> {
        require(who, Action::ReadAudit, "read the audit log")?;
        Ok(store::refusals(&self.pool, &filter, page).await?)
    }
}
