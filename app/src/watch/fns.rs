//! Watch's server functions: clusters and their groups' lag, the streams
//! catalog, and adding and testing a cluster.

// The catalog form's server function takes one argument per field, as
// ActionForm sends them; the generated client function cannot carry an
// allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::error::AppError;
use crate::watch::model::{
    ClusterDetail, ClusterView, ConnectionReport, GroupLagView, GroupSummary, LagSeries,
    PartitionRef, RemovedCluster, StreamDetail, StreamSummary,
};
use leptos::prelude::*;
use streamkeeper::platform::page::Page;

#[server(prefix = "/fn", endpoint = "list_clusters")]
pub async fn list_clusters() -> Result<Vec<ClusterView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.watch.clusters(&who).await
}

#[server(prefix = "/fn", endpoint = "get_cluster")]
pub async fn get_cluster(id: i64) -> Result<ClusterDetail, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.watch.cluster(&who, id).await
}

#[server(prefix = "/fn", endpoint = "list_groups")]
pub async fn list_groups(
    id: i64,
    q: Option<String>,
    status: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<Page<GroupSummary>, AppError> {
    use crate::port::{backend, principal};
    use crate::watch::model::GroupFilter;
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let filter = GroupFilter { q, status, sort };
    backend()?
        .watch
        .groups(&who, id, filter, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_group_lag")]
pub async fn get_group_lag(id: i64, group: String) -> Result<GroupLagView, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.watch.group_lag(&who, id, &group).await
}

#[server(prefix = "/fn", endpoint = "get_lag_series")]
pub async fn get_lag_series(
    id: i64,
    group: String,
    hours: i64,
    partition: Option<PartitionRef>,
) -> Result<LagSeries, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    let hours = streamkeeper::watch::series::window_hours(hours);
    let to = chrono::Utc::now();
    let points = backend()?
        .watch
        .lag_series(&who, id, &group, hours, partition.as_ref())
        .await?;
    Ok(LagSeries {
        to,
        hours,
        points,
        partition,
    })
}

#[server(prefix = "/fn", endpoint = "list_streams")]
pub async fn list_streams(
    q: Option<String>,
    owner: Option<String>,
    status: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<Page<StreamSummary>, AppError> {
    use crate::port::{backend, principal};
    use crate::watch::model::StreamFilter;
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let filter = StreamFilter {
        q,
        owner,
        status,
        sort,
    };
    backend()?
        .watch
        .streams(&who, filter, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_stream")]
pub async fn get_stream(id: i64, topic: String, hours: i64) -> Result<StreamDetail, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.watch.stream(&who, id, &topic, hours).await
}

/// Parses an optional whole number from a form field ("" is none).
#[cfg(feature = "ssr")]
fn number<T: std::str::FromStr>(what: &str, v: Option<String>) -> Result<Option<T>, AppError> {
    match v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| AppError::Invalid(format!("{what} must be a whole number, not '{v}'."))),
    }
}

/// Parses an optional compatibility level from a form field ("" is none).
#[cfg(feature = "ssr")]
fn level(v: Option<String>) -> Result<Option<streamkeeper::schemas::Mode>, AppError> {
    match v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(m) => streamkeeper::schemas::Mode::parse(m)
            .map(Some)
            .ok_or_else(|| AppError::Invalid(format!("Unknown compatibility level {m:?}."))),
    }
}

#[server(prefix = "/fn", endpoint = "describe_stream")]
pub async fn describe_stream(
    cluster_id: i64,
    topic: String,
    owner_team: Option<String>,
    domain: Option<String>,
    tier: Option<String>,
    freshness_budget_s: Option<String>,
    expected_interval_s: Option<String>,
    description: Option<String>,
    compatibility: Option<String>,
) -> Result<crate::watch::model::TopicView, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::watch::model::StreamSpec;
    let who = principal().await?;
    let spec = StreamSpec {
        owner_team: owner_team
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty()),
        domain: domain.unwrap_or_default(),
        tier: number("The tier", tier)?,
        freshness_budget_s: number("The freshness budget", freshness_budget_s)?,
        expected_interval_s: number("The expected interval", expected_interval_s)?,
        description: description.unwrap_or_default(),
        compatibility: level(compatibility)?,
    };
    crate::ui::flash::noted(
        backend()?
            .watch
            .describe_stream(&who, &client_addr().await, cluster_id, &topic, spec)
            .await,
        |t| format!("Saved {}.", t.name),
    )
    .await
}

/// A cluster as the settings forms send it. The forms are for clusters
/// reached over TLS: a local cluster that needs clear-text credentials is
/// the API's or the CLI's.
#[cfg(feature = "ssr")]
fn from_form(
    name: String,
    bootstrap: String,
    security_protocol: String,
    sasl_mechanism: Option<String>,
    username_ref: Option<String>,
    password_ref: Option<String>,
    ca_ref: Option<String>,
    interval_s: i32,
) -> crate::watch::model::NewCluster {
    crate::watch::model::NewCluster {
        name,
        bootstrap,
        security_protocol,
        sasl_mechanism,
        username_ref,
        password_ref,
        ca_ref,
        // The forms leave the client certificate as it is (a blank keeps
        // the stored one): mutual TLS is set by the API, the CLI or the
        // clusters file.
        client_cert_ref: None,
        client_key_ref: None,
        insecure_credentials: false,
        interval_s,
    }
}

#[server(prefix = "/fn", endpoint = "add_cluster")]
pub async fn add_cluster(
    name: String,
    bootstrap: String,
    security_protocol: String,
    sasl_mechanism: Option<String>,
    username_ref: Option<String>,
    password_ref: Option<String>,
    ca_ref: Option<String>,
    interval_s: i32,
    add_anyway: Option<String>,
) -> Result<ClusterView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let new = from_form(
        name,
        bootstrap,
        security_protocol,
        sasl_mechanism,
        username_ref,
        password_ref,
        ca_ref,
        interval_s,
    );
    // The form tests the connection first and adds a cluster it cannot
    // reach only when asked to (a cluster still being set up, a firewall
    // opened later); the REST API adds as told, for scripts.
    if add_anyway.as_deref() != Some("yes") {
        let report = backend()?.watch.test_connection(&who, new.clone()).await?;
        if !report.reachable {
            let why = report
                .problems
                .first()
                .cloned()
                .unwrap_or_else(|| "Nothing answered.".into());
            return Err(AppError::Conflict(format!(
                "The connection test failed, so {} was not added: {} Fix the settings, or tick “Add it even though the test fails” to watch it anyway (it shows as unreachable until it answers).",
                new.name,
                streamkeeper::platform::words::sentence(&why)
            )));
        }
    }
    crate::ui::flash::noted(
        backend()?
            .watch
            .create_cluster(&who, &client_addr().await, new)
            .await,
        |c| format!("Watching {}; the first pass runs within seconds.", c.name),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "test_cluster")]
pub async fn test_cluster(
    bootstrap: String,
    security_protocol: String,
    sasl_mechanism: Option<String>,
    username_ref: Option<String>,
    password_ref: Option<String>,
    ca_ref: Option<String>,
) -> Result<ConnectionReport, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    let new = from_form(
        "connection-test".into(),
        bootstrap,
        security_protocol,
        sasl_mechanism,
        username_ref,
        password_ref,
        ca_ref,
        15,
    );
    backend()?.watch.test_connection(&who, new).await
}

#[server(prefix = "/fn", endpoint = "update_cluster")]
pub async fn update_cluster(
    id: i64,
    bootstrap: String,
    security_protocol: String,
    sasl_mechanism: Option<String>,
    username_ref: Option<String>,
    password_ref: Option<String>,
    ca_ref: Option<String>,
    drop_credentials: Option<String>,
    interval_s: i32,
) -> Result<ClusterView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    // The page does not show the references: both left blank keeps them,
    // unless the admin asked to drop them.
    let keep = blank(&username_ref) && blank(&password_ref) && drop_credentials.is_none();
    // A cluster keeps its name: the server takes it from the cluster.
    let new = from_form(
        String::new(),
        bootstrap,
        security_protocol,
        sasl_mechanism,
        username_ref,
        password_ref,
        ca_ref,
        interval_s,
    );
    crate::ui::flash::noted(
        backend()?
            .watch
            .update_cluster(&who, &client_addr().await, id, new, keep)
            .await,
        |c| format!("Saved {}; the next pass uses it.", c.name),
    )
    .await
}

/// Pauses a cluster (`paused` is `yes`) or resumes it.
#[server(prefix = "/fn", endpoint = "pause_cluster")]
pub async fn pause_cluster(id: i64, paused: String) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let pause = paused == "yes";
    let said = backend()?
        .watch
        .pause_cluster(&who, &client_addr().await, id, pause)
        .await
        .map(|c| match c.paused {
            Some(_) => format!(
                "Paused {}: nothing is read from it until it is resumed.",
                c.name
            ),
            None => format!(
                "Resumed {}: its next pass is within about ten seconds.",
                c.name
            ),
        });
    crate::ui::flash::noted(said, String::clone).await
}

/// Removes a cluster once its name is typed back, as a guard against the
/// wrong row: it stops being watched, its history kept until it is purged.
#[server(prefix = "/fn", endpoint = "remove_cluster")]
pub async fn remove_cluster(id: i64, confirm: String) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let watch = &backend()?.watch;
    let name = watch.cluster(&who, id).await?.cluster.name;
    if confirm.trim() != name {
        return Err(AppError::Invalid(format!(
            "Type the cluster's name, {name}, to remove it."
        )));
    }
    let said = watch
        .remove_cluster(&who, &client_addr().await, id)
        .await
        .map(|r| {
            format!(
                "Stopped watching {}. {}",
                r.name,
                crate::watch::model::kept_until(r.purged_on)
            )
        });
    crate::ui::flash::noted(said, String::clone).await
}

/// The removed clusters whose history is still kept (admin).
#[server(prefix = "/fn", endpoint = "list_removed_clusters")]
pub async fn list_removed_clusters() -> Result<Vec<RemovedCluster>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.watch.removed_clusters(&who).await
}

/// Watches a removed cluster again, with its history.
#[server(prefix = "/fn", endpoint = "restore_cluster")]
pub async fn restore_cluster(id: i64) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let said = backend()?
        .watch
        .restore_cluster(&who, &client_addr().await, id)
        .await
        .map(|c| {
            format!(
                "Restored {} with its history: watched again from its next pass.",
                c.name
            )
        });
    crate::ui::flash::noted(said, String::clone).await
}

#[server(prefix = "/fn", endpoint = "get_domain_slo")]
pub async fn get_domain_slo(domain: String) -> Result<crate::watch::model::DomainSlo, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.slo.domain_slo(&who, &domain).await
}

#[server(prefix = "/fn", endpoint = "get_slos")]
pub async fn get_slos() -> Result<Vec<crate::watch::model::SloStream>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.slo.slos(&who).await
}
