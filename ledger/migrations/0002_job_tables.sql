-- The job's own tables: runs, their findings, and the reversal journals
-- posted for unambiguous duplicates. Money is bigint minor units.

CREATE TABLE runs (
    id            text PRIMARY KEY,
    channel       text NOT NULL,
    business_date date NOT NULL,
    format        text NOT NULL,
    file          text NOT NULL,
    file_sha256   text NOT NULL,
    status        text NOT NULL
        CONSTRAINT runs_status_check
        CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED')),
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz,
    error         text,
    channel_rows  int,
    local_rows    int,
    counts        jsonb
);

CREATE INDEX runs_channel_business_date_idx ON runs (channel, business_date);

CREATE TABLE findings (
    id              bigserial PRIMARY KEY,
    run_id          text NOT NULL REFERENCES runs,
    channel         text,
    business_date   date,
    category        text NOT NULL,
    kind            text NOT NULL,
    order_no        text,
    refund_no       text,
    channel_txn_id  text,
    original_txn_id text,
    local_txn_id    text,
    channel_amount  bigint, -- NULL when the finding has no channel row
    currency        text,
    local_amount    bigint, -- NULL when the finding has no local record
    local_currency  text,
    channel_status  text,
    local_status    text,
    idem_status     text,
    occurred_at     timestamptz,
    line            int,
    raw_kind        text,
    hint            text,
    auto_reverse    bool NOT NULL,
    state           text NOT NULL
        CONSTRAINT findings_state_check
        CHECK (state IN ('OPEN', 'REVERSED')),
    journal_key     text,
    created_at      timestamptz DEFAULT now()
);

CREATE INDEX findings_run_id_idx ON findings (run_id);

CREATE TABLE journals (
    id              bigserial PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE,
    kind            text NOT NULL
        CONSTRAINT journals_kind_check
        CHECK (kind = 'reversal'),
    channel         text NOT NULL,
    order_no        text,
    refund_no       text,
    channel_txn_id  text NOT NULL,
    currency        text NOT NULL,
    amount          bigint NOT NULL,
    memo            text,
    run_id          text REFERENCES runs,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE journal_lines (
    journal_id bigint REFERENCES journals ON DELETE CASCADE,
    line_no    int,
    account    text NOT NULL,
    amount     bigint NOT NULL,
    currency   char(3) NOT NULL,
    PRIMARY KEY (journal_id, line_no)
);

-- The balance is checked when the transaction commits, not per row: the
-- lines of a journal are inserted one by one and balance only together.
-- Checking every affected journal (the old one too, when an update moves a
-- line) means no statement can leave an unbalanced journal behind.
CREATE FUNCTION journal_lines_check_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids       bigint[];
    jid       bigint;
    unbalanced record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY[NEW.journal_id];
    ELSIF TG_OP = 'DELETE' THEN
        ids := ARRAY[OLD.journal_id];
    ELSE
        ids := ARRAY[NEW.journal_id, OLD.journal_id];
    END IF;

    FOREACH jid IN ARRAY ids LOOP
        CONTINUE WHEN jid IS NULL;
        SELECT l.currency, sum(l.amount) AS total
          INTO unbalanced
          FROM journal_lines l
         WHERE l.journal_id = jid
         GROUP BY l.currency
        HAVING sum(l.amount) <> 0
         ORDER BY l.currency
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'journal % is unbalanced: its % lines sum to %',
                jid, unbalanced.currency, unbalanced.total
                USING ERRCODE = 'check_violation',
                      TABLE = 'journal_lines',
                      CONSTRAINT = 'journal_lines_balanced';
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER journal_lines_balanced
    AFTER INSERT OR UPDATE OR DELETE ON journal_lines
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION journal_lines_check_balance();

-- A journal without lines is balanced in no useful sense: refuse it too.
CREATE FUNCTION journals_check_lines() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM journal_lines WHERE journal_id = NEW.id)
       AND EXISTS (SELECT 1 FROM journals WHERE id = NEW.id) THEN
        RAISE EXCEPTION 'journal % (%) has no lines', NEW.id, NEW.idempotency_key
            USING ERRCODE = 'check_violation',
                  TABLE = 'journals',
                  CONSTRAINT = 'journals_have_lines';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER journals_have_lines
    AFTER INSERT ON journals
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION journals_check_lines();
