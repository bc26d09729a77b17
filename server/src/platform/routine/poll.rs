//! The runner's poller: every replica reads the stored schedules and
//! run-now requests, and writes its heartbeat, every [`POLL`].

use super::{POLL, Shared, Stored, store};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Reads the stored schedules and requests every [`POLL`] and wakes the
/// routines when they changed.
pub(super) async fn poll(shared: Arc<Shared>, cancel: CancellationToken) {
    let mut first = true;
    loop {
        match store::stored(&shared.pool).await {
            Ok((schedules, requests)) => {
                let fresh = Stored {
                    schedules,
                    requests,
                };
                let changed = match shared.stored.write() {
                    Ok(mut s) if *s != fresh => {
                        *s = fresh;
                        true
                    }
                    _ => false,
                };
                if changed {
                    shared.wake.send_modify(|n| *n += 1);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the routine schedules"),
        }
        if let Err(e) = shared.shares.poll(&shared.pool).await {
            tracing::warn!(error = %e, "could not read the replicas' shares");
        }
        // The routines wait for the first read (a paused routine stays
        // paused across a restart); one that failed lets them start on
        // their own intervals.
        if std::mem::take(&mut first) {
            shared.wake.send_modify(|n| *n += 1);
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
    }
}
