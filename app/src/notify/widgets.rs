//! Notifications' widgets for other features' pages: a flag's delivery
//! log (the flag page), "muted until …" (a cluster's, stream's and
//! group's pages), and the broken channels a home page tells of.

use crate::notify::fns::{flag_deliveries, muted_by, until_words};
use crate::notify::model::{BrokenChannel, DeliveryView};
use crate::ui::notes::ErrorText;
use crate::ui::time::{stamp_ago, stamp_ago_or_dash};
use leptos::prelude::*;

/// What became of one delivery, in words.
fn outcome(d: &DeliveryView) -> String {
    if let Some(by) = &d.held_by {
        return by.clone();
    }
    let answer = d.answer.clone().unwrap_or_else(|| "no answer yet".into());
    match (d.delivered_at, d.failed_at, d.next_attempt_at) {
        (Some(at), _, _) => format!("delivered {}: {answer}", stamp_ago(at)),
        (None, Some(at), _) => format!("given up {}: {answer}", stamp_ago(at)),
        (None, None, Some(next)) if d.attempts > 0 => {
            format!("{answer}; tried again {}", stamp_ago(next))
        }
        _ => "waiting to be sent".to_string(),
    }
}

/// A flag's delivery log: each channel's delivery of each transition with
/// its receiver's answer, and the transitions a silence holds.
#[component]
pub fn DeliveryLog(flag_id: i64) -> impl IntoView {
    let log = Resource::new(move || flag_id, flag_deliveries);
    view! {
        <section class="card" data-testid="delivery-log">
            <h2>"Deliveries"</h2>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match log.await {
                        Ok(list) if list.is_empty() => view! {
                            <p data-testid="no-deliveries">"No channel has been sent this flag (its team has no channels, or the filters leave it out)."</p>
                        }.into_any(),
                        Ok(list) => view! {
                            <table class="list">
                                <thead><tr><th>"Channel"</th><th>"Transition"</th><th>"Attempts"</th><th>"Answer"</th><th>"Sent"</th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|d| view! {
                                        <tr>
                                            <td>{if d.channel.is_empty() { "–".to_string() } else { format!("{} ({})", d.channel, d.kind) }}</td>
                                            <td>{d.transition.clone()}</td>
                                            <td>{d.attempts}</td>
                                            <td class="long" data-testid="delivery-answer">{outcome(&d)}</td>
                                            <td>{stamp_ago_or_dash(d.delivered_at)}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any(),
                        Err(e) => view! { <ErrorText err=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// "Muted until … (reason)" on the page of a cluster (`subject_kind`
/// `cluster`), a stream (`topic`) or a group, while a silence covers it.
#[component]
pub fn MutedNote(cluster_id: i64, subject_kind: &'static str, subject: String) -> impl IntoView {
    let muted = Resource::new(
        move || (cluster_id, subject.clone()),
        move |(id, subject)| muted_by(id, subject_kind.to_string(), subject),
    );
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                muted.await.ok().flatten().map(|s| view! {
                    <p class="note" role="status" data-testid="muted">
                        {format!("Muted until {} ({}), by {}. ", until_words(&s), s.reason, s.created_by)}
                        <a href=format!("/settings/silences?cluster={}", s.cluster_id)>"Silences"</a>
                    </p>
                })
            })}
        </Suspense>
    }
}

/// The broken channels the caller is told of on their home page, until
/// each is mended (a delivery or a test answered 2xx) or removed.
#[component]
pub fn BrokenChannels(list: Vec<BrokenChannel>) -> impl IntoView {
    (!list.is_empty()).then(|| {
        view! {
            <section class="card" data-testid="broken-channels">
                <h2>"Channels that do not deliver"</h2>
                <ul>
                    {list.into_iter().map(|b| view! {
                        <li>
                            <a href=format!("/settings/teams/{}/notifications", b.team_id)>{format!("{} · {} ({})", b.team, b.name, b.kind)}</a>
                            {format!(": broken {}, the receiver answered {}", stamp_ago(b.broken_at), b.answer)}
                        </li>
                    }).collect_view()}
                </ul>
            </section>
        }
    })
}
