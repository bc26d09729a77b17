-- Single sign-on (OpenID Connect). A user signed in through the provider
-- is known by the provider's issuer and subject, never by a name or an
-- e-mail (linking on those would hand an account to whoever the provider
-- lets claim the name).
ALTER TABLE users
    ADD COLUMN oidc_issuer  TEXT,
    ADD COLUMN oidc_subject TEXT,
    -- A fresh sign-in at the provider, asked for to approve: consumed by
    -- the approval it was asked for, and good for a few minutes only.
    ADD COLUMN reauth_at    TIMESTAMPTZ,
    ADD CONSTRAINT users_oidc_identity_whole CHECK ((oidc_issuer IS NULL) = (oidc_subject IS NULL));
CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject)
    WHERE oidc_subject IS NOT NULL;

-- Sign-ins sent to the provider and not back yet. Kept here rather than
-- in the session: the session cookie is SameSite=Strict, so the browser
-- does not send it on the provider's redirect back. Looked up by the hash
-- of `state`, deleted at first use (a replayed state finds nothing), and
-- bound to the browser that started it by the hash of a cookie of its own.
CREATE TABLE sso_attempts (
    state_hash    BYTEA       PRIMARY KEY,
    browser_hash  BYTEA       NOT NULL,
    nonce         TEXT        NOT NULL,
    pkce_verifier TEXT        NOT NULL,
    next          TEXT        NOT NULL,
    -- Set for a re-authentication: whose, and when it was asked for.
    reauth_user   BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX sso_attempts_created ON sso_attempts (created_at);
