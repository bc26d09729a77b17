//! `streamkeeper audit`: verifying the keyed hash chain from the command line.

use clap::Subcommand;
use sqlx::PgPool;
use std::process::ExitCode;
use streamkeeper::audit::{ChainBreak, GENESIS, Head};

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the whole hash chain and name the first broken entry.
    Verify {
        /// A head printed earlier by `audit head` (or logged by `serve`):
        /// the log must still hold that entry with that hash, so a cut-off
        /// tail is caught.
        #[arg(long, value_name = "ID:HASH")]
        expect_head: Option<streamkeeper::audit::Head>,
    },
    /// Print the newest entry's id and hash, to keep outside the database.
    Head,
}

pub async fn audit(pool: &PgPool, cmd: AuditCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AuditCommand::Head => {
            // An empty log's head is entry 0, the genesis hash.
            let head = crate::audit::store::head(pool).await?.unwrap_or(Head {
                id: 0,
                hash: GENESIS,
            });
            println!("{head}");
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Verify { expect_head } => {
            match crate::audit::store::verify(pool, expect_head).await {
                Ok(v) => {
                    let keyed = match v.keyed_from {
                    Some(1) => " (all keyed)".to_string(),
                    Some(id) => format!(
                        " (keyed from entry {id} on; the ones before were written before the audit key was set)"
                    ),
                    None => " (none keyed: set STREAMKEEPER_AUDIT_KEY so that a rewrite needs more than database access)".to_string(),
                };
                    let entries = if v.entries == 1 {
                        "1 entry".to_string()
                    } else {
                        format!("{} entries", v.entries)
                    };
                    println!("audit log intact: {entries} verified{keyed}");
                    Ok(ExitCode::SUCCESS)
                }
                // Not a break: what it cannot check without the key is unknown.
                Err(crate::audit::store::VerifyError::Broken(b @ ChainBreak::KeyNeeded { .. })) => {
                    Err(anyhow::anyhow!("cannot verify the audit log: {b}"))
                }
                Err(crate::audit::store::VerifyError::Broken(b)) => {
                    println!("audit log BROKEN at entry {}: {b}", b.id());
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}
