-- The memory of a night's rows, one row per successful run: a sorted blob
-- of fixed-width records (see matcher.EncodeMemory) instead of a table row
-- per settlement row, which cost seconds per million rows to write and to
-- read back. Stored uncompressed: the records are hashes, which do not
-- compress, and reads of part of a value stay cheap.

DROP TABLE settled_rows;

CREATE TABLE settled_keys (
    run_id        text PRIMARY KEY REFERENCES runs,
    channel       text NOT NULL,
    business_date date NOT NULL,
    rows          int NOT NULL,
    records       bytea NOT NULL
);

ALTER TABLE settled_keys ALTER COLUMN records SET STORAGE EXTERNAL;

CREATE INDEX settled_keys_channel_date_idx ON settled_keys (channel, business_date);
