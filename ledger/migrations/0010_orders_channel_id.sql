-- A payment row whose channel id our records hold under another order is
-- found by the orders' channel ids. Only where orders is the reference
-- table: a deployment's view over its own tables has the indexes of
-- those tables.
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('orders')) = 'r' THEN
        CREATE INDEX orders_channel_txn_id_idx ON orders (channel_txn_id) WHERE channel_txn_id IS NOT NULL;
    END IF;
END
$$;
