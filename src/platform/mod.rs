//! Rules every feature shares and none owns: pages and list choices, how
//! CSV cells are kept from being read as formulas, where outbound requests
//! may go, input size caps, the client's address, and
//! quoting for a shell, which secrets a cluster's settings may name, how
//! every table is sorted, and
//! when a routine runs next, how replicas share the routines, how durations and counts are worded,
//! which control characters text input may not hold, and how many
//! connections an open-file limit leaves room for.

pub mod client_addr;
pub mod connections;
pub mod credential;
pub mod csv_cell;
pub mod durations;
pub mod egress;
pub mod limit;
pub mod page;
pub mod schedule;
pub mod share;
pub mod shell;
pub mod sort;
pub mod text;
pub mod words;
