package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// TestShardSQLAgreesWithGo: the shard PostgreSQL computes for a local
// record is the shard the job computes for the file's row with that key.
func TestShardSQLAgreesWithGo(t *testing.T) {
	db, _ := ledgertest.DB(t)
	for i := 0; i < 200; i++ {
		key := fmt.Sprintf("ORD2026112800%04d-%c", i, 'a'+i%26)
		for _, n := range []int{2, 3, 4, 7} {
			var got int
			if err := db.Pool().QueryRow(context.Background(), `SELECT `+ledger.ShardSQL("$1::text", "$2::bigint"), key, n).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := reconcile.ShardOf(key, n); got != want {
				t.Fatalf("shard of %q among %d: SQL %d, Go %d", key, n, got, want)
			}
		}
	}
}
