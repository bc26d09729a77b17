-- A person's own email address and what they want to hear by email about
-- review items: items that wait for them (as an approver), and what
-- becomes of their own (approved, rejected, applied, not applied). Each
-- person sets these on their account page; no address, no mail.
ALTER TABLE users
    ADD COLUMN email         TEXT CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
    ADD COLUMN mail_waiting  BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN mail_outcomes BOOLEAN NOT NULL DEFAULT true;
