//! Settings → Routines (admins): every scheduled job for every target it
//! runs for, with its schedule, last run and next; a schedule changed here
//! takes effect at each replica's next run, and "Run now" runs it once,
//! paused or not. The port refuses everyone else, and the page shows that.

use crate::platform::fns::{RunRoutine, SetRoutineSchedule, list_routines};
use crate::platform::model::RoutineStatus;
use crate::platform::replicas::Replicas;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, page_param};
use crate::ui::time::stamp_ago;
use chrono::Utc;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::durations::human;
use streamkeeper::platform::schedule::{Due, Schedule, due};

#[component]
pub fn RoutinesPage() -> impl IntoView {
    let page = page_param();
    let set = ServerAction::<SetRoutineSchedule>::new();
    let run = ServerAction::<RunRoutine>::new();
    let list = Resource::new(
        move || (page.get(), set.version().get(), run.version().get()),
        |(page, _, _)| list_routines(page),
    );
    view! {
        <Title text="Routines" />
        <h1>"Routines"</h1>
        <p class="note">"Every scheduled job, for each cluster it runs for. A schedule set here takes effect at each replica's next run; “Run now” runs a routine once, paused or not, on one replica. Times are in your time zone (your account page); cron expressions are UTC."</p>
        <ActionNote value=set.value() />
        <ActionNote value=run.value() />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(list) if list.items.is_empty() => view! {
                        <p class="note">"No routines are registered yet: they appear once a server has started."</p>
                    }.into_any(),
                    Ok(list) => {
                        let groups = by_routine(list.items.clone());
                        view! {
                            <table class="list" data-testid="routines">
                                <thead><tr>
                                    <th>"Routine"</th><th>"For"</th><th>"Schedule"</th><th>"Last run"</th>
                                    <th>"Outcome"</th><th>"Next run"</th><th>"Replica"</th>
                                </tr></thead>
                                <tbody>
                                    {groups.into_iter().map(|(name, rows)| view! { <RoutineRows name rows set run /> }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=|n| href_with("/settings/routines", &[("page", Some(n.to_string()))]) />
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
        <Replicas />
    }
}

/// The rows in order, grouped by routine (the listing is by routine, then
/// cluster).
fn by_routine(rows: Vec<RoutineStatus>) -> Vec<(String, Vec<RoutineStatus>)> {
    let mut groups: Vec<(String, Vec<RoutineStatus>)> = Vec::new();
    for r in rows {
        match groups.last_mut() {
            Some((name, rows)) if *name == r.routine => rows.push(r),
            _ => groups.push((r.routine.clone(), vec![r])),
        }
    }
    groups
}

/// A routine's targets, then its forms.
#[component]
fn RoutineRows(
    name: String,
    rows: Vec<RoutineStatus>,
    set: ServerAction<SetRoutineSchedule>,
    run: ServerAction<RunRoutine>,
) -> impl IntoView {
    let schedule = rows
        .first()
        .map(|r| r.schedule.clone())
        .unwrap_or(Schedule::Default);
    let clusters: Vec<String> = rows.iter().filter_map(|r| r.cluster.clone()).collect();
    view! {
        {rows.into_iter().map(|r| view! { <TargetRow r /> }).collect_view()}
        <tr class="form-row">
            <td colspan="7">
                <details>
                    <summary>{format!("Change or run {name}")}</summary>
                    <div class="forms">
                        <ScheduleForm name=name.clone() schedule set />
                        <RunForm name clusters run />
                    </div>
                </details>
            </td>
        </tr>
    }
}

/// A run's length: most take milliseconds, which `human` would call 0 s.
fn took(ms: i64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        human(ms)
    }
}

#[component]
fn TargetRow(r: RoutineStatus) -> impl IntoView {
    let target = r.cluster.clone().unwrap_or_else(|| "everything".into());
    let schedule = match &r.schedule {
        Schedule::Default => format!("every {} (its own)", human(r.every_ms)),
        other => other.to_string(),
    };
    let last = match (r.last_started_at, r.last_finished_at) {
        (None, _) if !r.records_idle_runs => "nothing to do yet".to_string(),
        (None, _) => "never run".to_string(),
        (Some(s), None) => format!("running since {}", stamp_ago(s)),
        (Some(s), Some(f)) => format!(
            "{}, took {}",
            stamp_ago(s),
            took((f - s).num_milliseconds())
        ),
    };
    let (outcome, class) = match (r.running, r.last_outcome.as_deref()) {
        (true, _) => ("running".to_string(), "badge"),
        (_, Some("ok")) => ("ok".to_string(), "badge state-ok"),
        (_, Some("failed")) => ("failed".to_string(), "badge state-bad"),
        (_, Some(o)) => (o.to_string(), "badge state-warn"),
        (_, None) => ("none yet".to_string(), "badge"),
    };
    let next = match (&r.schedule, r.next_due_at) {
        _ if r.run_requested => "run requested".to_string(),
        (Schedule::Paused, _) => "paused".to_string(),
        (_, Some(at)) => match due(at, Utc::now()) {
            Due::At(at) => stamp_ago(at),
            Due::Now => "due now".to_string(),
            Due::OverdueSince(at) => format!("overdue since {}", stamp_ago(at)),
        },
        // It looks every interval and keeps a row only when it found work.
        (_, None) if !r.records_idle_runs => format!("within {}", human(r.every_ms)),
        (_, None) => "at the next start".to_string(),
    };
    let replica = r.holder.clone().map_or_else(
        || {
            r.last_ran_by
                .clone()
                .map_or("none".to_string(), |by| format!("{by} (last)"))
        },
        |h| format!("{h} (holds it now)"),
    );
    let testid = format!(
        "routine-{}-{}",
        r.routine,
        r.cluster.as_deref().unwrap_or("global")
    );
    view! {
        <tr data-testid=testid class:trouble=r.last_outcome.as_deref() == Some("failed")>
            <td><code>{r.routine}</code></td>
            <td>{target}</td>
            <td>{schedule}</td>
            <td>{last}</td>
            <td>
                <span class=class>{outcome}</span>
                {r.last_error.map(|e| view! { <small class="note">" " {e}</small> })}
            </td>
            <td>{next}</td>
            <td>{replica}</td>
        </tr>
    }
}

#[component]
fn ScheduleForm(
    name: String,
    schedule: Schedule,
    set: ServerAction<SetRoutineSchedule>,
) -> impl IntoView {
    let kind = schedule.kind();
    let interval = match &schedule {
        Schedule::Every { every_ms } => format!("{}s", every_ms / 1000),
        _ => String::new(),
    };
    let expression = match &schedule {
        Schedule::Cron { expression } => expression.clone(),
        _ => String::new(),
    };
    let testid = format!("schedule-{name}");
    let option = move |value: &'static str, label: &'static str| {
        view! { <option value=value selected=kind == value>{label}</option> }
    };
    view! {
        <ActionForm action=set attr:class="stack" attr:data-testid=testid>
            <input type="hidden" name="routine" value=name />
            <label>"Schedule "
                <select name="kind">
                    {option("default", "its own interval")}
                    {option("every", "every…")}
                    {option("cron", "cron expression (UTC)")}
                    {option("paused", "paused")}
                </select>
            </label>
            <label>"Interval " <input name="interval" value=interval placeholder="90s, 5m, 2h" autocomplete="off" />
                <small>"For “every…”: 1 s to 7 days."</small></label>
            <label>"Cron " <input name="expression" value=expression placeholder="*/5 * * * *" autocomplete="off" />
                <small>"Five fields, or six with seconds first."</small></label>
            <button type="submit">"Save schedule"</button>
        </ActionForm>
    }
}

#[component]
fn RunForm(name: String, clusters: Vec<String>, run: ServerAction<RunRoutine>) -> impl IntoView {
    let per_cluster = !clusters.is_empty();
    let testid = format!("run-{name}");
    view! {
        <ActionForm action=run attr:class="stack" attr:data-testid=testid>
            <input type="hidden" name="routine" value=name />
            {if per_cluster {
                view! {
                    <label>"For "
                        <select name="cluster">
                            <option value="">"every cluster"</option>
                            {clusters.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
                        </select>
                    </label>
                }.into_any()
            } else {
                view! { <input type="hidden" name="cluster" value="" /> }.into_any()
            }}
            <button type="submit">"Run now"</button>
        </ActionForm>
    }
}
