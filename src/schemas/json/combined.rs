//! Confluent's `CombinedSchemaDiff` (`allOf`, `anyOf`, `oneOf`) and
//! `NotSchemaDiff`.
//!
//! Branches are paired by compatibility, not by position: every writer
//! branch is compared with every reader branch, and the largest set of
//! compatible one-to-one pairs is taken. If it does not cover the smaller
//! side, some branch has no compatible counterpart.

use super::compare::{At, Comparer, Ctx};
use super::describe;
use super::difference::Kind::{self, *};
use super::model::{Combined, Criterion, Shape};

pub(super) fn compare(c: &mut Comparer<'_>, ctx: &mut Ctx, original: At, update: At) {
    let (Shape::Combined(o), Shape::Combined(u)) = (&c.node(original).shape, &c.node(update).shape)
    else {
        return;
    };
    if let Some(kind) = criterion_change(o, u) {
        let detail = (
            o.criterion.keyword().to_owned(),
            u.criterion.keyword().to_owned(),
        );
        ctx.add_detailed(kind, Some(detail));
        if kind == COMBINED_TYPE_CHANGED {
            return;
        }
    }
    if let Some(kind) = size_change(o, u) {
        ctx.add(kind);
    }
    // compatible[i] lists the reader branches writer branch i can be read
    // with, and the differences of each such pairing.
    let mut compatible = Vec::with_capacity(o.distinct.len());
    for (index, &o_branch) in o.distinct.iter().enumerate() {
        ctx.enter(format!("{}/{index}", o.criterion.keyword()));
        let mut edges = Vec::new();
        for (j, &u_branch) in u.distinct.iter().enumerate() {
            let mut sub = ctx.sub();
            c.compare(
                &mut sub,
                Some(original.to(o_branch)),
                Some(update.to(u_branch)),
            );
            if c.is_compatible(&sub) {
                edges.push((j, sub.diffs));
            }
        }
        ctx.leave();
        compatible.push(edges);
    }
    let adjacency: Vec<Vec<usize>> = compatible
        .iter()
        .map(|e| e.iter().map(|(j, _)| *j).collect())
        .collect();
    let matching = maximum_matching(&adjacency, u.distinct.len());
    for (edges, matched) in compatible.into_iter().zip(&matching) {
        if let Some((_, diffs)) = edges.into_iter().find(|(j, _)| Some(*j) == *matched) {
            ctx.extend(diffs);
        }
    }
    let matched = matching.iter().flatten().count();
    if matched < o.distinct.len().min(u.distinct.len()) {
        let detail = unmatched(c, (original, o), (update, u), &matching);
        ctx.add_detailed(COMBINED_TYPE_SUBSCHEMAS_CHANGED, Some(detail));
    }
}

/// `compareCriteria`: a change to `anyOf` accepts more; so do changes
/// between singletons, from a singleton to `oneOf`, and from `allOf` to a
/// singleton. Anything else may reject what the writer sends.
fn criterion_change(o: &Combined, u: &Combined) -> Option<Kind> {
    if o.criterion == u.criterion {
        return None;
    }
    let singleton = |c: &Combined| c.branches.len() == 1;
    let extended = u.criterion == Criterion::Any
        || (singleton(o) && singleton(u))
        || (singleton(o) && u.criterion == Criterion::One)
        || (singleton(u) && o.criterion == Criterion::All);
    Some(if extended {
        COMBINED_TYPE_EXTENDED
    } else {
        COMBINED_TYPE_CHANGED
    })
}

/// More branches: a product (`allOf`) demands more, a sum accepts more.
/// Fewer: a sum accepts less, a product demands less.
fn size_change(o: &Combined, u: &Combined) -> Option<Kind> {
    use std::cmp::Ordering::*;
    match o.distinct.len().cmp(&u.distinct.len()) {
        Less if u.criterion == Criterion::All => Some(PRODUCT_TYPE_EXTENDED),
        Less => Some(SUM_TYPE_EXTENDED),
        Greater if o.criterion.is_sum() => Some(SUM_TYPE_NARROWED),
        Greater => Some(PRODUCT_TYPE_NARROWED),
        Equal => None,
    }
}

/// The branches left without a counterpart, for the message.
fn unmatched(
    c: &Comparer<'_>,
    (original, o): (At, &Combined),
    (update, u): (At, &Combined),
    matching: &[Option<usize>],
) -> (String, String) {
    let writer: Vec<String> = o
        .distinct
        .iter()
        .zip(matching)
        .filter(|(_, m)| m.is_none())
        .map(|(&id, _)| describe::shape(c.schema(original.side), id))
        .collect();
    let reader: Vec<String> = u
        .distinct
        .iter()
        .enumerate()
        .filter(|(j, _)| !matching.contains(&Some(*j)))
        .map(|(_, &id)| describe::shape(c.schema(update.side), id))
        .collect();
    (writer.join(", "), reader.join(", "))
}

/// A maximum bipartite matching (Kuhn's augmenting paths; branches are
/// few): for each left vertex, the right vertex it is matched with.
fn maximum_matching(adjacency: &[Vec<usize>], right: usize) -> Vec<Option<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; right];
    for left in 0..adjacency.len() {
        let mut visited = vec![false; right];
        augment(adjacency, left, &mut visited, &mut owner);
    }
    let mut matching = vec![None; adjacency.len()];
    for (r, l) in owner.iter().enumerate() {
        if let Some(l) = l {
            matching[*l] = Some(r);
        }
    }
    matching
}

fn augment(
    adjacency: &[Vec<usize>],
    left: usize,
    visited: &mut [bool],
    owner: &mut [Option<usize>],
) -> bool {
    for &r in &adjacency[left] {
        if visited[r] {
            continue;
        }
        visited[r] = true;
        let free = match owner[r] {
            None => true,
            Some(other) => augment(adjacency, other, visited, owner),
        };
        if free {
            owner[r] = Some(left);
            return true;
        }
    }
    false
}

/// `not`: the reader must exclude no more than the writer did, so the
/// excluded schemas are compared the other way round. Only the verdict is
/// kept, as in Confluent.
pub(super) fn compare_not(c: &mut Comparer<'_>, ctx: &mut Ctx, original: At, update: At) {
    ctx.enter("not");
    let mut sub = ctx.sub();
    c.compare(&mut sub, Some(update), Some(original));
    ctx.add(if c.is_compatible(&sub) {
        NOT_TYPE_NARROWED
    } else {
        NOT_TYPE_EXTENDED
    });
    ctx.leave();
}

#[cfg(test)]
mod tests {
    use super::maximum_matching;

    #[test]
    fn matching_reassigns_to_cover_more() {
        // Left 0 could take 0 or 1, left 1 only 0: both get matched.
        let m = maximum_matching(&[vec![0, 1], vec![0]], 2);
        assert_eq!(m, vec![Some(1), Some(0)]);
        let m = maximum_matching(&[vec![0], vec![0]], 2);
        assert_eq!(m.iter().flatten().count(), 1);
    }
}
