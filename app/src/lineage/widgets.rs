//! Lineage pieces other pages draw: links to a node's graph and impact,
//! and the graph drawing itself.
//!
//! The drawing is SVG built as text and set as the inner HTML of its box:
//! the same bytes on the server and after hydration, in the SVG namespace
//! whichever way it is created (an `<a>` made by the client's DOM calls
//! would be an HTML one, which SVG does not draw). Every name is escaped.

use crate::error::AppError;
use crate::lineage::model::{GraphNode, GraphView};
use crate::ui::params::href_with;
use std::fmt::Write;

/// The graph page centred on `node` (a nodeId), at `depth` when given.
pub fn graph_href(node: &str, depth: Option<u32>) -> String {
    href_with(
        "/lineage/graph",
        &[
            ("node", Some(node.to_string())),
            ("depth", depth.map(|d| d.to_string())),
        ],
    )
}

/// The impact page of `node` (a nodeId) in `direction`.
pub fn impact_href(node: &str, direction: &str) -> String {
    href_with(
        "/lineage/impact",
        &[
            ("node", Some(node.to_string())),
            (
                "direction",
                Some(direction.to_string()).filter(|d| d != "downstream"),
            ),
        ],
    )
}

/// The impact page of a topic on a cluster (what the stream, schema
/// check and review pages link to).
pub fn topic_impact_href(cluster_id: i64, topic: &str) -> String {
    href_with(
        "/lineage/impact",
        &[
            ("topic", Some(topic.to_string())),
            ("cluster_id", Some(cluster_id.to_string())),
        ],
    )
}

/// The graph page of a topic on a cluster.
pub fn topic_graph_href(cluster_id: i64, topic: &str) -> String {
    href_with(
        "/lineage/graph",
        &[
            ("topic", Some(topic.to_string())),
            ("cluster_id", Some(cluster_id.to_string())),
        ],
    )
}

/// A query parameter as a number; garbled is the caller's mistake.
pub fn number<T: std::str::FromStr>(v: Option<String>, what: &str) -> Result<Option<T>, AppError> {
    v.map(|v| {
        v.trim()
            .parse::<T>()
            .map_err(|_| AppError::Request(format!("{what} must be a whole number, not {v:?}")))
    })
    .transpose()
}

/// A node kind in words.
pub fn kind_words(kind: &str) -> &str {
    match kind {
        "consumer_group" => "consumer group",
        other => other,
    }
}

/// Text safe inside an XML element or a quoted attribute.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters, an ellipsis marking the cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The outline of a node of `kind` with its box centred on (x, y): each
/// kind its own shape, so they tell apart without colour too.
fn shape(kind: &str, x: f64, y: f64, w: f64, h: f64) -> String {
    let (l, r, t, b) = (x - w / 2.0, x + w / 2.0, y - h / 2.0, y + h / 2.0);
    let k = h / 3.0;
    match kind {
        // A pill: a stream.
        "topic" => format!(
            r#"<rect class="shape" x="{l:.1}" y="{t:.1}" width="{w:.1}" height="{h:.1}" rx="{:.1}"/>"#,
            h / 2.0
        ),
        // A hexagon: many members reading as one.
        "consumer_group" => format!(
            r#"<polygon class="shape" points="{:.1},{t:.1} {:.1},{t:.1} {r:.1},{y:.1} {:.1},{b:.1} {:.1},{b:.1} {l:.1},{y:.1}"/>"#,
            l + k,
            r - k,
            r - k,
            l + k
        ),
        // A parallelogram: a pipe between systems.
        "connector" => format!(
            r#"<polygon class="shape" points="{:.1},{t:.1} {r:.1},{t:.1} {:.1},{b:.1} {l:.1},{b:.1}"/>"#,
            l + k,
            r - k
        ),
        // A box with a header rule: rows and columns.
        "table" => format!(
            r#"<rect class="shape" x="{l:.1}" y="{t:.1}" width="{w:.1}" height="{h:.1}"/><line class="rule" x1="{l:.1}" y1="{:.1}" x2="{r:.1}" y2="{:.1}"/>"#,
            t + 6.0,
            t + 6.0
        ),
        // A box with a folded corner: a page people read.
        "dashboard" => format!(
            r#"<polygon class="shape" points="{l:.1},{t:.1} {:.1},{t:.1} {r:.1},{:.1} {r:.1},{b:.1} {l:.1},{b:.1}"/>"#,
            r - k,
            t + k
        ),
        // A rounded box: a job.
        _ => format!(
            r#"<rect class="shape" x="{l:.1}" y="{t:.1}" width="{w:.1}" height="{h:.1}" rx="6"/>"#
        ),
    }
}

fn node_svg(out: &mut String, n: &GraphNode, center: bool, depth: u32, w: f64, h: f64) {
    let mut class = format!("node kind-{}", n.kind);
    if center {
        class.push_str(" center");
    }
    if n.flags > 0 {
        class.push_str(" trouble");
    }
    let owner = n.owner.as_deref().unwrap_or("no owner");
    let mut second = clip(owner, 18);
    if n.flags > 0 {
        let _ = write!(second, " · ⚑ {}", n.flags);
    }
    let title = format!(
        "{} {} in {} · owner {} · {} open flag{} · {}",
        kind_words(&n.kind),
        n.name,
        n.namespace,
        owner,
        n.flags,
        if n.flags == 1 { "" } else { "s" },
        n.known_as
    );
    let _ = write!(
        out,
        r#"<a href="{href}" class="{class}" data-node="{id}" data-kind="{kind}"><title>{title}</title>{shape}<text x="{x:.1}" y="{y1:.1}" class="name">{name}</text><text x="{x:.1}" y="{y2:.1}" class="meta">{second}</text></a>"#,
        href = esc(&graph_href(&n.id, Some(depth))),
        id = esc(&n.id),
        kind = esc(&n.kind),
        title = esc(&title),
        shape = shape(&n.kind, n.x, n.y, w, h),
        x = n.x,
        y1 = n.y - 2.0,
        y2 = n.y + 11.0,
        name = esc(&clip(&n.name, 26)),
        second = esc(&second),
    );
}

/// The whole drawing as SVG text: edges under nodes, arrows at the
/// reading end, derived edges dashed, a cycle's closing edge marked.
pub fn graph_svg(g: &GraphView) -> String {
    let pad = 12.0;
    let (w, h) = (g.width + pad * 2.0, g.height + pad * 2.0);
    let mut out = String::with_capacity(512 + g.nodes.len() * 600 + g.edges.len() * 160);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="lineage-graph" data-testid="graph-svg" viewBox="{:.1} {:.1} {w:.1} {h:.1}" width="{w:.0}" height="{h:.0}" role="img" aria-label="Lineage graph of {}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs><g class="edges">"#,
        -pad,
        -pad,
        esc(&g.center)
    );
    for e in &g.edges {
        let mut d = String::new();
        for (i, (x, y)) in e.points.iter().enumerate() {
            let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { " L" });
        }
        let from = g.nodes.get(e.from).map_or("", |n| n.id.as_str());
        let to = g.nodes.get(e.to).map_or("", |n| n.id.as_str());
        let _ = write!(
            out,
            r#"<path class="edge known-{}{}" d="{d}" marker-end="url(#arrow)" data-from="{}" data-to="{}"/>"#,
            esc(&e.known_as.replace('+', "-")),
            if e.reversed { " reversed" } else { "" },
            esc(from),
            esc(to)
        );
    }
    out.push_str(r#"</g><g class="nodes">"#);
    for (i, n) in g.nodes.iter().enumerate() {
        node_svg(&mut out, n, i == 0, g.depth, g.node_width, g.node_height);
    }
    out.push_str("</g></svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::model::{CutView, GraphEdge};

    #[test]
    fn names_are_escaped_and_each_kind_has_its_shape() {
        let node = |id: &str, kind: &str, name: &str, x: f64| GraphNode {
            id: id.into(),
            kind: kind.into(),
            namespace: "n".into(),
            name: name.into(),
            owner: Some("pay<ments>".into()),
            flags: 2,
            known_as: "observed".into(),
            last_seen: None,
            x,
            y: 18.0,
        };
        let g = GraphView {
            center: "dataset:n:a".into(),
            depth: 2,
            budget: 200,
            nodes: vec![
                node(
                    "dataset:n:<script>",
                    "topic",
                    "<script>alert(1)</script>",
                    90.0,
                ),
                node("job:n:g", "consumer_group", "g", 350.0),
            ],
            edges: vec![GraphEdge {
                from: 0,
                to: 1,
                points: vec![(180.0, 18.0), (260.0, 18.0)],
                reversed: false,
                known_as: "observed+derived".into(),
            }],
            width: 440.0,
            height: 36.0,
            node_width: 180.0,
            node_height: 36.0,
            partial: false,
            cut: CutView::default(),
        };
        let svg = graph_svg(&g);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.contains(r#"class="node kind-topic center trouble""#));
        assert!(svg.contains("<polygon"), "a group is a hexagon");
        assert!(svg.contains("known-observed-derived"));
        assert!(svg.contains("pay&lt;ments&gt; · ⚑ 2"));
        assert!(svg.contains("href=\"/lineage/graph?node=job%3An%3Ag&amp;depth=2\""));
    }
}
