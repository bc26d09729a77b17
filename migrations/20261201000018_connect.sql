-- Kafka Connect: the Connect clusters (workers) of each Kafka cluster, their
-- connectors and tasks as the status routine last read them, the history of
-- every state change, and who owns a connector. Configs are stored masked:
-- an inline secret never reaches this database; a ${…} reference is kept as
-- written.

-- A Connect cluster: a self-managed worker's URL, or Confluent Cloud's
-- managed-connector prefix. Credentials are references (env:NAME or
-- file:/path), never values: Basic (username and password) or a bearer token.
CREATE TABLE connect_clusters (
    id            BIGSERIAL   PRIMARY KEY,
    cluster_id    BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name          TEXT        NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
    url           TEXT        NOT NULL CHECK (url ~ '^https?://'),
    username_ref  TEXT,
    password_ref  TEXT,
    token_ref     TEXT,
    interval_s    INTEGER     NOT NULL DEFAULT 30 CHECK (interval_s BETWEEN 5 AND 3600),
    -- The last pass that read the worker, and the last that could not.
    read_at       TIMESTAMPTZ,
    last_error    TEXT,
    last_error_at TIMESTAMPTZ,
    -- How many passes in a row could not read it.
    failed_passes INTEGER     NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (cluster_id, name),
    CHECK ((username_ref IS NULL) = (password_ref IS NULL)),
    CHECK (token_ref IS NULL OR username_ref IS NULL)
);

-- A connector as the last pass that listed it saw it.
CREATE TABLE connectors (
    id                BIGSERIAL   PRIMARY KEY,
    connect_id        BIGINT      NOT NULL REFERENCES connect_clusters (id) ON DELETE CASCADE,
    name              TEXT        NOT NULL,
    class             TEXT,
    kind              TEXT        NOT NULL CHECK (kind IN ('source', 'sink', 'unknown')),
    state             TEXT        NOT NULL CHECK (state IN
        ('UNASSIGNED', 'RUNNING', 'PAUSED', 'STOPPED', 'RESTARTING', 'FAILED')),
    worker_id         TEXT,
    trace             TEXT,
    -- Masked, keys sorted (streamkeeper::connect::canonical), and its hash.
    config            JSONB       NOT NULL,
    config_hash       TEXT        NOT NULL,
    -- The Kafka topics it reads or writes, from its config (lineage).
    topics            TEXT[]      NOT NULL DEFAULT '{}',
    -- Claimed by a team; else the owner of a stream it reads or writes.
    owner_team_id     BIGINT      REFERENCES teams (id) ON DELETE SET NULL,
    unassigned_passes INTEGER     NOT NULL DEFAULT 0,
    first_seen_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    seen_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Set when a pass no longer lists it (deleted on the worker).
    gone_at           TIMESTAMPTZ,
    UNIQUE (connect_id, name)
);
CREATE INDEX connectors_topics ON connectors USING gin (topics);

CREATE TABLE connector_tasks (
    connector_id      BIGINT      NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    task              INTEGER     NOT NULL,
    state             TEXT        NOT NULL CHECK (state IN
        ('UNASSIGNED', 'RUNNING', 'PAUSED', 'RESTARTING', 'FAILED')),
    worker_id         TEXT,
    trace             TEXT,
    unassigned_passes INTEGER     NOT NULL DEFAULT 0,
    PRIMARY KEY (connector_id, task)
);

-- Every change of state of a connector (task NULL) or one of its tasks.
CREATE TABLE connector_states (
    id           BIGSERIAL   PRIMARY KEY,
    connector_id BIGINT      NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    task         INTEGER,
    state        TEXT        NOT NULL,
    trace        TEXT,
    at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX connector_states_by_connector ON connector_states (connector_id, at DESC, id DESC);

-- Connectors get flags too (FAILED, UNASSIGNED too long).
ALTER TABLE flags DROP CONSTRAINT flags_subject_kind_check;
ALTER TABLE flags ADD CONSTRAINT flags_subject_kind_check
    CHECK (subject_kind IN ('group', 'topic', 'cluster', 'connector'));
