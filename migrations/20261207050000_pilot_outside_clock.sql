-- The pilot's figures by an outside clock (issue 45 item 3).

-- When a member of the flag's team first saw it in the app: a team without
-- a webhook has the flag from then, not from when it was raised.
ALTER TABLE flags ADD COLUMN seen_at TIMESTAMPTZ;

-- When a review item was rejected: the pilot counts a rejection at its
-- decision, not at the item's last change.
ALTER TABLE review_items ADD COLUMN rejected_at TIMESTAMPTZ;
UPDATE review_items i SET rejected_at = COALESCE(
        (SELECT max(a.at) FROM audit_log a
          WHERE a.action = 'review.reject' AND a.target = 'review:' || i.id),
        i.updated_at)
 WHERE i.state = 'rejected';

-- "Raised again for the same trouble" looks up the dismissed flags of a
-- subject; "had a webhook" and "delivered to every team" look up a flag's
-- or a question's deliveries.
CREATE INDEX flags_dismissed_subject ON flags (cluster_id, subject_kind, subject, rule, dismissed_at)
    WHERE dismissed_at IS NOT NULL;
CREATE INDEX deliveries_flag ON deliveries (flag_id) WHERE flag_id IS NOT NULL;
CREATE INDEX deliveries_lineage_question ON deliveries (lineage_question_id)
    WHERE lineage_question_id IS NOT NULL;

-- When a flag's owner had it: its webhook's 2xx when its team had one (a
-- delivery was queued), else when a member saw it in the app; or when it
-- was acknowledged or dismissed, if earlier (whoever acted on it had it).
-- NULL: not yet. Read by the tally below and by server/src/pilot/store.rs.
CREATE FUNCTION pilot_flag_reached(f flags) RETURNS TIMESTAMPTZ LANGUAGE sql STABLE AS
$$
SELECT LEAST(CASE WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.flag_id = f.id)
                  THEN f.notified_at ELSE f.seen_at END,
             f.acknowledged_at, f.dismissed_at)
$$;

-- Whether a flag was raised again for the trouble of a flag dismissed
-- before it: same subject and rule, raised after that dismissal, the
-- trouble begun before it. It is the same trouble, counted once.
CREATE FUNCTION pilot_flag_repeat(f flags) RETURNS BOOLEAN LANGUAGE sql STABLE AS
$$
SELECT EXISTS (SELECT 1 FROM flags d
                WHERE d.cluster_id = f.cluster_id AND d.subject_kind = f.subject_kind
                  AND d.subject = f.subject AND d.rule = f.rule AND d.id <> f.id
                  AND d.dismissed_at IS NOT NULL AND d.dismissed_at <= f.raised_at
                  AND f.onset_at <= d.dismissed_at)
$$;

-- A flag's events, as server/src/pilot/store.rs counts them from flags:
-- lag flagged (a group's flag routed to a team, onset → its owner had it),
-- raised, acknowledged, dismissed; all since the start; none for a flag
-- raised again for a dismissed one's trouble.
CREATE OR REPLACE FUNCTION pilot_tally_flag(f flags, sign INTEGER) RETURNS VOID LANGUAGE plpgsql AS
$$
DECLARE
    p pilot;
    start_ TIMESTAMPTZ;
    domain_ TEXT;
    covered BOOLEAN;
    reached_ TIMESTAMPTZ;
BEGIN
    SELECT * INTO p FROM pilot WHERE id = 1;
    IF NOT FOUND THEN RETURN; END IF;
    start_ := p.started_on::timestamp AT TIME ZONE 'UTC';
    SELECT x.domain INTO domain_ FROM pilot_scope_subjects x
     WHERE x.cluster_id = f.cluster_id AND x.kind = f.subject_kind AND x.subject = f.subject;
    covered := FOUND OR (p.scope_kind = 'clusters'
        AND EXISTS (SELECT 1 FROM pilot_scope_clusters c WHERE c.cluster_id = f.cluster_id));
    IF NOT covered OR pilot_flag_repeat(f) THEN RETURN; END IF;
    domain_ := COALESCE(domain_, '');
    reached_ := pilot_flag_reached(f);
    IF f.subject_kind = 'group' AND f.team_id IS NOT NULL AND f.onset_at >= start_
       AND reached_ IS NOT NULL THEN
        PERFORM pilot_tally_add('lag_flagged', pilot_day(f.onset_at), domain_,
            pilot_ms(f.onset_at, reached_), sign);
    END IF;
    IF f.raised_at >= start_ THEN
        PERFORM pilot_tally_add('flags_raised', pilot_day(f.raised_at), domain_, NULL, sign);
    END IF;
    IF f.acknowledged_at >= start_ THEN
        PERFORM pilot_tally_add('flags_acknowledged', pilot_day(f.acknowledged_at), domain_, NULL, sign);
    END IF;
    IF f.dismissed_at >= start_ THEN
        PERFORM pilot_tally_add('flags_dismissed', pilot_day(f.dismissed_at), domain_, NULL, sign);
    END IF;
END
$$;

DROP TRIGGER pilot_tally_flags_update ON flags;
CREATE TRIGGER pilot_tally_flags_update
    AFTER UPDATE OF cluster_id, subject_kind, subject, team_id, onset_at, raised_at, notified_at,
        seen_at, acknowledged_at, dismissed_at ON flags
    FOR EACH ROW WHEN ((OLD.cluster_id, OLD.subject_kind, OLD.subject, OLD.team_id, OLD.onset_at,
                        OLD.raised_at, OLD.notified_at, OLD.seen_at, OLD.acknowledged_at,
                        OLD.dismissed_at)
        IS DISTINCT FROM (NEW.cluster_id, NEW.subject_kind, NEW.subject, NEW.team_id, NEW.onset_at,
                          NEW.raised_at, NEW.notified_at, NEW.seen_at, NEW.acknowledged_at,
                          NEW.dismissed_at))
    EXECUTE FUNCTION pilot_tally_record();

-- The figures' rules changed: the next read rebuilds the tally.
UPDATE pilot_tally_state SET fresh = false;
