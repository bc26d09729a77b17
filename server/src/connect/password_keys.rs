//! The keys each watched connector's plugin types PASSWORD, for the status
//! pass to mask: a key named like a secret is masked anyway, but a plugin
//! may type PASSWORD a key whose name says nothing (`azblob.account.key`).
//! The known plugins' lists count at once; for any class, the Connect
//! cluster's own validate answer (`PUT /connector-plugins/{class}/config/
//! validate`, each key's `definition.type`) is asked once a day, with the
//! config of one of its connectors (the worker holds it already). When a
//! class's keys are learned, the configs stored for it are masked again,
//! those of gone connectors too, so nothing stored before stays in clear.

use super::store;
use crate::clients::connect::{ConnectClient, Expanded};
use crate::platform::db::{begin, commit};
use crate::platform::errors::Db;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use streamkeeper::connect::canonical::config_hash;
use streamkeeper::connect::config::CLASS;
use streamkeeper::connect::{Config, secret};

/// How long a class's learned keys are trusted before the worker is asked
/// again (a plugin upgrade may type more keys PASSWORD).
const RELEARN_AFTER_HOURS: i64 = 24;

/// The PASSWORD-typed keys by class for the connectors listed, learning
/// those not known (or known for over a day) from the worker. A worker
/// that cannot answer leaves the class as it was known: masked by name and
/// by the known lists this pass, asked again at the next.
pub async fn marked_by_class(
    pool: &PgPool,
    client: &ConnectClient,
    connect_id: i64,
    listing: &BTreeMap<String, Expanded>,
) -> Result<HashMap<String, BTreeSet<String>>, Db> {
    let now = chrono::Utc::now();
    let mut learned: HashMap<String, (Vec<String>, bool)> = store::password_keys(pool, connect_id)
        .await?
        .into_iter()
        .map(|(class, keys, at)| (class, (keys, (now - at).num_hours() < RELEARN_AFTER_HOURS)))
        .collect();
    // One config per class to ask with.
    let mut samples: BTreeMap<&str, &BTreeMap<String, String>> = BTreeMap::new();
    for entry in listing.values() {
        if let Some(info) = &entry.info
            && let Some(class) = info.config.0.get(CLASS)
        {
            samples.entry(class.as_str()).or_insert(&info.config.0);
        }
    }
    for (class, config) in samples {
        if learned.get(class).is_some_and(|(_, fresh)| *fresh) {
            continue;
        }
        match client.validate(class, config).await {
            Ok(answer) => {
                let keys: Vec<String> = answer.password_keys().into_iter().collect();
                remask(pool, connect_id, class, &keys).await?;
                learned.insert(class.to_owned(), (keys, true));
            }
            Err(e) => {
                tracing::warn!(class, error = %e.for_viewer(false), "the worker did not say which keys are secrets");
            }
        }
    }
    Ok(learned
        .into_iter()
        .map(|(class, (keys, _))| {
            let marked = secret::marked_keys(Some(&class), &keys);
            (class, marked)
        })
        .collect())
}

/// Records a class's keys and masks again every config stored for it, in
/// one transaction.
async fn remask(pool: &PgPool, connect_id: i64, class: &str, keys: &[String]) -> Result<(), Db> {
    let marked = secret::marked_keys(Some(class), keys);
    let mut tx = begin(pool).await?;
    store::learn_password_keys(&mut tx, connect_id, class, keys).await?;
    for (id, stored) in store::configs_of_class(&mut tx, connect_id, class).await? {
        let Ok(config) = Config::from_value(&stored) else {
            continue;
        };
        let masked = secret::mask(&config, &marked);
        if masked != config {
            let hash = config_hash(&masked, &marked);
            store::set_config(&mut tx, id, &masked.to_json(), &hash).await?;
        }
    }
    commit(tx).await?;
    Ok(())
}
