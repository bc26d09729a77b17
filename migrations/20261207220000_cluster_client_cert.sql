-- Mutual TLS: the certificate (PEM, its chain after it) a cluster's brokers
-- ask of this console, and its private key, by reference (env:NAME or
-- file:/path) like the credentials and the CA bundle: read at every pass,
-- so a rotated pair is used without a restart. Both or neither.
ALTER TABLE clusters
    ADD COLUMN client_cert_ref TEXT CHECK (client_cert_ref ~ '^(env|file):.+'),
    ADD COLUMN client_key_ref TEXT CHECK (client_key_ref ~ '^(env|file):.+'),
    ADD CONSTRAINT clusters_client_cert_pair
        CHECK ((client_cert_ref IS NULL) = (client_key_ref IS NULL));
