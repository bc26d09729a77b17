//! What a message tells: one transition of one or more flags of one
//! cluster. A burst (many flags of a cluster in one pass) is one notice.

use super::{Severity, Transition};
use serde::{Deserialize, Serialize};

/// One flag, as a message tells it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagNotice {
    pub id: i64,
    pub cluster: String,
    /// `group`, `topic` or `cluster`.
    pub subject_kind: String,
    pub subject: String,
    pub kind: String,
    /// The kind before a worsening.
    pub was: Option<String>,
    pub reason: String,
    /// The owner team's name; `None` when unowned (the platform team's).
    pub team: Option<String>,
    /// The flag's page in the console.
    pub url: String,
    /// When the trouble started, ms since the epoch.
    pub onset_ms: i64,
    /// For a group, the topics it reads (as last seen): a stream's
    /// silence holds its groups' flags.
    #[serde(default)]
    pub topics: Vec<String>,
    /// For a group, the topics it read at the flag's raise, which
    /// Alertmanager routes on (an alert's labels never change while it is
    /// open); `None` when not kept, and the label tells `topics`.
    #[serde(default)]
    pub label_topics: Option<Vec<String>>,
}

impl FlagNotice {
    pub fn severity(&self) -> Severity {
        Severity::of_kind(&self.kind)
    }

    /// The flag's one line: `[STOP] group billing on cluster prod: … — owner: team payments`.
    pub fn line(&self, transition: Transition) -> String {
        let owner = self
            .team
            .as_deref()
            .map_or("unowned (platform team)".to_owned(), |t| {
                format!("team {t}")
            });
        let was = match (&self.was, transition) {
            (Some(w), Transition::Worsen) => format!(" (was {w})"),
            _ => String::new(),
        };
        let head = match transition {
            Transition::Resolve => "[RESOLVED]".to_owned(),
            Transition::Acknowledge => format!("[ACKNOWLEDGED {}]", self.kind),
            _ => format!("[{}]", self.kind),
        };
        format!(
            "{head} {} {} on cluster {}: {}{was} — owner: {owner}",
            self.subject_kind, self.subject, self.cluster, self.reason
        )
    }

    /// What the flag's subject is called in a label: `group`, `topic`.
    pub fn subject_of(&self, kind: &str) -> Option<&str> {
        (self.subject_kind == kind).then_some(self.subject.as_str())
    }

    /// The topic(s) the flag is about: a topic's own name, a group's
    /// topics comma-separated (most groups read one).
    pub fn topic_label(&self) -> String {
        match self.subject_kind.as_str() {
            "topic" => self.subject.clone(),
            "group" => self.label_topics.as_ref().unwrap_or(&self.topics).join(","),
            _ => String::new(),
        }
    }
}

/// One transition of flags of one cluster, told in one message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub transition: Transition,
    pub cluster: String,
    /// Never empty.
    pub flags: Vec<FlagNotice>,
    /// Who acknowledged, for an acknowledgment.
    pub by: Option<String>,
}

impl Notice {
    /// The headline: the one flag's line, or how many flags of the cluster.
    pub fn subject(&self) -> String {
        match &self.flags[..] {
            [one] => one.line(self.transition),
            many => format!(
                "{} flags {} on cluster {}",
                many.len(),
                self.transition.words(),
                self.cluster
            ),
        }
    }

    /// The worst severity among its flags.
    pub fn severity(&self) -> Severity {
        self.flags
            .iter()
            .map(FlagNotice::severity)
            .max()
            .unwrap_or(Severity::Info)
    }

    /// Every line, one per flag.
    pub fn text(&self) -> String {
        let lines: Vec<String> = self.flags.iter().map(|f| f.line(self.transition)).collect();
        match &self.flags[..] {
            [_] => lines.join(""),
            _ => format!("{}:\n{}", self.subject(), lines.join("\n")),
        }
    }
}

/// A pass's transitions grouped as its messages: one per (cluster,
/// transition), in the order they first appear, listing its flags.
pub fn group(told: Vec<(Transition, FlagNotice)>) -> Vec<Notice> {
    let mut notices: Vec<Notice> = Vec::new();
    for (transition, flag) in told {
        match notices
            .iter_mut()
            .find(|n| n.transition == transition && n.cluster == flag.cluster)
        {
            Some(n) => n.flags.push(flag),
            None => notices.push(Notice {
                transition,
                cluster: flag.cluster.clone(),
                flags: vec![flag],
                by: None,
            }),
        }
    }
    notices
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn flag(id: i64, subject: &str, kind: &str) -> FlagNotice {
        FlagNotice {
            id,
            cluster: "prod".into(),
            subject_kind: "group".into(),
            subject: subject.into(),
            kind: kind.into(),
            was: None,
            reason: "no progress for 5 min".into(),
            team: Some("payments".into()),
            url: format!("https://sk.example/flags/{id}"),
            onset_ms: 1_765_000_000_000,
            topics: vec!["orders".into()],
            label_topics: None,
        }
    }

    pub(crate) fn one(transition: Transition, f: FlagNotice) -> Notice {
        Notice {
            transition,
            cluster: f.cluster.clone(),
            flags: vec![f],
            by: None,
        }
    }

    #[test]
    fn a_single_flag_reads_as_todays_line() {
        let n = one(Transition::Raise, flag(1, "billing", "STOP"));
        assert_eq!(
            n.text(),
            "[STOP] group billing on cluster prod: no progress for 5 min — owner: team payments"
        );
        let mut f = flag(1, "billing", "STOP");
        f.was = Some("WARN".into());
        f.team = None;
        let n = one(Transition::Worsen, f);
        assert!(
            n.text()
                .ends_with("(was WARN) — owner: unowned (platform team)")
        );
        assert!(
            one(Transition::Resolve, flag(1, "b", "STOP"))
                .text()
                .starts_with("[RESOLVED]")
        );
    }

    #[test]
    fn a_burst_of_one_cluster_is_one_notice_per_transition() {
        let mut other = flag(9, "x", "WARN");
        other.cluster = "dev".into();
        let told = vec![
            (Transition::Raise, flag(1, "a", "STOP")),
            (Transition::Raise, flag(2, "b", "WARN")),
            (Transition::Resolve, flag(3, "c", "STOP")),
            (Transition::Raise, other),
            (Transition::Raise, flag(4, "d", "STALL")),
        ];
        let notices = group(told);
        assert_eq!(notices.len(), 3);
        assert_eq!(notices[0].flags.len(), 3);
        assert_eq!(notices[0].severity(), Severity::Critical);
        assert_eq!(notices[0].subject(), "3 flags raised on cluster prod");
        assert_eq!(notices[2].cluster, "dev");
    }
}
