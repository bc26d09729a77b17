//! Review items as the inbox and the item's page show them, with what the
//! caller may do with each.

use super::{ReviewService, apply::registration, approver, facts, state_of};
use crate::clients::registry::CONTENT_TYPE_V1;
use crate::platform::errors;
use crate::review::store::{self as items, DomainListRow, ItemRow};
use crate::schemas::{pretty, side_by_side};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::shell::quote;
use streamkeeper::review::{
    Autonomy, Base, Content, Kind, State, check_apply, check_approval, check_edit, check_reject,
    check_withdraw, involved,
};
use streamkeeper::schemas::Verdict;
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::{
    ApprovalView, CommentView, DomainSettings, ItemActions, ReviewItem, ReviewSummary,
};

pub(super) fn summary(who: &Principal, item: &ItemRow) -> ReviewSummary {
    let f = facts(item);
    ReviewSummary {
        id: item.id,
        kind: item.kind.parse().unwrap_or(Kind::ProducerChange),
        title: item.title.clone(),
        cluster_id: item.cluster_id,
        cluster: item.cluster.clone(),
        topic: item.topic.clone(),
        subject: item.subject.clone(),
        domain: item.domain.clone(),
        author: item.author.clone(),
        state: state_of(item),
        revision: item.revision,
        verdict: Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided),
        approval_count: f.counted_approvals(),
        required: item.required_approvals,
        waiting_for_me: check_approval(&f, approver(who), &item.content_hash).is_ok(),
        created_at: item.created_at,
        updated_at: item.updated_at,
    }
}

pub(super) fn domain(d: DomainListRow) -> DomainSettings {
    DomainSettings {
        domain: d.domain,
        autonomy: d
            .autonomy
            .and_then(|a| a.parse().ok())
            .unwrap_or(Autonomy::DEFAULT),
        required_approvals: d.required_approvals.unwrap_or(1),
        approver_users: d.approver_users,
        approver_teams: d.approver_teams,
        effective_approvers: d.effective,
        streams: d.streams,
        updated_by: d.updated_by,
        updated_at: d.updated_at,
    }
}

/// The registry request that applies the content, to run by hand where
/// Streamkeeper does not write. Every value in it is quoted for POSIX `sh`
/// (the subject is also one percent-encoded path segment), so pasting it
/// runs this request and nothing else, whatever the URL, subject or
/// schema hold. `None` if the stored URL is not one.
fn manual_request(base: &str, c: &Content) -> Option<String> {
    let body = serde_json::to_string_pretty(&registration(c).to_json()).ok()?;
    let mut url = url::Url::parse(base.trim()).ok()?;
    url.path_segments_mut().ok()?.pop_if_empty().extend([
        "subjects",
        c.subject.as_str(),
        "versions",
    ]);
    Some(format!(
        // `\` right after a word: a line continuation, never a word.
        "curl -X POST -H {}\\\n  {}\\\n  --data {}",
        quote(&format!("Content-Type: {CONTENT_TYPE_V1}")),
        quote(url.as_str()),
        quote(&body)
    ))
}

impl ReviewService {
    /// The item's page for the caller.
    pub(super) async fn view(
        &self,
        who: &Principal,
        item: ItemRow,
    ) -> Result<ReviewItem, AppError> {
        let connector = item.kind.parse::<Kind>().is_ok_and(Kind::is_connector);
        let (content, connector_manual, connector_diff, connector_run, connector_check) =
            if connector {
                let c = self.connector_as_schema_item(&item).await?;
                (c.content, Some(c.manual), c.diff, c.run, c.check)
            } else {
                let c: Content = serde_json::from_value(item.content.clone())
                    .map_err(|e| errors::internal("stored review content", e))?;
                (c, None, None, None, None)
            };
        let level = self.level(&item.domain).await?;
        let f = facts(&item);
        let owns = self.owns_stream(who, &item).await?;
        let me = approver(who);
        let approve = check_approval(&f, me, &item.content_hash);
        // Say why someone who might expect to approve cannot.
        let approve_refusal = approve.as_ref().err().and_then(|r| {
            let took_part = who.user_id == item.author_id || item.editor_ids.contains(&who.user_id);
            (took_part || who.has(Role::Approver)).then(|| r.to_string())
        });
        let verdict = Verdict::parse(&item.verdict).unwrap_or(Verdict::Undecided);
        let may_apply = check_apply(&f, level).is_ok()
            || (!connector
                && streamkeeper::review::is_routine(level, verdict)
                && matches!(f.state, State::Approved | State::ApplyFailed));
        let actions = ItemActions {
            approve: approve.is_ok(),
            reject: check_reject(&f, me, "reason").is_ok(),
            edit: check_edit(&f, who.user_id, owns, item.revision).is_ok(),
            withdraw: check_withdraw(&f, who.user_id, owns).is_ok(),
            apply: may_apply && involved(who.user_id, who.has(Role::Admin), &f),
            approve_refusal,
            confirm: self.confirmation(who).await?,
        };
        let check = match item.check_id {
            Some(c) => self.schemas.item_check(c).await.ok().flatten(),
            None => None,
        };
        let manual_apply = if let Some(manual) = connector_manual {
            manual
        } else if level.applies() || state_of(&item).is_closed() {
            None
        } else {
            self.schemas
                .registry_url(item.cluster_id)
                .await?
                .and_then(|url| manual_request(&url, &content))
        };
        let diff = side_by_side(
            &item.base_schema.as_deref().map(pretty).unwrap_or_default(),
            &pretty(&content.schema),
        );
        let approvals = items::approvals(&self.pool, item.id)
            .await?
            .into_iter()
            .map(|a| ApprovalView {
                current: a.revision == item.revision,
                approver: a.approver,
                revision: a.revision,
                content_hash: a.content_hash,
                approved_at: a.approved_at,
            })
            .collect();
        let comments = items::comments(&self.pool, item.id)
            .await?
            .into_iter()
            .map(|c| CommentView {
                id: c.id,
                author: c.author,
                body: c.body,
                created_at: c.created_at,
            })
            .collect();
        let u32_of = |v: Option<i32>| v.and_then(|v| u32::try_from(v).ok());
        let base = Base {
            version: u32_of(item.base_version),
            schema_id: u32_of(item.base_schema_id),
        };
        // Told while it can still be applied; a connector's base is its
        // running config, which the status routine watches instead.
        let base_moved = if connector || state_of(&item).is_closed() {
            None
        } else {
            self.schemas
                .subject_latest(item.cluster_id, &item.subject)
                .await?
                .filter(|seen| base.moved_to(seen.latest))
        };
        Ok(ReviewItem {
            summary: summary(who, &item),
            content_hash: item.content_hash.clone(),
            base,
            base_moved,
            base_schema: item.base_schema.clone(),
            diff,
            check,
            approvers: items::usernames(&self.pool, &item.approver_ids).await?,
            eligible_approvers: f.eligible_approvers(),
            editors: items::usernames(&self.pool, &item.editor_ids).await?,
            approvals,
            comments,
            trail: items::trail(&self.pool, item.id).await?,
            state_reason: item.state_reason.clone(),
            autonomy: level,
            applied_version: u32_of(item.applied_version),
            applied_schema_id: u32_of(item.applied_schema_id),
            manual_apply,
            actions,
            content,
            connector_diff,
            connector_run,
            connector_check,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamkeeper::schemas::SchemaType;

    fn content(subject: &str, schema: &str) -> Content {
        Content {
            cluster_id: 1,
            topic: "orders".into(),
            subject: subject.into(),
            schema_type: SchemaType::Avro,
            schema: schema.into(),
            references: Vec::new(),
        }
    }

    /// The words the command stands for, as `sh` itself splits them:
    /// `curl` swapped for a `printf` that prints each word NUL-ended.
    fn words_by_sh(command: &str) -> Vec<String> {
        let printing = command.replacen("curl", r"printf '%s\0'", 1);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&printing)
            .output()
            .expect("sh runs");
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        text.split_terminator('\0').map(str::to_owned).collect()
    }

    #[test]
    fn the_manual_request_means_its_values_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("sk-quote-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let marker = dir.join("pwned");
        let url = format!("http://sr.example/a'$(touch {})`id`", marker.display());
        let subject = "o'$(id)-value";
        let schema = format!(
            r#"{{"type":"string","doc":"it's $(touch {}) 'quoted'\nEOF"}}"#,
            marker.display()
        );
        let c = content(subject, &schema);
        let command = manual_request(&url, &c).expect("a URL");
        let body = serde_json::to_string_pretty(&registration(&c).to_json()).expect("json");
        let mut expected_url = url::Url::parse(&url).expect("url");
        expected_url
            .path_segments_mut()
            .expect("base")
            .extend(["subjects", subject, "versions"]);
        let expected = vec![
            "curl".to_owned(),
            "-X".into(),
            "POST".into(),
            "-H".into(),
            "Content-Type: application/vnd.schemaregistry.v1+json".into(),
            expected_url.to_string(),
            "--data".into(),
            body.clone(),
        ];
        assert_eq!(shlex::split(&command), Some(expected.clone()), "{command}");
        assert!(
            expected_url.as_str().contains("$(touch"),
            "the URL keeps its text"
        );
        let by_sh = words_by_sh(&command);
        assert_eq!(by_sh[..], expected[1..], "{command}");
        assert!(!marker.exists(), "nothing in the values ran");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn the_subject_is_one_path_segment() {
        let c = content("a/b c", "\"string\"");
        let command = manual_request("https://sr.example/prefix/", &c).expect("a URL");
        let words = shlex::split(&command).expect("words");
        assert_eq!(
            words[5],
            "https://sr.example/prefix/subjects/a%2Fb%20c/versions"
        );
        assert_eq!(manual_request("not a url", &c), None);
    }
}
