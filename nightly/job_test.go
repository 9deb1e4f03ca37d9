package nightly_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/nightly"
	"reconcile/reports"
)

// TestJobWithoutConfig: a Job whose config was never loaded (no lease, no
// lock poll) refuses to run, saying how to build one, instead of spinning
// on a zero poll or panicking on a zero lease; nothing reaches the
// database, which it does not even have.
func TestJobWithoutConfig(t *testing.T) {
	bill := filepath.Join(t.TempDir(), "bill.csv")
	if err := os.WriteFile(bill, []byte("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	day, _ := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	var out bytes.Buffer
	job := &nightly.Job{Notifier: reports.NewPrintNotifier(&out), Now: time.Now}
	_, err := job.Run(context.Background(), nightly.RunSpec{Channel: "shop", Format: "csv", File: bill, Day: day})
	if err == nil || !strings.Contains(err.Error(), "config.Load or config.Default") {
		t.Fatalf("got %v, want the refusal naming how to build a Job", err)
	}
	if !strings.Contains(out.String(), "config.Load or config.Default") {
		t.Errorf("the failure alert does not say why:\n%s", out.String())
	}
}
