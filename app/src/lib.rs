//! Streamkeeper's screens: the Leptos application, rendered on the server and
//! hydrated in the browser, with thin server functions that authenticate and
//! call the backend port the server implements.

pub mod app;
pub mod chart;
pub mod components;
pub mod error;
pub mod file_text;
pub mod model;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod port;

/// The wasm entry point: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
