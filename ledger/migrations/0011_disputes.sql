-- Chargebacks (rule 14). A chargeback finding names its dispute and says
-- how it stands (open, won, lost); later nights' events update the
-- standing, which is the channel's word, not a reviewer's, so it moves
-- apart from the finding's state and version.
ALTER TABLE findings
    ADD COLUMN dispute_id     text,
    ADD COLUMN dispute_status text
        CONSTRAINT findings_dispute_status_check
        CHECK (dispute_status IN ('open', 'won', 'lost')),
    ADD COLUMN dispute_reason text,
    ADD COLUMN customer       text;

CREATE INDEX findings_dispute_idx ON findings (channel, dispute_id) WHERE dispute_id IS NOT NULL;

-- Every dispute event and refund reversal a run's file carried that no
-- earlier file had: the memory by which a dispute is followed across
-- nights and an order's money returned counts each event once. A run's
-- events count while the run is current (SUCCEEDED, not superseded).
CREATE TABLE dispute_events (
    run_id         text NOT NULL REFERENCES runs (id),
    channel        text NOT NULL,
    business_date  date NOT NULL,
    kind           text NOT NULL
        CONSTRAINT dispute_events_kind_check
        CHECK (kind IN ('chargeback', 'chargeback_reversal', 'second_chargeback', 'refund_reversal')),
    dispute_id     text NOT NULL,
    order_no       text NOT NULL,
    refund_no      text NOT NULL,
    payment_id     text NOT NULL,
    channel_txn_id text NOT NULL,
    amount_minor   bigint NOT NULL CHECK (amount_minor >= 0),
    currency       text NOT NULL,
    fee_milli      bigint NOT NULL,
    occurred_at    timestamptz,
    line           integer NOT NULL,
    reason         text NOT NULL,
    raw_kind       text NOT NULL
);

CREATE INDEX dispute_events_dispute_idx ON dispute_events (channel, dispute_id);
CREATE INDEX dispute_events_order_idx ON dispute_events (channel, order_no);
CREATE INDEX dispute_events_run_idx ON dispute_events (run_id);

-- The reference schema's record of disputes, for a merchant that keeps
-- one (config "disputes"): a deployment names its own table or view, and
-- a relation of this name already there is left alone, indexes and all.
DO $$
BEGIN
    IF to_regclass('disputes') IS NULL THEN
        CREATE TABLE disputes (
            dispute_id   text PRIMARY KEY,
            channel      text NOT NULL,
            order_no     text,
            amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
            currency     text NOT NULL,
            status       text NOT NULL,
            opened_at    timestamptz NOT NULL
        );
        -- the nightly question of disputes overdue for their chargeback
        CREATE INDEX disputes_channel_opened_idx ON disputes (channel, opened_at);
    END IF;
END
$$;
