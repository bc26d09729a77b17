//! The success note after a form post. Forms are plain posts answered by a
//! redirect (islands mode hydrates no form), so a server function that
//! succeeds keeps its note in the caller's session, on the server, and the
//! next page draws it once. Nothing of it travels in the address or a
//! cookie value: a page shows only a note this server wrote for this
//! session, as text (escaped like all text).

use leptos::prelude::*;

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
