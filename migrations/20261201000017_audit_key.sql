-- Entries sealed with the audit key (HMAC-SHA-256, the key kept outside the
-- database) rather than hashed plain. Entries written before a key was set
-- stay plain; a plain entry after a keyed one is a break.
ALTER TABLE audit_log ADD COLUMN keyed BOOLEAN NOT NULL DEFAULT false;
