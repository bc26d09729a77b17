//! Notes shown in place of content: an error that stopped it, or the outcome of
//! a form's action.

use crate::error::AppError;
use leptos::prelude::*;

/// An error shown in place of the content it stopped. On the server it also
/// sets the page's HTTP status.
#[component]
pub fn ErrorNote(err: AppError) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::port::set_status(&err);
    let signin = matches!(err, AppError::Unauthenticated);
    view! {
        <div class="error" role="alert" data-code=err.code()>
            {err.to_string()}
            <Show when=move || signin>
                " " <a href="/login">"Sign in"</a>
            </Show>
        </div>
    }
}

/// The result of the last submission of a form: an error, or a success note.
#[component]
pub fn ActionNote<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
    ok: fn(&T) -> String,
) -> impl IntoView {
    move || match value.get() {
        Some(Ok(v)) => view! { <p class="ok" role="status">{ok(&v)}</p> }.into_any(),
        Some(Err(e)) => {
            view! { <p class="error" role="alert" data-code=e.code()>{e.to_string()}</p> }
                .into_any()
        }
        None => ().into_any(),
    }
}
