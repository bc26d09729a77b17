//! Confluent's `ArraySchemaDiff`. Tuples (`items` as an array in draft-07,
//! `prefixItems` in 2020-12) have content models like objects: an item
//! position named on one side only is judged by the other side's
//! `additionalItems` (2020-12: `items` after `prefixItems`).

use super::compare::{At, Comparer, Ctx};
use super::content_model::{self, UnevaluatedKinds};
use super::difference::Kind::*;
use super::limit::{self, BoundKinds};
use super::model::{ArrayRules, NodeId, Shape};

pub(super) fn compare(c: &mut Comparer<'_>, ctx: &mut Ctx, original: At, update: At) {
    let (Shape::Array(o), Shape::Array(u)) = (&c.node(original).shape, &c.node(update).shape)
    else {
        return;
    };
    let (original, update) = ((original, &**o), (update, &**u));
    ctx.enter("items");
    c.compare(ctx, at(original, o.all_items), at(update, u.all_items));
    ctx.leave();
    compare_tuples(c, ctx, original, update);
    compare_additional_items(c, ctx, original, update);
    let kinds = UnevaluatedKinds {
        added: UNEVALUATED_ITEMS_ADDED,
        removed: UNEVALUATED_ITEMS_REMOVED,
        extended: UNEVALUATED_ITEMS_EXTENDED,
        narrowed: UNEVALUATED_ITEMS_NARROWED,
    };
    let (o_uneval, u_uneval) = ((original.0, o.unevaluated), (update.0, u.unevaluated));
    content_model::compare_unevaluated(c, ctx, "unevaluatedItems", o_uneval, u_uneval, kinds);
    compare_bounds(ctx, o, u);
}

fn at((schema, _): (At, &ArrayRules), id: Option<NodeId>) -> Option<At> {
    id.map(|id| schema.to(id))
}

/// Position by position, then the positions only one side names.
fn compare_tuples(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ArrayRules),
    update: (At, &ArrayRules),
) {
    let (o, u) = (&original.1.tuple, &update.1.tuple);
    for (index, (&o, &u)) in o.iter().zip(u).enumerate() {
        ctx.enter(format!("items/{index}"));
        c.compare(ctx, Some(original.0.to(o)), Some(update.0.to(u)));
        ctx.leave();
    }
    for (index, &o) in o.iter().enumerate().skip(u.len()) {
        ctx.enter(format!("items/{index}"));
        item_removed(c, ctx, original.0.to(o), update);
        ctx.leave();
    }
    for (index, &u) in u.iter().enumerate().skip(o.len()) {
        ctx.enter(format!("items/{index}"));
        item_added(c, ctx, original, update.0.to(u));
        ctx.leave();
    }
}

/// A position only the writer names: fine if the reader's model takes it.
fn item_removed(c: &mut Comparer<'_>, ctx: &mut Ctx, schema: At, update: (At, &ArrayRules)) {
    if is_open(c, update) {
        return ctx.add(ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL);
    }
    if let Some(partial) = partially_open_schema(c, update) {
        let covered = content_model::covers(c, ctx, schema, update.0.to(partial));
        return ctx.add(if covered {
            ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        } else {
            ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        });
    }
    ctx.add(if matches!(c.node(schema).shape, Shape::Nothing) {
        ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    } else {
        ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL
    });
}

/// A position only the reader names: the writer may put anything there
/// unless its model is closed or partially open with a schema the reader
/// accepts.
fn item_added(c: &mut Comparer<'_>, ctx: &mut Ctx, original: (At, &ArrayRules), schema: At) {
    if is_open(c, original) {
        return ctx.add(if matches!(c.node(schema).shape, Shape::Any) {
            ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
        } else {
            ITEM_ADDED_TO_OPEN_CONTENT_MODEL
        });
    }
    match partially_open_schema(c, original) {
        Some(partial) => {
            let covered = content_model::covers(c, ctx, original.0.to(partial), schema);
            ctx.add(if covered {
                ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            } else {
                ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            });
        }
        None => ctx.add(ITEM_ADDED_TO_CLOSED_CONTENT_MODEL),
    }
}

fn is_open(c: &Comparer<'_>, (at, rules): (At, &ArrayRules)) -> bool {
    content_model::is_open(c, at, rules.additional, rules.unevaluated)
}

/// `additionalItems` as a schema, else a partially open
/// `unevaluatedItems`.
fn partially_open_schema(c: &Comparer<'_>, (at, rules): (At, &ArrayRules)) -> Option<NodeId> {
    rules
        .additional
        .schema()
        .or_else(|| content_model::partial_unevaluated(c, at, rules.additional, rules.unevaluated))
}

fn compare_additional_items(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ArrayRules),
    update: (At, &ArrayRules),
) {
    let (o, u) = (original.1.additional, update.1.additional);
    ctx.enter("additionalItems");
    if o.permits() != u.permits() {
        ctx.add(if o.permits() {
            ADDITIONAL_ITEMS_REMOVED
        } else {
            ADDITIONAL_ITEMS_ADDED
        });
    } else {
        match (o.schema(), u.schema()) {
            (None, Some(_)) => ctx.add(ADDITIONAL_ITEMS_NARROWED),
            (Some(_), None) => ctx.add(ADDITIONAL_ITEMS_EXTENDED),
            (o, u) => c.compare(ctx, at(original, o), at(update, u)),
        }
    }
    ctx.leave();
}

fn compare_bounds(ctx: &mut Ctx, o: &ArrayRules, u: &ArrayRules) {
    let max = BoundKinds {
        added: MAX_ITEMS_ADDED,
        removed: MAX_ITEMS_REMOVED,
        increased: MAX_ITEMS_INCREASED,
        decreased: MAX_ITEMS_DECREASED,
    };
    limit::compare(ctx, "maxItems", o.max_items, u.max_items, max);
    let min = BoundKinds {
        added: MIN_ITEMS_ADDED,
        removed: MIN_ITEMS_REMOVED,
        increased: MIN_ITEMS_INCREASED,
        decreased: MIN_ITEMS_DECREASED,
    };
    limit::compare(ctx, "minItems", o.min_items, u.min_items, min);
    match (o.unique_items, u.unique_items) {
        (true, false) => ctx.add_at("uniqueItems", UNIQUE_ITEMS_REMOVED, None),
        (false, true) => ctx.add_at("uniqueItems", UNIQUE_ITEMS_ADDED, None),
        _ => {}
    }
    let max_contains = BoundKinds {
        added: MAX_CONTAINS_ADDED,
        removed: MAX_CONTAINS_REMOVED,
        increased: MAX_CONTAINS_INCREASED,
        decreased: MAX_CONTAINS_DECREASED,
    };
    limit::compare(
        ctx,
        "maxContains",
        o.max_contains,
        u.max_contains,
        max_contains,
    );
    let min_contains = BoundKinds {
        added: MIN_CONTAINS_ADDED,
        removed: MIN_CONTAINS_REMOVED,
        increased: MIN_CONTAINS_INCREASED,
        decreased: MIN_CONTAINS_DECREASED,
    };
    limit::compare(
        ctx,
        "minContains",
        o.min_contains,
        u.min_contains,
        min_contains,
    );
}
