-- Credentials travel only over TLS (SASL_SSL or SSL to Kafka, https to the
-- Schema Registry) unless an admin marks the cluster insecure on purpose:
-- a local cluster, or a test setup.
ALTER TABLE clusters ADD COLUMN insecure_credentials BOOLEAN NOT NULL DEFAULT false;
