//! Loading a chosen file's text into a form's textarea, in the browser, so
//! the form still posts text: the same form works by pasting when
//! JavaScript is off.

use crate::ui::island::mark_hydrated;
use leptos::prelude::*;

/// The textarea the picker fills: the schema forms' `schema`.
const TARGET: &str = "schema";

/// A file picker that fills the textarea named [`TARGET`] in the same form
/// with the chosen file's text (an island: the rest of the form is plain
/// HTML). It appears only once hydrated: before that, picking a file could
/// do nothing. The target is a constant, not a prop: island props travel
/// as JSON, and decoding them would bring serde_json into the wasm
/// (BENCHMARKS.md, "The wasm").
#[island]
pub fn FileIntoTextarea() -> impl IntoView {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    mark_hydrated();
    move || {
        hydrated.get().then(|| {
            view! {
                <label>
                    "Load a file (fills the text below) "
                    <input type="file" data-testid="schema-file" on:change=move |ev| read_into(&ev, TARGET) />
                </label>
            }
        })
    }
}

#[cfg(feature = "hydrate")]
fn read_into(ev: &leptos::ev::Event, target: &str) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let Some(input) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    // The textarea is the form's, outside the island: found by its name.
    let area = input
        .closest("form")
        .ok()
        .flatten()
        .and_then(|form| {
            form.query_selector(&format!("textarea[name=\"{target}\"]"))
                .ok()
                .flatten()
        })
        .and_then(|el| el.dyn_into::<web_sys::HtmlTextAreaElement>().ok());
    let file = input.files().and_then(|files| files.get(0));
    let (Some(area), Some(file), Ok(reader)) = (area, file, web_sys::FileReader::new()) else {
        return;
    };
    let done = reader.clone();
    // Called once, when the read ends; a file that cannot be read leaves
    // the textarea as it was.
    let onload = Closure::once_into_js(move || {
        if let Some(text) = done.result().ok().and_then(|r| r.as_string()) {
            area.set_value(&text);
        }
    });
    reader.set_onload(Some(onload.unchecked_ref()));
    let _ = reader.read_as_text(&file);
}

/// The picker is never drawn on the server, so nothing calls this there;
/// it only keeps the handler the same type in both builds.
#[cfg(not(feature = "hydrate"))]
fn read_into(_: &leptos::ev::Event, _: &str) {}
