-- Whether an earlier credit was taken is asked of all the current
-- arrivals at once (a hash anti-join over their keys unnested), not of
-- an index once per credit: the GIN index of entry_keys served only that
-- question, and cost every COPY of arrivals its upkeep.
DROP INDEX payout_arrivals_keys_idx;
