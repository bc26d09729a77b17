-- Clusters to watch, the passes of the sampler, and what each pass read.

CREATE TABLE clusters (
    id                BIGSERIAL PRIMARY KEY,
    name              TEXT        NOT NULL UNIQUE,
    bootstrap         TEXT        NOT NULL,
    security_protocol TEXT        NOT NULL DEFAULT 'PLAINTEXT',
    sasl_mechanism    TEXT,
    -- References only (env:NAME or file:/path); secrets never enter the database.
    username_ref      TEXT CHECK (username_ref ~ '^(env|file):.+'),
    password_ref      TEXT CHECK (password_ref ~ '^(env|file):.+'),
    interval_s        INTEGER     NOT NULL DEFAULT 15 CHECK (interval_s BETWEEN 5 AND 3600),
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One row a pass, good or not: a failed pass is a gap, never zero lag.
CREATE TABLE cluster_passes (
    id          BIGSERIAL PRIMARY KEY,
    cluster_id  BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    -- UP: all read; DEGRADED: read with problems; UNREACHABLE: nothing read.
    outcome     TEXT        NOT NULL CHECK (outcome IN ('UP', 'DEGRADED', 'UNREACHABLE')),
    problems    TEXT[]      NOT NULL DEFAULT '{}'
);
CREATE INDEX cluster_passes_cluster_time ON cluster_passes (cluster_id, started_at DESC);

CREATE TABLE consumer_groups (
    cluster_id  BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name        TEXT        NOT NULL,
    state       TEXT        NOT NULL,
    members     INTEGER     NOT NULL,
    -- Topics the group was seen reading; kept so a stopped group is still read.
    topics      TEXT[]      NOT NULL DEFAULT '{}',
    first_seen  TIMESTAMPTZ NOT NULL,
    last_seen   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (cluster_id, name)
);

-- Per pass, per group and partition. committed is NULL when the group never
-- committed there; log offsets NULL when they could not be read.
CREATE TABLE lag_samples (
    cluster_id BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    pass_id    BIGINT      NOT NULL REFERENCES cluster_passes (id) ON DELETE CASCADE,
    at         TIMESTAMPTZ NOT NULL,
    group_name TEXT        NOT NULL,
    topic      TEXT        NOT NULL,
    partition  INTEGER     NOT NULL,
    committed  BIGINT,
    log_start  BIGINT,
    log_end    BIGINT
);
CREATE INDEX lag_samples_at ON lag_samples USING brin (at);
CREATE INDEX lag_samples_group ON lag_samples (cluster_id, group_name, at);

-- Which replica runs a routine for a cluster; another takes over when the
-- lease expires.
CREATE TABLE routine_leases (
    routine    TEXT        NOT NULL,
    cluster_id BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    holder     TEXT        NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (routine, cluster_id)
);
