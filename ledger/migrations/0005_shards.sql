-- Runs split across machines by key hash (reconcile run --shard I/N): each
-- shard is a run of its own, and its findings and journals say which shard
-- wrote them. A report over all shards of a date is alerted once.

ALTER TABLE runs ADD COLUMN shard text NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN shard text NOT NULL DEFAULT '';
ALTER TABLE journals ADD COLUMN shard text NOT NULL DEFAULT '';

CREATE TABLE shard_reports (
    id                  text PRIMARY KEY,
    channel             text NOT NULL,
    business_date       date NOT NULL,
    run_ids             text[] NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    alert_sent_at       timestamptz,
    alert_claimed_until timestamptz
);
