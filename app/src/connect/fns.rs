//! Connect's server functions: Connect clusters, connectors, a connector,
//! and the draft form's check, import and submit.

// The draft form's submit takes one argument per field, as ActionForm
// sends them; the generated client function cannot carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::connect::model::{ConnectClusterView, ConnectorDetail, ConnectorSummary, DraftCheck};
use crate::error::AppError;
use leptos::prelude::*;
use std::collections::BTreeMap;
use streamkeeper::platform::page::Page;

#[server(prefix = "/fn", endpoint = "list_connect_clusters")]
pub async fn list_connect_clusters(id: i64) -> Result<Vec<ConnectClusterView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.connect.connect_clusters(&who, id).await
}

#[server(prefix = "/fn", endpoint = "list_connectors")]
pub async fn list_connectors(
    id: i64,
    connect: String,
    q: Option<String>,
    page: u32,
) -> Result<Page<ConnectorSummary>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .connect
        .connectors(
            &who,
            id,
            &connect,
            q.as_deref(),
            PageRequest::new(Some(page), None),
        )
        .await
}

#[server(prefix = "/fn", endpoint = "get_connector")]
pub async fn get_connector(
    id: i64,
    connect: String,
    name: String,
) -> Result<ConnectorDetail, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?
        .connect
        .connector(&who, id, &connect, &name)
        .await
}

/// A draft checked on a Connect cluster; `config` is the JSON config (what
/// the draft page carries in its address, secrets masked).
#[server(prefix = "/fn", endpoint = "check_connector_draft")]
pub async fn check_connector_draft(
    id: i64,
    connect: String,
    config: String,
) -> Result<DraftCheck, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    let config: serde_json::Value = serde_json::from_str(&config)
        .map_err(|e| AppError::Invalid(format!("The config is not JSON: {e}")))?;
    backend()?
        .connect
        .check_draft(&who, id, &connect, config)
        .await
}

/// "Change this connector": its running config as a checked draft.
#[server(prefix = "/fn", endpoint = "import_connector_draft")]
pub async fn import_connector_draft(
    id: i64,
    connect: String,
    connector: String,
) -> Result<DraftCheck, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?
        .connect
        .import_draft(&who, id, &connect, &connector)
        .await
}

/// The draft form's one submit: the template's `values` (or a `pasted`
/// JSON config), with a suggested `fix` applied when its button was
/// pressed, checked; then, when `propose` was pressed and nothing is an
/// error, proposed for review (the item's page), else back to the draft
/// page with the findings. Always a redirect, so it works without
/// JavaScript. Inline secrets travel no further than this request: the
/// draft page gets the config masked.
#[server(prefix = "/fn", endpoint = "draft_connector")]
pub async fn draft_connector(
    cluster_id: i64,
    connect: String,
    plugin: Option<String>,
    values: Option<BTreeMap<String, String>>,
    extra: Option<String>,
    pasted: Option<String>,
    fix: Option<String>,
    propose: Option<String>,
) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::ui::params::href_with;
    use streamkeeper::connect::{Fix, parse_draft, secret};
    let who = principal().await?;
    let mut config = match pasted.filter(|p| !p.trim().is_empty()) {
        Some(text) => {
            parse_draft(&text)
                .map_err(|e| AppError::Invalid(e.to_string()))?
                .0
        }
        None => form_config(
            plugin.as_deref(),
            &values.unwrap_or_default(),
            extra.as_deref(),
        )?,
    };
    if let Some(fix) = fix.filter(|f| !f.is_empty()) {
        let fix: Fix = serde_json::from_str(&fix)
            .map_err(|e| AppError::Invalid(format!("That fix is not one: {e}")))?;
        config = fix.apply(&config);
    }
    let checked = backend()?
        .connect
        .check_draft(&who, cluster_id, &connect, config.to_json())
        .await?;
    let proposing = propose.is_some();
    let to = if proposing && checked.may_propose {
        let id = backend()?
            .reviews
            .propose_connector(
                &who,
                &client_addr().await,
                cluster_id,
                &connect,
                config.to_json(),
            )
            .await?;
        format!("/review/{id}")
    } else {
        let inline: Vec<&str> = config
            .iter()
            .filter(|(k, v)| {
                secret::is_inline_secret(k, v, &Default::default()) && !secret::is_mask(v)
            })
            .map(|(k, _)| k)
            .collect();
        let masked = serde_json::to_string(&checked.config)
            .map_err(|e| AppError::Internal(e.to_string()))?;
        href_with(
            &format!("/clusters/{cluster_id}/connect/draft"),
            &[
                ("name", Some(connect.clone())),
                ("plugin", Some(checked.plugin.as_str().to_owned())),
                ("config", Some(masked)),
                ("inline", (!inline.is_empty()).then(|| inline.join(","))),
                ("refused", proposing.then(|| "errors".to_owned())),
            ],
        )
    };
    leptos_axum::redirect(&to);
    Ok(to)
}

/// The config a template's form builds: its `values` over the `extra`
/// properties it does not ask (those an imported or pasted config carried).
#[cfg(feature = "ssr")]
fn form_config(
    plugin: Option<&str>,
    values: &BTreeMap<String, String>,
    extra: Option<&str>,
) -> Result<streamkeeper::connect::Config, AppError> {
    use streamkeeper::connect::{Config, Plugin, template::template};
    let plugin = plugin
        .and_then(Plugin::parse)
        .ok_or_else(|| AppError::Invalid("Choose a connector template.".into()))?;
    let extra = match extra.map(str::trim).filter(|e| !e.is_empty()) {
        Some(e) => Config::from_json(e).map_err(|e| AppError::Invalid(e.to_string()))?,
        None => Config::new(),
    };
    template(plugin)
        .draft_form(values, &extra)
        .map_err(|e| AppError::Invalid(e.to_string()))
}

/// The draft form checked as it is typed (its island): the config its
/// submit would build, checked the same way (the rules and the worker's
/// validate), kept nowhere, and drawn as the form shows it. A secret typed
/// inline comes back masked. What stops the check (a port in words, a
/// worker that is down) is drawn in the check's place: the island shows
/// what it is sent and decodes no error (see `connect::draft`).
#[server(prefix = "/fn", endpoint = "check_connector_form")]
pub async fn check_connector_form(
    cluster_id: i64,
    connect: String,
    plugin: Option<String>,
    values: Option<BTreeMap<String, String>>,
    extra: Option<String>,
) -> Result<crate::connect::model::LiveCheck, AppError> {
    use crate::connect::widgets::{live_check, live_error};
    use crate::port::{backend, principal};
    let checked = async {
        let who = principal().await?;
        let config = form_config(
            plugin.as_deref(),
            &values.unwrap_or_default(),
            extra.as_deref(),
        )?;
        backend()?
            .connect
            .check_draft(&who, cluster_id, &connect, config.to_json())
            .await
    };
    Ok(checked.await.map_or_else(live_error, live_check))
}
