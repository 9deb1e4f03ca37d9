-- The job fetches the settlement files itself.

-- Adyen hands out one report per settlement batch, numbered per merchant
-- account: the next fetch asks for the batches after the last one here,
-- and each is filed under the business date it belongs to.
CREATE TABLE fetched_batches (
    channel       text        NOT NULL,
    account       text        NOT NULL,
    batch         bigint      NOT NULL CHECK (batch > 0),
    business_date date        NOT NULL,
    file_sha256   text        NOT NULL,
    fetched_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, account, batch)
);

-- A fetch the channel refused, or a date it has no bill for, is alerted
-- once per channel, date and kind however many ticks and replicas see it.
CREATE TABLE fetch_alerts (
    channel       text        NOT NULL,
    business_date date        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('refused', 'no_bill')),
    alerted_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel, business_date, kind)
);
