//! The start page of a signed-in user: what their roles call for first
//! (an owner's open flags and changes in review, an approver's waiting
//! items, an admin's clusters not up and failing routines, a manager's
//! pilot), each with an empty state that says what to do next.

pub mod fns;
pub mod model;
pub mod page;
