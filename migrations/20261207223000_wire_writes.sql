-- What each stream's producers write now, read off the wire: the
-- Confluent wire-format headers of the last records of each partition
-- (see streamkeeper::schemas::wire), grouped by schema ID (or no header,
-- or bytes that are no header) with the newest record of each — never a
-- payload. Written by the watch pass each time it reads a stream's tail;
-- `drift` and `producers_write` by the registry routine, which places
-- the IDs against the registry (streamkeeper::schemas::drift).
CREATE TABLE wire_writes (
    cluster_id      BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic           TEXT        NOT NULL,
    written         JSONB       NOT NULL,
    read_at         TIMESTAMPTZ NOT NULL,
    drift           JSONB,
    producers_write TEXT,
    judged_at       TIMESTAMPTZ,
    PRIMARY KEY (cluster_id, topic)
);
