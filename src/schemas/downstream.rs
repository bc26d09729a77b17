//! What a producer change breaks past its consumers (issue 43, item 3):
//! for each field the change touches ([`super::fields`]), the downstream
//! columns and dashboards column lineage says it reaches, with their
//! owners, in one sentence an owner reads before approving ("removing
//! `amount` breaks `analytics.orders_daily.revenue` (table, team
//! analytics) and the dashboard `Finance daily` (team finance)"), and what
//! each owner team is told when someone presses "Notify owners".
//!
//! The lineage walk that finds the columns lives above schemas; the
//! server hands its answer over in these plain shapes.

use super::fields::TouchedField;
use crate::access::stewardship::{Steward, Stewardship, may_steward};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A downstream column (or dashboard) a touched field reaches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DownstreamColumn {
    /// The lineage node id (`dataset:<namespace>:<name>`).
    pub node: String,
    /// The dataset's name (`analytics.orders_daily`).
    pub dataset: String,
    pub field: String,
    /// `table`, `topic` or `dashboard`, as the lineage graph draws it.
    pub kind: String,
    pub owner: Option<String>,
    /// DIRECT all the way from the topic's field, else INDIRECT (a filter
    /// or a join reads it).
    pub direct: bool,
}

/// A job that reads what the field reaches but says not which fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ColdReader {
    /// The job's name.
    pub job: String,
    pub owner: Option<String>,
    /// "reads orders; which fields is unknown".
    pub message: String,
}

/// One touched field and what it reaches downstream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldBreakage {
    pub touched: TouchedField,
    pub columns: Vec<DownstreamColumn>,
    pub cold: Vec<ColdReader>,
    /// The walk was cut (depth or budget): more may be reached.
    pub partial: bool,
    /// Why nothing could be said (no column lineage names the field).
    pub unknown: Option<String>,
}

/// A column as the sentence names it: a dashboard by its name, anything
/// else as `dataset.field` with its kind.
fn named(c: &DownstreamColumn) -> String {
    let owner = c
        .owner
        .as_deref()
        .map_or("unowned".to_owned(), |t| format!("team {t}"));
    if c.kind == "dashboard" {
        format!("the dashboard `{}` ({owner})", c.dataset)
    } else {
        format!("`{}.{}` ({}, {owner})", c.dataset, c.field, c.kind)
    }
}

/// "a, b and c".
fn listed(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

impl FieldBreakage {
    /// The sentence for this field, as the check page and the review item
    /// show it and the owners are told.
    pub fn sentence(&self) -> String {
        let head = self.touched.verb();
        if let Some(why) = &self.unknown {
            return format!("{head}: what it breaks downstream is unknown ({why})");
        }
        let columns: Vec<String> = self.columns.iter().map(named).collect();
        let mut s = if columns.is_empty() {
            format!("{head} breaks no downstream column column lineage knows of")
        } else {
            format!("{head} breaks {}", listed(&columns))
        };
        if !self.cold.is_empty() {
            let jobs: Vec<String> = self
                .cold
                .iter()
                .map(|c| format!("`{}` {}", c.job, c.message))
                .collect();
            s.push_str(&format!("; the trail goes cold at {}", jobs.join(", ")));
        }
        if self.partial {
            s.push_str(" (partial: the walk was cut)");
        }
        s
    }
}

/// Each owner team the breakage reaches, with the sentences that concern
/// it (a field once per team), by team name. The unowned are nobody's to
/// tell.
pub fn by_owner(breakage: &[FieldBreakage]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for b in breakage {
        let owners = b
            .columns
            .iter()
            .filter_map(|c| c.owner.clone())
            .chain(b.cold.iter().filter_map(|c| c.owner.clone()));
        for team in owners {
            let lines = out.entry(team).or_default();
            let line = b.sentence();
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    out
}

/// Whether `who` may send a check's breakage to the owners it reaches:
/// the check's submitter (who wants to know before proposing), an admin,
/// or a member of the team that owns the stream (`owner_team`).
pub fn may_notify(submitter: bool, who: Steward<'_>, owner_team: Option<i64>) -> bool {
    submitter || may_steward(who, owner_team, Stewardship::Act)
}

/// The message a team gets: the change, then its lines.
pub fn message(topic: &str, check_id: i64, lines: &[String]) -> String {
    format!(
        "A proposed change to {topic} (check {check_id}) breaks what you own: {}",
        lines.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schemas::fields::FieldChange;

    fn column(dataset: &str, field: &str, kind: &str, owner: Option<&str>) -> DownstreamColumn {
        DownstreamColumn {
            node: format!("dataset:pg:{dataset}"),
            dataset: dataset.into(),
            field: field.into(),
            kind: kind.into(),
            owner: owner.map(str::to_owned),
            direct: true,
        }
    }

    fn amount(columns: Vec<DownstreamColumn>) -> FieldBreakage {
        FieldBreakage {
            touched: TouchedField {
                field: "amount".into(),
                change: FieldChange::Removed,
            },
            columns,
            cold: Vec::new(),
            partial: false,
            unknown: None,
        }
    }

    #[test]
    fn the_sentence_names_each_column_and_dashboard_with_its_owner() {
        let b = amount(vec![
            column(
                "analytics.orders_daily",
                "revenue",
                "table",
                Some("analytics"),
            ),
            column("Finance daily", "revenue", "dashboard", Some("finance")),
        ]);
        assert_eq!(
            b.sentence(),
            "removing `amount` breaks `analytics.orders_daily.revenue` (table, team analytics) and the dashboard `Finance daily` (team finance)"
        );
    }

    #[test]
    fn nothing_reached_unknown_cold_and_cut_are_said() {
        assert_eq!(
            amount(vec![]).sentence(),
            "removing `amount` breaks no downstream column column lineage knows of"
        );
        let mut b = amount(vec![column("a", "x", "table", None)]);
        b.cold.push(ColdReader {
            job: "billing".into(),
            owner: Some("payments".into()),
            message: "reads orders; which fields is unknown".into(),
        });
        b.partial = true;
        assert_eq!(
            b.sentence(),
            "removing `amount` breaks `a.x` (table, unowned); the trail goes cold at `billing` reads orders; which fields is unknown (partial: the walk was cut)"
        );
        let unknown = FieldBreakage {
            unknown: Some("no column lineage names it".into()),
            ..amount(vec![])
        };
        assert!(
            unknown
                .sentence()
                .ends_with("is unknown (no column lineage names it)")
        );
    }

    #[test]
    fn the_submitter_an_admin_or_the_streams_team_may_notify() {
        let who = |admin, teams: &'static [i64]| Steward {
            admin,
            owner: false,
            teams,
        };
        assert!(may_notify(true, who(false, &[]), Some(1)));
        assert!(may_notify(false, who(true, &[]), None));
        assert!(may_notify(false, who(false, &[1]), Some(1)));
        assert!(!may_notify(false, who(false, &[2]), Some(1)));
        assert!(!may_notify(false, who(false, &[1]), None));
    }

    #[test]
    fn each_owner_team_gets_the_lines_that_concern_it_once() {
        let b = amount(vec![
            column("t1", "revenue", "table", Some("analytics")),
            column("t2", "revenue", "table", Some("analytics")),
            column("d", "revenue", "dashboard", Some("finance")),
            column("t3", "x", "table", None),
        ]);
        let got = by_owner(std::slice::from_ref(&b));
        assert_eq!(got.len(), 2);
        assert_eq!(got["analytics"], vec![b.sentence()]);
        assert_eq!(got["finance"], vec![b.sentence()]);
        assert_eq!(
            message("orders", 7, &got["finance"]),
            format!(
                "A proposed change to orders (check 7) breaks what you own: {}",
                b.sentence()
            )
        );
    }
}
