//! Schemas on the screens: a stream's schemas (a section of the stream
//! page), checking a producer change, and the registries' subjects.

pub mod check;
pub mod fns;
pub mod model;
pub mod registry;
pub mod widgets;
