-- A night's memory in parts by key hash, with a filter saying which parts
-- can hold a key (see matcher.LayOut): a later night reads the filter and
-- only the parts its keys may be in, instead of every record. The parts
-- are written with COPY. A run remembered before this migration has one
-- part 0 holding every record and no filter; it is read whole.

ALTER TABLE settled_keys ADD COLUMN part int NOT NULL DEFAULT 0;
ALTER TABLE settled_keys DROP CONSTRAINT settled_keys_pkey;
ALTER TABLE settled_keys ADD PRIMARY KEY (run_id, part);

CREATE TABLE settled_filters (
    run_id text PRIMARY KEY REFERENCES runs,
    bits   int NOT NULL,
    filter bytea NOT NULL
);

ALTER TABLE settled_filters ALTER COLUMN filter SET STORAGE EXTERNAL;
