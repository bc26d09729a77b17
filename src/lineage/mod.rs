//! Lineage (issue 14): OpenLineage events in, one graph of streaming and
//! batch flows out, and "what breaks if this changes?" answered from it.
//! The contract is `../shared/reference/openlineage-and-connect.md` part
//! A; the server stores, transports and shows, these modules decide.
//!
//! The path of an event:
//! 1. [`receive`]: bytes → redacted ([`redact`]) and classified
//!    [`event::Event`], with its canonical bytes and dedup hash
//!    ([`canonical`]); a batch event by event.
//! 2. [`graph::fold`]: event → keyed upserts (datasets named by
//!    [`naming`], jobs, runs, edges, aliases), order-independent so a
//!    replay rebuilds the same graph; [`graph::Graph`] applies them.
//! 3. [`impact`]: downstream/upstream with paths, limits and `partial`;
//!    [`neighbourhood`] the part a view draws, laid out by [`layout`];
//!    [`marquez`] the same in Marquez's read shape.
//!
//! Column lineage (issue 43): [`columns`] reads the `columnLineage` facet
//! into column edges, [`column_walk`] answers field-level impact over
//! them, [`column_marquez`] in Marquez's column-lineage shape;
//! [`field_breaks`] says a walk as a producer change's downstream breakage;
//! [`dataset_columns`] lists a dataset's columns and where each comes from.
//!
//! [`breaks`] marks the reached consumer groups a pending producer change
//! breaks. [`derived`] makes the events for what Streamkeeper discovers itself
//! (consumer groups, connectors); [`notify`] says who may send an impact
//! to its owner teams and what each gets.

pub mod breaks;
pub mod canonical;
pub mod column_marquez;
pub mod column_walk;
pub mod columns;
pub mod dataset_columns;
pub mod derived;
pub mod event;
pub mod field_breaks;
#[cfg(test)]
mod fixtures;
pub mod graph;
pub mod impact;
pub mod kinds;
pub mod layout;
pub mod marquez;
pub mod naming;
pub mod neighbourhood;
pub mod notify;
pub mod receive;
pub mod redact;
