-- Payouts and bank statements (rule 15). Like a run's dispute events,
-- what a run read counts while the run is current (SUCCEEDED, not
-- superseded): a corrected file replaces it whole.

-- Each payout a channel's file tells of: its rows' net, what the bank
-- should show, when it should arrive.
CREATE TABLE payouts (
    run_id        text NOT NULL REFERENCES runs (id),
    channel       text NOT NULL,
    business_date date NOT NULL,
    payout_id     text NOT NULL,
    reference     text NOT NULL,
    amount_minor  bigint NOT NULL,
    currency      text NOT NULL,
    stated_minor  bigint,
    expected_on   date NOT NULL,
    row_count     integer NOT NULL,
    line          integer NOT NULL,
    PRIMARY KEY (run_id, payout_id)
);

CREATE INDEX payouts_expected_idx ON payouts (expected_on);
CREATE INDEX payouts_channel_idx ON payouts (channel, payout_id);

-- Each entry of a bank statement a statement run read.
CREATE TABLE bank_entries (
    run_id        text NOT NULL REFERENCES runs (id),
    account       text NOT NULL,
    entry_key     text NOT NULL,
    statement_id  text NOT NULL,
    amount_minor  bigint NOT NULL CHECK (amount_minor >= 0),
    currency      text NOT NULL,
    credit        boolean NOT NULL,
    reversal      boolean NOT NULL,
    status        text NOT NULL CHECK (status IN ('BOOK', 'PDNG', 'INFO')),
    booked_on     date,
    value_on      date,
    bank_ref      text NOT NULL,
    end_to_end_id text NOT NULL,
    type_code     text NOT NULL,
    counterparty  text NOT NULL,
    remittance    text NOT NULL,
    line          integer NOT NULL,
    PRIMARY KEY (run_id, entry_key)
);

CREATE INDEX bank_entries_booked_idx ON bank_entries (booked_on);
CREATE INDEX bank_entries_key_idx ON bank_entries (entry_key);

-- Each payout a statement run found the money of, and the entries that
-- carried it; or (returned) the entries that sent it back.
CREATE TABLE payout_arrivals (
    run_id       text NOT NULL REFERENCES runs (id),
    channel      text NOT NULL,
    payout_id    text NOT NULL,
    entry_keys   text[] NOT NULL,
    amount_minor bigint NOT NULL,
    arrived_on   date NOT NULL,
    short        boolean NOT NULL,
    returned     boolean NOT NULL,
    PRIMARY KEY (run_id, channel, payout_id, returned)
);

CREATE INDEX payout_arrivals_payout_idx ON payout_arrivals (channel, payout_id);
-- Whether an earlier credit was taken is asked of all the current
-- arrivals at once (their keys unnested, a hash anti-join), not of an
-- index once per credit: a GIN index of entry_keys would serve only that
-- question and cost every COPY of arrivals its upkeep.

-- A payout finding names its payout and the bank entry beside what every
-- finding says.
ALTER TABLE findings
    ADD COLUMN payout_channel text,
    ADD COLUMN payout_id      text,
    ADD COLUMN expected_on    date,
    ADD COLUMN bank_account   text,
    ADD COLUMN bank_ref       text,
    ADD COLUMN booked_on      date;

CREATE INDEX findings_payout_idx ON findings (payout_channel, payout_id) WHERE payout_id IS NOT NULL;
-- a credit no payout explains is named by its entry's key
CREATE INDEX findings_bank_entry_idx ON findings (bank_account, channel_txn_id) WHERE bank_account IS NOT NULL;
