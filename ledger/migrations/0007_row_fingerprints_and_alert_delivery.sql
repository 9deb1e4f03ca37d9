-- A duplicate row the file gives no channel id is known by a fingerprint
-- of what it says (reconcile.Finding.RowFingerprint), so its reversal
-- journal has a key of its own; and an alert remembers how far it got
-- (message posted, with its Slack channel and ts; workbook uploaded), so
-- one sent again resumes there instead of posting a second message.

ALTER TABLE findings ADD COLUMN row_fingerprint text;
-- The row a journal reverses (reconcile.Journal.Row): its channel id, or
-- row:<fingerprint>. Journals posted before this column read it as their
-- channel id.
ALTER TABLE journals ADD COLUMN row_key text;

ALTER TABLE runs ADD COLUMN alert_delivery jsonb;
ALTER TABLE shard_reports ADD COLUMN alert_delivery jsonb;
