//! Loading a chosen file's text into a form's textarea, in the browser, so
//! the form still posts text: the same form works by pasting when
//! JavaScript is off.

use leptos::html::Textarea;
use leptos::prelude::*;

/// A file picker that fills `target` with the chosen file's text. It
/// appears only once the page is hydrated: before that, picking a file
/// could do nothing.
#[component]
pub fn FileIntoTextarea(target: NodeRef<Textarea>) -> impl IntoView {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    move || {
        hydrated.get().then(|| {
            view! {
                <label>
                    "Load a file (fills the text below) "
                    <input type="file" data-testid="schema-file" on:change=move |ev| read_into(&ev, target) />
                </label>
            }
        })
    }
}

#[cfg(feature = "hydrate")]
fn read_into(ev: &leptos::ev::Event, target: NodeRef<Textarea>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let file = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.files())
        .and_then(|files| files.get(0));
    let (Some(file), Ok(reader)) = (file, web_sys::FileReader::new()) else {
        return;
    };
    let done = reader.clone();
    // Called once, when the read ends; a file that cannot be read leaves
    // the textarea as it was.
    let onload = Closure::once_into_js(move || {
        let text = done.result().ok().and_then(|r| r.as_string());
        if let (Some(text), Some(area)) = (text, target.get_untracked()) {
            area.set_value(&text);
        }
    });
    reader.set_onload(Some(onload.unchecked_ref()));
    let _ = reader.read_as_text(&file);
}

/// The picker is never rendered on the server, so nothing calls this
/// there; it only keeps the handler the same type in both builds.
#[cfg(not(feature = "hydrate"))]
fn read_into(_: &leptos::ev::Event, _: NodeRef<Textarea>) {}
