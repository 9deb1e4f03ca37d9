-- What running every night for a year needs: runs keyed by the file's
-- content and held under a lease, alerts remembered, findings that carry a
-- reference, a version and a person's decision, and the rows of every
-- settled file remembered so a duplicate is recognised across nights.

ALTER TABLE runs
    ADD COLUMN forced              bool NOT NULL DEFAULT false,
    ADD COLUMN lease_until         timestamptz,
    ADD COLUMN holder_pid          int,
    ADD COLUMN superseded_by       text REFERENCES runs,
    ADD COLUMN batch_rows          int,
    ADD COLUMN summary             jsonb,
    ADD COLUMN workbook_name       text,
    ADD COLUMN workbook            bytea,
    ADD COLUMN alert_sent_at       timestamptz,
    ADD COLUMN alert_claimed_until timestamptz,
    ADD COLUMN alert_attempts      int NOT NULL DEFAULT 0,
    ADD COLUMN alert_error         text;

-- The run a file replays: the newest successful run of its channel and date.
CREATE INDEX runs_succeeded_idx ON runs (channel, business_date, finished_at DESC)
    WHERE status = 'SUCCEEDED';
CREATE INDEX runs_alert_due_idx ON runs (started_at)
    WHERE alert_sent_at IS NULL AND status <> 'RUNNING';

ALTER TABLE findings DROP CONSTRAINT findings_state_check;
ALTER TABLE findings
    ADD CONSTRAINT findings_state_check CHECK (state IN (
        'OPEN', 'REVERSED', 'APPROVED', 'REJECTED', 'INVESTIGATING',
        'RESOLVED', 'ESCALATED', 'SUPERSEDED')),
    ADD COLUMN ref          text,
    ADD COLUMN version      int NOT NULL DEFAULT 0,
    ADD COLUMN decided_by   text,
    ADD COLUMN decided_at   timestamptz,
    ADD COLUMN note         text,
    ADD COLUMN settled_by   text REFERENCES runs; -- the run that resolved or escalated a pending record

CREATE UNIQUE INDEX findings_ref_idx ON findings (ref);
CREATE INDEX findings_channel_state_idx ON findings (channel, state, category, business_date);

-- One row per payment or refund row of every successful run's file. A key
-- seen again under another channel id on a later date is a duplicate of
-- what was settled before; a record matched before the cut-off is not
-- missing from the next day's file.
CREATE TABLE settled_rows (
    channel        text NOT NULL,
    business_date  date NOT NULL,
    kind           text NOT NULL,
    key            text NOT NULL,
    channel_txn_id text NOT NULL,
    order_no       text,
    amount         bigint NOT NULL,
    currency       text NOT NULL,
    status         text NOT NULL,
    occurred_at    timestamptz NOT NULL,
    run_id         text NOT NULL REFERENCES runs,
    PRIMARY KEY (channel, business_date, kind, key, channel_txn_id)
);

CREATE INDEX settled_rows_key_idx ON settled_rows (channel, kind, key);

-- A file past its deadline is alerted once per channel and date: the row
-- is the claim.
CREATE TABLE overdue_alerts (
    channel       text NOT NULL,
    business_date date NOT NULL,
    alerted_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, business_date)
);
