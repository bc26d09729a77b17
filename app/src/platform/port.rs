//! The routines' port: what Settings → Routines needs of the runner.
//! Kept in platform's folder and re-exported by the hub `port.rs`.

use crate::error::AppError;
use crate::platform::model::{ReplicaShares, RoutineStatus, RunRequested};
use streamkeeper::accounts::account::Principal;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::schedule::Schedule;

#[async_trait::async_trait]
pub trait Routines: Send + Sync {
    /// Every routine for every target with its last run and lease (admin).
    async fn list(
        &self,
        who: &Principal,
        routine: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<RoutineStatus>, AppError>;
    /// Sets a routine's schedule for all its targets (admin, audited).
    async fn set_schedule(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        schedule: Schedule,
    ) -> Result<Schedule, AppError>;
    /// Asks for one run now, of one cluster's target or all (admin, audited).
    async fn run_now(
        &self,
        who: &Principal,
        from: &str,
        routine: &str,
        cluster: Option<&str>,
    ) -> Result<RunRequested, AppError>;
    /// How the per-cluster routines are shared out over the replicas (admin).
    async fn replicas(&self, who: &Principal) -> Result<ReplicaShares, AppError>;
}
