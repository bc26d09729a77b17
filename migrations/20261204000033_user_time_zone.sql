-- The zone each user reads times in on the pages (an IANA name, checked by
-- the server: the database has no list of zones). UTC until they choose.
ALTER TABLE users ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC'
    CHECK (length(time_zone) BETWEEN 1 AND 64);
