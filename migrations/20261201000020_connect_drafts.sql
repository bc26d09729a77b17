-- Connector drafts and restarts are review items too. A connector item's
-- content is the canonical config (secrets masked, keys sorted, ${…}
-- references as written); its base is the running config as it was read,
-- masked, in base_schema (NULL: the connector did not exist); its check is
-- the validation (the rules' findings beside the worker's answer).
ALTER TABLE review_items DROP CONSTRAINT review_items_kind_check;
ALTER TABLE review_items ADD CONSTRAINT review_items_kind_check
    CHECK (kind IN ('producer_change', 'schema_registration', 'connector_draft', 'connector_restart'));
ALTER TABLE review_items ADD COLUMN connector_check JSONB;

-- Restarts the status routine made on its own (autonomous domains), so the
-- backoff and the daily cap hold across passes and restarts of the server.
CREATE TABLE connector_restarts (
    id           BIGSERIAL   PRIMARY KEY,
    connector_id BIGINT      NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    tasks        INTEGER[]   NOT NULL,
    outcome      TEXT        NOT NULL,
    at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX connector_restarts_by_connector ON connector_restarts (connector_id, at DESC);
