-- The job fetches the settlement files itself.

-- Adyen hands out one report per settlement batch, numbered per merchant
-- account: the next fetch asks for the batches after the last one here,
-- and each is filed under the business date it belongs to. One date's
-- file holds one batch; a second batch of a date is kept aside, held.
CREATE TABLE fetched_batches (
    channel       text        NOT NULL,
    account       text        NOT NULL,
    batch         bigint      NOT NULL CHECK (batch > 0),
    business_date date        NOT NULL,
    file_sha256   text        NOT NULL,
    held          boolean     NOT NULL DEFAULT false,
    fetched_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, account, batch)
);
CREATE UNIQUE INDEX fetched_batches_date_idx ON fetched_batches (channel, account, business_date) WHERE NOT held;

-- A fetch the channel refused, or a date it has no bill for, is alerted
-- once per channel, date and kind however many ticks and replicas see it.
CREATE TABLE fetch_alerts (
    channel       text        NOT NULL,
    business_date date        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('refused', 'bad_file', 'no_bill')),
    alerted_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, business_date, kind)
);
