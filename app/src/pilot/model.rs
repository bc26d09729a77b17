//! What the pilot's pages show: the report the REST API answers, with the
//! first page of the first weeks' receipts.

use serde::{Deserialize, Serialize};
use streamkeeper::pilot::PilotReport;
use streamkeeper::pilot::receipts::Receipt;
use streamkeeper::platform::page::Page;

/// How many receipts a page of the manager's page lists.
pub const RECEIPTS_PER_PAGE: u32 = 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PilotView {
    pub pilot: PilotReport,
    pub receipts: Page<Receipt>,
}
