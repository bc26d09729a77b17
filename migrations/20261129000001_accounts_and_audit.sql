-- Users, teams, machine tokens and the hash-chained audit log.

CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    username      TEXT        NOT NULL UNIQUE,
    display_name  TEXT        NOT NULL,
    -- argon2id PHC string; never leaves the server.
    password_hash TEXT        NOT NULL,
    roles         TEXT[]      NOT NULL DEFAULT '{viewer}'
        CHECK (roles <@ ARRAY['viewer', 'owner', 'approver', 'manager', 'admin']::TEXT[]),
    disabled      BOOLEAN     NOT NULL DEFAULT FALSE,
    -- Bumped on disable and password change: sessions carry the epoch they
    -- were made in, and a session from an older epoch is ended.
    session_epoch INTEGER     NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE teams (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT        NOT NULL UNIQUE,
    description TEXT        NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    team_id  BIGINT      NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id  BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    added_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

-- Bearer tokens for machines (CI jobs, OpenLineage producers). Only the
-- SHA-256 of the token is kept: tokens are 256-bit random, so a fast hash is
-- enough, and lookups stay a single index probe.
CREATE TABLE api_tokens (
    id           BIGSERIAL PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT        NOT NULL,
    token_hash   BYTEA       NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Append-only: each row's hash covers the previous row's hash (see
-- src/audit.rs). Writers serialise on an advisory lock and take the next id,
-- so ids have no gaps.
CREATE TABLE audit_log (
    id        BIGINT      PRIMARY KEY,
    at        TIMESTAMPTZ NOT NULL,
    actor     TEXT        NOT NULL,
    action    TEXT        NOT NULL,
    target    TEXT        NOT NULL,
    detail    TEXT        NOT NULL,
    source    TEXT        NOT NULL,
    prev_hash BYTEA       NOT NULL,
    hash      BYTEA       NOT NULL UNIQUE
);
CREATE INDEX audit_log_at ON audit_log USING brin (at);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_action ON audit_log (action, id);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP;
END;
$$;

CREATE TRIGGER audit_log_no_update_or_delete
    BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();
CREATE TRIGGER audit_log_no_truncate
    BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
