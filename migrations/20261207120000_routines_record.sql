-- Whether a routine leaves a row for every run or only for runs that did
-- something: a routine of the second kind that has no row yet has simply
-- found nothing to do, and is not listed as "never ran".
ALTER TABLE routines
    ADD COLUMN record text NOT NULL DEFAULT 'every_run'
        CHECK (record IN ('every_run', 'when_worked'));
