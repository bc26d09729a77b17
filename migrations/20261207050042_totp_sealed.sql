-- TOTP secrets sealed at rest (XChaCha20-Poly1305 under
-- STREAMKEEPER_TOTP_KEY, hex of nonce and ciphertext, bound to the user's
-- id). The migration cannot know the key: the server seals the secrets
-- still in `totp_secret` at start-up when the key is set, and refuses to
-- start without it once any secret is sealed. A user's secret is in one
-- form or the other, never both.
ALTER TABLE users ADD COLUMN totp_sealed TEXT;
ALTER TABLE users ADD CONSTRAINT users_totp_one_form
    CHECK (totp_secret IS NULL OR totp_sealed IS NULL);
