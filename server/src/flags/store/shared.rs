//! The flags' part of other stores' statements: a subquery or a common
//! table they join, so a list filters or counts by flags in one statement
//! while the flags' table is still read only here.

use crate::platform::errors::Db;
use sqlx::PgConnection;

/// A subquery for another store's statement: the kind of the oldest live
/// flag on the topic `t` names (its `cluster_id` and `name`), or on a
/// group that reads it; no row when none. The streams list joins it
/// LATERAL to filter and sort by trouble in one statement.
pub fn live_flag_on_topic(t: &str) -> String {
    format!(
        "SELECT f.kind FROM flags f
         WHERE f.cluster_id = {t}.cluster_id AND f.state IN ('open', 'acknowledged')
           AND ((f.subject_kind = 'topic' AND f.subject = {t}.name)
             OR (f.subject_kind = 'group' AND f.subject IN (
                   SELECT g.name FROM consumer_groups g
                   WHERE g.cluster_id = {t}.cluster_id AND {t}.name = ANY(g.topics))))
         ORDER BY f.raised_at LIMIT 1"
    )
}

/// A subquery for another store's statement: how many live flags stand
/// on the subject `n` names (its `cluster_id`, `subject_kind` and `name`).
/// The lineage graph joins it LATERAL to mark its nodes in one statement.
pub fn live_count_on(n: &str) -> String {
    format!(
        "SELECT count(*) FROM flags f
         WHERE f.cluster_id = {n}.cluster_id AND f.subject_kind = {n}.subject_kind
           AND f.subject = {n}.name AND f.state IN ('open', 'acknowledged')"
    )
}

/// For the pilot's statements (`pilot/store.rs`, after its `SCOPE`: `$1`
/// the scope's kind, `sc` its clusters, `subjects` its subjects with their
/// domains): `fl`, the flags in scope, each with its subject's domain
/// (`''` for a flag of a named cluster about no stream) and when its owner
/// had it (`reached_at`, the migration's `pilot_flag_reached`: its
/// webhook's 2xx, or a member seeing it in the app when the team has no
/// webhook, or its acknowledgment). A flag raised again for the trouble of
/// one dismissed before it is left out: one trouble counts once
/// (`pilot_flag_repeat`). A cluster scope takes every flag of its
/// clusters; the others the flags about their subjects, by an inner join
/// on those few subjects, so a year of flags is probed against them rather
/// than hashed itself.
pub const PILOT_FLAGS: &str = "fl AS (
    SELECT f.*, COALESCE(x.domain, '') AS domain, pilot_flag_reached(f) AS reached_at
      FROM flags f LEFT JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 = 'clusters' AND f.cluster_id IN (SELECT id FROM sc) AND NOT pilot_flag_repeat(f)
    UNION ALL
    SELECT f.*, x.domain, pilot_flag_reached(f)
      FROM flags f JOIN subjects x ON x.cluster_id = f.cluster_id
           AND x.kind = f.subject_kind AND x.subject = f.subject
     WHERE $1 <> 'clusters' AND NOT pilot_flag_repeat(f))";

/// For the pilot's receipts (`pilot/store.rs`, `first_weeks`): the flags
/// (`f`) raised since `$3` about a subject of the scope the tally was
/// taken over (`x`), in a domain at watch or suggest (`rd`), with their
/// cluster (`c`).
pub const PILOT_RAISED_IN_DOMAINS: &str = "FROM flags f
         JOIN pilot_scope_subjects x ON x.cluster_id = f.cluster_id
              AND x.kind = f.subject_kind AND x.subject = f.subject
         JOIN clusters c ON c.id = f.cluster_id
         LEFT JOIN review_domains rd ON rd.domain = x.domain
        WHERE f.raised_at >= $3 AND x.domain <> ''
          AND COALESCE(rd.autonomy, 'suggest') IN ('watch', 'suggest')";

/// Holds every write to the flags back until `tx` ends, so the pilot's
/// tally is rebuilt from the flags as they are (its triggers count the
/// writes after).
pub async fn hold_for_tally(tx: &mut PgConnection) -> Result<(), Db> {
    sqlx::query("LOCK TABLE flags IN SHARE MODE")
        .execute(tx)
        .await?;
    Ok(())
}
