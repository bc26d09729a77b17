-- Routine schedules and "run now" (server/src/platform/routine), and the
-- pilot (server/src/pilot).

-- A schedule an admin set for a routine (all its targets); no row: the
-- routine's own interval. Every replica reads these before each run.
CREATE TABLE routine_schedules (
    routine    TEXT        PRIMARY KEY,
    kind       TEXT        NOT NULL CHECK (kind IN ('every', 'cron', 'paused')),
    every_ms   BIGINT      CHECK (every_ms > 0),
    cron       TEXT,
    updated_by TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((kind = 'every') = (every_ms IS NOT NULL)),
    CHECK ((kind = 'cron') = (cron IS NOT NULL))
);

-- "Run now": each request runs once, on the one replica that claims it.
CREATE TABLE routine_run_requests (
    id           BIGSERIAL   PRIMARY KEY,
    routine      TEXT        NOT NULL,
    cluster_id   BIGINT      REFERENCES clusters (id) ON DELETE CASCADE,
    requested_by TEXT        NOT NULL,
    requested_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    claimed_by   TEXT,
    claimed_at   TIMESTAMPTZ
);
CREATE INDEX routine_run_requests_pending ON routine_run_requests (routine, COALESCE(cluster_id, 0))
    WHERE claimed_at IS NULL;

-- When a review item was first approved and when it was applied: the
-- pilot's "producer change through review" runs from created_at to these.
ALTER TABLE review_items ADD COLUMN approved_at TIMESTAMPTZ, ADD COLUMN applied_at TIMESTAMPTZ;

-- The pilot: one, set up by a manager or an admin.
CREATE TABLE pilot (
    id         SMALLINT    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    scope_kind TEXT        NOT NULL CHECK (scope_kind IN ('clusters', 'streams', 'domains')),
    scope      TEXT[]      NOT NULL CHECK (cardinality(scope) > 0),
    started_on DATE        NOT NULL,
    updated_by TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The baselines entered; a metric without a row has its default.
CREATE TABLE pilot_baselines (
    metric     TEXT        PRIMARY KEY CHECK (metric IN
        ('lag_flagged', 'change_checked', 'change_reviewed', 'lineage_answered', 'lineage_notified')),
    ms         BIGINT      NOT NULL CHECK (ms > 0),
    note       TEXT        NOT NULL CHECK (note <> ''),
    updated_by TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The pilot reads flags by the time they started.
CREATE INDEX flags_onset ON flags USING brin (onset_at);

