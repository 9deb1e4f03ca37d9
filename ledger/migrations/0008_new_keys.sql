-- Money that moved twice under new keys: an order's refunds past what was
-- paid, a refund or payment repeated under another number, a fee off the
-- contract. A finding names the other rows of its case (related) and, for
-- a fee, both fees in thousandths of a minor unit.

ALTER TABLE findings ADD COLUMN related text[];
ALTER TABLE findings ADD COLUMN fee_milli bigint;
ALTER TABLE findings ADD COLUMN expected_fee_milli bigint;

-- Findings are read back by order: the refund rows of earlier nights that
-- no local record confirmed, and the orders the channel did not settle.
CREATE INDEX findings_order_idx ON findings (channel, order_no);

-- A customer's orders created close together, and refunds by the
-- channel's id. Only where orders and refunds are the reference tables: a deployment's view over its own tables has the
-- indexes of those tables.
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('orders')) = 'r' THEN
        CREATE INDEX orders_user_created_idx ON orders (user_id, created_at) WHERE user_id IS NOT NULL;
    END IF;
    -- A refund row without our refund number is matched by the channel's
    -- id of the refund.
    IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('refunds')) = 'r' THEN
        CREATE INDEX refunds_channel_refund_id_idx ON refunds (channel_refund_id) WHERE channel_refund_id IS NOT NULL;
    END IF;
END
$$;

-- The day's fees by currency (reconcile.FeeTotal), for the reports of a
-- run read back: an alert sent again, the shards' report.
ALTER TABLE runs ADD COLUMN fees jsonb;
