package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// TestLockWaitsForTheHolder: a second run of the same channel and date
// waits while the first holds a live lease, and gets the lock when the
// first releases it.
func TestLockWaitsForTheHolder(t *testing.T) {
	db, _ := ledgertest.DB(t)
	ctx := context.Background()
	first, err := db.LockRun(ctx, "wechatpay", testDay, reconcile.Shard{}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *ledger.RunLock)
	go func() {
		l, err := db.LockRun(ctx, "wechatpay", testDay, reconcile.Shard{}, 10*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case <-got:
		t.Fatal("a second run got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	// Another date is not held up.
	other, _ := reconcile.NewBusinessDay("2026-11-29", testDay.Location)
	l, err := db.LockRun(ctx, "wechatpay", other, reconcile.Shard{}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	first.Release()
	select {
	case l := <-got:
		l.Release()
	case <-time.After(5 * time.Second):
		t.Fatal("the second run never got the lock after the first released it")
	}
}

// TestExpiredLeaseIsTakenOver: a holder alive but stuck lets its lease
// expire. The next run ends its session, records it FAILED, and takes over;
// the stuck holder can no longer renew, so it cannot commit over its
// successor.
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	db, _ := ledgertest.DB(t)
	ctx := context.Background()
	stuck, err := db.LockRun(ctx, "wechatpay", testDay, reconcile.Shard{}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	run := reconcile.Run{ID: "stuck-1", Channel: "wechatpay", Day: testDay, Format: "wechatpay",
		File: "f", FileSHA256: "ab", StartedAt: time.Now()}
	if err := db.StartRun(ctx, run, ledger.Lease{Holder: stuck, For: time.Second}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	next, err := db.LockRun(ctx, "wechatpay", testDay, reconcile.Shard{}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("took over after %s, before the 1s lease expired", waited)
	}
	got, err := db.GetRun(ctx, "stuck-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != reconcile.RunFailed || !strings.Contains(got.Error, "lease expired") {
		t.Errorf("stuck run: got %s %q, want FAILED for its expired lease", got.Status, got.Error)
	}
	if err := stuck.Renew(ctx, "stuck-1", time.Minute); err == nil {
		t.Error("the stuck holder renewed its lease after being taken over")
	}
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: &reconcile.Result{Run: run}}); !errors.Is(err, reconcile.ErrConflict) {
		t.Errorf("the stuck run completed after being taken over: %v", err)
	}
	stuck.Release()
	t.Logf("figures: a stuck holder's 1s lease was taken over after %s", time.Since(start).Round(time.Millisecond))
}
