package reconcile_test

import (
	"testing"

	"reconcile"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want reconcile.Shard
		bad  bool
	}{
		{"", reconcile.Shard{}, false},
		{"0/4", reconcile.Shard{Index: 0, Count: 4}, false},
		{"3/4", reconcile.Shard{Index: 3, Count: 4}, false},
		{"4/4", reconcile.Shard{}, true},
		{"-1/4", reconcile.Shard{}, true},
		{"1", reconcile.Shard{}, true},
		{"a/b", reconcile.Shard{}, true},
		{"0/0", reconcile.Shard{}, true},
		{"1/1023", reconcile.Shard{Index: 1, Count: 1023}, false},
		{"1/1025", reconcile.Shard{}, true},
		{"1/99999999999", reconcile.Shard{}, true},
		{"1/18446744073709551617", reconcile.Shard{}, true},
		{"+1/4", reconcile.Shard{}, true},
		{"1/+4", reconcile.Shard{}, true},
		{" 1/4", reconcile.Shard{}, true},
		{"1/4/8", reconcile.Shard{}, true},
	}
	for _, tt := range tests {
		got, err := reconcile.ParseShard(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseShard(%q): got %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.bad)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("String(): got %q, want %q", got.String(), tt.in)
		}
	}
}

func TestShardsPartitionKeys(t *testing.T) {
	counts := make([]int, 4)
	for i := 0; i < 4000; i++ {
		key := "ORD" + string(rune('A'+i%26)) + string(rune('0'+i%10)) + string(rune(i))
		n := 0
		for s := 0; s < 4; s++ {
			if (reconcile.Shard{Index: s, Count: 4}).Has(key) {
				n++
				counts[s]++
			}
		}
		if n != 1 {
			t.Fatalf("key %q is in %d shards, want exactly 1", key, n)
		}
	}
	for s, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("shard %d holds %d of 4000 keys: not evenly spread", s, c)
		}
	}
}

func TestDisputeEventsGoWithTheirOrder(t *testing.T) {
	const order = "ORD202611280306"
	owner := reconcile.ShardOf(order, 4)
	for _, kind := range []reconcile.Kind{reconcile.KindChargeback, reconcile.KindChargebackReversal,
		reconcile.KindSecondChargeback, reconcile.KindRefundReversal} {
		for s := 0; s < 4; s++ {
			shard := reconcile.Shard{Index: s, Count: 4}
			withOrder := shard.Owns(reconcile.Transaction{Kind: kind, OrderNo: order, RefundNo: "R1"})
			if withOrder != (s == owner) {
				t.Errorf("%s of %s in shard %d: owned %v, want %v (the order's shard, %d)", kind, order, s, withOrder, s == owner, owner)
			}
			if got := shard.Owns(reconcile.Transaction{Kind: kind, PaymentID: "pi_1"}); got != (s == 0) {
				t.Errorf("%s without an order in shard %d: owned %v, want only the first shard", kind, s, got)
			}
		}
	}
}
