-- The routine runner (server/src/platform/routine): leases that may belong
-- to no cluster (routines that run once for the whole installation), the
-- routines each replica runs, and a record of every run.

ALTER TABLE routine_leases DROP CONSTRAINT routine_leases_pkey,
    ALTER COLUMN cluster_id DROP NOT NULL;
-- One lease per routine and cluster; a global routine's lease has no cluster.
CREATE UNIQUE INDEX routine_leases_key ON routine_leases (routine, COALESCE(cluster_id, 0));

-- What each routine is, as the replicas that run it registered it, so the
-- listing (GET /api/v1/routines) shows routines that have not run yet.
CREATE TABLE routines (
    name          TEXT        PRIMARY KEY,
    scope         TEXT        NOT NULL CHECK (scope IN ('global', 'cluster')),
    lease         TEXT        NOT NULL CHECK (lease IN ('exclusive', 'everywhere')),
    every_ms      BIGINT      NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One row a run: open while it runs, then its outcome. Kept for 7 days.
CREATE TABLE routine_runs (
    id          BIGSERIAL   PRIMARY KEY,
    routine     TEXT        NOT NULL,
    cluster_id  BIGINT      REFERENCES clusters (id) ON DELETE CASCADE,
    holder      TEXT        NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ,
    outcome     TEXT        CHECK (outcome IN ('ok', 'failed', 'abandoned')),
    error       TEXT,
    detail      JSONB       NOT NULL DEFAULT '{}',
    -- When the replica that ran it means to run it next.
    next_at     TIMESTAMPTZ
);
CREATE INDEX routine_runs_recent ON routine_runs (routine, COALESCE(cluster_id, 0), started_at DESC);
CREATE INDEX routine_runs_started ON routine_runs USING brin (started_at);
