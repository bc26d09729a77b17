//! The audit log's server functions.

use crate::audit::model::{AuditRow, RefusalTally};
use crate::error::AppError;
use leptos::prelude::*;
use streamkeeper::platform::page::Page;

#[server(prefix = "/fn", endpoint = "list_audit")]
pub async fn list_audit(
    actor: Option<String>,
    action: Option<String>,
    target: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<Page<AuditRow>, AppError> {
    use crate::audit::model::AuditFilter;
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let filter = AuditFilter {
        actor,
        action,
        target,
    };
    backend()?
        .audit
        .entries(&who, filter, sort, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "list_refusals")]
pub async fn list_refusals(
    actor: Option<String>,
    action: Option<String>,
    target: Option<String>,
    page: u32,
) -> Result<Page<RefusalTally>, AppError> {
    use crate::audit::model::AuditFilter;
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let filter = AuditFilter {
        actor,
        action,
        target,
    };
    backend()?
        .audit
        .refusals(&who, filter, PageRequest::new(Some(page), None))
        .await
}
