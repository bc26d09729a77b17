//! Lineage on the screens: search datasets and jobs by name, the graph
//! around a node (a layered drawing as server-rendered SVG, every node a
//! link that re-centres it), and the impact page (what breaks if it
//! changes, with owners, paths and how each is known) with "Notify
//! owners", and the owner card (a node's owner, why, and a form that sets
//! it). Everything works with JavaScript off: links and forms.

pub mod fns;
pub mod graph;
pub mod impact;
pub mod model;
pub mod search;
pub mod widgets;
