//! Settings → Review (admins): each domain's autonomy level, how many
//! approvals it requires and who its named approvers are. The port refuses
//! everyone else, and the page shows that refusal.

use crate::review::fns::{SetReviewDomain, list_review_domains};
use crate::review::model::DomainSettings;
use crate::review::widgets::AutonomySelect;
use crate::ui::header::current_user;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::accounts::role::Role;
use streamkeeper::review::{Autonomy, MAX_REQUIRED_APPROVALS};

#[component]
pub fn ReviewSettingsPage() -> impl IntoView {
    let set = ServerAction::<SetReviewDomain>::new();
    // Everyone reads the domains; only admins see the forms that change them.
    let domains = Resource::new(
        move || set.version().get(),
        |_| async move {
            let admin =
                matches!(current_user().await, Ok(Some(me)) if me.principal.has(Role::Admin));
            list_review_domains().await.map(|list| (list, admin))
        },
    );
    view! {
        <Title text="Review settings" />
        <h1>"Review: domains and approvers"</h1>
        <p class="note">"Each stream belongs to a domain. A domain's autonomy level says how far Streamkeeper may act on approved changes, and its named approvers (people, or teams' members holding the approver role) review them. Nobody approves their own change or one they edited."</p>
        <ActionNote value=set.value() />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match domains.await {
                    Ok((list, admin)) => view! {
                        {if list.is_empty() {
                            view! { <p class="note" data-testid="no-domains">"No domains yet. Give streams a domain on their page (Describe or claim this stream); an admin configures one by name here."</p> }.into_any()
                        } else {
                            view! { <DomainTable list set admin /> }.into_any()
                        }}
                        {admin.then(|| view! {
                            <section class="card">
                                <h2>"Configure a domain"</h2>
                                <DomainForm domain=None autonomy=Autonomy::DEFAULT required=1 users=String::new() teams=String::new() set />
                            </section>
                        })}
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn DomainTable(
    list: Vec<DomainSettings>,
    set: ServerAction<SetReviewDomain>,
    admin: bool,
) -> impl IntoView {
    view! {
        <table class="list" data-testid="domains">
            <thead><tr>
                <th>"Domain"</th><th>"Level"</th><th>"Required"</th><th>"Named approvers"</th>
                <th>"Who can approve now"</th><th>"Streams"</th><th>"Updated"</th>
            </tr></thead>
            <tbody>
                {list.into_iter().map(|d| {
                    let short = d.effective_approvers.len() < usize::try_from(d.required_approvals).unwrap_or(0);
                    let named = [
                        (!d.approver_users.is_empty()).then(|| format!("users: {}", d.approver_users.join(", "))),
                        (!d.approver_teams.is_empty()).then(|| format!("teams: {}", d.approver_teams.join(", "))),
                    ].into_iter().flatten().collect::<Vec<_>>().join("; ");
                    let updated = match (&d.updated_by, d.updated_at) {
                        (Some(by), Some(at)) => format!("{} by {by}", stamp_ago(at)),
                        (None, Some(at)) => stamp_ago(at),
                        _ => "not configured (default level)".to_string(),
                    };
                    view! {
                        <tr data-domain=d.domain.clone()>
                            <td>{d.domain.clone()}</td>
                            <td><span title=d.autonomy.describe()>{d.autonomy.label()}</span></td>
                            <td>{d.required_approvals}</td>
                            <td>{if named.is_empty() { "nobody".to_string() } else { named }}</td>
                            <td>
                                {if d.effective_approvers.is_empty() { "nobody".to_string() } else { d.effective_approvers.join(", ") }}
                                {short.then(|| view! { <p class="warning">"Fewer than the required approvals: items here cannot be approved."</p> })}
                            </td>
                            <td>{d.streams}</td>
                            <td>{updated}</td>
                        </tr>
                        {admin.then(|| view! {
                            <tr class="form-row">
                                <td colspan="7">
                                    <details>
                                        <summary>{format!("Change {}", d.domain)}</summary>
                                        <DomainForm
                                            domain=Some(d.domain.clone())
                                            autonomy=d.autonomy
                                            required=d.required_approvals
                                            users=d.approver_users.join(", ")
                                            teams=d.approver_teams.join(", ")
                                            set
                                        />
                                    </details>
                                </td>
                            </tr>
                        })}
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// A domain's settings as a form; `domain` `None` asks for the name.
#[component]
fn DomainForm(
    domain: Option<String>,
    autonomy: Autonomy,
    required: i16,
    users: String,
    teams: String,
    set: ServerAction<SetReviewDomain>,
) -> impl IntoView {
    let testid = if domain.is_some() {
        "set-domain"
    } else {
        "new-domain"
    };
    view! {
        <ActionForm action=set attr:class="stack" attr:data-testid=testid>
            {match domain {
                Some(d) => view! { <input type="hidden" name="domain" value=d /> }.into_any(),
                None => view! { <label>"Domain " <input name="domain" required placeholder="payments" /></label> }.into_any(),
            }}
            <AutonomySelect selected=autonomy />
            <label>
                "Required approvals "
                <input name="required_approvals" type="number" min="1" max=MAX_REQUIRED_APPROVALS.to_string() required value=required.to_string() />
            </label>
            <label>
                "Approvers (usernames) "
                <input name="approver_users" value=users placeholder="alice, bob" autocomplete="off" />
                <small>"Comma-separated. They need the approver role."</small>
            </label>
            <label>
                "Approver teams "
                <input name="approver_teams" value=teams placeholder="payments" autocomplete="off" />
                <small>"Comma-separated. Their members with the approver role approve."</small>
            </label>
            <button type="submit">"Save"</button>
        </ActionForm>
    }
}
