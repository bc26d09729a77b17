//! Flags' part of `/metrics`: live flags (open or acknowledged) and
//! webhook deliveries, so an alert can fire on "flags nobody owns" or on
//! deliveries that keep failing.

use crate::flags::store;
use crate::platform::errors::Db;
use crate::platform::metrics::Scrape;
use sqlx::PgPool;

pub async fn collect(pool: &PgPool, scrape: &mut Scrape) -> Result<(), Db> {
    let live = scrape.gauges(
        "streamkeeper_flags_live",
        "Live flags (open or acknowledged) by cluster, kind and state; routed=false: no team receives them",
    );
    for r in store::live_counts(pool).await? {
        live.set(
            vec![
                ("cluster_name", r.cluster),
                ("kind", r.kind),
                ("state", r.state),
                ("routed", r.routed.to_string()),
            ],
            r.n as f64,
        );
    }
    let deliveries = scrape.gauges(
        "streamkeeper_webhook_deliveries",
        "Webhook deliveries (flags and review notices) by state: pending, delivered, failed",
    );
    for r in store::delivery_counts(pool).await? {
        deliveries.set(vec![("state", r.state)], r.n as f64);
    }
    Ok(())
}
