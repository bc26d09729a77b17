//! Confluent's `StringSchemaDiff`: lengths and pattern.

use super::compare::Ctx;
use super::difference::Kind::*;
use super::limit::{self, BoundKinds};
use super::model::StringRules;

pub(super) fn compare(ctx: &mut Ctx, original: &StringRules, update: &StringRules) {
    let max_length = BoundKinds {
        added: MAX_LENGTH_ADDED,
        removed: MAX_LENGTH_REMOVED,
        increased: MAX_LENGTH_INCREASED,
        decreased: MAX_LENGTH_DECREASED,
    };
    limit::compare(
        ctx,
        "maxLength",
        original.max_length,
        update.max_length,
        max_length,
    );
    let min_length = BoundKinds {
        added: MIN_LENGTH_ADDED,
        removed: MIN_LENGTH_REMOVED,
        increased: MIN_LENGTH_INCREASED,
        decreased: MIN_LENGTH_DECREASED,
    };
    limit::compare(
        ctx,
        "minLength",
        original.min_length,
        update.min_length,
        min_length,
    );
    compare_pattern(ctx, original.pattern.as_deref(), update.pattern.as_deref());
}

/// Patterns are compared as text: any change may reject values the other
/// pattern accepted.
fn compare_pattern(ctx: &mut Ctx, original: Option<&str>, update: Option<&str>) {
    let kind = match (original, update) {
        (None, Some(_)) => PATTERN_ADDED,
        (Some(_), None) => PATTERN_REMOVED,
        (Some(o), Some(u)) if o != u => PATTERN_CHANGED,
        _ => return,
    };
    let detail = (limit::shown(original), limit::shown(update));
    ctx.add_at("pattern", kind, Some(detail));
}
