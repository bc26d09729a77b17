//! The routines as the REST API, the CLI and Settings → Routines read and
//! change them: schedules and run-now requests, admins only, audited.

use super::store;
use async_trait::async_trait;
use sqlx::PgPool;
use std::sync::Arc;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::schedule::Schedule;
use streamkeeper_app::error::AppError;
use streamkeeper_app::platform::model::{ReplicaShares, RoutineStatus, RunRequested};
use tracing::instrument;

/// Where the routines' changes and refusals are audited: the audit log
/// is a feature's (the runner, a leaf, imports none), so the server hands
/// the runner's service this.
#[async_trait]
pub trait Trail: Send + Sync {
    /// Appends an entry in the change's own transaction.
    async fn append(
        &self,
        conn: &mut sqlx::PgConnection,
        who: &Principal,
        from: &str,
        action: &str,
        target: String,
        detail: serde_json::Value,
    ) -> Result<(), AppError>;

    /// Records a refusal in a transaction of its own.
    async fn refused(
        &self,
        who: &Principal,
        from: &str,
        action: &str,
        target: String,
        detail: serde_json::Value,
    );
}

/// The routines as the API and the CLI read and change them.
#[derive(Clone)]
pub struct Routines {
    pool: PgPool,
    trail: Arc<dyn Trail>,
}

impl Routines {
    pub fn new(pool: PgPool, trail: Arc<dyn Trail>) -> Self {
        Self { pool, trail }
    }

    /// Every routine for every target with its last run and lease (admin).
    pub async fn list(
        &self,
        who: &Principal,
        routine: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<RoutineStatus>, AppError> {
        if !who.may(Action::SeeRoutines) {
            return Err(AppError::Forbidden("see the routines".into()));
        }
        store::list(&self.pool, routine, page)
            .await
            .map_err(crate::platform::errors::db)
    }

    /// How the per-cluster routines are shared out over the replicas (admin).
    pub async fn replicas(&self, who: &Principal) -> Result<ReplicaShares, AppError> {
        if !who.may(Action::SeeRoutines) {
            return Err(AppError::Forbidden("see the routines".into()));
        }
        super::share::listing(&self.pool)
            .await
            .map_err(crate::platform::errors::db)
    }

    /// Refuses (and audits) anyone but an admin.
    async fn admin(
        &self,
        who: &Principal,
        from: &str,
        action: &str,
        routine: &str,
    ) -> Result<(), AppError> {
        if who.may(Action::ManageRoutines) {
            return Ok(());
        }
        let why = "only admins change routines";
        self.trail
            .refused(
                who,
                from,
                &format!("{action}.refused"),
                format!("routine:{routine}"),
                serde_json::json!({ "refused": why }),
            )
            .await;
        Err(AppError::Forbidden(format!(
            "change the routine {routine} (admins only)"
        )))
    }

    /// The routine's scope, or a 404 naming it.
    async fn scope(&self, routine: &str) -> Result<String, AppError> {
        store::scope_of(&self.pool, routine)
            .await
            .map_err(crate::platform::errors::db)?
            .ok_or_else(|| AppError::NotFound(format!("Routine '{routine}'")))
    }

    /// Sets a routine's schedule for all its targets (admin): every
    /// replica runs it so from its next run; audited with the old one.
    #[instrument(skip_all, fields(user = %who.username, routine = %routine))]
    pub async fn set_schedule(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        schedule: Schedule,
    ) -> Result<Schedule, AppError> {
        self.admin(who, from, "routine.schedule", routine).await?;
        self.scope(routine).await?;
        let schedule = schedule
            .checked()
            .map_err(|e| AppError::Invalid(e.to_string()))?;
        let db = crate::platform::errors::db;
        let before = store::schedule(&self.pool, routine).await.map_err(db)?;
        let mut tx = self.pool.begin().await.map_err(db)?;
        store::set_schedule(&mut tx, routine, &schedule, &who.username)
            .await
            .map_err(db)?;
        self.trail
            .append(
                &mut tx,
                who,
                from,
                "routine.schedule",
                format!("routine:{routine}"),
                serde_json::json!({ "from": before, "to": schedule }),
            )
            .await?;
        tx.commit().await.map_err(db)?;
        Ok(schedule)
    }

    /// Asks for one run now (admin): on the named cluster, or on every
    /// cluster of a per-cluster routine when none is named. One replica
    /// runs each target once, paused or not; audited.
    #[instrument(skip_all, fields(user = %who.username, routine = %routine))]
    pub async fn run_now(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        cluster: Option<&str>,
    ) -> Result<RunRequested, AppError> {
        self.admin(who, from, "routine.run_now", routine).await?;
        let db = crate::platform::errors::db;
        let scope = self.scope(routine).await?;
        let cluster_id = match (scope.as_str(), cluster) {
            ("global", Some(_)) => {
                return Err(AppError::Invalid(format!(
                    "'{routine}' runs once for the installation; name no cluster"
                )));
            }
            (_, Some(name)) => Some(
                store::cluster_id(&self.pool, name)
                    .await
                    .map_err(db)?
                    .ok_or_else(|| AppError::NotFound(format!("Cluster '{name}'")))?,
            ),
            (_, None) => None,
        };
        let all = scope == "cluster" && cluster_id.is_none();
        let mut tx = self.pool.begin().await.map_err(db)?;
        let targets = store::request_run(&mut tx, routine, cluster_id, all, &who.username)
            .await
            .map_err(db)?;
        self.trail
            .append(
                &mut tx,
                who,
                from,
                "routine.run_now",
                format!("routine:{routine}"),
                serde_json::json!({ "cluster": cluster, "targets": targets }),
            )
            .await?;
        tx.commit().await.map_err(db)?;
        Ok(RunRequested {
            routine: routine.to_string(),
            targets,
        })
    }
}

/// The screens' port: Settings → Routines calls the same checks as the
/// REST API and the CLI.
#[async_trait]
impl streamkeeper_app::port::Routines for Routines {
    async fn list(
        &self,
        who: &Principal,
        routine: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<RoutineStatus>, AppError> {
        Routines::list(self, who, routine, page).await
    }

    async fn set_schedule(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        schedule: Schedule,
    ) -> Result<Schedule, AppError> {
        Routines::set_schedule(self, who, from, routine, schedule).await
    }

    async fn run_now(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        cluster: Option<&str>,
    ) -> Result<RunRequested, AppError> {
        Routines::run_now(self, who, from, routine, cluster).await
    }

    async fn replicas(&self, who: &Principal) -> Result<ReplicaShares, AppError> {
        Routines::replicas(self, who).await
    }
}
