//! The draft form: choose a template (or paste a JSON config, or import a
//! running connector), fill in only that connector's fields, and see what
//! the rules and the worker say side by side, each suggested fix one
//! button away. "Validate" is a submit that comes back here with the
//! findings; "Propose" opens a review item when nothing is an error. Once
//! its island is hydrated, the form is also checked as it is typed.
//!
//! The page's state is its address: the config as it may be kept (inline
//! secrets masked, `${…}` references as written), so a reload, the back
//! button and a page without JavaScript all show the same draft, and no
//! secret is ever sent back in clear.

use crate::connect::fns::{DraftConnector, check_connector_draft, import_connector_draft};
use crate::connect::model::{DraftCheck, LiveCheck};
use crate::connect::widgets::DraftChecked;
use crate::error::AppError;
use crate::ui::island::mark_hydrated;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::{href_with, id_param, query_param};
use leptos::prelude::*;
use leptos_meta::Title;
use serde_json::Value;
use streamkeeper::connect::template::{Field, FieldType, template};
use streamkeeper::connect::{Config, Plugin};

/// `/clusters/:id/connect/draft?name=CONNECT`: the templates; with
/// `plugin`, its form; with `config` (or `import=CONNECTOR`), that draft
/// filled in and checked.
#[component]
pub fn DraftPage() -> impl IntoView {
    let id = id_param();
    let connect = query_param("name");
    let plugin = query_param("plugin");
    let config = query_param("config");
    let import = query_param("import");
    let inline = query_param("inline");
    let refused = query_param("refused");
    let submit = ServerAction::<DraftConnector>::new();
    let check = Resource::new(
        // Every parameter the page draws from is in the key, so a client-side
        // navigation (a template link, a fix) draws the page again.
        move || {
            (
                (id.get(), connect.get(), config.get(), import.get()),
                (plugin.get(), inline.get(), refused.get()),
            )
        },
        |((id, connect, config, import), _)| async move {
            match (id, connect, config, import) {
                (Some(id), Some(c), Some(config), _) => {
                    check_connector_draft(id, c, config).await.map(Some)
                }
                (Some(id), Some(c), None, Some(name)) => {
                    import_connector_draft(id, c, name).await.map(Some)
                }
                (Some(_), Some(_), _, _) => Ok(None),
                _ => Err(AppError::NotFound("That Connect cluster".into())),
            }
        },
    );
    view! {
        <Title text="Draft a connector" />
        <p><a href=move || href_with(
            &format!("/clusters/{}/connect", id.get().unwrap_or_default()),
            &[("name", connect.get())],
        )>"← Connectors of " {move || connect.get().unwrap_or_default()}</a></p>
        <h1>"Draft a connector on " {move || connect.get().unwrap_or_default()}</h1>
        <div data-testid="action-notes">
            <ActionNote value=submit.value() />
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                let id = id.get_untracked().unwrap_or_default();
                let connect = connect.get_untracked().unwrap_or_default();
                let inline: Vec<String> = inline
                    .get_untracked()
                    .map(|i| i.split(',').map(str::to_owned).collect())
                    .unwrap_or_default();
                let refused = refused.get_untracked().is_some();
                match check.await {
                    Ok(Some(c)) => {
                        let config: Config = c.config.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                        view! {
                            <DraftForm id connect plugin=c.plugin config=Some(config) check=Some(c) inline refused submit />
                        }.into_any()
                    }
                    Ok(None) => match plugin.get_untracked().as_deref().and_then(Plugin::parse) {
                        Some(p) => view! {
                            <DraftForm id connect plugin=p config=None check=None inline refused submit />
                        }.into_any(),
                        None => view! { <Templates id connect submit /> }.into_any(),
                    },
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The templates to start from, and the paste form.
#[component]
fn Templates(id: i64, connect: String, submit: ServerAction<DraftConnector>) -> impl IntoView {
    let path = format!("/clusters/{id}/connect/draft");
    view! {
        <p class="lead">"Start from a template: its form asks only what that connector needs, with the recommended choices preselected."</p>
        <ul data-testid="templates">
            {Plugin::ALL.into_iter().map(|p| {
                let href = href_with(&path, &[("name", Some(connect.clone())), ("plugin", Some(p.as_str().to_owned()))]);
                view! { <li><a href=href>{p.label()}</a></li> }
            }).collect_view()}
        </ul>
        <Paste id connect submit open=true />
    }
}

/// Paste a whole JSON config (`{"name", "config"}` or the properties).
#[component]
fn Paste(
    id: i64,
    connect: String,
    submit: ServerAction<DraftConnector>,
    open: bool,
) -> impl IntoView {
    view! {
        <details class="card" open=open>
            <summary>"Paste a JSON config"</summary>
            <ActionForm action=submit attr:class="stack wide" attr:data-testid="paste-form">
                <input type="hidden" name="cluster_id" value=id.to_string() />
                <input type="hidden" name="connect" value=connect />
                <label>"Config (as POST /connectors takes it, or its properties) "
                    <textarea name="pasted" rows="12" required></textarea>
                </label>
                <button type="submit">"Validate"</button>
            </ActionForm>
        </details>
    }
}

/// A form value as the input shows it.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One field's input: a choice as a `<select>` (with the value it holds
/// when that is another class), a secret as a password input holding only
/// a reference or a mask, never a secret.
fn field_input(f: &Field, value: String) -> AnyView {
    let name = format!("values[{}]", f.key);
    let placeholder = f.derived_default().unwrap_or_default();
    match f.kind {
        FieldType::Choice | FieldType::Bool => {
            let choices: Vec<String> = if f.kind == FieldType::Bool {
                vec!["true".into(), "false".into()]
            } else {
                f.choices.iter().map(|c| (*c).to_owned()).collect()
            };
            let custom = (!value.is_empty() && !choices.contains(&value)).then(|| value.clone());
            view! {
                <select name=name>
                    {(!f.required).then(|| view! { <option value="" selected=value.is_empty()>"— not set —"</option> })}
                    {choices.into_iter().chain(custom).map(|c| {
                        let selected = c == value;
                        view! { <option value=c.clone() selected=selected>{c.clone()}</option> }
                    }).collect_view()}
                </select>
            }
            .into_any()
        }
        _ if f.secret => view! {
            <input type="password" name=name value=value autocomplete="off" placeholder="${file:/path/secrets.properties:key}" />
        }
        .into_any(),
        FieldType::Number => view! {
            <input name=name value=value inputmode="numeric" placeholder=placeholder />
        }
        .into_any(),
        _ => view! { <input name=name value=value placeholder=placeholder required=f.required /> }.into_any(),
    }
}

#[component]
fn DraftForm(
    id: i64,
    connect: String,
    plugin: Plugin,
    config: Option<Config>,
    check: Option<DraftCheck>,
    inline: Vec<String>,
    refused: bool,
    submit: ServerAction<DraftConnector>,
) -> impl IntoView {
    let t = template(plugin);
    let imported = config.as_ref().map(|c| t.import(c));
    let value_of = |f: &Field| match &imported {
        Some(i) => i.values.get(f.key).map(text_of).unwrap_or_default(),
        None if f.derived_default().is_some() => String::new(),
        None => f.default.unwrap_or_default().to_owned(),
    };
    let extra = imported
        .as_ref()
        .map(|i| i.extra.to_json().to_string())
        .unwrap_or_default();
    let first_blocked = check.as_ref().is_some_and(|c| !c.may_propose);
    let others = href_with(
        &format!("/clusters/{id}/connect/draft"),
        &[("name", Some(connect.clone()))],
    );
    let form_connect = connect.clone();
    let fields = t
        .fields
        .iter()
        .map(|f| {
            let input = field_input(f, value_of(f));
            let label = format!("{}{}", f.label, if f.required { " *" } else { "" });
            view! {
                <label data-field=f.key>
                    {label} " " <code class="note">{f.key}</code>
                    {input}
                    <small class="note">{f.help}</small>
                </label>
            }
            .into_any()
        })
        .collect_view()
        .into_any();
    view! {
        <p class="note">
            {format!("{} ({}). ", plugin.label(), plugin.class())}
            <a href=others>"Another template"</a>
        </p>
        {(!inline.is_empty()).then(|| view! {
            <p class="warning" role="alert" data-testid="inline-secrets">{format!(
                "Written inline, so not kept: {}. Secrets are stored and shown only as ********; write a ${{…}} config-provider reference instead (the suggested fix does).",
                inline.join(", ")
            )}</p>
        })}
        {refused.then(|| view! {
            <p class="error" role="alert" data-testid="propose-refused">"Not proposed: the draft has errors. Apply the suggested fixes (or change the fields) and propose it again."</p>
        })}
        <ActionForm action=submit attr:class="stack wide" attr:data-testid="draft-form">
            <input type="hidden" name="cluster_id" value=id.to_string() />
            <input type="hidden" name="connect" value=form_connect />
            <input type="hidden" name="plugin" value=plugin.as_str() />
            <input type="hidden" name="extra" value=extra />
            {fields}
            <DraftButtons blocked=first_blocked />
            // The check the page was drawn with is the island's children,
            // drawn by the server; typing replaces it with the newest.
            <LiveDraft>
                {check.map(|c| view! { <DraftChecked c /> })}
            </LiveDraft>
        </ActionForm>
        <Paste id connect submit open=false />
    }
    .into_any()
}

/// The draft form's buttons: plain submits. Its island checks the form
/// again as it is typed and opens or closes "Propose" by its answer.
#[component]
fn DraftButtons(blocked: bool) -> impl IntoView {
    view! {
        <div class="buttons">
            <button type="submit" data-testid="validate">"Validate"</button>
            <button type="submit" name="propose" value="on" class="secondary" disabled=blocked data-testid="propose">"Propose for review"</button>
        </div>
        <small class="note propose-note" data-testid="propose-note">{propose_note(blocked)}</small>
    }
}

fn propose_note(blocked: bool) -> &'static str {
    if blocked {
        "A draft with errors cannot be proposed."
    } else {
        "Propose for review validates it again and opens a review item for the domain's approvers; it is applied only after their approval."
    }
}

/// The draft's check, checked again as the form is typed once hydrated.
/// The form stays a plain form: "Validate", "Propose" and each fix post it
/// and come back with the page drawn anew. Each check as it is typed comes
/// drawn by the server, so the wasm draws none of it.
///
/// An island without props, which finds its form and the form's "Propose"
/// in the page: island props travel as JSON, and decoding them (like a
/// server function's answer) would bring serde_json into the wasm, about a
/// quarter of it (BENCHMARKS.md, "The wasm").
#[island]
fn LiveDraft(children: Children) -> impl IntoView {
    let live = Live::new();
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    mark_hydrated();
    let status = NodeRef::<leptos::html::Small>::new();
    // The fields and buttons are outside the island: it listens to its form.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(form) = status.get().and_then(|el| form_of(&el)) {
            listen_to_form(&form, live);
        }
    });
    // Each answer opens or closes "Propose"; a form that does not build a
    // config (a number field holding words) cannot be proposed either.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let blocked = live.result.with(|r| match r {
            Some(Ok(c)) => Some(!c.may_propose),
            Some(Err(_)) => Some(true),
            None => None,
        });
        if let (Some(blocked), Some(form)) = (blocked, status.get().and_then(|el| form_of(&el))) {
            show_blocked(&form, blocked);
        }
    });
    // The check the page was drawn with, until the first answer: children
    // are drawn once, so it is taken on the first run and gone after.
    let initial = std::sync::Mutex::new(Some(children));
    let initial = move || {
        if live.result.with(Option::is_some) {
            return None;
        }
        initial.lock().ok().and_then(|mut c| c.take()).map(|c| c())
    };
    let newest = move || {
        live.result.get().map(|r| match r {
            Ok(c) => view! { <div inner_html=c.html></div> }.into_any(),
            Err(err) => view! {
                <section class="card" data-testid="draft-check">
                    <h2>"Validation"</h2>
                    <ErrorNote err />
                </section>
            }
            .into_any(),
        })
    };
    view! {
        <small class="note" data-testid="live-check" aria-live="polite" node_ref=status>{move || {
            if live.checking.get() {
                "Checking…"
            } else if hydrated.get() {
                "Checked as you type (the rules and the worker's validate)."
            } else {
                ""
            }
        }}</small>
        {initial}
        {newest}
    }
}

#[cfg(feature = "hydrate")]
fn form_of(el: &web_sys::Element) -> Option<web_sys::HtmlFormElement> {
    use wasm_bindgen::JsCast;
    el.closest("form").ok().flatten()?.dyn_into().ok()
}

/// Opens or closes the form's "Propose" and says why, as the server draws
/// them (`DraftButtons`).
#[cfg(feature = "hydrate")]
fn show_blocked(form: &web_sys::HtmlFormElement, blocked: bool) {
    if let Ok(Some(button)) = form.query_selector("button[name=\"propose\"]") {
        // Failing to change a button must not break the page; the submit
        // checks the draft again anyway.
        let _ = button.toggle_attribute_with_force("disabled", blocked);
    }
    if let Ok(Some(note)) = form.query_selector(".propose-note") {
        note.set_text_content(Some(propose_note(blocked)));
    }
}

/// Checks `form` whenever it is typed in.
#[cfg(feature = "hydrate")]
fn listen_to_form(form: &web_sys::HtmlFormElement, live: Live) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let typed = form.clone();
    let on_input = Closure::<dyn Fn()>::new(move || live.check(typed.clone()));
    let _ = form.add_event_listener_with_callback("input", on_input.as_ref().unchecked_ref());
    // The form lasts as long as the page, and so does its listener.
    on_input.forget();
}

/// The form checked as it is typed: the newest answer (`None` until the
/// first, so the page shows the check it was drawn with) and whether one
/// is on its way.
#[derive(Clone, Copy)]
struct Live {
    result: RwSignal<Option<Result<LiveCheck, AppError>>>,
    checking: RwSignal<bool>,
    /// The check waiting for typing to pause.
    #[cfg(feature = "hydrate")]
    pending: StoredValue<Option<TimeoutHandle>>,
    /// The number of the newest check asked: an older answer arriving
    /// after it is dropped.
    #[cfg(feature = "hydrate")]
    asked: StoredValue<u64>,
}

impl Live {
    fn new() -> Live {
        Live {
            result: RwSignal::new(None),
            checking: RwSignal::new(false),
            #[cfg(feature = "hydrate")]
            pending: StoredValue::new(None),
            #[cfg(feature = "hydrate")]
            asked: StoredValue::new(0),
        }
    }

    /// Checks the form once typing pauses (400 ms): every keystroke would
    /// ask the worker's validate for half-typed values.
    #[cfg(feature = "hydrate")]
    fn check(self, form: web_sys::HtmlFormElement) {
        use std::time::Duration;
        if let Some(h) = self.pending.try_get_value().flatten() {
            h.clear();
        }
        let handle = set_timeout_with_handle(
            move || {
                // `try_`: should the island be gone by the time this runs
                // or its answer comes, nothing is shown.
                let Some(n) = self.asked.try_get_value().map(|n| n + 1) else {
                    return;
                };
                self.asked.try_set_value(n);
                self.checking.try_set(true);
                leptos::task::spawn_local(async move {
                    let r = ask(&form).await;
                    if self.asked.try_get_value() == Some(n) {
                        self.result.try_set(Some(r));
                        self.checking.try_set(false);
                    }
                });
            },
            Duration::from_millis(400),
        )
        .ok();
        self.pending.try_set_value(handle);
    }
}

/// Posts the form's fields, as its submit would send them, to the check's
/// server function, and reads the answer with the browser's own JSON
/// parser. Calling the server function from Rust would bring its client,
/// serde_json and serde_qs into the wasm for two fields of an answer
/// (BENCHMARKS.md, "The wasm"); its errors are drawn by the server into
/// the answer, so only the request's own failures are said here.
#[cfg(feature = "hydrate")]
async fn ask(form: &web_sys::HtmlFormElement) -> Result<LiveCheck, AppError> {
    use leptos::server_fn::ServerFn;
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;
    let failed = |what: &str| AppError::Request(format!("the check could not be sent ({what})"));
    let data = web_sys::FormData::new_with_form(form).map_err(|_| failed("the form"))?;
    let body = web_sys::UrlSearchParams::new_with_str_sequence_sequence(&data)
        .map_err(|_| failed("the form"))?;
    let headers = web_sys::Headers::new().map_err(|_| failed("headers"))?;
    // Asked for JSON: a server function asked for HTML answers a form
    // post with a redirect.
    headers
        .set("Accept", "application/json")
        .map_err(|_| failed("headers"))?;
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&body);
    let window = web_sys::window().ok_or_else(|| failed("no window"))?;
    let sent = window.fetch_with_str_and_init(
        <crate::connect::fns::CheckConnectorForm as ServerFn>::PATH,
        &init,
    );
    let res: web_sys::Response = JsFuture::from(sent)
        .await
        .ok()
        .and_then(|r| r.dyn_into().ok())
        .ok_or_else(|| failed("the network"))?;
    match res.status() {
        200..=299 => {}
        401 => return Err(AppError::Unauthenticated),
        status => return Err(failed(&format!("HTTP {status}"))),
    }
    let json = match res.json() {
        Ok(p) => JsFuture::from(p).await.ok(),
        Err(_) => None,
    }
    .ok_or_else(|| failed("an answer that is not JSON"))?;
    let field = |name: &str| js_sys::Reflect::get(&json, &JsValue::from_str(name)).ok();
    match (
        field("may_propose").and_then(|v| v.as_bool()),
        field("html").and_then(|v| v.as_string()),
    ) {
        (Some(may_propose), Some(html)) => Ok(LiveCheck { may_propose, html }),
        _ => Err(failed("an answer without its check")),
    }
}
