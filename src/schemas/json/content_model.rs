//! What objects and arrays share about their content models: whether a
//! model is open, the schema of a partially open one, and
//! `unevaluatedProperties`/`unevaluatedItems`.

use super::compare::{At, Comparer, Ctx};
use super::difference::Kind;
use super::model::{Additional, NodeId, Shape};

/// Open: `additional` absent or `true`, and `unevaluated` absent or `true`
/// (`isOpenContentModel`; objects also need no `patternProperties`).
pub(super) fn is_open(
    c: &Comparer<'_>,
    at: At,
    additional: Additional,
    unevaluated: Option<NodeId>,
) -> bool {
    additional == Additional::Allowed
        && unevaluated.is_none_or(|u| matches!(c.node(at.to(u)).shape, Shape::Any))
}

/// An `unevaluatedProperties` or `unevaluatedItems` schema that makes a
/// model partially open: one that is neither `true` nor `false`, where
/// `additionalProperties` or `additionalItems` is absent.
pub(super) fn partial_unevaluated(
    c: &Comparer<'_>,
    at: At,
    additional: Additional,
    unevaluated: Option<NodeId>,
) -> Option<NodeId> {
    let unevaluated =
        unevaluated.filter(|&u| !matches!(c.node(at.to(u)).shape, Shape::Any | Shape::Nothing))?;
    (additional == Additional::Allowed).then_some(unevaluated)
}

/// Compares `original` with the `update` a partially open model offers,
/// keeps the differences, and says whether they are all compatible.
pub(super) fn covers(c: &mut Comparer<'_>, ctx: &mut Ctx, original: At, update: At) -> bool {
    let mut sub = ctx.sub();
    c.compare(&mut sub, Some(original), Some(update));
    let covered = c.is_compatible(&sub);
    ctx.extend(sub.diffs);
    covered
}

pub(super) struct UnevaluatedKinds {
    pub added: Kind,
    pub removed: Kind,
    pub extended: Kind,
    pub narrowed: Kind,
}

/// `unevaluatedProperties` or `unevaluatedItems`: absent, `false`, `true`
/// or a schema on each side.
pub(super) fn compare_unevaluated(
    c: &mut Comparer<'_>,
    ctx: &mut Ctx,
    keyword: &str,
    original: (At, Option<NodeId>),
    update: (At, Option<NodeId>),
    kinds: UnevaluatedKinds,
) {
    let shape = |(at, id): (At, Option<NodeId>)| id.map(|id| (at.to(id), &c.node(at.to(id)).shape));
    let (o, u) = (shape(original), shape(update));
    let is = |s: Option<(At, &Shape)>, f: fn(&Shape) -> bool| s.is_some_and(|(_, s)| f(s));
    let nothing = |s: &Shape| matches!(s, Shape::Nothing);
    let any = |s: &Shape| matches!(s, Shape::Any);
    let kind = match (o, u) {
        (None, None) => return,
        (None, Some(_)) if is(u, nothing) => kinds.removed,
        (None, Some(_)) => kinds.narrowed,
        (Some(_), None) if is(o, nothing) => kinds.added,
        (Some(_), None) => kinds.extended,
        _ if is(o, nothing) && !is(u, nothing) => kinds.added,
        _ if !is(o, nothing) && is(u, nothing) => kinds.removed,
        _ if is(o, any) && !is(u, any) => kinds.narrowed,
        _ if !is(o, any) && is(u, any) => kinds.extended,
        (Some((o, _)), Some((u, _))) => {
            ctx.enter(keyword);
            c.compare(ctx, Some(o), Some(u));
            return ctx.leave();
        }
    };
    ctx.add_at(keyword, kind, None);
}
