-- Ownership, flags with their receipts, and webhook deliveries.

ALTER TABLE teams ADD COLUMN webhook_url TEXT
    CHECK (webhook_url IS NULL OR webhook_url ~ '^https?://');

ALTER TABLE consumer_groups ADD COLUMN owner_team_id BIGINT REFERENCES teams (id) ON DELETE SET NULL;

-- Console-wide settings; platform_team_id receives flags nobody owns.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE flags (
    id               BIGSERIAL PRIMARY KEY,
    cluster_id       BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    subject_kind     TEXT        NOT NULL CHECK (subject_kind IN ('group', 'topic', 'cluster')),
    subject          TEXT        NOT NULL,
    rule             TEXT        NOT NULL,
    kind             TEXT        NOT NULL,
    state            TEXT        NOT NULL DEFAULT 'open'
        CHECK (state IN ('open', 'acknowledged', 'dismissed', 'resolved')),
    team_id          BIGINT      REFERENCES teams (id) ON DELETE SET NULL,
    reason           TEXT        NOT NULL,
    -- The receipts: samples, rule, threshold and window behind the flag.
    evidence         JSONB       NOT NULL,
    onset_at         TIMESTAMPTZ NOT NULL,
    raised_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    notified_at      TIMESTAMPTZ,
    acknowledged_at  TIMESTAMPTZ,
    acknowledged_by  TEXT,
    dismissed_at     TIMESTAMPTZ,
    dismissed_by     TEXT,
    dismissed_reason TEXT,
    resolved_at      TIMESTAMPTZ,
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- One live flag per trouble: the same trouble is never raised twice.
CREATE UNIQUE INDEX flags_one_live ON flags (cluster_id, subject_kind, subject, rule)
    WHERE state IN ('open', 'acknowledged');
CREATE INDEX flags_team ON flags (team_id, raised_at DESC);

-- Outbox of webhook deliveries, retried with backoff.
CREATE TABLE deliveries (
    id              BIGSERIAL PRIMARY KEY,
    flag_id         BIGINT      NOT NULL REFERENCES flags (id) ON DELETE CASCADE,
    url             TEXT        NOT NULL,
    body            JSONB       NOT NULL,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    delivered_at    TIMESTAMPTZ,
    failed_at       TIMESTAMPTZ,
    last_error      TEXT
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
