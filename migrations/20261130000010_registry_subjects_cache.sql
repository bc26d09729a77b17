-- The registry's subjects as the hygiene routine last read them: the
-- subjects screen reads these instead of asking the registry once per
-- subject on every view. Replaced on each good reading; a failed reading
-- keeps them (schema_registries.last_error says why).
ALTER TABLE schema_registries
    -- When the subjects below were read; NULL before the first good reading.
    ADD COLUMN subjects_read_at TIMESTAMPTZ,
    -- The registry's global level at that reading.
    ADD COLUMN global_level     TEXT;

CREATE TABLE registry_subjects (
    cluster_id  BIGINT    NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    subject     TEXT      NOT NULL,
    -- Live versions, oldest first.
    versions    INTEGER[] NOT NULL,
    -- The latest version's registry-wide schema ID and format.
    latest_id   INTEGER   NOT NULL,
    schema_type TEXT      NOT NULL CHECK (schema_type IN ('AVRO', 'JSON', 'PROTOBUF')),
    -- The subject's own level; NULL follows the global one.
    level       TEXT,
    PRIMARY KEY (cluster_id, subject)
);
