//! Streamkeeper's screens: the Leptos application, rendered on the server in
//! islands mode (only the few components that need the browser are hydrated,
//! `#[island]`; every other part is plain HTML and forms), with thin server
//! functions that authenticate and call the backend port the server
//! implements.
//!
//! One folder per capability, named as in the domain and server crates: its
//! `model` (the shapes the screens and the REST API share), its `fns` (server
//! functions) and its pages. Shared widgets live in `ui/`; a page never
//! imports another page (scripts/test checks it).

pub mod accounts;
pub mod app;
pub mod audit;
pub mod connect;
pub mod error;
pub mod flags;
pub mod home;
pub mod lineage;
pub mod notify;
pub mod pilot;
pub mod platform;
#[cfg(feature = "ssr")]
pub mod port;
pub mod review;
pub mod schemas;
pub mod ui;
pub mod watch;

/// The wasm entry point: readies the islands runtime; Leptos's islands
/// script (on the pages `ui::island::has_islands` names) then hydrates each
/// island on the page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
