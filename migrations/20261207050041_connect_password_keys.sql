-- The config keys a connector plugin types PASSWORD, as a Connect
-- cluster's own validate answer gives them (`definition.type`): secrets
-- whatever their name (the Azure Blob sink's `azblob.account.key`), masked
-- in what the status pass stores, shows and scrubs. Learned per Connect
-- cluster and class, asked again after a day (a plugin upgrade may add
-- some). Configs already stored are masked again by the pass that learns
-- a class's keys.
CREATE TABLE connect_password_keys (
    connect_id BIGINT      NOT NULL REFERENCES connect_clusters (id) ON DELETE CASCADE,
    class      TEXT        NOT NULL,
    keys       TEXT[]      NOT NULL,
    learned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (connect_id, class)
);
