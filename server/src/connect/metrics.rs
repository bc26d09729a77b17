//! Connect's part of `/metrics`: each worker's reachability and each
//! connector's and task's state, under the names Strimzi's and
//! Confluent's Connect JMX exporters use (`kafka_connect_connector_status`,
//! `kafka_connect_connector_task_status`, a 1 on the current status), so
//! their alert rules ("a task FAILED for 5 minutes") work unchanged.

use crate::connect::store;
use crate::platform::errors::Db;
use crate::platform::metrics::Scrape;
use crate::platform::ownership;
use sqlx::PgPool;
use std::collections::BTreeMap;

pub async fn collect(pool: &PgPool, scrape: &mut Scrape) -> Result<(), Db> {
    let up = scrape.gauges(
        "streamkeeper_connect_up",
        "1 when the latest status pass read the Connect worker, 0 when it could not",
    );
    for w in store::worker_metrics(pool).await? {
        if let Some(u) = w.up {
            up.set(vec![("connect_cluster", w.name)], f64::from(u8::from(u)));
        }
    }
    let connector = scrape.gauges(
        "kafka_connect_connector_status",
        "1 for the connector's current status, with its owner team",
    );
    let task = scrape.gauges(
        "kafka_connect_connector_task_status",
        "1 for the task's current status",
    );
    let rows = store::state_metrics(pool).await?;
    // Owners by the ownership rule, one read per Connect cluster.
    let mut named: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.task.is_none()) {
        named
            .entry(r.connect_id)
            .or_default()
            .push(r.connector.clone());
    }
    let mut owners = BTreeMap::new();
    for (connect, names) in named {
        owners.insert(connect, ownership::connectors(pool, connect, &names).await?);
    }
    for r in rows {
        let owner = owners
            .get(&r.connect_id)
            .and_then(|o| o.get(&r.connector))
            .and_then(|o| o.as_ref().map(|o| o.team.name.clone()));
        let mut l = vec![("connect_cluster", r.connect), ("connector", r.connector)];
        match r.task {
            None => {
                l.push(("status", r.state.to_lowercase()));
                l.push(("owner", owner.unwrap_or_default()));
                connector.set(l, 1.0);
            }
            Some(t) => {
                l.push(("task", t.to_string()));
                l.push(("status", r.state.to_lowercase()));
                task.set(l, 1.0);
            }
        }
    }
    Ok(())
}
