-- The newest record's own time, read for topics whose stream expects
-- messages (QUIET counts from it), and the log-end total it was read at,
-- so it is read again only when the log moves. last_advanced_at stays the
-- first pass that saw the log end move; a topic first seen from now on has
-- none until then ("unknown, first seen ..."), instead of pretending its
-- last message arrived when watching began.
ALTER TABLE topics
    ADD COLUMN last_message_at    TIMESTAMPTZ,
    ADD COLUMN last_message_total BIGINT;
