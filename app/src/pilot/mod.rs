//! The pilot on the screens: the manager's page (the day-30 table, a chart
//! per metric over the pilot's weeks, each domain's level and review
//! record, the first weeks' receipts, the CSV exports) and its settings.

pub mod fns;
pub mod model;
pub mod page;
pub mod settings;
pub mod widgets;
