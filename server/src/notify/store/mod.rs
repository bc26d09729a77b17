//! Notifications' SQL: channels, the transitions' outbox, silences, and
//! the channels' rows of the deliveries table (the webhook rows are the
//! flags' store's).

mod channels;
mod deliveries;
mod outbox;
mod silences;

pub use channels::*;
pub use deliveries::*;
pub use outbox::*;
pub use silences::*;
