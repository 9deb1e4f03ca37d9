package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reconcile/ledger/ledgertest"

	"reconcile"
)

func TestFetchMemory(t *testing.T) {
	db, _ := ledgertest.DB(t)
	ctx := context.Background()
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	day := func(d int) reconcile.BusinessDay {
		return reconcile.BusinessDay{Date: time.Date(2026, 11, d, 0, 0, 0, 0, loc), Location: loc}
	}
	if n, err := db.LastBatch(ctx, "adyen", "AcmeShopECOM"); err != nil || n != 0 {
		t.Fatalf("before any: got %d, %v; want 0", n, err)
	}
	for _, n := range []int64{412, 413} {
		if err := db.RecordBatch(ctx, "adyen", "AcmeShopECOM", n, day(int(n-412+28)), "sha"); err != nil {
			t.Fatal(err)
		}
	}
	if first, err := db.HoldBatch(ctx, "adyen", "AcmeShopECOM", 414, day(29), "sha"); err != nil || !first {
		t.Fatalf("hold 414: got %v, %v; want the first hold", first, err)
	}
	if err := db.RecordBatch(ctx, "adyen", "OtherECOM", 900, day(28), "sha"); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.LastBatch(ctx, "adyen", "AcmeShopECOM"); n != 414 {
		t.Errorf("last batch: got %d, want 414 (another account's 900 is its own)", n)
	}
	if first, err := db.HoldBatch(ctx, "adyen", "AcmeShopECOM", 414, day(29), "corrected"); err != nil || first {
		t.Fatalf("a held batch fetched again: got %v, %v; want it held, not alerted again", first, err)
	}
	// A second batch filed (not held) under one date is refused.
	if err := db.RecordBatch(ctx, "adyen", "AcmeShopECOM", 415, day(29), "sha"); !errors.Is(err, reconcile.ErrConflict) {
		t.Errorf("a second batch filed under 2026-11-29: got %v, want reconcile.ErrConflict", err)
	}
	got, err := db.BatchesOn(ctx, "adyen", "AcmeShopECOM", day(29))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Number != 413 || got[0].Held || got[1].Number != 414 || got[1].SHA256 != "corrected" || !got[1].Held {
		t.Errorf("batches of 2026-11-29: got %+v, want 413 and 414 (held, corrected)", got)
	}
	// A batch filed, then held when fetched again, is alerted.
	if first, err := db.HoldBatch(ctx, "adyen", "AcmeShopECOM", 412, day(28), "sha"); err != nil || !first {
		t.Errorf("a filed batch held: got %v, %v; want the first hold", first, err)
	}

	for _, kind := range []string{"refused", "bad_file", "no_bill"} {
		first, err := db.ClaimFetchAlert(ctx, "wechatpay", day(28), kind)
		again, err2 := db.ClaimFetchAlert(ctx, "wechatpay", day(28), kind)
		if err != nil || err2 != nil || !first || again {
			t.Errorf("%s: claims got %v, %v (%v, %v); want true then false", kind, first, again, err, err2)
		}
	}
}
