-- Notifications where on-call lives (issue 40): several channels per team,
-- each with its own filter; the flags' transitions as an outbox the
-- channels' deliveries are made from (grouped, filtered, held by
-- silences); silences; a team's repeat interval for unacknowledged flags.

CREATE TABLE notify_channels (
    id            BIGSERIAL PRIMARY KEY,
    team_id       BIGINT      NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name          TEXT        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    kind          TEXT        NOT NULL
                  CHECK (kind IN ('slack', 'teams', 'pagerduty', 'alertmanager', 'webhook')),
    -- A plain URL (Alertmanager, a generic webhook, PagerDuty's endpoint).
    endpoint      TEXT CHECK (endpoint IS NULL OR endpoint ~ '^https?://'),
    -- A credential reference (env:/file:) whose value is the URL, for
    -- receivers whose URL is itself the secret (Slack, Teams).
    endpoint_ref  TEXT CHECK (endpoint_ref IS NULL OR endpoint_ref ~ '^(env|file):'),
    -- A credential reference to the routing key (PagerDuty) or the
    -- signing key (webhook). Never the secret itself.
    secret_ref    TEXT CHECK (secret_ref IS NULL OR secret_ref ~ '^(env|file):'),
    kinds         TEXT[]      NOT NULL DEFAULT '{}',
    min_severity  TEXT        NOT NULL DEFAULT 'info'
                  CHECK (min_severity IN ('info', 'warning', 'error', 'critical')),
    clusters      TEXT[]      NOT NULL DEFAULT '{}',
    -- Set when the receiver answered a 4xx (a bad routing key, a revoked
    -- webhook): shown on the team's page with the receiver's answer.
    broken_at     TIMESTAMPTZ,
    broken_answer TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (endpoint IS NOT NULL OR endpoint_ref IS NOT NULL),
    UNIQUE (team_id, name)
);

-- Every transition a team may hear of, written in the transaction that
-- makes it; the notify routine turns the pending ones into the channels'
-- deliveries (one per channel per cluster and transition: a burst is one
-- message) and marks them fanned out.
CREATE TABLE notify_transitions (
    id            BIGSERIAL PRIMARY KEY,
    flag_id       BIGINT      NOT NULL REFERENCES flags (id) ON DELETE CASCADE,
    transition    TEXT        NOT NULL
                  CHECK (transition IN ('raise', 'worsen', 'restart', 'acknowledge', 'resolve', 'repeat')),
    was           TEXT,
    by_user       TEXT,
    at            TIMESTAMPTZ NOT NULL DEFAULT streamkeeper_now(),
    -- A silence covered it at a pass: sent when the silence ends only if
    -- the trouble outlived it.
    held          BOOLEAN     NOT NULL DEFAULT false,
    fanned_out_at TIMESTAMPTZ,
    -- It became deliveries (a resolution of a told flag goes out even
    -- through a silence).
    told          BOOLEAN     NOT NULL DEFAULT false
);
CREATE INDEX notify_transitions_pending ON notify_transitions (id) WHERE fanned_out_at IS NULL;
CREATE INDEX notify_transitions_flag ON notify_transitions (flag_id, at DESC);

CREATE TABLE notify_silences (
    id          BIGSERIAL PRIMARY KEY,
    cluster_id  BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    scope       TEXT        NOT NULL CHECK (scope IN ('cluster', 'stream', 'group')),
    name        TEXT        NOT NULL DEFAULT '',
    until       TIMESTAMPTZ NOT NULL,
    reason      TEXT        NOT NULL CHECK (length(btrim(reason)) > 0),
    created_by  TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX notify_silences_cluster ON notify_silences (cluster_id, until);

ALTER TABLE teams ADD COLUMN repeat_s INTEGER NOT NULL DEFAULT 14400
    CHECK (repeat_s BETWEEN 300 AND 604800);

ALTER TABLE deliveries
    ADD COLUMN channel_id BIGINT REFERENCES notify_channels (id) ON DELETE CASCADE,
    -- The flags a channel's (grouped) message lists (flag_id stays the
    -- team webhook's: the pilot reads it as "had a webhook").
    ADD COLUMN flag_ids   BIGINT[],
    -- What the receiver answered: its status and the start of its body.
    ADD COLUMN answer     TEXT,
    -- When it was queued: an open flag's alert is posted again once its
    -- last post is older than the repost interval.
    ADD COLUMN created_at TIMESTAMPTZ NOT NULL DEFAULT streamkeeper_now();
CREATE INDEX deliveries_flag_ids ON deliveries USING GIN (flag_ids) WHERE channel_id IS NOT NULL;

-- A delivery is a team webhook's (one flag), a review item's, a question's,
-- or a channel's (its flags listed in flag_ids).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_for_one;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_for_one
    CHECK (num_nonnulls(flag_id, review_item_id, lineage_question_id, channel_id) = 1);
