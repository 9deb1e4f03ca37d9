package ledger

// shardSQL is reconcile.ShardOf as a PostgreSQL expression of a text
// column, for n shards given as a parameter: col and n are spliced in as
// written. The two must agree for every key, or a shard's local records
// are not its file rows' (TestShardSQLAgreesWithGo).
func shardSQL(col, n string) string {
	return "((('x' || substr(md5(" + col + "), 1, 8))::bit(32)::bigint & 4294967295) % " + n + ")"
}
