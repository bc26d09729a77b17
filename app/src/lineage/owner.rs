//! The owner card of the graph page: the centre node's owner with why
//! ("payments (by stream orders)", "payments (set by pat on …)"), and a
//! plain form that sets it (works with JavaScript off: a post answered by
//! a redirect back here, with the new owner or the refusal). A topic or a
//! job derived from a consumer group or connector says where its owner
//! comes from instead: it is set there, not on the node.

use crate::lineage::fns::SetLineageOwner;
use crate::lineage::model::NodeOwnerView;
use crate::ui::notes::ActionNote;
use leptos::prelude::*;

#[component]
pub fn OwnerCard(
    node: String,
    o: NodeOwnerView,
    give: ServerAction<SetLineageOwner>,
) -> impl IntoView {
    let shown = o.owner.clone().unwrap_or_else(|| "no owner".to_string());
    let form = match (&o.inherited, o.teams.is_empty() && !o.clearable) {
        (Some(why), _) => view! {
            <p class="note" data-testid="owner-inherited">{format!("Not set here: {why}.")}</p>
        }
        .into_any(),
        (None, true) => view! {
            <p class="note" data-testid="owner-locked">
                "Admins, and members of its owner team (or, while it has none, of the team it is given to), set its owner."
            </p>
        }
        .into_any(),
        (None, false) => view! { <OwnerForm node o give /> }.into_any(),
    };
    view! {
        <section class="card" data-testid="node-owner">
            <h2>"Owner"</h2>
            <p data-testid="owner-shown">{shown}</p>
            <div data-testid="owner-notes">
                <ActionNote value=give.value() />
            </div>
            {form}
        </section>
    }
}

/// The team to give it to (the asker's choices, the current one
/// selected), or none to clear the owner set on it.
#[component]
fn OwnerForm(node: String, o: NodeOwnerView, give: ServerAction<SetLineageOwner>) -> impl IntoView {
    let options = o
        .teams
        .into_iter()
        .map(|t| {
            let selected = o.team.as_deref() == Some(t.as_str());
            let label = t.clone();
            view! { <option value=t selected=selected>{label}</option> }
        })
        .collect_view();
    let clear = o.clearable.then(|| {
        view! { <option value="">"no owner (clear the one set here)"</option> }
    });
    view! {
        <ActionForm action=give attr:class="filters" attr:data-testid="owner-form">
            <input type="hidden" name="node" value=node />
            <label>"Give it to " <select name="team">{options}{clear}</select></label>
            <button type="submit">"Set owner"</button>
        </ActionForm>
    }
}
