//! The one rule behind every numeric bound Confluent compares
//! (`maxLength`, `minimum`, `maxItems`, `minProperties`, ...): added,
//! removed, increased or decreased, each its own kind.

use std::fmt::Display;

use super::compare::Ctx;
use super::difference::Kind;

/// The four kinds of one bound, e.g. `MAX_LENGTH_ADDED`, `_REMOVED`,
/// `_INCREASED`, `_DECREASED`.
pub(super) struct BoundKinds {
    pub added: Kind,
    pub removed: Kind,
    pub increased: Kind,
    pub decreased: Kind,
}

/// Compares the bound `keyword` of the writer's schema (`original`) and
/// the reader's (`update`); equal values are no difference.
pub(super) fn compare<T: PartialOrd + Display>(
    ctx: &mut Ctx,
    keyword: &str,
    original: Option<T>,
    update: Option<T>,
    kinds: BoundKinds,
) {
    let kind = match (&original, &update) {
        (None, None) => return,
        (None, Some(_)) => kinds.added,
        (Some(_), None) => kinds.removed,
        (Some(o), Some(u)) if o < u => kinds.increased,
        (Some(o), Some(u)) if o > u => kinds.decreased,
        _ => return,
    };
    ctx.add_at(keyword, kind, Some((shown(original), shown(update))));
}

/// A bound's value for a message; "none" when absent.
pub(super) fn shown<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_owned(), |v| v.to_string())
}
