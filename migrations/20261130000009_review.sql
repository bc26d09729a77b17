-- The review inbox: domains with their autonomy level, approvers and the
-- approvals they require; review items with every revision's hash, their
-- approvals, editors and comments; in-app notifications.

CREATE TABLE review_domains (
    domain             TEXT        PRIMARY KEY CHECK (domain <> ''),
    autonomy           TEXT        NOT NULL DEFAULT 'suggest'
        CHECK (autonomy IN ('watch', 'suggest', 'act_after_approval', 'autonomous')),
    required_approvals SMALLINT    NOT NULL DEFAULT 1 CHECK (required_approvals BETWEEN 1 AND 10),
    updated_by         TEXT        NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A domain's named approvers: a person, or a team (its members who hold
-- the approver role).
CREATE TABLE domain_approvers (
    domain  TEXT   NOT NULL REFERENCES review_domains (domain) ON DELETE CASCADE,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    team_id BIGINT REFERENCES teams (id) ON DELETE CASCADE,
    CHECK ((user_id IS NULL) <> (team_id IS NULL))
);
CREATE UNIQUE INDEX domain_approvers_user ON domain_approvers (domain, user_id) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX domain_approvers_team ON domain_approvers (domain, team_id) WHERE team_id IS NOT NULL;

CREATE TABLE review_items (
    id                 BIGSERIAL   PRIMARY KEY,
    kind               TEXT        NOT NULL CHECK (kind IN ('producer_change', 'schema_registration')),
    cluster_id         BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic              TEXT        NOT NULL,
    subject            TEXT        NOT NULL,
    -- The stream's domain when the item was proposed: it decides the
    -- approvers and the autonomy level.
    domain             TEXT        NOT NULL,
    title              TEXT        NOT NULL,
    author_id          BIGINT      NOT NULL REFERENCES users (id),
    state              TEXT        NOT NULL DEFAULT 'in_review'
        CHECK (state IN ('in_review', 'approved', 'rejected', 'withdrawn', 'applied', 'apply_failed')),
    -- Bumped by every edit and every moved base; approvals are per revision.
    revision           INTEGER     NOT NULL DEFAULT 1,
    -- The canonical content (src/review/content.rs) and its SHA-256 with the base.
    content            JSONB       NOT NULL,
    content_hash       TEXT        NOT NULL,
    base_version       INTEGER,
    base_schema_id     INTEGER,
    -- The base's text, for the diff on the item's page.
    base_schema        TEXT,
    -- This revision's compatibility check.
    check_id           BIGINT      REFERENCES compatibility_checks (id) ON DELETE SET NULL,
    verdict            TEXT        NOT NULL CHECK (verdict IN ('COMPATIBLE', 'INCOMPATIBLE', 'UNDECIDED')),
    -- Frozen with each revision (rules do not change under an open item).
    required_approvals SMALLINT    NOT NULL,
    approver_ids       BIGINT[]    NOT NULL,
    -- Why it stands where it does: the rejection's reason, the apply's
    -- error, why it came back to review.
    state_reason       TEXT        NOT NULL DEFAULT '',
    applied_version    INTEGER,
    applied_schema_id  INTEGER,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX review_items_state ON review_items (state, id DESC);
CREATE INDEX review_items_author ON review_items (author_id, id DESC);
CREATE INDEX review_items_domain ON review_items (domain, id DESC);
CREATE INDEX review_items_approvers ON review_items USING gin (approver_ids);

-- Everyone who edited an item; they never approve it.
CREATE TABLE review_editors (
    item_id BIGINT NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id),
    PRIMARY KEY (item_id, user_id)
);

-- One approval per person and revision, bound to the hash approved.
CREATE TABLE review_approvals (
    id           BIGSERIAL   PRIMARY KEY,
    item_id      BIGINT      NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    revision     INTEGER     NOT NULL,
    approver_id  BIGINT      NOT NULL REFERENCES users (id),
    content_hash TEXT        NOT NULL,
    approved_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (item_id, revision, approver_id)
);

CREATE TABLE review_comments (
    id         BIGSERIAL   PRIMARY KEY,
    item_id    BIGINT      NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    author_id  BIGINT      NOT NULL REFERENCES users (id),
    body       TEXT        NOT NULL CHECK (length(body) BETWEEN 1 AND 10000),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX review_comments_item ON review_comments (item_id, id);

-- In-app notifications: an item waits for you, yours was decided or applied.
CREATE TABLE notifications (
    id         BIGSERIAL   PRIMARY KEY,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    item_id    BIGINT      REFERENCES review_items (id) ON DELETE CASCADE,
    message    TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    read_at    TIMESTAMPTZ
);
CREATE INDEX notifications_unread ON notifications (user_id, id DESC) WHERE read_at IS NULL;

-- Webhook deliveries now also tell approvers' teams that an item waits.
ALTER TABLE deliveries ALTER COLUMN flag_id DROP NOT NULL;
ALTER TABLE deliveries ADD COLUMN review_item_id BIGINT REFERENCES review_items (id) ON DELETE CASCADE;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_for_one
    CHECK ((flag_id IS NULL) <> (review_item_id IS NULL));
