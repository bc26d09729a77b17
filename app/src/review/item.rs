//! A review item's page: its content hash, base (a connector's running
//! config), diff, checks (a connector's validation), approvals,
//! comments and trail, and the forms the caller may use now. Every form works
//! before the wasm loads: a successful action redirects back to the item, a
//! failed one shows its error there.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::audit::widgets::DetailLines;
use crate::connect::widgets::{ConnectorDiff, RunAfterApply, Validated};
use crate::error::{AppError, ConfirmField};
use crate::review::fns::{
    ApplyReview, ApproveReview, CommentReview, EditReview, RejectReview, WithdrawReview, get_review,
};
use crate::review::model::{ApprovalView, CommentView, Confirmation, ReviewItem};
use crate::review::widgets::{RebaseDrops, WhatItBreaks, base_text, state_class};
use crate::schemas::model::SubjectSeen;
use crate::schemas::widgets::NotifyOwners;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::{href_with, id_param};
use crate::ui::schema::{CheckFindings, DiffTable, TypeSelect, verdict_class};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::review::{Base, Kind, State};

/// The actions of an item's page; its data is fetched again after each.
#[derive(Clone, Copy)]
struct ItemForms {
    approve: ServerAction<ApproveReview>,
    reject: ServerAction<RejectReview>,
    withdraw: ServerAction<WithdrawReview>,
    apply: ServerAction<ApplyReview>,
    edit: ServerAction<EditReview>,
    comment: ServerAction<CommentReview>,
}

impl ItemForms {
    fn new() -> Self {
        ItemForms {
            approve: ServerAction::new(),
            reject: ServerAction::new(),
            withdraw: ServerAction::new(),
            apply: ServerAction::new(),
            edit: ServerAction::new(),
            comment: ServerAction::new(),
        }
    }

    /// Tracks every action's version: changes when any of them completes.
    fn version(&self) -> usize {
        self.approve.version().get()
            + self.reject.version().get()
            + self.withdraw.version().get()
            + self.apply.version().get()
            + self.edit.version().get()
            + self.comment.version().get()
    }
}

/// `/review/:id`: one item, everything about it, and the forms the caller
/// may use now.
#[component]
pub fn ReviewItemPage() -> impl IntoView {
    let id = id_param();
    let forms = ItemForms::new();
    let item = Resource::new(
        move || (id.get(), forms.version()),
        |(id, _)| async move {
            match id {
                Some(id) => get_review(id).await,
                None => Err(AppError::NotFound("That review item".into())),
            }
        },
    );
    view! {
        <Title text="Review item" />
        <p><a href="/review">"← Review inbox"</a></p>
        <div data-testid="action-notes">
            <ActionNote value=forms.approve.value() at_fields=true />
            <ActionNote value=forms.reject.value() />
            <ActionNote value=forms.withdraw.value() />
            <ActionNote value=forms.apply.value() />
            <ActionNote value=forms.edit.value() />
            <ActionNote value=forms.comment.value() />
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match item.await {
                    Ok(p) => {
                        let i = p.item;
                        let drops = p.rebase_drops;
                        view! { <Title text=page_title(Some(&format!("#{} {}", i.summary.id, i.summary.title)), "Review") /> <ItemView i drops forms /> }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ItemView(i: ReviewItem, drops: Vec<String>, forms: ItemForms) -> impl IntoView {
    let s = i.summary.clone();
    let stream = href_with(
        &format!("/clusters/{}/stream", s.cluster_id),
        &[("name", Some(s.topic.clone()))],
    );
    let left = match i.base.version {
        Some(v) => format!("v{v} (base)"),
        None => "nothing registered".to_string(),
    };
    let right = format!("revision {}", s.revision);
    let (target, base) = facts_of(&i);
    let domain = if s.domain.is_empty() {
        "no domain".to_string()
    } else {
        s.domain.clone()
    };
    // A connector item's apply is told by its state reason and its run.
    let applied = (s.state == State::Applied && !s.kind.is_connector()).then(|| {
        let version = i
            .applied_version
            .map_or("?".to_string(), |v| v.to_string());
        let id = i
            .applied_schema_id
            .map(|id| format!(" (schema id {id})"))
            .unwrap_or_default();
        view! {
            <p class="ok" data-testid="applied">
                "Applied: registered as version " <strong data-testid="applied-version">{version}</strong>
                {format!(" of {}{id}.", s.subject)}
            </p>
        }
    });
    let manual = i.manual_apply.clone().map(|text| {
        view! {
            <section class="card" data-testid="manual-apply">
                <h2>"Apply by hand"</h2>
                <p>"This domain is at suggest: Streamkeeper does not write to the registry. Once the item is approved, run this request by hand against the cluster's Schema Registry:"</p>
                <pre class="schema" tabindex="0">{text}</pre>
            </section>
        }
    });
    view! {
        <h1>
            {s.title.clone()} " "
            <span class=state_class(s.state) data-testid="item-state">{s.state.describe()}</span>
        </h1>
        {(!i.state_reason.is_empty()).then(|| view! {
            <p class="lead" data-testid="state-reason">{i.state_reason.clone()}</p>
        })}
        {i.base_moved.clone().map(|seen| view! { <BaseMoved base=i.base seen /> })}
        <RebaseDrops base=i.base drops />
        {applied}
        {i.connector_run.clone().map(|r| view! { <RunAfterApply r /> })}
        <section class="card">
            <dl>
                <dt>"Kind"</dt><dd>{s.kind.describe()}</dd>
                <dt>"Domain"</dt>
                <dd data-testid="domain">{domain} " · " <span title=i.autonomy.describe()>{i.autonomy.label()}</span>
                    <small class="note">{format!(" — {}", i.autonomy.describe())}</small>
                </dd>
                <dt>"Cluster"</dt><dd>{s.cluster.clone()}</dd>
                <dt>"Topic"</dt><dd><a href=stream>{s.topic.clone()}</a> " · " <a href=crate::lineage::widgets::topic_impact_href(s.cluster_id, &s.topic) data-testid="review-impact">"What breaks if it changes"</a></dd>
                {target}
                <dt>"Author"</dt><dd data-testid="author">{s.author.clone()}</dd>
                <dt>"Revision"</dt><dd data-testid="revision">{s.revision}</dd>
                <dt>"Content hash"</dt><dd><code class="hash" data-testid="content-hash">{i.content_hash.clone()}</code></dd>
                {base}
                <dt>"Approvals"</dt><dd data-testid="approval-count">{format!("{} of {}", s.approval_count, s.required)}</dd>
                <dt>"Proposed"</dt><dd>{stamp_ago(s.created_at)}</dd>
                <dt>"Updated"</dt><dd>{stamp_ago(s.updated_at)}</dd>
            </dl>
        </section>
        {manual}
        <h2>"Change"</h2>
        {match i.connector_diff.clone() {
            Some(d) => view! {
                <ConnectorDiff d />
                <details>
                    <summary>"The config exactly as it will be sent (secrets masked)"</summary>
                    <pre class="schema" tabindex="0" data-testid="proposed-schema">{i.content.schema.clone()}</pre>
                </details>
            }.into_any(),
            None => view! {
                <DiffTable left right lines=i.diff.clone() />
                <details>
                    <summary>"The schema exactly as it will be registered"</summary>
                    <pre class="schema" tabindex="0" data-testid="proposed-schema">{i.content.schema.clone()}</pre>
                </details>
            }.into_any(),
        }}
        <CheckSection i=i.clone() />
        // Decided after reading the change and its checks, as a pull
        // request is reviewed after its files.
        <Decide i=i.clone() forms />
        <ApprovalsSection i=i.clone() />
        {i.actions.edit.then(|| view! { <EditForm i=i.clone() edit=forms.edit /> })}
        <Comments id=s.id comments=i.comments.clone() comment=forms.comment />
        <h2>"Trail"</h2>
        {i.trail.is_empty().then(|| view! { <p class="note">"Nothing recorded yet."</p> })}
        <table class="list" data-testid="trail">
            <thead><tr><th>"When"</th><th>"Who"</th><th>"What"</th><th>"Detail"</th></tr></thead>
            <tbody>
                {i.trail.into_iter().map(|a| view! {
                    <tr>
                        <td>{stamp_ago(a.at)}</td>
                        <td>{a.actor}</td>
                        <td><code>{a.action}</code></td>
                        <td><DetailLines detail=a.detail /></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// What the item changes and what it was made against: a schema item's
/// subject and base version, a connector item's connector and the running
/// config it was read against.
fn facts_of(i: &ReviewItem) -> (AnyView, AnyView) {
    let s = &i.summary;
    if !s.kind.is_connector() {
        return (
            view! { <dt>"Subject"</dt><dd>{s.subject.clone()}</dd> }.into_any(),
            view! { <dt>"Base"</dt><dd data-testid="base">{base_text(&i.base)}</dd> }.into_any(),
        );
    }
    // A connector item's subject is `connect/name`.
    let (connect, name) = s.subject.split_once('/').unwrap_or(("", &s.subject));
    let href = href_with(
        &format!("/clusters/{}/connector", s.cluster_id),
        &[
            ("connect", Some(connect.to_owned())),
            ("name", Some(name.to_owned())),
        ],
    );
    let against = match &i.connector_diff {
        Some(d) if d.base_exists => "its running config as read when this revision was made",
        Some(_) => "nothing: the connector does not exist yet",
        None => "the connector as it runs",
    };
    // A draft that creates a connector links to it only once applied:
    // before that the worker has no such connector and its page is a 404.
    let created_yet =
        !matches!(&i.connector_diff, Some(d) if !d.base_exists) || s.state == State::Applied;
    let on = format!(" on Connect cluster {connect}");
    let name = name.to_owned();
    let connector = if created_yet {
        view! { <a href=href>{name}</a>{on} }.into_any()
    } else {
        view! { {name}{on}" (not in the worker until applied)" }.into_any()
    };
    (
        view! { <dt>"Connector"</dt><dd data-testid="connector">{connector}</dd> }.into_any(),
        view! { <dt>"Made against"</dt><dd data-testid="base">{against}</dd> }.into_any(),
    )
}

/// The forms the caller may use now, after the change and its checks:
/// apply; approve (or why not) and reject, each in a box of its own so one
/// is never sent for the other; withdraw.
#[component]
fn Decide(i: ReviewItem, forms: ItemForms) -> impl IntoView {
    let a = i.actions.clone();
    let item_id = i.summary.id;
    let id = move || item_id.to_string();
    let revision = i.summary.revision;
    let any = a.approve || a.reject || a.withdraw || a.apply || a.approve_refusal.is_some();
    let short: String = i.content_hash.chars().take(12).collect();
    let failed = forms.approve.value().get_untracked().and_then(Result::err);
    any.then(|| {
        view! {
            <section data-testid="decide">
                <h2>"Decide"</h2>
                {a.apply.then(|| view! {
                    <section class="card">
                        <ActionForm action=forms.apply attr:class="stack" attr:data-testid="apply-form">
                            <input type="hidden" name="item_id" value=id() />
                            <p class="note">{apply_note(i.summary.kind)}</p>
                            <button type="submit">{format!("Apply revision {revision}")}</button>
                        </ActionForm>
                    </section>
                })}
                <div class="decide">
                    {if a.approve {
                        view! {
                            <section class="card" data-testid="approve-box">
                                <h3>"Approve"</h3>
                                <ActionForm action=forms.approve attr:class="stack" attr:data-testid="approve-form">
                                    <input type="hidden" name="item_id" value=id() />
                                    <input type="hidden" name="content_hash" value=i.content_hash.clone() />
                                    <p class="note">{format!(
                                        "You approve exactly revision {revision} as shown on this page (content hash {short}…). If it changes before you submit, the approval is refused."
                                    )}</p>
                                    {i.check.clone().map(|r| view! { <WhatItBreaks r /> })}
                                    {confirm_fields(a.confirm, item_id, failed.as_ref())}
                                    <button type="submit" disabled=a.confirm == Confirmation::Provider>
                                        {format!("Approve revision {revision}")}
                                    </button>
                                </ActionForm>
                            </section>
                        }.into_any()
                    } else {
                        a.approve_refusal.clone().map(|why| view! {
                            <p class="note" data-testid="approve-refusal">{why}</p>
                        }).into_any()
                    }}
                    {a.reject.then(|| view! {
                        <section class="card" data-testid="reject-box">
                            <h3>"Reject"</h3>
                            <ActionForm action=forms.reject attr:class="stack" attr:data-testid="reject-form">
                                <input type="hidden" name="item_id" value=id() />
                                <label>"Reason for rejecting " <textarea name="reason" rows="3" required></textarea></label>
                                <small class="note">"The author is told, with your reason; a rejected item is closed."</small>
                                <button type="submit" class="danger">"Reject"</button>
                            </ActionForm>
                        </section>
                    })}
                </div>
                {a.withdraw.then(|| view! {
                    <ActionForm action=forms.withdraw attr:data-testid="withdraw-form">
                        <input type="hidden" name="item_id" value=id() />
                        <button type="submit" class="danger">"Withdraw this proposal"</button>
                    </ActionForm>
                })}
            </section>
        }
    })
}

/// The subject moved past the item's base since it was proposed: say so
/// before anyone approves a change that apply would send back to review.
#[component]
fn BaseMoved(base: Base, seen: SubjectSeen) -> impl IntoView {
    let was = match base.version {
        Some(v) => format!("version {v}"),
        None => "no version".to_string(),
    };
    let now = match seen.latest {
        Some(v) => format!("is at version {v}"),
        None => "has no versions".to_string(),
    };
    view! {
        <p class="warning" role="alert" data-testid="base-moved">
            {format!(
                "The subject has moved: this item was made against {was}, and the registry {now} (read {}). Applying it would send it back to review as a new revision; its author can edit it against the new version.",
                stamp_ago(seen.read_at)
            )}
        </p>
    }
}

/// What confirms an approval: the approver's password (and code), or a
/// fresh sign-in at the identity provider for those who sign in there.
/// `failed` is the last approval's error: one about the password or the
/// code is shown at its field.
fn confirm_fields(confirm: Confirmation, item_id: i64, failed: Option<&AppError>) -> AnyView {
    let reauth = format!("/login/sso/reauth?next=/review/{item_id}");
    match confirm {
        Confirmation::Password => {
            let password = failed.and_then(|e| e.at_field(ConfirmField::Password)).map(str::to_owned);
            let code = failed.and_then(|e| e.at_field(ConfirmField::Code)).map(str::to_owned);
            view! {
                <label>
                    "Confirm with your password"
                    <input
                        type="password"
                        name="password"
                        required
                        autocomplete="current-password"
                        aria-invalid=password.is_some().then_some("true")
                        aria-describedby=password.is_some().then_some("approve-password-error")
                        autofocus=password.is_some()
                    />
                    {password.map(|m| view! {
                        <span class="field-error" id="approve-password-error" role="alert" data-testid="password-error">{m}</span>
                    })}
                </label>
                <label>
                    "Code from your authenticator app (if you set up a second factor)"
                    <input
                        name="totp"
                        inputmode="numeric"
                        autocomplete="one-time-code"
                        aria-invalid=code.is_some().then_some("true")
                        aria-describedby=code.is_some().then_some("approve-code-error")
                        autofocus=code.is_some()
                    />
                    {code.map(|m| view! {
                        <span class="field-error" id="approve-code-error" role="alert" data-testid="code-error">{m}</span>
                    })}
                </label>
            }
            .into_any()
        }
        Confirmation::Provider => view! {
            <p class="note" data-testid="confirm-at-provider">
                "You sign in through your identity provider: confirm there first, then approve within five minutes. "
                <a href=reauth rel="external" data-testid="confirm-at-provider-link">"Confirm at the provider"</a>
            </p>
            <input type="hidden" name="password" value="" />
        }
        .into_any(),
        Confirmation::ProviderFresh => view! {
            <p class="note" data-testid="confirmed-at-provider">
                "Confirmed at your identity provider: approve within five minutes."
            </p>
            <input type="hidden" name="password" value="" />
        }
        .into_any(),
    }
}

/// What applying does, in the words of what it changes.
fn apply_note(kind: Kind) -> &'static str {
    match kind {
        Kind::ConnectorDraft => {
            "Sends this config to Kafka Connect, after checking that the connector's running config is still the one this revision was made against."
        }
        Kind::ConnectorRestart => {
            "Restarts what has failed of the connector (itself or its tasks) on Kafka Connect."
        }
        _ => {
            "Registers this revision in the cluster's Schema Registry, after checking that the subject's latest version is still the base."
        }
    }
}

/// The revision's checks: a schema item's compatibility check, a
/// connector draft's validation (a restart changes no config).
#[component]
fn CheckSection(i: ReviewItem) -> impl IntoView {
    let body = match (i.summary.kind, i.connector_check, i.check) {
        (_, Some(c), _) => view! { <Validated c /> }.into_any(),
        (Kind::ConnectorRestart, None, _) => view! {
            <p class="note">"A restart changes no config: there is nothing to validate."</p>
        }
        .into_any(),
        (Kind::ConnectorDraft, None, _) => {
            view! { <p class="note">"This revision has not been validated."</p> }.into_any()
        }
        (_, None, Some(r)) => {
            let link = format!("/schema-checks/{}", r.id);
            view! {
                <section class="card" data-testid="item-check">
                    <p>
                        <span class=verdict_class(r.verdict) data-testid="verdict">{r.verdict.as_str()}</span>
                        " " <span data-testid="summary">{r.summary.clone()}</span>
                    </p>
                    <p class="note">
                        {format!("Checked {} in {} ms · ", stamp_ago(r.submitted_at), r.elapsed_ms)}
                        <a href=link>"The full report →"</a>
                    </p>
                    <NotifyOwners r=r.clone() />
                    <CheckFindings r nested=true />
                </section>
            }
            .into_any()
        }
        (_, None, None) => {
            view! { <p class="note">"This revision has not been checked yet."</p> }.into_any()
        }
    };
    view! {
        <h2>"Checks"</h2>
        {body}
    }
}

#[component]
fn ApprovalsSection(i: ReviewItem) -> impl IntoView {
    let required = i.summary.required;
    let eligible = i.eligible_approvers;
    let short_of = eligible < usize::try_from(required).unwrap_or(0);
    let approvals: Vec<ApprovalView> = i.approvals;
    view! {
        <h2>"Approvals"</h2>
        <section class="card" data-testid="approvals">
            <p>{format!(
                "{} of {} required approvals of revision {}.",
                i.summary.approval_count, required, i.summary.revision
            )}</p>
            {if approvals.is_empty() {
                view! { <p class="note">"Nobody has approved it yet."</p> }.into_any()
            } else {
                view! {
                    <table class="list">
                        <thead><tr><th>"Approver"</th><th>"Revision"</th><th>"Content hash"</th><th>"When"</th><th>"Counts"</th></tr></thead>
                        <tbody>
                            {approvals.into_iter().map(|a| {
                                let short: String = a.content_hash.chars().take(12).collect();
                                view! {
                                    <tr class:voided=!a.current>
                                        <td>{a.approver}</td>
                                        <td>{a.revision}</td>
                                        <td><code class="hash" title=a.content_hash.clone()>{short} "…"</code></td>
                                        <td>{stamp_ago(a.approved_at)}</td>
                                        <td>{if a.current {
                                            view! { <span class="badge state-ok">"counts"</span> }.into_any()
                                        } else {
                                            view! { <span class="badge" title="An edit or a moved base voided it">"voided"</span> }.into_any()
                                        }}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <h3>"Approvers"</h3>
            <p data-testid="approvers">
                {if i.approvers.is_empty() {
                    "No approvers are named for this domain.".to_string()
                } else {
                    format!(
                        "Named: {}. {} of them may approve (not the author, not an editor).",
                        i.approvers.join(", "),
                        eligible
                    )
                }}
            </p>
            {short_of.then(|| view! {
                <p class="warning" role="alert" data-testid="approvers-warning">{format!(
                    "Only {eligible} approver(s) may approve this item, but its domain requires {required}: it cannot be approved until an admin names more approvers under Settings → Review."
                )}</p>
            })}
            {(!i.editors.is_empty()).then(|| view! {
                <p class="note" data-testid="editors">{format!("Edited by {}; they may no longer approve it.", i.editors.join(", "))}</p>
            })}
        </section>
    }
}

#[component]
fn EditForm(i: ReviewItem, edit: ServerAction<EditReview>) -> impl IntoView {
    view! {
        <details class="card">
            <summary>"Edit the proposal"</summary>
            <ActionForm action=edit attr:class="stack wide" attr:data-testid="edit-form">
                <input type="hidden" name="item_id" value=i.summary.id.to_string() />
                <input type="hidden" name="loaded_revision" value=i.summary.revision.to_string() />
                <p class="note">"Saving makes a new revision: it is checked again, every approval is voided, and you may no longer approve it yourself."</p>
                <TypeSelect selected=i.content.schema_type />
                <label>"Schema " <textarea name="schema" rows="14" required>{i.content.schema.clone()}</textarea></label>
                <button type="submit">"Save a new revision"</button>
            </ActionForm>
        </details>
    }
}

#[component]
fn Comments(
    id: i64,
    comments: Vec<CommentView>,
    comment: ServerAction<CommentReview>,
) -> impl IntoView {
    view! {
        <h2>"Comments"</h2>
        <section class="card" data-testid="comments">
            {if comments.is_empty() {
                view! { <p class="note">"No comments yet."</p> }.into_any()
            } else {
                view! {
                    <ol class="comments">
                        {comments.into_iter().map(|c| view! {
                            <li>
                                <p class="note">{format!("{} · {}", c.author, stamp_ago(c.created_at))}</p>
                                <p class="body">{c.body}</p>
                            </li>
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
            <ActionForm action=comment attr:class="stack" attr:data-testid="comment-form">
                <input type="hidden" name="item_id" value=id.to_string() />
                <label>"Comment " <textarea name="body" rows="3" required></textarea></label>
                <button type="submit">"Add comment"</button>
            </ActionForm>
        </section>
    }
}
