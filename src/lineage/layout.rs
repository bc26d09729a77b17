//! A layered (Sugiyama-style) drawing of a lineage neighbourhood, for the
//! server-rendered SVG: flows run left to right, one layer per hop.
//!
//! Written here rather than taken from a crate: `rust-sugiyama` 0.4 (on
//! petgraph) returns vertex coordinates only, dropping the dummy vertices
//! that give long edges their bends, and unwraps on its way (80-odd
//! `unwrap`s outside tests); `layout-rs` 0.1 is a Graphviz-style renderer
//! that draws through its own shapes and backend rather than returning a
//! model. What is needed is small: the four classic steps below, in
//! O((V + E) · sweeps) plus the crossing counts.
//!
//! 1. Cycle breaking: depth-first search, back edges reversed (and
//!    flagged, so the view can draw them as feedback).
//! 2. Layers by longest path from the sources.
//! 3. Order within layers: barycenter sweeps down and up, keeping the
//!    order with the fewest crossings (counted exactly per layer pair).
//! 4. Coordinates: each node pulled towards its neighbours' mean while
//!    keeping the order and the spacing (isotonic regression, pool
//!    adjacent violators), edges routed through their dummy vertices.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutOptions {
    pub node_width: f64,
    pub node_height: f64,
    /// Free space between two layers' boxes.
    pub layer_gap: f64,
    /// Free space between two boxes of one layer.
    pub node_gap: f64,
    /// Down-and-up barycenter rounds.
    pub sweeps: usize,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            node_width: 180.0,
            node_height: 36.0,
            layer_gap: 80.0,
            node_gap: 16.0,
            sweeps: 6,
        }
    }
}

/// A node's place: its box's centre, layer and rank within the layer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub layer: usize,
    pub order: usize,
}

/// An edge as a polyline from its source's right side to its target's
/// left side, bending at each layer it crosses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Route {
    pub points: Vec<(f64, f64)>,
    /// Reversed to break a cycle: it runs right to left.
    pub reversed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Layout {
    /// By input node index.
    pub nodes: Vec<Placed>,
    /// By input edge index.
    pub edges: Vec<Route>,
    pub width: f64,
    pub height: f64,
    /// Edge crossings left (between adjacent layers, dummies included).
    pub crossings: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("edge {edge} names node {node}, but there are only {nodes} nodes")]
    NoSuchNode {
        edge: usize,
        node: usize,
        nodes: usize,
    },
}

/// Lays out `nodes` nodes (0..nodes) joined by directed `edges`.
/// Deterministic: the same input gives the same drawing. Self-loops and
/// parallel edges are allowed; a self-loop is drawn as a small loop on
/// its node's right side.
pub fn layout(
    nodes: usize,
    edges: &[(usize, usize)],
    opts: &LayoutOptions,
) -> Result<Layout, LayoutError> {
    for (i, &(a, b)) in edges.iter().enumerate() {
        for node in [a, b] {
            if node >= nodes {
                return Err(LayoutError::NoSuchNode {
                    edge: i,
                    node,
                    nodes,
                });
            }
        }
    }
    let reversed = back_edges(nodes, edges);
    let dag: Vec<(usize, usize)> = edges
        .iter()
        .zip(&reversed)
        .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
        .collect();
    let layer = longest_path_layers(nodes, &dag);

    // Vertices: the real nodes, then one dummy per layer a long edge
    // crosses. `chain[e]` is edge e's vertices in DAG direction.
    let mut vlayer = layer.clone();
    let mut chain: Vec<Vec<usize>> = Vec::with_capacity(dag.len());
    for &(a, b) in &dag {
        if a == b {
            chain.push(vec![a]);
            continue;
        }
        let mut c = vec![a];
        for l in layer[a] + 1..layer[b] {
            vlayer.push(l);
            c.push(vlayer.len() - 1);
        }
        c.push(b);
        chain.push(c);
    }
    let v = vlayer.len();
    let mut preds = vec![Vec::new(); v];
    let mut succs = vec![Vec::new(); v];
    for c in &chain {
        for w in c.windows(2) {
            succs[w[0]].push(w[1]);
            preds[w[1]].push(w[0]);
        }
    }
    let layers = vlayer.iter().max().map_or(0, |m| m + 1);
    let mut ranks: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, &l) in vlayer.iter().enumerate() {
        ranks[l].push(i);
    }
    let crossings = order(&mut ranks, &preds, &succs, v, opts.sweeps);

    let mut pos = vec![0usize; v];
    for r in &ranks {
        for (p, &i) in r.iter().enumerate() {
            pos[i] = p;
        }
    }
    let sep = opts.node_height + opts.node_gap;
    let mut y = vec![0.0; v];
    for &i in ranks.iter().flatten() {
        y[i] = pos[i] as f64 * sep;
    }
    for round in 0..opts.sweeps.max(1) * 2 {
        let (seq, neighbours): (Vec<usize>, _) = if round % 2 == 0 {
            ((0..layers).collect(), &preds)
        } else {
            ((0..layers).rev().collect(), &succs)
        };
        for l in seq {
            let desired: Vec<f64> = ranks[l]
                .iter()
                .map(|&i| {
                    let ns = &neighbours[i];
                    if ns.is_empty() {
                        y[i]
                    } else {
                        ns.iter().map(|&n| y[n]).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            for (&i, yi) in ranks[l].iter().zip(spaced(&desired, sep)) {
                y[i] = yi;
            }
        }
    }
    let min_y = y.iter().copied().fold(f64::INFINITY, f64::min);
    let top = opts.node_height / 2.0 - if min_y.is_finite() { min_y } else { 0.0 };
    let step = opts.node_width + opts.layer_gap;
    let x = |l: usize| opts.node_width / 2.0 + l as f64 * step;
    let placed: Vec<Placed> = (0..nodes)
        .map(|i| Placed {
            x: x(vlayer[i]),
            y: y[i] + top,
            layer: vlayer[i],
            order: pos[i],
        })
        .collect();
    let half = opts.node_width / 2.0;
    let routes = chain
        .iter()
        .zip(&reversed)
        .map(|(c, &rev)| {
            let mut points: Vec<(f64, f64)> = if c.len() == 1 {
                let (cx, cy) = (x(vlayer[c[0]]) + half, y[c[0]] + top);
                let r = opts.node_height / 3.0;
                vec![
                    (cx, cy - r),
                    (cx + r * 2.0, cy - r),
                    (cx + r * 2.0, cy + r),
                    (cx, cy + r),
                ]
            } else {
                c.iter()
                    .enumerate()
                    .map(|(k, &i)| {
                        let px = x(vlayer[i]);
                        let dx = match k {
                            0 => half,
                            k if k == c.len() - 1 => -half,
                            _ => 0.0,
                        };
                        (px + dx, y[i] + top)
                    })
                    .collect()
            };
            if rev {
                points.reverse();
            }
            Route {
                points,
                reversed: rev,
            }
        })
        .collect();
    let height = y.iter().map(|yi| yi + top).fold(0.0, f64::max) + opts.node_height / 2.0;
    Ok(Layout {
        nodes: placed,
        edges: routes,
        width: if layers == 0 {
            0.0
        } else {
            x(layers - 1) + half
        },
        height: if v == 0 { 0.0 } else { height },
        crossings,
    })
}

/// Which edges close a cycle in a depth-first search from each node in
/// index order (an edge to a node still on the search stack).
fn back_edges(nodes: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out_edges = vec![Vec::new(); nodes];
    for (i, &(a, b)) in edges.iter().enumerate() {
        if a != b {
            out_edges[a].push(i);
        }
    }
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; nodes];
    let mut back = vec![false; edges.len()];
    for root in 0..nodes {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (n, ref mut next)) = stack.last_mut() {
            if let Some(&e) = out_edges[n].get(*next) {
                *next += 1;
                let m = edges[e].1;
                match state[m] {
                    0 => {
                        state[m] = 1;
                        stack.push((m, 0));
                    }
                    1 => back[e] = true,
                    _ => {}
                }
            } else {
                state[n] = 2;
                stack.pop();
            }
        }
    }
    back
}

/// Layer of each node: the length of the longest path reaching it
/// (Kahn's order over the acyclic edges; self-loops ignored).
fn longest_path_layers(nodes: usize, dag: &[(usize, usize)]) -> Vec<usize> {
    let mut indegree = vec![0usize; nodes];
    let mut out = vec![Vec::new(); nodes];
    for &(a, b) in dag {
        if a != b {
            out[a].push(b);
            indegree[b] += 1;
        }
    }
    let mut layer = vec![0usize; nodes];
    let mut ready: Vec<usize> = (0..nodes).filter(|&i| indegree[i] == 0).collect();
    while let Some(n) = ready.pop() {
        for &m in &out[n] {
            layer[m] = layer[m].max(layer[n] + 1);
            indegree[m] -= 1;
            if indegree[m] == 0 {
                ready.push(m);
            }
        }
    }
    layer
}

/// Barycenter sweeps; leaves `ranks` in the best order found and returns
/// its crossing count.
fn order(
    ranks: &mut [Vec<usize>],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
    v: usize,
    sweeps: usize,
) -> usize {
    let mut pos = vec![0usize; v];
    let index = |ranks: &[Vec<usize>], pos: &mut [usize]| {
        for r in ranks {
            for (p, &i) in r.iter().enumerate() {
                pos[i] = p;
            }
        }
    };
    index(ranks, &mut pos);
    let mut best = ranks.to_vec();
    let mut best_crossings = crossings(ranks, succs, &pos);
    for round in 0..sweeps * 2 {
        let down = round % 2 == 0;
        let seq: Vec<usize> = if down {
            (1..ranks.len()).collect()
        } else {
            (0..ranks.len().saturating_sub(1)).rev().collect()
        };
        for l in seq {
            let neighbours = if down { preds } else { succs };
            let mut keyed: Vec<(f64, usize)> = ranks[l]
                .iter()
                .map(|&i| {
                    let ns = &neighbours[i];
                    let key = if ns.is_empty() {
                        pos[i] as f64
                    } else {
                        ns.iter().map(|&n| pos[n] as f64).sum::<f64>() / ns.len() as f64
                    };
                    (key, i)
                })
                .collect();
            // Stable on ties, so an order that is already good stays.
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            ranks[l] = keyed.into_iter().map(|(_, i)| i).collect();
            for (p, &i) in ranks[l].iter().enumerate() {
                pos[i] = p;
            }
        }
        let c = crossings(ranks, succs, &pos);
        if c < best_crossings {
            best_crossings = c;
            best = ranks.to_vec();
        }
        if best_crossings == 0 {
            break;
        }
    }
    ranks.clone_from_slice(&best);
    best_crossings
}

/// Crossings between every two adjacent layers: edges sorted by their
/// upper end, inversions among their lower ends (a Fenwick tree).
fn crossings(ranks: &[Vec<usize>], succs: &[Vec<usize>], pos: &[usize]) -> usize {
    let mut total = 0;
    for l in 0..ranks.len().saturating_sub(1) {
        let mut ends: Vec<(usize, usize)> = ranks[l]
            .iter()
            .flat_map(|&u| succs[u].iter().map(move |&w| (pos[u], pos[w])))
            .collect();
        ends.sort_unstable();
        let width = ranks[l + 1].len();
        let mut tree = vec![0usize; width + 1];
        for (seen, &(_, lower)) in ends.iter().enumerate() {
            // Earlier edges whose lower end lies strictly right of this one.
            let mut i = lower + 1;
            let mut not_greater = 0;
            while i > 0 {
                not_greater += tree[i];
                i -= i.isolate_lowest_one();
            }
            total += seen - not_greater;
            let mut i = lower + 1;
            while i <= width {
                tree[i] += 1;
                i += i.isolate_lowest_one();
            }
        }
    }
    total
}

/// The positions closest (least squares) to `desired` that keep the
/// order and at least `sep` between neighbours: with z_i = y_i - i·sep
/// the constraint is z non-decreasing, which pool-adjacent-violators
/// solves exactly.
fn spaced(desired: &[f64], sep: f64) -> Vec<f64> {
    // Blocks of (sum of targets, count).
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(desired.len());
    for (i, d) in desired.iter().enumerate() {
        blocks.push((d - i as f64 * sep, 1));
        while blocks.len() > 1 {
            let (s2, n2) = blocks[blocks.len() - 1];
            let (s1, n1) = blocks[blocks.len() - 2];
            if s1 / n1 as f64 <= s2 / n2 as f64 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s1 + s2, n1 + n2);
        }
    }
    let mut out = Vec::with_capacity(desired.len());
    for (s, n) in blocks {
        let z = s / n as f64;
        for _ in 0..n {
            out.push(z + out.len() as f64 * sep);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> LayoutOptions {
        LayoutOptions::default()
    }

    #[test]
    fn layers_follow_the_longest_path_and_flow_left_to_right() {
        // a → b → c, and a → c: c sits two layers right of a.
        let l = layout(3, &[(0, 1), (1, 2), (0, 2)], &opts()).expect("layout");
        assert_eq!(
            l.nodes.iter().map(|p| p.layer).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(l.nodes[0].x < l.nodes[1].x && l.nodes[1].x < l.nodes[2].x);
        // The long edge bends once, at the dummy in layer 1.
        assert_eq!(l.edges[2].points.len(), 3);
        assert_eq!(l.edges[2].points[1].0, l.nodes[1].x);
        assert!(l.edges.iter().all(|e| !e.reversed));
        assert_eq!(l.crossings, 0);
    }

    #[test]
    fn a_cycle_is_broken_and_its_edge_flagged() {
        let l = layout(3, &[(0, 1), (1, 2), (2, 0), (1, 1)], &opts()).expect("layout");
        let reversed: Vec<bool> = l.edges.iter().map(|e| e.reversed).collect();
        assert_eq!(reversed, vec![false, false, true, false]);
        // The reversed edge still starts at its own source (node 2).
        let from = l.edges[2].points[0];
        assert!(from.0 < l.nodes[2].x, "a back edge leaves from the left");
        assert_eq!(l.edges[3].points.len(), 4, "self-loop drawn as a loop");
    }

    #[test]
    fn barycenter_removes_avoidable_crossings() {
        // Two chains given in crossing order: 0→3, 1→2 with 2 listed first.
        let l = layout(4, &[(0, 3), (1, 2)], &opts()).expect("layout");
        assert_eq!(l.crossings, 0);
        let (a, b) = (l.nodes[0].y < l.nodes[1].y, l.nodes[3].y < l.nodes[2].y);
        assert_eq!(a, b, "both chains keep their sides");
    }

    #[test]
    fn boxes_of_a_layer_never_overlap() {
        let edges: Vec<(usize, usize)> = (1..40)
            .map(|i| (0, i))
            .chain((1..40).map(|i| (i, 40)))
            .collect();
        let l = layout(41, &edges, &opts()).expect("layout");
        let mut ys: Vec<f64> = l
            .nodes
            .iter()
            .filter(|p| p.layer == 1)
            .map(|p| p.y)
            .collect();
        ys.sort_by(f64::total_cmp);
        let o = opts();
        assert!(
            ys.windows(2)
                .all(|w| w[1] - w[0] >= o.node_height + o.node_gap - 1e-9)
        );
        assert!(l.nodes.iter().all(|p| p.y >= o.node_height / 2.0 - 1e-9));
        assert!(l.height >= ys[ys.len() - 1]);
    }

    #[test]
    fn bad_input_is_an_error_and_empty_is_empty() {
        assert_eq!(
            layout(2, &[(0, 2)], &opts()),
            Err(LayoutError::NoSuchNode {
                edge: 0,
                node: 2,
                nodes: 2
            })
        );
        let l = layout(0, &[], &opts()).expect("empty");
        assert!(l.nodes.is_empty() && l.width == 0.0 && l.height == 0.0);
    }

    /// A tangled graph with cycles, as a neighbourhood of a busy topic
    /// looks: every edge runs rightwards (or is a flagged back edge), and
    /// the barycenter sweeps cross fewer edges than the input order.
    #[test]
    fn on_a_tangled_graph_edges_run_right_and_sweeps_uncross_them() {
        let mut edges = Vec::new();
        let mut x: u64 = 7;
        let mut next = |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % n
        };
        // Five bands of 40 nodes, each node feeding two of the next band
        // at random, and a few edges back to the first band (cycles, or
        // long edges when the DFS meets them first).
        for band in 0..4 {
            for i in 0..40 {
                for _ in 0..2 {
                    edges.push((band * 40 + i, (band + 1) * 40 + next(40)));
                }
            }
        }
        for i in 0..5 {
            edges.push((160 + i, i * 3));
        }
        let l = layout(200, &edges, &opts()).expect("layout");
        for (e, &(a, b)) in l.edges.iter().zip(&edges) {
            let (la, lb) = (l.nodes[a].layer, l.nodes[b].layer);
            if e.reversed {
                assert!(la > lb, "a back edge runs leftwards");
            } else {
                assert!(la < lb, "an edge runs rightwards");
            }
        }
        let unswept = layout(
            200,
            &edges,
            &LayoutOptions {
                sweeps: 0,
                ..opts()
            },
        )
        .expect("layout");
        assert!(
            l.crossings * 2 < unswept.crossings,
            "{} crossings after the sweeps, {} before",
            l.crossings,
            unswept.crossings
        );
    }

    #[test]
    fn spacing_is_the_closest_ordered_placement() {
        assert_eq!(spaced(&[0.0, 0.0], 10.0), vec![-5.0, 5.0]);
        assert_eq!(spaced(&[0.0, 50.0], 10.0), vec![0.0, 50.0]);
    }
}
