//! What an item is and where it stands.

use crate::platform::page::Choice;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// What a review item changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A producer's new schema for a topic: checked against every consumer
    /// group that reads it, applied by registering it under the topic's
    /// value subject.
    ProducerChange,
    /// A schema to register under a subject (`register_kafka_schema`).
    SchemaRegistration,
    /// A connector's config to create or replace (`PUT
    /// /connectors/{name}/config`), bound to the running config it changes.
    ConnectorDraft,
    /// A connector's failed instances to restart (`POST
    /// /connectors/{name}/restart?includeTasks=true&onlyFailed=true`).
    ConnectorRestart,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::ProducerChange,
        Kind::SchemaRegistration,
        Kind::ConnectorDraft,
        Kind::ConnectorRestart,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ProducerChange => "producer_change",
            Kind::SchemaRegistration => "schema_registration",
            Kind::ConnectorDraft => "connector_draft",
            Kind::ConnectorRestart => "connector_restart",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Kind::ProducerChange => "producer schema change",
            Kind::SchemaRegistration => "schema registration",
            Kind::ConnectorDraft => "connector draft",
            Kind::ConnectorRestart => "connector restart",
        }
    }

    /// Kinds applied to Kafka Connect rather than to the registry.
    pub fn is_connector(self) -> bool {
        matches!(self, Kind::ConnectorDraft | Kind::ConnectorRestart)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown review item kind '{0}' (expected producer_change, schema_registration, connector_draft or connector_restart)"
)]
pub struct UnknownKind(pub String);

impl FromStr for Kind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

impl Choice for Kind {
    const NAME: &'static str = "kind";
    fn all() -> &'static [Self] {
        &Kind::ALL
    }
    fn as_str(self) -> &'static str {
        Kind::as_str(self)
    }
}

/// Where an item stands. In review → approved / rejected / withdrawn →
/// applied / apply failed; an edit or a moved base returns it to review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum State {
    InReview,
    Approved,
    Rejected,
    Withdrawn,
    Applied,
    ApplyFailed,
}

impl State {
    pub const ALL: [State; 6] = [
        State::InReview,
        State::Approved,
        State::Rejected,
        State::Withdrawn,
        State::Applied,
        State::ApplyFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::InReview => "in_review",
            State::Approved => "approved",
            State::Rejected => "rejected",
            State::Withdrawn => "withdrawn",
            State::Applied => "applied",
            State::ApplyFailed => "apply_failed",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            State::InReview => "in review",
            State::Approved => "approved",
            State::Rejected => "rejected",
            State::Withdrawn => "withdrawn",
            State::Applied => "applied",
            State::ApplyFailed => "apply failed",
        }
    }

    /// Rejected, withdrawn and applied items take no more changes.
    pub fn is_closed(self) -> bool {
        matches!(self, State::Rejected | State::Withdrawn | State::Applied)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown review state '{0}'")]
pub struct UnknownState(pub String);

impl FromStr for State {
    type Err = UnknownState;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        State::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| UnknownState(s.to_owned()))
    }
}

impl Choice for State {
    const NAME: &'static str = "state";
    fn all() -> &'static [Self] {
        &State::ALL
    }
    fn as_str(self) -> &'static str {
        State::as_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in State::ALL {
            assert_eq!(s.as_str().parse::<State>(), Ok(s));
        }
        for k in Kind::ALL {
            assert_eq!(k.as_str().parse::<Kind>(), Ok(k));
        }
        assert!("approved!".parse::<State>().is_err());
        assert_eq!(
            crate::platform::page::choice::<State>(Some("Apply_Failed")),
            Ok(Some(State::ApplyFailed))
        );
        assert_eq!(
            crate::platform::page::choice::<Kind>(Some("connector")).map_err(|e| e.to_string()),
            Err("unknown kind 'connector' (one of: producer_change, schema_registration, connector_draft, connector_restart)".into())
        );
        assert!("connector".parse::<Kind>().is_err());
    }

    #[test]
    fn closed_states() {
        let closed: Vec<State> = State::ALL.into_iter().filter(|s| s.is_closed()).collect();
        assert_eq!(closed, [State::Rejected, State::Withdrawn, State::Applied]);
    }
}
