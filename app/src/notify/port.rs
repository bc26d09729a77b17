//! The notify port: what the screens and REST need of team channels,
//! silences and a flag's deliveries (moved out of the hub `port.rs`,
//! which re-exports it, so each feature keeps its port in its own folder).

use crate::error::AppError;
use streamkeeper::accounts::account::Principal;

/// Notifications: a team's channels (admins and the team's members) and
/// a flag's deliveries.
#[async_trait::async_trait]
pub trait Notify: Send + Sync {
    async fn channels(
        &self,
        who: &Principal,
        team_id: i64,
    ) -> Result<Vec<crate::notify::model::ChannelView>, AppError>;
    async fn add_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        new: &crate::notify::model::NewChannel,
    ) -> Result<crate::notify::model::ChannelView, AppError>;
    async fn remove_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        id: i64,
    ) -> Result<(), AppError>;
    /// Sends a test message now and says exactly what the receiver answered.
    async fn test_channel(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        id: i64,
    ) -> Result<crate::notify::model::TestAnswer, AppError>;
    /// A cluster's silences that have not ended.
    async fn silences(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Vec<crate::notify::model::SilenceView>, AppError>;
    /// The silence holding a subject's flags now (`subject_kind`
    /// `cluster`, `topic` or `group`), by the rule delivery holds them by.
    async fn muted(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject_kind: &str,
        subject: &str,
    ) -> Result<Option<crate::notify::model::SilenceView>, AppError>;
    /// Mutes a cluster (admins), or a stream or group (admins and its
    /// owner team's members) until a time, with a reason.
    async fn silence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        new: &crate::notify::model::NewSilence,
    ) -> Result<crate::notify::model::SilenceView, AppError>;
    /// Ends a silence now (whoever may make it).
    async fn unsilence(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        id: i64,
    ) -> Result<(), AppError>;
    /// A flag's deliveries to its team's channels, with their answers.
    async fn deliveries(
        &self,
        who: &Principal,
        flag_id: i64,
    ) -> Result<Vec<crate::notify::model::DeliveryView>, AppError>;
    /// A team's delivery settings (admins and the team's members).
    async fn settings(
        &self,
        who: &Principal,
        team_id: i64,
    ) -> Result<crate::notify::model::NotifySettings, AppError>;
    /// Sets a team's delivery settings (422, audited, for a repeat
    /// interval out of range).
    async fn set_settings(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        new: &crate::notify::model::NotifySettings,
    ) -> Result<crate::notify::model::NotifySettings, AppError>;
    /// The broken channels `who` is to be told of: their own teams' when
    /// they are an owner, every team's for admins and the platform team.
    async fn broken_channels(
        &self,
        who: &Principal,
    ) -> Result<Vec<crate::notify::model::BrokenChannel>, AppError>;
}
