//! The sign-in page. The form posts to the server's `/login` handler (not a
//! server function) so that signing in is one full page load that sets a
//! fresh session cookie, with or without wasm.

use crate::ui::params::query_param;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn LoginPage() -> impl IntoView {
    let failed = query_param("error");
    let locked = query_param("locked");
    let next = query_param("next");
    let expired = query_param("expired");
    view! {
        <Title text="Sign in" />
        <section class="card narrow">
            <h1>"Sign in"</h1>
            <Show when=move || failed.get().is_some() && locked.get().is_none()>
                <p class="error" role="alert" data-testid="login-error">
                    "Invalid username or password."
                </p>
            </Show>
            <Show when=move || locked.get().is_some()>
                <p class="error" role="alert" data-testid="login-error">
                    {move || locked_sentence(locked.get())}
                </p>
            </Show>
            <Show when=move || expired.get().is_some() && failed.get().is_none()>
                <p class="note" role="status">"Your session has ended. Sign in again to continue."</p>
            </Show>
            <form method="post" action="/login" class="stack">
                <input type="hidden" name="next" value=move || next.get().unwrap_or_default() />
                <label>
                    "Username"
                    <input name="username" autocomplete="username" required autofocus />
                </label>
                <label>
                    "Password"
                    <input name="password" type="password" autocomplete="current-password" required />
                </label>
                <button type="submit">"Sign in"</button>
            </form>
        </section>
    }
}

/// The second step of signing in, for users with a second factor: the
/// password was right, and the session is not signed in until the code is.
#[component]
pub fn LoginCodePage() -> impl IntoView {
    let failed = query_param("error");
    let locked = query_param("locked");
    let next = query_param("next");
    view! {
        <Title text="Enter your code" />
        <section class="card narrow">
            <h1>"Enter your code"</h1>
            <Show when=move || failed.get().is_some() && locked.get().is_none()>
                <p class="error" role="alert" data-testid="code-error">
                    "That code is not right or was used already. Try the next code."
                </p>
            </Show>
            <Show when=move || locked.get().is_some()>
                <p class="error" role="alert" data-testid="code-error">
                    {move || locked_sentence(locked.get())}
                </p>
            </Show>
            <form method="post" action="/login/code" class="stack">
                <input type="hidden" name="next" value=move || next.get().unwrap_or_default() />
                <label>
                    "Code from your authenticator app, or a recovery code"
                    <input name="code" autocomplete="one-time-code" required autofocus />
                </label>
                <button type="submit">"Sign in"</button>
            </form>
            <p class="note">"Within five minutes of your password; after that, "<a href="/login">"start again"</a>"."</p>
        </section>
    }
}

/// What a throttled sign-in says: failed tries lock the account (or the
/// address they come from) for a while, and the page says how long.
fn locked_sentence(seconds: Option<String>) -> String {
    let secs = seconds.and_then(|s| s.parse::<u64>().ok()).unwrap_or(60);
    let unit = if secs == 1 { "second" } else { "seconds" };
    format!(
        "Too many failed sign-ins for this account or from your address: it is locked for {secs} {unit}. Try again then."
    )
}
