//! The sign-in page. The form posts to the server's `/login` handler (not a
//! server function) so that signing in is one full page load that sets a
//! fresh session cookie, with or without wasm.

use crate::accounts::fns::sign_in_options;
use crate::accounts::model::SignInWays;
use crate::ui::params::query_param;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn LoginPage() -> impl IntoView {
    let failed = query_param("error");
    let locked = query_param("locked");
    let next = query_param("next");
    let expired = query_param("expired");
    let sso = query_param("sso");
    let options = Resource::new(|| (), |_| sign_in_options());
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
            <Show when=move || sso.get().is_some()>
                <p class="error" role="alert" data-testid="sso-error">
                    {move || sso_sentence(sso.get().as_deref())}
                </p>
            </Show>
            <Show when=move || expired.get().is_some() && failed.get().is_none()>
                <p class="note" role="status">"Your session has ended. Sign in again to continue."</p>
            </Show>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    // Unreadable options: the password form, as before SSO.
                    let o = options.await.unwrap_or(SignInWays {
                        provider: None,
                        passwords: true,
                    });
                    view! { <SignInForms options=o next /> }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn SignInForms(options: SignInWays, next: Memo<Option<String>>) -> impl IntoView {
    let sso_href = move || {
        let n = next.get().unwrap_or_default();
        if n.is_empty() {
            "/login/sso".to_string()
        } else {
            let q: String = form_urlencoded::byte_serialize(n.as_bytes()).collect();
            format!("/login/sso?next={q}")
        }
    };
    let password_form = view! {
        <form method="post" action="/login" class="stack" data-testid="password-form">
            <input type="hidden" name="next" value=move || next.get().unwrap_or_default() />
            <label>
                "Username"
                <input name="username" autocomplete="username" required autofocus=options.passwords />
            </label>
            <label>
                "Password"
                <input name="password" type="password" autocomplete="current-password" required />
            </label>
            <button type="submit">"Sign in"</button>
        </form>
    };
    let provider = options.provider.clone();
    view! {
        {provider.map(|name| view! {
            <p>
                <a class="button" href=sso_href rel="external" data-testid="sso-sign-in">
                    {format!("Sign in with {name}")}
                </a>
            </p>
        })}
        {if options.passwords {
            password_form.into_any()
        } else {
            view! {
                <details data-testid="break-glass">
                    <summary>"Break-glass sign-in (local admin account)"</summary>
                    {password_form}
                </details>
            }
            .into_any()
        }}
    }
}

/// Why single sign-on did not sign the person in, as the server's
/// redirect names it.
fn sso_sentence(code: Option<&str>) -> &'static str {
    match code {
        Some("unreachable") => {
            "The identity provider cannot be reached right now. Try again in a minute."
        }
        Some("unavailable") => "Sign-in cannot be completed right now. Try again in a minute.",
        Some("expired") => {
            "That sign-in took too long, was used already or was started in another browser. Start again."
        }
        Some("denied") => "The identity provider did not sign you in.",
        Some("taken") => {
            "Your username belongs to a local account here; ask an admin to rename one of them."
        }
        Some("disabled") => "Your account is disabled.",
        Some("reauth") => {
            "The identity provider did not show a fresh sign-in by you. Confirm again."
        }
        _ => {
            "The identity provider's answer could not be accepted. Start again; an admin can read why in the audit log."
        }
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
