//! The signed-in user's own account: changing their password (the only
//! page a user whose password an admin set may reach until they do) and
//! their optional TOTP second factor with its recovery codes. Every form
//! works without wasm: what an enrolment shows comes from the server on
//! each render until the user confirms it.

use crate::accounts::fns::{
    ChangePassword, ConfirmSecondFactor, DisableSecondFactor, SetMailPreferences, SetTimeZone,
    StartSecondFactor, account_status,
};
use crate::accounts::model::{AccountView, MailPreferences};
use crate::ui::notes::{ActionNote, ErrorNote};
use leptos::prelude::*;
use leptos_meta::Title;

#[derive(Clone, Copy)]
struct Forms {
    change: ServerAction<ChangePassword>,
    start: ServerAction<StartSecondFactor>,
    confirm: ServerAction<ConfirmSecondFactor>,
    disable: ServerAction<DisableSecondFactor>,
    zone: ServerAction<SetTimeZone>,
    mail: ServerAction<SetMailPreferences>,
}

#[component]
pub fn AccountPage() -> impl IntoView {
    let forms = Forms {
        change: ServerAction::<ChangePassword>::new(),
        start: ServerAction::<StartSecondFactor>::new(),
        confirm: ServerAction::<ConfirmSecondFactor>::new(),
        disable: ServerAction::<DisableSecondFactor>::new(),
        zone: ServerAction::<SetTimeZone>::new(),
        mail: ServerAction::<SetMailPreferences>::new(),
    };
    let account = Resource::new(
        move || {
            (
                forms.change.version().get(),
                forms.start.version().get(),
                forms.confirm.version().get(),
                forms.disable.version().get(),
                forms.zone.version().get(),
                forms.mail.version().get(),
            )
        },
        |_| account_status(),
    );
    view! {
        <Title text="Your account" />
        <h1>"Your account"</h1>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match account.await {
                    Ok(a) => view! { <AccountView a forms /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn AccountView(a: AccountView, forms: Forms) -> impl IntoView {
    let must_change = a.must_change_password;
    if a.single_sign_on {
        return view! {
            <p>{format!("Signed in as {} ({}).", a.display_name, a.username)}</p>
            <section class="card" data-testid="single-sign-on">
                <h2>"Signed in through your identity provider"</h2>
                <p>"Your password and second factor are kept at the provider; change them there. Your roles and teams here follow your groups at the provider, at every sign-in. Approvals ask you to confirm at the provider."</p>
            </section>
            <TimeZone current=a.time_zone forms />
            <Mail current=a.mail forms />
        }
        .into_any();
    }
    view! {
        <p>{format!("Signed in as {} ({}).", a.display_name, a.username)}</p>
        <Show when=move || must_change>
            <p class="error" role="alert" data-testid="must-change">
                "An admin set your password. Choose your own password to continue."
            </p>
        </Show>
        <section class="card">
            <h2>"Change your password"</h2>
            <ActionForm action=forms.change attr:class="stack" attr:data-testid="change-password">
                <label>
                    "Current password"
                    <input name="current_password" type="password" required autocomplete="current-password" />
                </label>
                <label>
                    "New password"
                    <input name="new_password" type="password" required minlength="12" autocomplete="new-password" />
                </label>
                <label>
                    "New password again"
                    <input name="confirm_password" type="password" required minlength="12" autocomplete="new-password" />
                </label>
                <button type="submit">"Change password"</button>
            </ActionForm>
            <ActionNote value=forms.change.value() />
        </section>
        {(!must_change).then(|| {
            let current = a.time_zone.clone();
            let mail = a.mail.clone();
            view! {
                <TimeZone current forms />
                <Mail current=mail forms />
                <SecondFactor a forms />
            }
        })}
    }
    .into_any()
}

/// The zone every page shows times in for this user: a choice among the
/// IANA zones, the current one selected.
#[component]
fn TimeZone(current: String, forms: Forms) -> impl IntoView {
    let options = streamkeeper::accounts::time_zone::names()
        .map(|name| {
            let selected = name == current;
            view! { <option value=name selected=selected>{name}</option> }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>"Time zone"</h2>
            <p>"Pages show times in this zone, with how long ago beside them. The REST API and the CLI keep UTC."</p>
            <ActionForm action=forms.zone attr:class="stack" attr:data-testid="time-zone">
                <label>
                    "Time zone"
                    <select name="time_zone" autocomplete="off">{options}</select>
                </label>
                <button type="submit">"Save time zone"</button>
            </ActionForm>
            <ActionNote value=forms.zone.value() />
        </section>
    }
}

/// The person's own email address and what they hear there about review
/// items. A message only links to the item: acting on it needs signing in.
#[component]
fn Mail(current: MailPreferences, forms: Forms) -> impl IntoView {
    view! {
        <section class="card">
            <h2>"Email"</h2>
            <p>"Streamkeeper writes to this address about review items. A message links to the item; approving or rejecting it needs you signed in here. Leave the address empty for no email."</p>
            <ActionForm action=forms.mail attr:class="stack" attr:data-testid="mail-preferences">
                <label>
                    "Email address"
                    <input name="email" type="email" maxlength="254" autocomplete="email" value=current.email />
                </label>
                <label>
                    <input name="waiting" type="checkbox" value="on" checked=current.waiting />
                    " Items that wait for my review"
                </label>
                <label>
                    <input name="outcomes" type="checkbox" value="on" checked=current.outcomes />
                    " What becomes of my items (approved, rejected, applied, not applied)"
                </label>
                <button type="submit">"Save email settings"</button>
            </ActionForm>
            <ActionNote value=forms.mail.value() />
        </section>
    }
}

#[component]
fn SecondFactor(a: AccountView, forms: Forms) -> impl IntoView {
    let body = match (a.pending, a.second_factor) {
        (Some(p), enabled) => view! {
            {p.secret_base32.map(|secret| view! {
                <p>"Add this key to your authenticator app (or open the link on your phone), then enter the code it shows."</p>
                <p><code data-testid="totp-secret">{secret}</code></p>
                {p.otpauth_uri.map(|uri| view! { <p><a href=uri>"Open in an authenticator app"</a></p> })}
            })}
            <p>"Your recovery codes: each works once, in place of a code, if you lose your device. Save them now; they are not shown again once you confirm."</p>
            <ol class="codes" data-testid="recovery-codes">
                {p.recovery_codes.into_iter().map(|c| view! { <li><code>{c}</code></li> }).collect_view()}
            </ol>
            <ActionForm action=forms.confirm attr:class="stack" attr:data-testid="confirm-second-factor">
                <label>
                    "Code from your authenticator app"
                    <input name="code" required inputmode="numeric" autocomplete="one-time-code" />
                </label>
                <button type="submit">{if enabled { "Keep these recovery codes" } else { "Turn on the second factor" }}</button>
            </ActionForm>
        }.into_any(),
        (None, true) => view! {
            <p data-testid="second-factor-on">
                {format!("On: sign-in and approvals ask for a code. {} recovery codes left.", a.recovery_codes_left)}
            </p>
            <ActionForm action=forms.start attr:data-testid="renew-recovery-codes">
                <button type="submit">"New recovery codes"</button>
            </ActionForm>
            <ActionForm action=forms.disable attr:class="stack" attr:data-testid="disable-second-factor">
                <label>"Password" <input name="password" type="password" required autocomplete="current-password" /></label>
                <label>"Code or recovery code" <input name="code" required autocomplete="one-time-code" /></label>
                <button type="submit" class="danger">"Turn off the second factor"</button>
            </ActionForm>
        }.into_any(),
        (None, false) => view! {
            <p data-testid="second-factor-off">"Off. With a second factor, sign-in and approvals also ask for a code from an authenticator app."</p>
            <ActionForm action=forms.start attr:data-testid="start-second-factor">
                <button type="submit">"Set up a second factor"</button>
            </ActionForm>
        }.into_any(),
    };
    view! {
        <section class="card">
            <h2>"Second factor"</h2>
            {body}
            <ActionNote value=forms.start.value() />
            <ActionNote value=forms.confirm.value() />
            <ActionNote value=forms.disable.value() />
        </section>
    }
}
