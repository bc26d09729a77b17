-- Each topic's latest health, as the last good pass saw it.
CREATE TABLE topics (
    cluster_id       BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name             TEXT        NOT NULL,
    partitions       INTEGER     NOT NULL,
    under_replicated INTEGER[]   NOT NULL DEFAULT '{}',
    offline          INTEGER[]   NOT NULL DEFAULT '{}',
    -- Sum of log-end offsets (messages ever written, as far as retained).
    log_end_total    BIGINT,
    first_seen       TIMESTAMPTZ NOT NULL,
    last_seen        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (cluster_id, name)
);
