-- The CA bundle a cluster's TLS certificates are checked against, by
-- reference (env:NAME or file:/path) like its credentials: read at every
-- pass, so a rotated bundle is used without a restart. None: the system's.
ALTER TABLE clusters ADD COLUMN ca_ref TEXT CHECK (ca_ref ~ '^(env|file):.+');
