-- Machine tokens get scopes, an optional expiry, and an epoch that dies
-- with their owner's password.

-- Bumped when the password changes or the user is disabled, never by a
-- role change (a CI bot's token survives a new role). A token carries the
-- epoch it was made in and stops working once they differ, so re-enabling
-- a user does not revive their tokens.
ALTER TABLE users ADD COLUMN token_epoch INTEGER NOT NULL DEFAULT 0;

-- In the database rather than in each caller, so that every way a password
-- is set (the CLI, the API, whatever comes next) revokes the tokens.
CREATE FUNCTION users_token_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.password_hash IS DISTINCT FROM OLD.password_hash
       OR (NEW.disabled AND NOT OLD.disabled) THEN
        NEW.token_epoch := OLD.token_epoch + 1;
    ELSE
        NEW.token_epoch := OLD.token_epoch;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER users_token_epoch BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION users_token_epoch();

-- Tokens made before scopes existed keep working for what they were used
-- for, except approving, which now needs a token made with --scope approve.
ALTER TABLE api_tokens
    ADD COLUMN scopes TEXT[] NOT NULL
        DEFAULT ARRAY['check', 'lineage:write', 'propose', 'read', 'write']
        CHECK (cardinality(scopes) > 0
               AND scopes <@ ARRAY['read', 'check', 'propose', 'approve', 'lineage:write', 'write']::TEXT[]),
    ADD COLUMN expires_at TIMESTAMPTZ,
    ADD COLUMN user_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_tokens ALTER COLUMN scopes DROP DEFAULT;
ALTER TABLE api_tokens ALTER COLUMN user_epoch DROP DEFAULT;
-- A disabled user's old tokens stay dead when the user is enabled again.
UPDATE api_tokens t SET user_epoch = -1 FROM users u WHERE u.id = t.user_id AND u.disabled;
