-- The reference local schema: what the order and refund services keep.
-- A deployment with tables of its own points the job at a view instead.

CREATE TABLE orders (
    order_no       text PRIMARY KEY,
    user_id        bigint,
    amount_minor   bigint NOT NULL,
    currency       char(3) NOT NULL,
    status         text NOT NULL
        CONSTRAINT orders_status_check
        CHECK (status IN ('PENDING', 'PAID', 'SHIPPED', 'REFUNDING', 'REFUNDED', 'CANCELLED')),
    channel        text NOT NULL,
    channel_txn_id text,
    version        int NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    paid_at        timestamptz
);

CREATE INDEX orders_paid_at_idx ON orders (paid_at);

CREATE TABLE refunds (
    refund_no         text PRIMARY KEY,
    order_no          text NOT NULL REFERENCES orders,
    amount_minor      bigint NOT NULL,
    currency          char(3) NOT NULL,
    status            text NOT NULL
        CONSTRAINT refunds_status_check
        CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
    channel           text NOT NULL,
    channel_refund_id text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    refunded_at       timestamptz
);

CREATE INDEX refunds_refunded_at_idx ON refunds (refunded_at);
CREATE INDEX refunds_order_no_idx ON refunds (order_no);

CREATE TABLE idempotency_records (
    scope        text,
    idem_key     text,
    request_hash text NOT NULL,
    status       text NOT NULL
        CONSTRAINT idempotency_records_status_check
        CHECK (status IN ('IN_PROGRESS', 'DONE', 'FAILED')),
    response     text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, idem_key)
);
