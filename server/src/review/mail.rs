//! Approvers and authors told by email (`streamkeeper::review::mail` says
//! what a message holds): each person of a transition who chose to hear
//! of it, with an address, gets one message, queued in the transition's
//! own transaction on the flags' deliveries and sent by their routine
//! with retries (`flags/routine.rs`). Nothing waits on the mail server.

use super::ReviewService;
use super::store::{self as items, ItemRow};
use crate::clients::smtp::Email;
use streamkeeper::review::mail::{Interest, ItemRef, MailEvent, render};
use streamkeeper::schemas::Verdict;
use streamkeeper_app::error::AppError;
use url::Url;

/// Where the links in messages point, and the host of their ids.
#[derive(Clone, Debug)]
pub struct MailLinks {
    public_url: String,
    host: String,
}

impl MailLinks {
    pub fn new(public_url: &Url) -> Self {
        MailLinks {
            public_url: public_url.as_str().to_owned(),
            host: public_url.host_str().unwrap_or("streamkeeper").to_owned(),
        }
    }
}

pub(super) fn item_ref(item: &ItemRow) -> ItemRef<'_> {
    ItemRef {
        id: item.id,
        title: &item.title,
        revision: item.revision,
    }
}

impl ReviewService {
    /// Queues one message to each of `users` who wants this kind, in the
    /// caller's transaction. Without a mail server, nothing.
    pub(super) async fn mail(
        &self,
        conn: &mut sqlx::PgConnection,
        users: &[i64],
        item: ItemRef<'_>,
        event: &MailEvent<'_>,
    ) -> Result<(), AppError> {
        let Some(links) = &self.mail else {
            return Ok(());
        };
        let waiting = event.interest() == Interest::Waiting;
        let transition = format!("mail:{}", event.name());
        let to = crate::accounts::store::mail::recipients(conn, users, waiting).await?;
        for (_, address) in to {
            let m = render(item, event, &links.public_url, &links.host, rand::random());
            let email = Email {
                to: address,
                subject: m.subject,
                text: m.text,
                html: m.html,
                message_id: m.message_id,
                in_reply_to: m.in_reply_to,
            };
            let body = serde_json::to_value(&email)
                .map_err(|e| crate::platform::errors::internal("an email", e))?;
            crate::flags::store::enqueue_mail(conn, item.id, &transition, &email.to, &body).await?;
        }
        Ok(())
    }

    /// Queues "waits for your review" to the item's approvers: its title
    /// as it stands in this transaction, the check's verdict and the
    /// consumer groups it breaks.
    pub(super) async fn mail_approvers(
        &self,
        conn: &mut sqlx::PgConnection,
        id: i64,
        verdict: &str,
        check_id: Option<i64>,
        approvers: &[i64],
        by: &str,
    ) -> Result<(), AppError> {
        if self.mail.is_none() {
            return Ok(());
        }
        let breaking: Option<Vec<String>> = match check_id {
            Some(c) => self.schemas.item_check(c).await?.map(|r| {
                r.consumers
                    .into_iter()
                    .filter(|c| c.verdict == Verdict::Incompatible)
                    .map(|c| c.group)
                    .collect()
            }),
            None => None,
        };
        let Some(item) = items::lock_item(conn, id).await? else {
            return Ok(());
        };
        let event = MailEvent::Waiting {
            verdict,
            breaking: breaking.as_deref(),
            by,
        };
        self.mail(conn, approvers, item_ref(&item), &event).await
    }
}
