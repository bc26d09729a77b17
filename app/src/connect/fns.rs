//! Connect's server functions: Connect clusters, connectors, a connector.

use crate::connect::model::{ConnectClusterView, ConnectorDetail, ConnectorSummary};
use crate::error::AppError;
use leptos::prelude::*;
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
