//! The lineage store: raw events (append-only, deduplicated by their hash)
//! and the graph folded from them. Writes come as a graph folded in
//! memory from a batch of events (`streamkeeper::lineage::graph::Graph`),
//! so each row arrives merged once and the SQL applies the same merge
//! rules again against what is stored, in one statement a batch
//! ([`write`]). Reads catch the in-memory adjacency and keys up
//! ([`added_since`]; an impact question in the same statement as the rest
//! of what it reads, [`impact_read`]) and load the nodes a question
//! reached back into a `Graph` for the pure walks.

mod columns;
mod dataset_columns;
mod events;
mod questions;
mod reads;
mod sources;
mod writes;
mod yardstick;

pub use columns::*;
pub use dataset_columns::*;
pub use events::*;
pub use questions::*;
pub use reads::*;
pub use sources::*;
pub use writes::*;
pub use yardstick::*;
