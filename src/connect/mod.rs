//! Connectors: Kafka Connect configs drafted from templates, checked by
//! pure rules beside the worker's own validate answer, kept with secrets
//! masked, diffed against the running config, and read for lineage.
//!
//! The server gathers the facts (the Connect cluster's connectors, the
//! Kafka cluster's topics, the worker's validate answer), calls these
//! functions and acts; nothing here does IO.
//!
//! - [`config`]: a config (string values only) and reading pasted JSON.
//! - [`plugin`]: the plugins covered, by `connector.class`.
//! - [`secret`]: which properties are secrets, references, masking.
//! - [`template`]: each plugin's form, drafting and importing.
//! - [`rules`]: [`validate`] and its [`Context`].
//! - [`finding`]: findings, their fixes, [`may_propose`].
//! - [`worker`]: the worker's validate answer and the side-by-side view.
//! - [`canonical`]: canonical content, its hash, the base and the diff.
//! - [`draft`]: a connector change as a review item, its hash, its domain.
//! - [`restart`]: the backoff of restarts at the autonomous level.
//! - [`lineage`]: a config's inputs and outputs as OpenLineage datasets.
//! - [`status`]: what a status pass makes of states: flags, scrubbed traces.

pub mod canonical;
pub mod config;
pub mod draft;
pub mod finding;
pub mod lineage;
pub mod plugin;
pub mod restart;
pub mod rules;
pub mod secret;
pub mod status;
pub mod template;
pub mod worker;

pub use config::{Config, ParseError, parse_draft};
pub use finding::{Finding, Fix, Rule, Severity, may_propose};
pub use plugin::Plugin;
pub use rules::{Context, validate};
