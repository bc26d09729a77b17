-- Lineage (issue 14): the OpenLineage Kafka transport, and derived events
-- forwarded to another OpenLineage endpoint.

-- The topic a cluster's OpenLineage producers write to, read by the
-- consumer group `streamkeeper-lineage`: the one place Streamkeeper joins a
-- group, so it is off (NULL) unless the cluster says otherwise.
ALTER TABLE clusters ADD COLUMN lineage_topic TEXT
    CHECK (lineage_topic ~ '^[A-Za-z0-9._-]{1,249}$');

-- Records of the lineage topic that are not events Streamkeeper can store,
-- skipped so the partition goes on; one row per record (a replay after a
-- crash notes it once). The bytes are not kept: a record that does not
-- parse cannot be redacted.
CREATE TABLE lineage_rejected (
    id          BIGSERIAL   PRIMARY KEY,
    cluster_id  BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic       TEXT        NOT NULL,
    partition   INTEGER     NOT NULL,
    "offset"    BIGINT      NOT NULL,
    bytes       INTEGER     NOT NULL,
    reason      TEXT        NOT NULL,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (cluster_id, topic, partition, "offset")
);

-- Derived events waiting to be forwarded to another OpenLineage endpoint
-- (STREAMKEEPER_LINEAGE_FORWARD_URL), with their retries. A row is made
-- when a derived event is stored, whether or not forwarding is configured,
-- so configuring it later sends what was derived before.
CREATE TABLE lineage_forward (
    event_id   BIGINT      PRIMARY KEY REFERENCES lineage_events (id),
    attempts   INTEGER     NOT NULL DEFAULT 0,
    next_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at    TIMESTAMPTZ,
    last_error TEXT
);
CREATE INDEX lineage_forward_due ON lineage_forward (next_at) WHERE sent_at IS NULL;
