//! Leaves every feature may use and that import no feature.

pub mod routine;
