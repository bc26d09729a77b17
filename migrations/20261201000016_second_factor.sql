-- Passwords an admin sets must be changed at first sign-in, and an optional
-- TOTP second factor (RFC 6238) with single-use recovery codes.

-- Set when an admin creates a user or sets their password (UI, REST, or
-- `user add/passwd --temporary`); cleared when the user changes it.
ALTER TABLE users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT FALSE;

-- The TOTP secret (base32), in plain form: the server must compute codes
-- from it, so a hash would not do (README, Security model). NULL: no
-- second factor.
ALTER TABLE users ADD COLUMN totp_secret TEXT;
-- The last time step a code was accepted for: a code is not accepted twice.
ALTER TABLE users ADD COLUMN totp_last_step BIGINT;
-- A started enrolment or recovery-code renewal: a random seed from which
-- the new secret and recovery codes are derived, so the account page can
-- show them (with or without JavaScript) until the user confirms with a
-- code; cleared then, after which the codes exist only as hashes.
ALTER TABLE users ADD COLUMN totp_pending_seed TEXT;

-- Recovery codes carry 60 random bits, so a SHA-256 is enough (like API
-- tokens); each works once.
CREATE TABLE recovery_codes (
    user_id   BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT        NOT NULL,
    used_at   TIMESTAMPTZ,
    PRIMARY KEY (user_id, code_hash)
);
