package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// trendRun writes a successful run of channel on date, shard and counts;
// a later run of the same date and shard supersedes it.
func trendRun(t *testing.T, db *ledger.DB, id, channel, date string, shard reconcile.Shard, counts map[reconcile.Category]int) {
	t.Helper()
	ctx := context.Background()
	day, err := reconcile.NewBusinessDay(date, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	run := reconcile.Run{
		ID: id, Channel: channel, Day: day, Format: "csv", File: "/bills/" + date + ".csv",
		FileSHA256: "sha-" + id, Shard: shard, StartedAt: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC),
	}
	if err := db.StartRun(ctx, run, ledger.Lease{}); err != nil {
		t.Fatalf("StartRun(%s): %v", id, err)
	}
	run.Status = reconcile.RunRunning
	run.FinishedAt = run.StartedAt.Add(time.Minute)
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: &reconcile.Result{Run: run, Counts: counts}}); err != nil {
		t.Fatalf("CompleteRun(%s): %v", id, err)
	}
}

func TestTrend(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	counts := func(n int) map[reconcile.Category]int {
		m := map[reconcile.Category]int{}
		for _, c := range reconcile.Categories {
			m[c] = 0
		}
		m[reconcile.Matched], m[reconcile.AmountMismatch], m[reconcile.MissingLocal] = 100+n, n, 2*n
		return m
	}
	// Seventeen dates with a run before 2026-11-28, one a day from
	// 2026-11-10 but none on 2026-11-20 (its run failed): the 14 latest are
	// 11-13 … 11-27 without 11-20.
	want := map[string]map[reconcile.Category]int{}
	for d := 10; d <= 27; d++ {
		date := fmt.Sprintf("2026-11-%02d", d)
		switch d {
		case 20:
			continue
		case 22:
			// Split in two shards: their counts are added up.
			trendRun(t, db, "run-22a", "wechatpay", date, reconcile.Shard{Index: 0, Count: 2}, counts(5))
			trendRun(t, db, "run-22b", "wechatpay", date, reconcile.Shard{Index: 1, Count: 2}, counts(17))
			want[date] = counts(22)
			want[date][reconcile.Matched] = 222 // 105 + 117
			continue
		case 25:
			// Superseded by a corrected file: only the second run counts.
			trendRun(t, db, "run-25-old", "wechatpay", date, reconcile.Shard{}, counts(900))
		}
		trendRun(t, db, fmt.Sprintf("run-%d", d), "wechatpay", date, reconcile.Shard{}, counts(d))
		want[date] = counts(d)
	}
	// Neither the day asked about nor a later one, nor another channel,
	// nor a failed run.
	trendRun(t, db, "run-28", "wechatpay", "2026-11-28", reconcile.Shard{}, counts(28))
	trendRun(t, db, "run-29", "wechatpay", "2026-11-29", reconcile.Shard{}, counts(29))
	trendRun(t, db, "alipay-27", "alipay", "2026-11-27", reconcile.Shard{}, counts(500))
	failed := reconcile.Run{
		ID: "run-20-failed", Channel: "wechatpay", Day: reviewDay(t, "2026-11-20"), Format: "csv",
		File: "/bills/2026-11-20.csv", FileSHA256: "sha-failed", StartedAt: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC),
	}
	if err := db.StartRun(ctx, failed, ledger.Lease{}); err != nil {
		t.Fatal(err)
	}
	if err := db.FailRun(ctx, failed.ID, time.Time{}, "bad file"); err != nil {
		t.Fatal(err)
	}

	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	before, err := reconcile.NewBusinessDay("2026-11-28", loc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Trend(ctx, "wechatpay", before, 14)
	if err != nil {
		t.Fatalf("Trend: %v", err)
	}
	var dates []string
	for d := 13; d <= 27; d++ {
		if d != 20 {
			dates = append(dates, fmt.Sprintf("2026-11-%02d", d))
		}
	}
	if len(got) != len(dates) {
		var gotDates []string
		for _, d := range got {
			gotDates = append(gotDates, d.Day.String())
		}
		t.Fatalf("got %d days %v, want the 14 latest before 2026-11-28 with a run: %v", len(got), gotDates, dates)
	}
	for i, d := range got {
		if d.Day.String() != dates[i] {
			t.Errorf("day %d: got %s, want %s", i, d.Day, dates[i])
		}
		if d.Day.Location != loc || d.Day.Date.Location() != loc || d.Day.Date.Hour() != 0 {
			t.Errorf("%s: got %v in %v, want midnight in the asked day's zone", d.Day, d.Day.Date, d.Day.Location)
		}
		if !maps.Equal(d.Counts, want[dates[i]]) {
			t.Errorf("%s counts: got %v, want %v", dates[i], d.Counts, want[dates[i]])
		}
	}

	t.Run("fewer", func(t *testing.T) {
		got, err := db.Trend(ctx, "wechatpay", before, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Day.String() != "2026-11-26" || got[1].Day.String() != "2026-11-27" {
			t.Errorf("got %+v, want 2026-11-26 and 2026-11-27", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		for _, n := range []int{14, 0} {
			got, err := db.Trend(ctx, "stripe", before, n)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != 0 {
				t.Errorf("n=%d: got %#v, want an empty, non-nil trend", n, got)
			}
		}
	})
}
