-- A night's memory in parts of at most 32,768 records (1.25 MiB) each,
-- every part sorted and holding the next range of key hashes: written with
-- COPY as a stream, so no value of hundreds of megabytes passes through a
-- statement's parameters, and read back one part at a time. rows counts
-- the records of the part.

ALTER TABLE settled_keys ADD COLUMN part int NOT NULL DEFAULT 0;
ALTER TABLE settled_keys DROP CONSTRAINT settled_keys_pkey;
ALTER TABLE settled_keys ADD PRIMARY KEY (run_id, part);
