//! `/settings/pilot`: the pilot's scope, start date and each metric's
//! baseline with a note on where it came from (managers and admins; the
//! port refuses everyone else, audited, and the page shows that refusal).

use crate::pilot::fns::{SetPilot, read_pilot_settings};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::pilot::{Metric, PilotSettings, ScopeKind};

#[component]
pub fn PilotSettingsPage() -> impl IntoView {
    let set = ServerAction::<SetPilot>::new();
    let settings = Resource::new(move || set.version().get(), |_| read_pilot_settings());
    view! {
        <Title text="Pilot settings" />
        <h1>"Pilot settings"</h1>
        <p class="note">"What the pilot covers, its day 1, and how long each step took before it (the baseline its figures are compared with). The figures themselves come from Streamkeeper's own records. "<a href="/pilot">"The pilot's page"</a></p>
        <ActionNote value=set.value() />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match settings.await {
                    Ok(s) => view! { <SettingsForm s set /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn SettingsForm(s: PilotSettings, set: ServerAction<SetPilot>) -> impl IntoView {
    let kind = s.scope_kind.unwrap_or(ScopeKind::Domains);
    let option = move |k: ScopeKind, label: &'static str| {
        view! { <option value=k.as_str() selected=kind == k>{label}</option> }
    };
    let started = s
        .started_on
        .unwrap_or_else(|| chrono::Utc::now().date_naive())
        .to_string();
    let baselines = Metric::ALL
        .into_iter()
        .map(|m| {
            let b = s.baselines.iter().find(|b| b.metric == m);
            let minutes = b.map(|b| b.ms).unwrap_or_else(|| m.default_baseline_ms()) / 60_000;
            // A default's note is not the manager's: left empty, it stays the default.
            let note = b
                .filter(|b| b.note != streamkeeper::pilot::Baseline::default_for(m).note)
                .map(|b| b.note.clone())
                .unwrap_or_default();
            view! {
                <fieldset data-metric=m.as_str()>
                    <legend>{m.describe()}</legend>
                    <label>"Baseline (minutes) "
                        <input name=format!("{m}_minutes") type="number" min="1" required value=minutes.to_string() />
                    </label>
                    <label>"Where it came from "
                        <input name=format!("{m}_note") value=note maxlength=streamkeeper::pilot::MAX_NOTE.to_string() placeholder="median of the Q3 on-call tickets" autocomplete="off" />
                    </label>
                    <small>{format!("Default {} min; a changed baseline needs a note.", m.default_baseline_ms() / 60_000)}</small>
                </fieldset>
            }
        })
        .collect_view();
    let updated = match (&s.updated_by, s.updated_at) {
        (Some(by), Some(at)) => {
            format!("Last changed {} by {by}.", stamp_ago(at))
        }
        _ => "Not set up yet.".to_string(),
    };
    view! {
        <p class="note" data-testid="pilot-updated">{updated}</p>
        <ActionForm action=set attr:class="stack" attr:data-testid="pilot-settings">
            <label>"Scope "
                <select name="scope_kind">
                    {option(ScopeKind::Domains, "domains")}
                    {option(ScopeKind::Clusters, "clusters")}
                    {option(ScopeKind::Streams, "streams (cluster/topic)")}
                </select>
            </label>
            <label>"Covers "
                <textarea name="scope" rows="3" required placeholder="payments">{s.scope.join("\n")}</textarea>
                <small>"One a line (or comma-separated)."</small>
            </label>
            <label>"Day 1 " <input name="started_on" type="date" required value=started /></label>
            {baselines}
            <button type="submit">"Save"</button>
        </ActionForm>
    }
}
