-- Registry hygiene: when each registry was last read, what failed, and what
-- the last good reading found (replaced on each good reading).
ALTER TABLE schema_registries
    ADD COLUMN checked_at TIMESTAMPTZ,
    ADD COLUMN last_error TEXT;

CREATE TABLE registry_findings (
    cluster_id BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    kind       TEXT        NOT NULL CHECK (kind IN ('UNREGISTERED_TOPIC', 'ORPHAN_SUBJECT', 'LEVEL_DRIFT')),
    subject    TEXT,
    topic      TEXT,
    detail     TEXT        NOT NULL,
    found_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX registry_findings_cluster ON registry_findings (cluster_id, kind);
