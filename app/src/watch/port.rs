//! The freshness SLOs' port: what the screens, REST and CSV need of the
//! streams' SLOs beyond the stream itself (whose `TopicView` carries its
//! own). Kept in watch's folder and re-exported by the hub `port.rs`.

use crate::error::AppError;
use crate::watch::model::{DomainSlo, SloStream};
use streamkeeper::accounts::account::Principal;

#[async_trait::async_trait]
pub trait Slo: Send + Sync {
    /// A domain's streams with a freshness budget and their SLOs this
    /// month, and how many are within their tier.
    async fn domain_slo(&self, who: &Principal, domain: &str) -> Result<DomainSlo, AppError>;
    /// Every stream with a freshness budget and its SLO this month, by
    /// domain, cluster and topic (the CSV's rows).
    async fn slos(&self, who: &Principal) -> Result<Vec<SloStream>, AppError>;
}
