//! Lineage pieces other pages draw: links to a node's graph and impact,
//! and the graph drawing itself.
//!
//! The drawing is SVG built as text and set as the inner HTML of its box,
//! by the server only (it is the zoom island's children), in the SVG
//! namespace (an `<a>` made by DOM calls would be an HTML one, which SVG
//! does not draw). Every name is escaped.

use crate::error::AppError;
use crate::lineage::fns::SetLineageOwner;
use crate::lineage::model::{GraphNode, GraphView, NodeOwnerView};
use crate::ui::island::mark_hydrated;
use crate::ui::notes::ActionNote;
use crate::ui::params::href_with;
use leptos::prelude::*;
use std::fmt::Write;
use streamkeeper::platform::words::counted;

pub mod columns;

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

/// Why a topic is drawn apart: who named it, and that the cluster has no
/// such topic (`None` for a node that exists).
pub fn absent_words(n: &GraphNode) -> Option<&'static str> {
    n.not_in_cluster.then(|| {
        if n.known_as == "derived" {
            "named by the connector, not in the cluster"
        } else {
            "named in lineage events, not in the cluster"
        }
    })
}

fn node_svg(out: &mut String, n: &GraphNode, center: bool, depth: u32, w: f64, h: f64) {
    let mut class = format!("node kind-{}", n.kind);
    if center {
        class.push_str(" center");
    }
    if n.flags > 0 {
        class.push_str(" trouble");
    }
    if n.not_in_cluster {
        class.push_str(" absent");
    }
    let owner = n.owner.as_deref().unwrap_or("no owner");
    let mut second = if n.not_in_cluster {
        "not in the cluster".to_string()
    } else {
        clip(owner, 18)
    };
    if n.flags > 0 {
        let _ = write!(second, " · ⚑ {}", n.flags);
    }
    let mut title = format!(
        "{} {} in {} · owner {} · {} · {}",
        kind_words(&n.kind),
        n.name,
        n.namespace,
        owner,
        counted(n.flags, "open flag"),
        n.known_as
    );
    if let Some(why) = absent_words(n) {
        let _ = write!(title, " · {why}");
    }
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
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="lineage-graph" data-testid="graph-svg" viewBox="{:.1} {:.1} {w:.1} {h:.1}" width="{w:.0}" height="{h:.0}" role="group" aria-label="Lineage graph of {}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs><g class="edges">"#,
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

/// Zoom levels the controls step through, smallest to largest: 1 is the
/// drawing at its laid-out size.
const ZOOM_STEPS: [f64; 9] = [0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0];

/// The zoom level one step in (`true`) or out from `at`, staying at the
/// ends; a level between steps goes to the next step its way.
pub fn zoom_step(at: f64, zoom_in: bool) -> f64 {
    if zoom_in {
        ZOOM_STEPS.iter().copied().find(|&z| z > at + 1e-9)
    } else {
        ZOOM_STEPS.iter().rev().copied().find(|&z| z < at - 1e-9)
    }
    .unwrap_or(at)
}

/// The zoom level at which a `width` × `height` drawing fits a box of
/// `box_w` × `box_h`, within the steps' range (never above 1: a small
/// graph is not blown up).
pub fn fit_zoom(width: f64, height: f64, box_w: f64, box_h: f64) -> f64 {
    if width <= 0.0 || height <= 0.0 || box_w <= 0.0 || box_h <= 0.0 {
        return 1.0;
    }
    (box_w / width)
        .min(box_h / height)
        .clamp(ZOOM_STEPS[0], 1.0)
}

/// The graph drawing in its scrolling box. Without JavaScript the box
/// scrolls and every node is a link; once its island is hydrated, zoom
/// buttons (in, out, fit, actual size) appear above it and the drawing pans
/// by dragging its background. Zoom is CSS `zoom`, which the layout
/// follows, so the box's scroll range is the zoomed drawing's.
#[component]
pub fn GraphCanvas(svg: String) -> impl IntoView {
    view! {
        // The drawing is the island's children: drawn by the server only.
        <ZoomPan>
            <div inner_html=svg></div>
        </ZoomPan>
    }
}

/// Without props: "Fit" reads the drawing's size from its SVG. Island
/// props travel as JSON, and decoding them would bring serde_json (and
/// its float parser) into the wasm (BENCHMARKS.md, "The wasm").
#[island]
fn ZoomPan(children: Children) -> impl IntoView {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    mark_hydrated();
    let zoom = RwSignal::new(1.0f64);
    let scroller = NodeRef::<leptos::html::Div>::new();
    let drag = StoredValue::new(None::<Drag>);
    let controls = move || {
        hydrated.get().then(|| {
            let fit = move |_| {
                let (width, height) = drawing_size(scroller);
                let (w, h) = box_size(scroller);
                zoom.set(fit_zoom(width, height, w, h));
            };
            view! {
                <p class="zoom-controls" data-testid="zoom-controls">
                    <button type="button" class="link" aria-label="Zoom in" data-testid="zoom-in"
                        on:click=move |_| zoom.update(|z| *z = zoom_step(*z, true))>"+"</button>
                    <button type="button" class="link" aria-label="Zoom out" data-testid="zoom-out"
                        on:click=move |_| zoom.update(|z| *z = zoom_step(*z, false))>"−"</button>
                    <button type="button" class="link" data-testid="zoom-fit" on:click=fit>"Fit"</button>
                    <button type="button" class="link" data-testid="zoom-reset"
                        on:click=move |_| zoom.set(1.0)>"100%"</button>
                    <span class="note" data-testid="zoom-level">
                        {move || percent(zoom.get())}
                    </span>
                    <span class="note">" · drag the background to pan"</span>
                </p>
            }
        })
    };
    view! {
        {controls}
        <div class="lineage-canvas" node_ref=scroller
            on:pointerdown=move |ev| drag.set_value(drag_start(&ev, scroller))
            on:pointermove=move |ev| drag_move(&ev, scroller, drag)
            on:pointerup=move |_| drag.set_value(None)
            on:pointercancel=move |_| drag.set_value(None)>
            <div class="lineage-drawing" data-testid="lineage-drawing"
                // Only once hydrated, set through the CSSOM: a `style`
                // attribute in the server's HTML is refused by the CSP.
                style:zoom=move || hydrated.get().then(|| percent(zoom.get()))>{children()}</div>
        </div>
    }
}

/// A zoom level as whole percents ("140%"), for the label and the CSS:
/// printing the float itself would bring the float printer into the wasm
/// (about 17 KB).
fn percent(zoom: f64) -> String {
    format!("{}%", (zoom * 100.0).round() as i64)
}

/// Where a drag began: the pointer and the box's scroll position.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
struct Drag {
    x: f64,
    y: f64,
    left: f64,
    top: f64,
}

/// A drag starts on the drawing's background with the main button; on a
/// node (a link) the press is the link's.
#[cfg(feature = "hydrate")]
fn drag_start(ev: &leptos::ev::PointerEvent, scroller: NodeRef<leptos::html::Div>) -> Option<Drag> {
    use wasm_bindgen::JsCast;
    let on_link = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|e| e.closest("a").ok().flatten())
        .is_some();
    let el = scroller.get_untracked()?;
    if on_link || ev.button() != 0 {
        return None;
    }
    let _ = el.set_pointer_capture(ev.pointer_id());
    Some(Drag {
        x: f64::from(ev.client_x()),
        y: f64::from(ev.client_y()),
        left: f64::from(el.scroll_left()),
        top: f64::from(el.scroll_top()),
    })
}

#[cfg(feature = "hydrate")]
fn drag_move(
    ev: &leptos::ev::PointerEvent,
    scroller: NodeRef<leptos::html::Div>,
    drag: StoredValue<Option<Drag>>,
) {
    let (Some(d), Some(el)) = (drag.get_value(), scroller.get_untracked()) else {
        return;
    };
    ev.prevent_default();
    el.set_scroll_left((d.left - (f64::from(ev.client_x()) - d.x)).round() as i32);
    el.set_scroll_top((d.top - (f64::from(ev.client_y()) - d.y)).round() as i32);
}

#[cfg(feature = "hydrate")]
fn box_size(scroller: NodeRef<leptos::html::Div>) -> (f64, f64) {
    scroller.get_untracked().map_or((0.0, 0.0), |el| {
        (f64::from(el.client_width()), f64::from(el.client_height()))
    })
}

/// The drawing's own size: its SVG's `width` and `height`, whole pixels
/// as `graph_svg` writes them (read as integers: a float parser would add
/// to the wasm what the drawing does not need).
#[cfg(feature = "hydrate")]
fn drawing_size(scroller: NodeRef<leptos::html::Div>) -> (f64, f64) {
    let svg = scroller
        .get_untracked()
        .and_then(|el| el.query_selector("svg").ok().flatten());
    let side = |name: &str| {
        svg.as_ref()
            .and_then(|s| s.get_attribute(name))
            .and_then(|v| v.parse::<u32>().ok())
            .map_or(0.0, f64::from)
    };
    (side("width"), side("height"))
}

/// Pointer events and the box's size exist only in the browser; on the
/// server these keep the handlers the same type and are never called.
#[cfg(not(feature = "hydrate"))]
fn drag_start(_: &leptos::ev::PointerEvent, _: NodeRef<leptos::html::Div>) -> Option<Drag> {
    None
}

#[cfg(not(feature = "hydrate"))]
fn drag_move(
    _: &leptos::ev::PointerEvent,
    _: NodeRef<leptos::html::Div>,
    _: StoredValue<Option<Drag>>,
) {
}

#[cfg(not(feature = "hydrate"))]
fn box_size(_: NodeRef<leptos::html::Div>) -> (f64, f64) {
    (0.0, 0.0)
}

#[cfg(not(feature = "hydrate"))]
fn drawing_size(_: NodeRef<leptos::html::Div>) -> (f64, f64) {
    (0.0, 0.0)
}

/// The owner card of the graph page: the centre node's owner with why
/// ("payments (by stream orders)", "payments (set by pat on …)"), and a
/// plain form that sets it (works with JavaScript off: a post answered by
/// a redirect back here, with the new owner or the refusal). A topic or a
/// job derived from a consumer group or connector says where its owner
/// comes from instead: it is set there, not on the node.
#[component]
pub fn OwnerCard(
    node: String,
    o: NodeOwnerView,
    give: ServerAction<SetLineageOwner>,
) -> impl IntoView {
    let shown = o.owner.clone().unwrap_or_else(|| "no owner".to_string());
    let form = match (&o.inherited, o.teams.is_empty() && !o.clearable) {
        (Some(why), _) => view! {
            <p class="note" data-testid="owner-inherited">{format!("Not set here: {why}.")}</p>
        }
        .into_any(),
        (None, true) => view! {
            <p class="note" data-testid="owner-locked">
                "Admins, and members of its owner team (or, while it has none, of the team it is given to), set its owner."
            </p>
        }
        .into_any(),
        (None, false) => view! { <OwnerForm node o give /> }.into_any(),
    };
    view! {
        <section class="card" data-testid="node-owner">
            <h2>"Owner"</h2>
            <p data-testid="owner-shown">{shown}</p>
            <div data-testid="owner-notes">
                <ActionNote value=give.value() />
            </div>
            {form}
        </section>
    }
}

/// The team to give it to (the asker's choices, the current one
/// selected), or none to clear the owner set on it.
#[component]
fn OwnerForm(node: String, o: NodeOwnerView, give: ServerAction<SetLineageOwner>) -> impl IntoView {
    let options = o
        .teams
        .into_iter()
        .map(|t| {
            let selected = o.team.as_deref() == Some(t.as_str());
            let label = t.clone();
            view! { <option value=t selected=selected>{label}</option> }
        })
        .collect_view();
    let clear = o.clearable.then(|| {
        view! { <option value="">"no owner (clear the one set here)"</option> }
    });
    view! {
        <ActionForm action=give attr:class="filters" attr:data-testid="owner-form">
            <input type="hidden" name="node" value=node />
            <label>"Give it to " <select name="team">{options}{clear}</select></label>
            <button type="submit">"Set owner"</button>
        </ActionForm>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn zoom_levels_read_as_whole_percents() {
        assert_eq!(super::percent(1.0), "100%");
        assert_eq!(super::percent(1.4), "140%");
        assert_eq!(super::percent(0.35), "35%");
    }

    #[test]
    fn zoom_steps_in_and_out_and_stays_at_the_ends() {
        assert_eq!(zoom_step(1.0, true), 1.4);
        assert_eq!(zoom_step(1.0, false), 0.7);
        assert_eq!(zoom_step(4.0, true), 4.0);
        assert_eq!(zoom_step(0.25, false), 0.25);
        // A fitted level between steps goes to the next step its way.
        assert_eq!(zoom_step(0.6, true), 0.7);
        assert_eq!(zoom_step(0.6, false), 0.5);
    }

    #[test]
    fn fit_shrinks_a_large_drawing_and_never_blows_up_a_small_one() {
        assert_eq!(fit_zoom(2000.0, 500.0, 1000.0, 800.0), 0.5);
        assert_eq!(fit_zoom(200.0, 100.0, 1000.0, 800.0), 1.0);
        assert_eq!(fit_zoom(100_000.0, 100.0, 1000.0, 800.0), 0.25);
        assert_eq!(fit_zoom(0.0, 0.0, 1000.0, 800.0), 1.0);
    }

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
            not_in_cluster: false,
            x,
            y: 18.0,
        };
        let g = GraphView {
            center: "dataset:n:a".into(),
            owner: Default::default(),
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
