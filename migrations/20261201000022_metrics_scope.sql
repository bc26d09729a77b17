-- The `metrics` scope: a token for Prometheus that scrapes /metrics and
-- reads nothing else.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_scopes_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_scopes_check
    CHECK (cardinality(scopes) > 0
           AND scopes <@ ARRAY['read', 'check', 'propose', 'approve', 'lineage:write', 'metrics', 'write']::TEXT[]);
