//! Consumer lag: how far behind a consumer group is, in offsets and in
//! time, and what its recent history says about it (Burrow's statuses, with
//! the fixes from `../shared/reference/field-notes.md`).
//!
//! - [`consumed`]: topics a group stopped consuming but keeps offsets on.
//! - [`offset`]: lag per partition from one sample, with "no commit" and
//!   "beyond retention" told apart from a count.
//! - [`time`]: time lag estimated from the history of log-end offsets
//!   (kafka-lag-exporter's interpolation), with its failure modes named.
//! - [`status`]: the windowed status of a partition and of a group.
//! - [`onset`]: when the trouble a status names began.
//! - [`trend`]: velocity, time to catch up and retention risk.

pub mod consumed;
pub mod offset;
pub mod onset;
pub mod status;
pub mod time;
pub mod trend;
