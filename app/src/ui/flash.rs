//! The success note after a form post, and the text of a form that failed. Forms are plain posts answered by a
//! redirect (islands mode hydrates no form), so a server function that
//! succeeds keeps its note in the caller's session, on the server, and the
//! next page draws it once. Nothing of it travels in the address or a
//! cookie value: a page shows only a note this server wrote for this
//! session, as text (escaped like all text).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `result`, keeping `note(&value)` for the next page when it is a
/// success. A request without a session (a token, or the REST API) keeps
/// no note; a note that cannot be kept is dropped, since what was done is
/// done.
#[cfg(feature = "ssr")]
pub async fn noted<T>(
    result: Result<T, crate::error::AppError>,
    note: impl FnOnce(&T) -> String,
) -> Result<T, crate::error::AppError> {
    if let Ok(v) = &result
        && let Ok(session) = crate::port::session_handle().await
    {
        let _ = session.0.set_flash(&note(v)).await;
    }
    result
}

/// The note this page took from the session, once per request (the
/// shell provides it on the server): the layout may be made more than once
/// while the page is drawn, and the session gives a note only once.
#[cfg(feature = "ssr")]
#[derive(Clone, Debug, Default)]
pub struct TakenFlash(std::sync::Arc<std::sync::Mutex<Option<Option<String>>>>);

/// The note kept for this page, if any, removed from the session as it is
/// read.
async fn take() -> Option<String> {
    #[cfg(feature = "ssr")]
    let note = {
        let taken = use_context::<TakenFlash>().unwrap_or_default();
        if let Some(note) = taken.0.lock().ok().and_then(|t| t.clone()) {
            return note;
        }
        let fresh = match crate::port::session_handle().await {
            Ok(session) => session.0.take_flash().await.ok().flatten(),
            Err(_) => None,
        };
        // Whichever take reached the session first keeps the note.
        taken
            .0
            .lock()
            .map(|mut t| t.get_or_insert(fresh).clone())
            .unwrap_or_default()
    };
    // Drawn by the server only: the layout is no island.
    #[cfg(not(feature = "ssr"))]
    let note = None;
    note
}

/// The success note of the form just posted, at the top of the page.
#[component]
pub fn Flash() -> impl IntoView {
    let note = Resource::new(|| (), |_| take());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                note.await.map(|text| view! { <p class="ok" role="status" data-testid="flash">{text}</p> })
            })}
        </Suspense>
    }
}

/// What a form sent when its post failed, kept in the session for the page
/// it goes back to, so nothing typed or pasted is lost (the error itself
/// comes back in the address, `ui::notes::ActionNote`). Never holds a
/// password: only the fields a form chooses to keep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptForm {
    /// Which form it is, so another form's page does not take it.
    pub form: String,
    pub fields: BTreeMap<String, String>,
}

impl KeptForm {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// The most a kept form holds, in bytes of its fields' text: a schema up
/// to the default schema limit (1 MiB) and its title. A larger one is not
/// kept (it is over the limit anyway, and the session row is read on
/// every request until the page takes it).
pub const KEPT_FORM_MAX_BYTES: usize = (1 << 20) + 4096;

/// `result`, keeping `form` for the next page when it is an error. A
/// request without a session keeps nothing; a form too large, or one the
/// session cannot store, is dropped: the error still shows.
#[cfg(feature = "ssr")]
pub async fn kept_on_error<T>(
    result: Result<T, crate::error::AppError>,
    form: impl FnOnce() -> KeptForm,
) -> Result<T, crate::error::AppError> {
    if result.is_err()
        && let Ok(session) = crate::port::session_handle().await
    {
        let form = form();
        let size: usize = form.fields.values().map(String::len).sum();
        if size <= KEPT_FORM_MAX_BYTES {
            let _ = session.0.set_kept_form(&form).await;
        }
    }
    result
}

/// The form kept for this request, taken once (the shell provides it on
/// the server), like the success note.
#[cfg(feature = "ssr")]
#[derive(Clone, Debug, Default)]
pub struct TakenForm(std::sync::Arc<std::sync::Mutex<Option<Option<KeptForm>>>>);

/// The fields `form` sent when it last failed in this session, removed
/// from the session as they are read. `None` when the last failed form
/// was another one (it is dropped: the page it went back to was left).
pub async fn take_kept(form: &str) -> Option<KeptForm> {
    #[cfg(feature = "ssr")]
    let kept = {
        let taken = use_context::<TakenForm>().unwrap_or_default();
        let cached = taken.0.lock().ok().and_then(|t| t.clone());
        let kept = match cached {
            Some(kept) => kept,
            None => {
                let fresh = match crate::port::session_handle().await {
                    Ok(session) => session.0.take_kept_form().await.ok().flatten(),
                    Err(_) => None,
                };
                taken
                    .0
                    .lock()
                    .map(|mut t| t.get_or_insert(fresh).clone())
                    .unwrap_or_default()
            }
        };
        kept.filter(|k| k.form == form)
    };
    // Drawn by the server only: the check page's editor is no island.
    #[cfg(not(feature = "ssr"))]
    let kept = {
        let _ = form;
        None
    };
    kept
}
