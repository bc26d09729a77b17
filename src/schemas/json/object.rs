//! Confluent's `ObjectSchemaDiff`, with its content models.
//!
//! An object's content model says what it does with properties it does
//! not name: **open** (`additionalProperties` absent or `true`, no
//! `patternProperties`, no restricting `unevaluatedProperties`) accepts
//! any; **closed** (`false`) accepts none; **partially open** (a schema,
//! a matching pattern property, or an `unevaluatedProperties` schema)
//! accepts those matching that schema. A property named on one side only
//! is judged by the content model of the other side.

use std::collections::BTreeSet;

use super::compare::{At, Comparer, Ctx};
use super::content_model;
use super::difference::Kind::*;
use super::limit::{self, BoundKinds};
use super::load::escape;
use super::model::{NodeId, ObjectRules, Shape};

pub(super) fn compare(c: &mut Comparer<'_>, ctx: &mut Ctx, original: At, update: At) {
    let (Shape::Object(o), Shape::Object(u)) = (&c.node(original).shape, &c.node(update).shape)
    else {
        return;
    };
    compare_required(c, ctx, o, u, update);
    compare_properties(c, ctx, (original, o), (update, u));
    compare_dependencies(c, ctx, (original, o), (update, u));
    compare_additional_properties(c, ctx, (original, o), (update, u));
    compare_unevaluated_properties(c, ctx, (original, o), (update, u));
    compare_bounds(ctx, o, u);
}

/// A property required only by the reader is a problem unless its reader
/// schema has a default. Only properties both sides name are looked at.
fn compare_required(c: &Comparer<'_>, ctx: &mut Ctx, o: &ObjectRules, u: &ObjectRules, update: At) {
    ctx.enter("required");
    for name in o.properties.keys() {
        let Some(&update_schema) = u.properties.get(name) else {
            continue;
        };
        let kind = match (o.required.contains(name), u.required.contains(name)) {
            (true, false) => REQUIRED_ATTRIBUTE_REMOVED,
            (false, true) if has_default(c, update.to(update_schema)) => {
                REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED
            }
            (false, true) => REQUIRED_ATTRIBUTE_ADDED,
            _ => continue,
        };
        ctx.add_at(&escape(name), kind, None);
    }
    ctx.leave();
}

/// The property's own schema has a `default` (a `$ref`'s siblings
/// included; not its target's), as `Schema.hasDefaultValue()`.
fn has_default(c: &Comparer<'_>, at: At) -> bool {
    c.node(at).meta.default.is_some()
}

fn compare_properties(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ObjectRules),
    update: (At, &ObjectRules),
) {
    let names: BTreeSet<&String> = original
        .1
        .properties
        .keys()
        .chain(update.1.properties.keys())
        .collect();
    ctx.enter("properties");
    for name in names {
        ctx.enter(escape(name));
        match (
            original.1.properties.get(name),
            update.1.properties.get(name),
        ) {
            (Some(&o), Some(&u)) => c.compare(ctx, Some(original.0.to(o)), Some(update.0.to(u))),
            (Some(&o), None) => property_removed(c, ctx, original.0.to(o), update, name),
            (None, Some(&u)) => property_added(c, ctx, original, update.0.to(u), update.1, name),
            (None, None) => {}
        }
        ctx.leave();
    }
    ctx.leave();
}

/// A property only the writer names: fine if the reader's model takes it.
fn property_removed(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    schema: At,
    update: (At, &ObjectRules),
    name: &str,
) {
    if is_open(c, update) {
        return ctx.add(PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL);
    }
    if let Some(partial) = partially_open_schema(c, update, name) {
        let covered = content_model::covers(c, ctx, schema, update.0.to(partial));
        return ctx.add(if covered {
            PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        } else {
            PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        });
    }
    ctx.add(if matches!(c.node(schema).shape, Shape::Nothing) {
        PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    } else {
        PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL
    });
}

/// A property only the reader names: the writer's data may carry it
/// anyway unless the writer's model is closed, or partially open with a
/// schema the reader's property accepts. Whether the reader requires it
/// is judged as well.
fn property_added(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ObjectRules),
    schema: At,
    update: &ObjectRules,
    name: &str,
) {
    let required = update.required.contains(name);
    let with_default = has_default(c, schema);
    if is_open(c, original) {
        let kind = if matches!(c.node(schema).shape, Shape::Any) {
            PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
        } else if required && with_default {
            REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
        } else if required {
            REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
        } else {
            OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
        };
        return ctx.add(kind);
    }
    if let Some(partial) = partially_open_schema(c, original, name) {
        let covered = content_model::covers(c, ctx, original.0.to(partial), schema);
        ctx.add(if covered {
            PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        } else {
            PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
        });
    }
    ctx.add(match (required, with_default) {
        (true, true) => REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL,
        (true, false) => REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
        (false, _) => OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
    });
}

/// Open: any additional property, whatever its value (`isOpenContentModel`).
fn is_open(c: &Comparer<'_>, (at, rules): (At, &ObjectRules)) -> bool {
    rules.pattern_properties.is_empty()
        && content_model::is_open(c, at, rules.additional, rules.unevaluated)
}

/// The schema a partially open model has for a property it does not name:
/// the first matching pattern property, else `additionalProperties`, else
/// an `unevaluatedProperties` that is neither `true` nor `false`
/// (`schemaFromPartiallyOpenContentModel`).
fn partially_open_schema(
    c: &Comparer<'_>,
    (at, rules): (At, &ObjectRules),
    name: &str,
) -> Option<NodeId> {
    let by_pattern = rules
        .pattern_properties
        .iter()
        // A pattern too costly to run matches nothing.
        .find(|(regex, _)| regex.is_match(name).unwrap_or(false))
        .map(|(_, schema)| *schema);
    by_pattern
        .or(rules.additional.schema())
        .or_else(|| content_model::partial_unevaluated(c, at, rules.additional, rules.unevaluated))
}

fn compare_dependencies(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ObjectRules),
    update: (At, &ObjectRules),
) {
    ctx.enter("dependencies");
    let (o, u) = (
        &original.1.property_dependencies,
        &update.1.property_dependencies,
    );
    let names: BTreeSet<&String> = o.keys().chain(u.keys()).collect();
    for name in names {
        let kind = match (o.get(name), u.get(name)) {
            (_, None) => DEPENDENCY_ARRAY_REMOVED,
            (None, Some(_)) => DEPENDENCY_ARRAY_ADDED,
            (Some(o), Some(u)) if o == u => continue,
            (Some(o), Some(u)) if u.is_superset(o) => DEPENDENCY_ARRAY_EXTENDED,
            (Some(o), Some(u)) if o.is_superset(u) => DEPENDENCY_ARRAY_NARROWED,
            _ => DEPENDENCY_ARRAY_CHANGED,
        };
        let detail = (list(o.get(name)), list(u.get(name)));
        ctx.add_at(&escape(name), kind, Some(detail));
    }
    let (o, u) = (
        &original.1.schema_dependencies,
        &update.1.schema_dependencies,
    );
    let names: BTreeSet<&String> = o.keys().chain(u.keys()).collect();
    for name in names {
        match (o.get(name), u.get(name)) {
            (_, None) => ctx.add_at(&escape(name), DEPENDENCY_SCHEMA_REMOVED, None),
            (None, Some(_)) => ctx.add_at(&escape(name), DEPENDENCY_SCHEMA_ADDED, None),
            (Some(&o), Some(&u)) => {
                ctx.enter(escape(name));
                c.compare(ctx, Some(original.0.to(o)), Some(update.0.to(u)));
                ctx.leave();
            }
        }
    }
    ctx.leave();
}

fn list(names: Option<&BTreeSet<String>>) -> String {
    names.map_or_else(
        || "none".to_owned(),
        |names| format!("[{}]", names.iter().cloned().collect::<Vec<_>>().join(", ")),
    )
}

fn compare_additional_properties(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ObjectRules),
    update: (At, &ObjectRules),
) {
    let (o, u) = (original.1.additional, update.1.additional);
    ctx.enter("additionalProperties");
    if o.permits() != u.permits() {
        ctx.add(if u.permits() {
            ADDITIONAL_PROPERTIES_ADDED
        } else {
            ADDITIONAL_PROPERTIES_REMOVED
        });
    } else {
        match (o.schema(), u.schema()) {
            (None, Some(_)) => ctx.add(ADDITIONAL_PROPERTIES_NARROWED),
            (Some(_), None) => ctx.add(ADDITIONAL_PROPERTIES_EXTENDED),
            (o, u) => c.compare(ctx, o.map(|o| original.0.to(o)), u.map(|u| update.0.to(u))),
        }
    }
    ctx.leave();
}

/// `unevaluatedProperties` (2019-09 and later), compared like
/// `additionalProperties` with `false` and `true` as the two extremes.
fn compare_unevaluated_properties(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    original: (At, &ObjectRules),
    update: (At, &ObjectRules),
) {
    let kinds = content_model::UnevaluatedKinds {
        added: UNEVALUATED_PROPERTIES_ADDED,
        removed: UNEVALUATED_PROPERTIES_REMOVED,
        extended: UNEVALUATED_PROPERTIES_EXTENDED,
        narrowed: UNEVALUATED_PROPERTIES_NARROWED,
    };
    let (o, u) = (original.1.unevaluated, update.1.unevaluated);
    content_model::compare_unevaluated(
        c,
        ctx,
        "unevaluatedProperties",
        (original.0, o),
        (update.0, u),
        kinds,
    );
}

fn compare_bounds(ctx: &mut Ctx, o: &ObjectRules, u: &ObjectRules) {
    let max = BoundKinds {
        added: MAX_PROPERTIES_ADDED,
        removed: MAX_PROPERTIES_REMOVED,
        increased: MAX_PROPERTIES_INCREASED,
        decreased: MAX_PROPERTIES_DECREASED,
    };
    limit::compare(
        ctx,
        "maxProperties",
        o.max_properties,
        u.max_properties,
        max,
    );
    let min = BoundKinds {
        added: MIN_PROPERTIES_ADDED,
        removed: MIN_PROPERTIES_REMOVED,
        increased: MIN_PROPERTIES_INCREASED,
        decreased: MIN_PROPERTIES_DECREASED,
    };
    limit::compare(
        ctx,
        "minProperties",
        o.min_properties,
        u.min_properties,
        min,
    );
}
