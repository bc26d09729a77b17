-- The pilot's day tally (issue 15): each figure's events summed per UTC day
-- as the records arrive, so the pilot's page reads a few rows per metric
-- and day instead of summing a year of flags and checks on every request.
--
-- It cannot drift from the records: the triggers below keep it in the
-- transaction that writes the record (flags, compatibility checks, review
-- items), and whatever changes which records the pilot covers (the pilot
-- itself, streams, groups' topics, connectors, cluster names) marks it
-- stale in its own transaction; the next read rebuilds it from the records
-- (server/src/pilot/store.rs, `rebuild`, with the same queries the events
-- CSV uses). Lineage questions and connector restarts are few and are
-- still read from their records.

-- One row per figure, UTC day and domain (the domain the receipts need).
CREATE TABLE pilot_tally (
    -- A metric (lag_flagged, change_checked, change_reviewed) or a count
    -- (flags_raised, flags_acknowledged, flags_dismissed, checks_breaking,
    -- changes_applied).
    what   TEXT     NOT NULL,
    day    DATE     NOT NULL,
    -- The subject's domain for a flag, the record's own for a check or an
    -- item; '' for none.
    domain TEXT     NOT NULL,
    -- A metric's durations in whole milliseconds, in no order (every one
    -- kept: the percentiles stay exact nearest-rank); empty for a count.
    ms     BIGINT[] NOT NULL DEFAULT '{}',
    n      BIGINT   NOT NULL CHECK (n > 0),
    PRIMARY KEY (what, day, domain)
);

-- The pilot's scope as the last rebuild found it, for the triggers'
-- "is this record the pilot's?" and the receipts' page.
CREATE TABLE pilot_scope_clusters (
    cluster_id BIGINT PRIMARY KEY
);
CREATE TABLE pilot_scope_topics (
    cluster_id BIGINT NOT NULL,
    topic      TEXT   NOT NULL,
    PRIMARY KEY (cluster_id, topic)
);
CREATE TABLE pilot_scope_subjects (
    cluster_id BIGINT NOT NULL,
    kind       TEXT   NOT NULL,
    subject    TEXT   NOT NULL,
    domain     TEXT   NOT NULL,
    PRIMARY KEY (cluster_id, kind, subject)
);

-- Whether the tally and the scope tables hold what the records say now.
CREATE TABLE pilot_tally_state (
    only_row   BOOLEAN     PRIMARY KEY DEFAULT true CHECK (only_row),
    fresh      BOOLEAN     NOT NULL DEFAULT false,
    rebuilt_at TIMESTAMPTZ
);
INSERT INTO pilot_tally_state DEFAULT VALUES;

-- The receipts' first page of flags walks flags newest first.
CREATE INDEX flags_raised ON flags (raised_at DESC, id DESC);

CREATE FUNCTION pilot_ms(started TIMESTAMPTZ, ended TIMESTAMPTZ) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE AS
$$ SELECT GREATEST(floor(extract(epoch FROM ended - started) * 1000), 0)::bigint $$;

CREATE FUNCTION pilot_day(at TIMESTAMPTZ) RETURNS DATE
    LANGUAGE sql IMMUTABLE AS $$ SELECT (at AT TIME ZONE 'UTC')::date $$;

-- Adds (sign 1) or takes back (sign -1) one event of `what` on `day`: a
-- duration when `ms` is given, a count when it is NULL. A take-back that
-- finds nothing to take means the tally is not what the records say:
-- it is marked stale (the next read rebuilds it) rather than failing the
-- record's own write.
CREATE FUNCTION pilot_tally_add(what_ TEXT, day_ DATE, domain_ TEXT, ms_ BIGINT, sign INTEGER)
    RETURNS VOID LANGUAGE plpgsql AS
$$
DECLARE
    at_ INTEGER;
    n_ BIGINT;
BEGIN
    IF sign > 0 THEN
        INSERT INTO pilot_tally AS t (what, day, domain, ms, n)
        VALUES (what_, day_, domain_, CASE WHEN ms_ IS NULL THEN '{}' ELSE ARRAY[ms_] END, 1)
        ON CONFLICT (what, day, domain) DO UPDATE
            SET ms = CASE WHEN ms_ IS NULL THEN t.ms ELSE t.ms || ms_ END, n = t.n + 1;
        RETURN;
    END IF;
    SELECT CASE WHEN ms_ IS NULL THEN 0 ELSE array_position(t.ms, ms_) END, t.n INTO at_, n_
      FROM pilot_tally t WHERE t.what = what_ AND t.day = day_ AND t.domain = domain_ FOR UPDATE;
    IF at_ IS NULL THEN
        UPDATE pilot_tally_state SET fresh = false WHERE fresh;
    ELSIF n_ = 1 THEN
        DELETE FROM pilot_tally t WHERE t.what = what_ AND t.day = day_ AND t.domain = domain_;
    ELSE
        UPDATE pilot_tally t
           SET ms = CASE WHEN ms_ IS NULL THEN t.ms ELSE t.ms[:at_ - 1] || t.ms[at_ + 1:] END,
               n = t.n - 1
         WHERE t.what = what_ AND t.day = day_ AND t.domain = domain_;
    END IF;
END
$$;

-- A flag's events, as server/src/pilot/store.rs counts them from flags:
-- lag flagged (a group's flag routed to a team, onset → notified or
-- acknowledged), raised, acknowledged, dismissed; all since the start.
CREATE FUNCTION pilot_tally_flag(f flags, sign INTEGER) RETURNS VOID LANGUAGE plpgsql AS
$$
DECLARE
    p pilot;
    start_ TIMESTAMPTZ;
    domain_ TEXT;
    covered BOOLEAN;
BEGIN
    SELECT * INTO p FROM pilot WHERE id = 1;
    IF NOT FOUND THEN RETURN; END IF;
    start_ := p.started_on::timestamp AT TIME ZONE 'UTC';
    SELECT x.domain INTO domain_ FROM pilot_scope_subjects x
     WHERE x.cluster_id = f.cluster_id AND x.kind = f.subject_kind AND x.subject = f.subject;
    covered := FOUND OR (p.scope_kind = 'clusters'
        AND EXISTS (SELECT 1 FROM pilot_scope_clusters c WHERE c.cluster_id = f.cluster_id));
    IF NOT covered THEN RETURN; END IF;
    domain_ := COALESCE(domain_, '');
    IF f.subject_kind = 'group' AND f.team_id IS NOT NULL AND f.onset_at >= start_
       AND (f.notified_at IS NOT NULL OR f.acknowledged_at IS NOT NULL) THEN
        PERFORM pilot_tally_add('lag_flagged', pilot_day(f.onset_at), domain_,
            pilot_ms(f.onset_at, LEAST(f.notified_at, f.acknowledged_at)), sign);
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

-- Whether a record about topic `topic_` of cluster `cluster_` in domain
-- `domain_` is the pilot's (its cluster, its stream, or its domain named).
CREATE FUNCTION pilot_covers_topic(p pilot, cluster_ BIGINT, topic_ TEXT, domain_ TEXT)
    RETURNS BOOLEAN LANGUAGE sql STABLE AS
$$
SELECT EXISTS (SELECT 1 FROM pilot_scope_clusters c WHERE c.cluster_id = cluster_)
    OR EXISTS (SELECT 1 FROM pilot_scope_topics t WHERE t.cluster_id = cluster_ AND t.topic = topic_)
    OR (p.scope_kind = 'domains' AND domain_ = ANY (p.scope))
$$;

-- A check's events: checked (submitted → verdict), breaking (INCOMPATIBLE).
CREATE FUNCTION pilot_tally_check(k compatibility_checks, sign INTEGER) RETURNS VOID
    LANGUAGE plpgsql AS
$$
DECLARE
    p pilot;
    start_ TIMESTAMPTZ;
BEGIN
    SELECT * INTO p FROM pilot WHERE id = 1;
    IF NOT FOUND OR NOT pilot_covers_topic(p, k.cluster_id, k.topic, k.domain) THEN RETURN; END IF;
    start_ := p.started_on::timestamp AT TIME ZONE 'UTC';
    IF k.submitted_at >= start_ THEN
        PERFORM pilot_tally_add('change_checked', pilot_day(k.submitted_at), k.domain,
            pilot_ms(k.submitted_at, k.decided_at), sign);
    END IF;
    IF k.verdict = 'INCOMPATIBLE' AND k.decided_at >= start_ THEN
        PERFORM pilot_tally_add('checks_breaking', pilot_day(k.decided_at), k.domain, NULL, sign);
    END IF;
END
$$;

-- A review item's events: through review (a producer change or schema
-- registration, proposed → first approved or applied), applied.
CREATE FUNCTION pilot_tally_item(i review_items, sign INTEGER) RETURNS VOID LANGUAGE plpgsql AS
$$
DECLARE
    p pilot;
    start_ TIMESTAMPTZ;
BEGIN
    SELECT * INTO p FROM pilot WHERE id = 1;
    IF NOT FOUND OR NOT pilot_covers_topic(p, i.cluster_id, i.topic, i.domain) THEN RETURN; END IF;
    start_ := p.started_on::timestamp AT TIME ZONE 'UTC';
    IF i.kind IN ('producer_change', 'schema_registration') AND i.created_at >= start_
       AND (i.approved_at IS NOT NULL OR i.applied_at IS NOT NULL) THEN
        PERFORM pilot_tally_add('change_reviewed', pilot_day(i.created_at), i.domain,
            pilot_ms(i.created_at, LEAST(i.approved_at, i.applied_at)), sign);
    END IF;
    IF i.applied_at >= start_ THEN
        PERFORM pilot_tally_add('changes_applied', pilot_day(i.applied_at), i.domain, NULL, sign);
    END IF;
END
$$;

-- The record triggers: take back what the old row counted, add what the
-- new one counts. Skipped while the tally is stale (the rebuild will read
-- the record); a rebuild locks these tables, so no write slips between
-- its read and its marking the tally fresh.
CREATE FUNCTION pilot_tally_record() RETURNS TRIGGER LANGUAGE plpgsql AS
$$
BEGIN
    IF NOT (SELECT fresh FROM pilot_tally_state) THEN RETURN NULL; END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        CASE TG_TABLE_NAME
            WHEN 'flags' THEN PERFORM pilot_tally_flag(OLD, -1);
            WHEN 'compatibility_checks' THEN PERFORM pilot_tally_check(OLD, -1);
            ELSE PERFORM pilot_tally_item(OLD, -1);
        END CASE;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        CASE TG_TABLE_NAME
            WHEN 'flags' THEN PERFORM pilot_tally_flag(NEW, 1);
            WHEN 'compatibility_checks' THEN PERFORM pilot_tally_check(NEW, 1);
            ELSE PERFORM pilot_tally_item(NEW, 1);
        END CASE;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER pilot_tally_flags AFTER INSERT OR DELETE ON flags
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_record();
-- A pass rewrites open flags' evidence often; only these columns move a figure.
CREATE TRIGGER pilot_tally_flags_update
    AFTER UPDATE OF cluster_id, subject_kind, subject, team_id, onset_at, raised_at, notified_at,
        acknowledged_at, dismissed_at ON flags
    FOR EACH ROW WHEN ((OLD.cluster_id, OLD.subject_kind, OLD.subject, OLD.team_id, OLD.onset_at,
                        OLD.raised_at, OLD.notified_at, OLD.acknowledged_at, OLD.dismissed_at)
        IS DISTINCT FROM (NEW.cluster_id, NEW.subject_kind, NEW.subject, NEW.team_id, NEW.onset_at,
                          NEW.raised_at, NEW.notified_at, NEW.acknowledged_at, NEW.dismissed_at))
    EXECUTE FUNCTION pilot_tally_record();
CREATE TRIGGER pilot_tally_checks AFTER INSERT OR UPDATE OR DELETE ON compatibility_checks
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_record();
CREATE TRIGGER pilot_tally_items AFTER INSERT OR DELETE ON review_items
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_record();
CREATE TRIGGER pilot_tally_items_update
    AFTER UPDATE OF kind, cluster_id, topic, domain, created_at, approved_at, applied_at ON review_items
    FOR EACH ROW WHEN ((OLD.kind, OLD.cluster_id, OLD.topic, OLD.domain, OLD.created_at,
                        OLD.approved_at, OLD.applied_at)
        IS DISTINCT FROM (NEW.kind, NEW.cluster_id, NEW.topic, NEW.domain, NEW.created_at,
                          NEW.approved_at, NEW.applied_at))
    EXECUTE FUNCTION pilot_tally_record();

-- What decides which records are the pilot's changed: the tally is stale.
CREATE FUNCTION pilot_tally_stale() RETURNS TRIGGER LANGUAGE plpgsql AS
$$
BEGIN
    UPDATE pilot_tally_state SET fresh = false WHERE fresh;
    RETURN NULL;
END
$$;

CREATE TRIGGER pilot_tally_stale AFTER INSERT OR UPDATE OR DELETE ON pilot
    FOR EACH STATEMENT EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale AFTER INSERT OR DELETE ON streams
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale_update AFTER UPDATE ON streams
    FOR EACH ROW WHEN ((OLD.cluster_id, OLD.topic, OLD.domain) IS DISTINCT FROM
                       (NEW.cluster_id, NEW.topic, NEW.domain))
    EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale AFTER INSERT OR DELETE ON consumer_groups
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale_update AFTER UPDATE ON consumer_groups
    FOR EACH ROW WHEN ((OLD.cluster_id, OLD.name, OLD.topics) IS DISTINCT FROM
                       (NEW.cluster_id, NEW.name, NEW.topics))
    EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale AFTER INSERT OR DELETE ON connectors
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale_update AFTER UPDATE ON connectors
    FOR EACH ROW WHEN ((OLD.connect_id, OLD.name, OLD.topics) IS DISTINCT FROM
                       (NEW.connect_id, NEW.name, NEW.topics))
    EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale AFTER INSERT OR DELETE ON connect_clusters
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale_update AFTER UPDATE ON connect_clusters
    FOR EACH ROW WHEN ((OLD.cluster_id, OLD.name) IS DISTINCT FROM (NEW.cluster_id, NEW.name))
    EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale AFTER INSERT OR DELETE ON clusters
    FOR EACH ROW EXECUTE FUNCTION pilot_tally_stale();
CREATE TRIGGER pilot_tally_stale_update AFTER UPDATE ON clusters
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION pilot_tally_stale();
