-- Schemas: a Schema Registry per cluster, the catalog's schemas with their
-- history, and every check of a proposed producer schema.

-- A cluster's Schema Registry. Credentials are references (env:NAME or
-- file:/path), never values, as for the cluster itself.
CREATE TABLE schema_registries (
    cluster_id   BIGINT      PRIMARY KEY REFERENCES clusters (id) ON DELETE CASCADE,
    url          TEXT        NOT NULL CHECK (url ~ '^https?://'),
    username_ref TEXT,
    password_ref TEXT,
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The compatibility level a stream's subject should have; the registry's
-- level is checked against it.
ALTER TABLE streams ADD COLUMN compatibility TEXT CHECK (compatibility IN
    ('NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'));

-- Schemas recorded in the catalog, append-only so each keeps its history:
-- a stream's own (producer) schema when group_name is NULL, else the
-- reader schema a consumer group reads the topic with. The newest row is
-- the current one.
CREATE TABLE catalog_schemas (
    id          BIGSERIAL   PRIMARY KEY,
    cluster_id  BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic       TEXT        NOT NULL,
    group_name  TEXT,
    schema_type TEXT        NOT NULL CHECK (schema_type IN ('AVRO', 'JSON', 'PROTOBUF')),
    schema      TEXT        NOT NULL,
    -- Referenced schemas by the name the schema uses: {"name": "text"}.
    refs        JSONB       NOT NULL DEFAULT '{}',
    -- Pasted or uploaded text, or pinned to a registry subject's version.
    source      TEXT        NOT NULL CHECK (source IN ('text', 'registry')),
    subject     TEXT,
    version     INTEGER,
    recorded_by TEXT        NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((source = 'registry') = (subject IS NOT NULL AND version IS NOT NULL))
);
CREATE INDEX catalog_schemas_of ON catalog_schemas (cluster_id, topic, group_name, id DESC);

-- Each check of a proposed producer schema: what was proposed, by whom,
-- the verdict with its reasons, and how long it took.
CREATE TABLE compatibility_checks (
    id           BIGSERIAL   PRIMARY KEY,
    cluster_id   BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic        TEXT        NOT NULL,
    schema_type  TEXT        NOT NULL,
    schema       TEXT        NOT NULL,
    verdict      TEXT        NOT NULL CHECK (verdict IN ('COMPATIBLE', 'INCOMPATIBLE', 'UNDECIDED')),
    report       JSONB       NOT NULL,
    submitted_by TEXT        NOT NULL,
    submitted_at TIMESTAMPTZ NOT NULL,
    decided_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX compatibility_checks_topic ON compatibility_checks (cluster_id, topic, id DESC);
