//! The heart of Confluent's `SchemaDiff` and its `Context`: comparing a
//! pair of schemas, type first, with memoisation and cycle handling for
//! recursive `$ref`s. The per-type rules live in the sibling modules.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::JsonSchema;
use super::describe;
use super::difference::{Difference, Kind, Policy};
use super::model::{Combined, Criterion, Node, NodeId, Shape};
use super::{array, combined, number, object, string, values};

/// How many pairs of schemas the comparison nests, following properties,
/// items and `$ref`s (one recursion each): `$ref` chains in definitions
/// can make flat text arbitrarily deep, and 1,000 links overflowed the
/// server's 2 MiB stack (found by the long-chain fuzz target). Text
/// itself nests at most 128 levels (serde_json's limit).
pub(super) const MAX_DEPTH: usize = 400;

/// Which of the two schemas a node belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Side {
    Writer,
    Reader,
}

/// A node of one of the two schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct At {
    pub side: Side,
    pub id: NodeId,
}

impl At {
    /// Another node of the same schema.
    pub fn to(self, id: NodeId) -> At {
        At { id, ..self }
    }
}

/// Every difference between `writer` (Confluent's original) and `reader`
/// (its update), compatible or not under `policy`, which also decides how
/// combined schemas and partially open models are matched.
///
/// Like Confluent, a recursive cycle met again while being compared is
/// first taken as compatible; if that assumption was used, the comparison
/// is run again with the pairs found incompatible fed back, until no new
/// such pair appears (`SchemaDiff.compare`'s fixpoint).
pub(super) fn differences(
    writer: &JsonSchema,
    reader: &JsonSchema,
    policy: Policy,
) -> Vec<Difference> {
    let mut seed: HashMap<Pair, Rc<[Difference]>> = HashMap::new();
    loop {
        let mut comparer = Comparer {
            writer,
            reader,
            policy,
            memo: HashMap::new(),
            in_progress: HashSet::new(),
            seed: &seed,
            optimism_used: false,
            depth: 0,
            too_deep: None,
        };
        let mut ctx = Ctx::default();
        let root = |side| Some(At { side, id: 0 });
        comparer.compare(&mut ctx, root(Side::Writer), root(Side::Reader));
        // Cut short, the other differences are partial: this one alone.
        if let Some(path) = comparer.too_deep {
            return vec![Difference {
                kind: Kind::TOO_COMPLEX_TO_CHECK,
                path,
                detail: None,
            }];
        }
        if !comparer.optimism_used {
            return ctx.diffs;
        }
        // Confluent stops when a pass finds the same incompatible pairs it
        // was seeded with. Keeping the seed a union (with the latest
        // differences of each pair) makes the key set only grow, so the
        // loop ends however the passes behave: there are finitely many pairs.
        let mut grew = false;
        for (pair, diffs) in comparer.incompatible_pairs() {
            grew |= seed.insert(pair, diffs).is_none();
        }
        if !grew {
            return ctx.diffs;
        }
    }
}

type Pair = (At, At);

/// Confluent's `Context`: the path being compared and the differences
/// found there. Sub-contexts (`getSubcontext`) start at the same path with
/// no differences, so a tentative comparison can be judged on its own.
#[derive(Default)]
pub(super) struct Ctx {
    path: Vec<String>,
    pub diffs: Vec<Difference>,
}

impl Ctx {
    pub fn sub(&self) -> Ctx {
        Ctx {
            path: self.path.clone(),
            diffs: Vec::new(),
        }
    }

    /// Enters a path segment (already escaped); pair with [`Ctx::leave`].
    pub fn enter(&mut self, segment: impl Into<String>) {
        self.path.push(segment.into());
    }

    pub fn leave(&mut self) {
        self.path.pop();
    }

    pub fn add(&mut self, kind: Kind) {
        self.add_detailed(kind, None);
    }

    pub fn add_detailed(&mut self, kind: Kind, detail: Option<(String, String)>) {
        self.diffs.push(Difference {
            kind,
            path: self.path.join("/"),
            detail,
        });
    }

    /// A difference at the keyword `segment` under the current path.
    pub fn add_at(&mut self, segment: &str, kind: Kind, detail: Option<(String, String)>) {
        self.enter(segment);
        self.add_detailed(kind, detail);
        self.leave();
    }

    pub fn extend(&mut self, diffs: Vec<Difference>) {
        self.diffs.extend(diffs);
    }

    /// Adds differences found relative to a pair compared below the
    /// current path (`addDifferencesRebased`).
    fn add_rebased(&mut self, relative: &[Difference]) {
        let prefix = self.path.join("/");
        self.diffs.extend(relative.iter().map(|d| Difference {
            path: match (prefix.is_empty(), d.path.is_empty()) {
                (true, _) => d.path.clone(),
                (false, true) => prefix.clone(),
                (false, false) => format!("{prefix}/{}", d.path),
            },
            ..d.clone()
        }));
    }
}

/// One pass of the comparison, with its memo (`Context`'s shared state).
pub(super) struct Comparer<'a> {
    writer: &'a JsonSchema,
    reader: &'a JsonSchema,
    policy: Policy,
    /// Pair-relative differences of every pair compared so far.
    memo: HashMap<Pair, Rc<[Difference]>>,
    /// Pairs being compared further up the stack: met again, a cycle.
    in_progress: HashSet<Pair>,
    /// Pairs an earlier pass found incompatible, with their differences.
    seed: &'a HashMap<Pair, Rc<[Difference]>>,
    optimism_used: bool,
    /// Pairs being compared up the stack, and where the walk stopped at
    /// [`MAX_DEPTH`]; once stopped, every pair answers "no differences".
    depth: usize,
    too_deep: Option<String>,
}

impl<'a> Comparer<'a> {
    pub fn schema(&self, side: Side) -> &'a JsonSchema {
        match side {
            Side::Writer => self.writer,
            Side::Reader => self.reader,
        }
    }

    pub fn node(&self, at: At) -> &'a Node {
        &self.schema(at.side).nodes[at.id]
    }

    /// Whether every difference in `ctx` is acceptable under the policy.
    pub fn is_compatible(&self, ctx: &Ctx) -> bool {
        ctx.diffs.iter().all(|d| self.policy.allows(d.kind))
    }

    fn incompatible_pairs(&self) -> Vec<(Pair, Rc<[Difference]>)> {
        self.memo
            .iter()
            .filter(|(_, diffs)| diffs.iter().any(|d| !self.policy.allows(d.kind)))
            .map(|(pair, diffs)| (*pair, diffs.clone()))
            .collect()
    }

    /// `SchemaDiff.compare`: a missing schema on either side, or the
    /// (memoised) comparison of the two, `$ref`s followed.
    pub fn compare(&mut self, ctx: &mut Ctx, original: Option<At>, update: Option<At>) {
        let (original, update) = match (original, update) {
            (None, None) => return,
            (None, Some(_)) => return ctx.add(Kind::SCHEMA_ADDED),
            (Some(_), None) => return ctx.add(Kind::SCHEMA_REMOVED),
            (Some(o), Some(u)) => (self.follow_refs(o), self.follow_refs(u)),
        };
        if self.too_deep.is_some() {
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.too_deep = Some(ctx.path.join("/"));
            return;
        }
        self.depth += 1;
        let diffs = self.compare_memoized(original, update);
        self.depth -= 1;
        ctx.add_rebased(&diffs);
    }

    /// The schema a chain of `$ref`s ends at (the loader rejects loops).
    fn follow_refs(&self, mut at: At) -> At {
        while let Shape::Ref(target) = self.node(at).shape {
            at = at.to(target);
        }
        at
    }

    /// `Context.compareMemoized`.
    fn compare_memoized(&mut self, original: At, update: At) -> Rc<[Difference]> {
        let pair = (original, update);
        if let Some(cached) = self.memo.get(&pair) {
            return cached.clone();
        }
        if !self.in_progress.insert(pair) {
            if let Some(seeded) = self.seed.get(&pair) {
                return seeded.clone();
            }
            // A cycle: assume compatible (the greatest fixed point), and do
            // not cache a result that holds only inside this comparison.
            self.optimism_used = true;
            return Rc::from(Vec::new());
        }
        let mut ctx = Ctx::default();
        self.compare_types(&mut ctx, original, update);
        self.in_progress.remove(&pair);
        let diffs: Rc<[Difference]> = Rc::from(ctx.diffs);
        self.memo.insert(pair, diffs.clone());
        diffs
    }

    /// `SchemaDiff.compareTypes`.
    fn compare_types(&mut self, ctx: &mut Ctx, original: At, update: At) {
        if self.compare_with_one_sided_combination(ctx, original, update) {
            return;
        }
        let (o, u) = (self.node(original), self.node(update));
        if !o.shape.same_type(&u.shape) {
            // `false` reads as nothing and `{}` accepts anything, and
            // Connect's decimals may move between string and number.
            let allowed = matches!(o.shape, Shape::Nothing)
                || matches!(u.shape, Shape::Any)
                || (o.meta.connect_bytes && u.meta.connect_bytes);
            if !allowed {
                let detail = (
                    describe::shape(self.schema(original.side), original.id),
                    describe::shape(self.schema(update.side), update.id),
                );
                ctx.add_detailed(Kind::TYPE_CHANGED, Some(detail));
            }
            return;
        }
        self.compare_meta(ctx, o, u);
        match (&o.shape, &u.shape) {
            (Shape::String(o), Shape::String(u)) => string::compare(ctx, o, u),
            (Shape::Number(o), Shape::Number(u)) => number::compare(ctx, o, u),
            (Shape::Const(o), Shape::Const(u)) => values::compare_const(ctx, o, u),
            (Shape::Enum(o), Shape::Enum(u)) => values::compare_enum(ctx, o, u),
            (Shape::Combined(_), Shape::Combined(_)) => {
                combined::compare(self, ctx, original, update)
            }
            (Shape::Not(o), Shape::Not(u)) => {
                let (o, u) = (original.to(*o), update.to(*u));
                combined::compare_not(self, ctx, o, u)
            }
            (Shape::Object(_), Shape::Object(_)) => object::compare(self, ctx, original, update),
            (Shape::Array(_), Shape::Array(_)) => array::compare(self, ctx, original, update),
            _ => {}
        }
    }

    fn compare_meta(&self, ctx: &mut Ctx, o: &Node, u: &Node) {
        let (o, u) = (&o.meta, &u.meta);
        if o.id != u.id {
            ctx.add(Kind::ID_CHANGED);
        }
        if o.title != u.title {
            ctx.add(Kind::TITLE_CHANGED);
        }
        if o.description != u.description {
            ctx.add(Kind::DESCRIPTION_CHANGED);
        }
        if o.default != u.default {
            ctx.add(Kind::DEFAULT_CHANGED);
        }
    }

    /// The start of `compareTypes`: a plain schema against a combined one
    /// matches when the combination is a singleton that matches it, or
    /// when it is a sum (reader side) or a product (writer side) with a
    /// branch that matches it. Returns whether that settled the pair.
    fn compare_with_one_sided_combination(
        &mut self,
        ctx: &mut Ctx,
        original: At,
        update: At,
    ) -> bool {
        match (
            combination(self.node(original)),
            combination(self.node(update)),
        ) {
            (None, Some(c)) => {
                let branch_of_update = |id: NodeId| (original, update.to(id));
                let sum = c.criterion.is_sum();
                self.match_one_branch(
                    ctx,
                    sum,
                    Kind::SUM_TYPE_EXTENDED,
                    &c.branches,
                    branch_of_update,
                )
            }
            (Some(c), None) => {
                let branch_of_original = |id: NodeId| (original.to(id), update);
                let product = c.criterion == Criterion::All;
                self.match_one_branch(
                    ctx,
                    product,
                    Kind::PRODUCT_TYPE_NARROWED,
                    &c.branches,
                    branch_of_original,
                )
            }
            _ => false,
        }
    }

    /// A singleton's only branch, or (when `any_branch`) the first
    /// compatible branch, settles the pair; `kind` records the latter.
    fn match_one_branch(
        &mut self,
        ctx: &mut Ctx,
        any_branch: bool,
        kind: Kind,
        branches: &[NodeId],
        pair: impl Fn(NodeId) -> (At, At),
    ) -> bool {
        if let [only] = branches {
            let (o, u) = pair(*only);
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(o), Some(u));
            if self.is_compatible(&sub) {
                ctx.extend(sub.diffs);
                return true;
            }
            return false;
        }
        if !any_branch {
            return false;
        }
        for branch in branches {
            let (o, u) = pair(*branch);
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(o), Some(u));
            if self.is_compatible(&sub) {
                ctx.extend(sub.diffs);
                ctx.add(kind);
                return true;
            }
        }
        false
    }
}

fn combination(node: &Node) -> Option<&Combined> {
    match &node.shape {
        Shape::Combined(c) => Some(c),
        _ => None,
    }
}
