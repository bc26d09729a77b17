//! Notes shown in place of content: an error that stopped it, or a form's
//! error.

use crate::error::AppError;
use leptos::prelude::*;

/// An error shown in place of the content it stopped. On the server it also
/// sets the page's HTTP status.
#[component]
pub fn ErrorNote(err: AppError) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::port::set_status(&err);
    view! { <ErrorText err /> }
}

/// An error's words, with a way to sign in when the session ended, and
/// nothing else: drawn where the page's status is not this error's (a
/// check drawn for an island, whose request itself went well).
#[component]
pub fn ErrorText(err: AppError) -> impl IntoView {
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

/// The error of the last submission of a form, which the server function's
/// redirect carries back in the address. Its success note is the page's
/// flash (`ui::flash`): the redirect cannot carry a value. With
/// `at_fields`, an error about a confirming password or code is left to
/// the form, which shows it at that field.
#[component]
pub fn ActionNote<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
    #[prop(optional)] at_fields: bool,
) -> impl IntoView {
    move || match value.get() {
        Some(Err(AppError::NotConfirmed { .. })) if at_fields => None,
        Some(Err(e)) => {
            Some(view! { <p class="error" role="alert" data-code=e.code()>{e.to_string()}</p> })
        }
        _ => None,
    }
}
