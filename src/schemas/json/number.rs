//! Confluent's `NumberSchemaDiff`: bounds, `multipleOf`, and integer
//! against number.

use super::compare::Ctx;
use super::decimal::Decimal;
use super::difference::Kind::*;
use super::limit::{self, BoundKinds};
use super::model::NumberRules;

pub(super) fn compare(ctx: &mut Ctx, original: &NumberRules, update: &NumberRules) {
    let maximum = BoundKinds {
        added: MAXIMUM_ADDED,
        removed: MAXIMUM_REMOVED,
        increased: MAXIMUM_INCREASED,
        decreased: MAXIMUM_DECREASED,
    };
    limit::compare(ctx, "maximum", original.maximum, update.maximum, maximum);
    let minimum = BoundKinds {
        added: MINIMUM_ADDED,
        removed: MINIMUM_REMOVED,
        increased: MINIMUM_INCREASED,
        decreased: MINIMUM_DECREASED,
    };
    limit::compare(ctx, "minimum", original.minimum, update.minimum, minimum);
    let exclusive_maximum = BoundKinds {
        added: EXCLUSIVE_MAXIMUM_ADDED,
        removed: EXCLUSIVE_MAXIMUM_REMOVED,
        increased: EXCLUSIVE_MAXIMUM_INCREASED,
        decreased: EXCLUSIVE_MAXIMUM_DECREASED,
    };
    let (o, u) = (original.exclusive_maximum, update.exclusive_maximum);
    limit::compare(ctx, "exclusiveMaximum", o, u, exclusive_maximum);
    let exclusive_minimum = BoundKinds {
        added: EXCLUSIVE_MINIMUM_ADDED,
        removed: EXCLUSIVE_MINIMUM_REMOVED,
        increased: EXCLUSIVE_MINIMUM_INCREASED,
        decreased: EXCLUSIVE_MINIMUM_DECREASED,
    };
    let (o, u) = (original.exclusive_minimum, update.exclusive_minimum);
    limit::compare(ctx, "exclusiveMinimum", o, u, exclusive_minimum);
    compare_multiple_of(ctx, original.multiple_of, update.multiple_of);
    match (original.integer, update.integer) {
        (true, false) => ctx.add_detailed(TYPE_EXTENDED, Some(("integer".into(), "number".into()))),
        (false, true) => ctx.add_detailed(TYPE_NARROWED, Some(("number".into(), "integer".into()))),
        _ => {}
    }
}

/// A reader whose `multipleOf` divides the writer's accepts every value
/// the writer may send (REDUCED); one that is a multiple of the writer's
/// accepts fewer (EXPANDED); anything else is CHANGED.
fn compare_multiple_of(ctx: &mut Ctx, original: Option<Decimal>, update: Option<Decimal>) {
    let kind = match (original, update) {
        (None, None) => return,
        (None, Some(_)) => MULTIPLE_OF_ADDED,
        (Some(_), None) => MULTIPLE_OF_REMOVED,
        (Some(o), Some(u)) if o == u => return,
        (Some(o), Some(u)) if u.is_multiple_of(o) => MULTIPLE_OF_EXPANDED,
        (Some(o), Some(u)) if o.is_multiple_of(u) => MULTIPLE_OF_REDUCED,
        _ => MULTIPLE_OF_CHANGED,
    };
    let detail = (limit::shown(original), limit::shown(update));
    ctx.add_at("multipleOf", kind, Some(detail));
}
