package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

var testDay = func() reconcile.BusinessDay {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	d, err := reconcile.NewBusinessDay("2026-11-28", loc)
	if err != nil {
		panic(err)
	}
	return d
}()

func startRun(t *testing.T, db *ledger.DB, id string) reconcile.Run {
	t.Helper()
	run := reconcile.Run{
		ID: id, Channel: "wechatpay", Day: testDay, Format: "wechatpay",
		File: "/bills/wechatpay-2026-11-28.csv", FileSHA256: "ab12",
		StartedAt: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC),
	}
	if err := db.StartRun(context.Background(), run, ledger.Lease{}); err != nil {
		t.Fatalf("StartRun(%s): %v", id, err)
	}
	run.Status = reconcile.RunRunning
	return run
}

func reversal(key, txn, order, refund string, amount int64) reconcile.Journal {
	return reconcile.Journal{
		IdempotencyKey: key, Kind: reconcile.JournalKindReversal, Channel: "wechatpay",
		OrderNo: order, RefundNo: refund, ChannelTxnID: txn, Row: txn, Currency: "CNY", Amount: amount,
		Memo: "reverse " + txn,
		Lines: reconcile.Postings{
			{Account: "customers:payments", Amount: amount, Currency: "CNY"},
			{Account: "channel:wechatpay:clearing", Amount: -amount, Currency: "CNY"},
		},
	}
}

// result is a run's outcome with two unambiguous duplicates (each with a
// journal) and three findings for review.
func result(run reconcile.Run) *reconcile.Result {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	findings := []reconcile.Finding{
		{Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "O-1", ChannelTxnID: "wx-1",
			LocalTxnID: "wx-1", HasChannel: true, ChannelAmount: 9980, Currency: "CNY", HasLocal: true,
			LocalAmount: 9900, LocalCurrency: "CNY", ChannelStatus: reconcile.StatusSuccess, LocalStatus: "PAID",
			IdemStatus: "DONE", OccurredAt: at, Line: 2, RawKind: "SUCCESS", Hint: "differs by 0.80"},
		{Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, OrderNo: "O-2", ChannelTxnID: "wx-2",
			HasChannel: true, ChannelAmount: 500, Currency: "CNY", ChannelStatus: reconcile.StatusSuccess,
			OccurredAt: at, Line: 3},
		{Category: reconcile.MissingChannel, Kind: reconcile.KindRefund, OrderNo: "O-3", RefundNo: "R-3",
			LocalTxnID: "wxr-3", HasLocal: true, LocalAmount: 0, LocalCurrency: "CNY", LocalStatus: "SUCCEEDED"},
		{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O-4", ChannelTxnID: "wx-4b",
			OriginalTxnID: "wx-4a", LocalTxnID: "wx-4a", HasChannel: true, ChannelAmount: 1200, Currency: "CNY",
			HasLocal: true, LocalAmount: 1200, LocalCurrency: "CNY", ChannelStatus: reconcile.StatusSuccess,
			LocalStatus: "PAID", OccurredAt: at, Line: 6, AutoReverse: true},
		{Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund, OrderNo: "O-5", RefundNo: "R-5",
			ChannelTxnID: "wxr-5b", OriginalTxnID: "wxr-5a", HasChannel: true, ChannelAmount: 300, Currency: "CNY",
			HasLocal: true, LocalAmount: 300, LocalCurrency: "CNY", ChannelStatus: reconcile.StatusSuccess,
			LocalStatus: "SUCCEEDED", OccurredAt: at, Line: 8, AutoReverse: true},
	}
	counts := map[reconcile.Category]int{}
	for _, c := range reconcile.Categories {
		counts[c] = 0
	}
	counts[reconcile.Matched] = 10
	for _, f := range findings {
		counts[f.Category]++
	}
	run.FinishedAt = run.StartedAt.Add(42 * time.Second)
	return &reconcile.Result{
		Run: run, ChannelRows: 16, LocalRows: 14, Counts: counts, Findings: findings,
		Journals: []reconcile.Journal{
			reversal("reversal/wechatpay/wx-4b", "wx-4b", "O-4", "", 1200),
			reversal("reversal/wechatpay/wxr-5b", "wxr-5b", "O-5", "R-5", 300),
		},
	}
}

func TestCompleteRun(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	run := startRun(t, db, "run-1")
	res := result(run)

	posted, err := db.CompleteRun(ctx, ledger.Outcome{Result: res})
	if err != nil {
		t.Fatalf("CompleteRun: %v", err)
	}
	if posted != 2 {
		t.Errorf("CompleteRun posted %d journals, want 2", posted)
	}

	t.Run("run", func(t *testing.T) {
		got, err := db.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != reconcile.RunSucceeded || !got.FinishedAt.Equal(res.Run.FinishedAt) || got.Error != "" {
			t.Errorf("run = %s finished %v error %q, want SUCCEEDED finished %v no error",
				got.Status, got.FinishedAt, got.Error, res.Run.FinishedAt)
		}
		if got.Day.String() != "2026-11-28" || got.Channel != "wechatpay" || got.FileSHA256 != "ab12" || !got.StartedAt.Equal(run.StartedAt) {
			t.Errorf("run = %+v, want day 2026-11-28, channel wechatpay, sha ab12, started %v", got, run.StartedAt)
		}
		var channelRows, localRows int
		var countsJSON []byte
		if err := db.Pool().QueryRow(ctx, `SELECT channel_rows, local_rows, counts FROM runs WHERE id = $1`, run.ID).
			Scan(&channelRows, &localRows, &countsJSON); err != nil {
			t.Fatal(err)
		}
		var counts map[reconcile.Category]int
		if err := json.Unmarshal(countsJSON, &counts); err != nil {
			t.Fatal(err)
		}
		if channelRows != 16 || localRows != 14 || !maps.Equal(counts, res.Counts) {
			t.Errorf("rows %d/%d counts %v, want 16/14 %v", channelRows, localRows, counts, res.Counts)
		}
	})

	t.Run("findings", func(t *testing.T) {
		got, err := db.RunFindings(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		assertFindings(t, got, res.Findings)
		states := findingStates(t, db, run.ID)
		want := map[string]string{
			"wx-1": "OPEN", "wx-2": "OPEN", "": "OPEN",
			"wx-4b": "REVERSED reversal/wechatpay/wx-4b", "wxr-5b": "REVERSED reversal/wechatpay/wxr-5b",
		}
		if !maps.Equal(states, want) {
			t.Errorf("finding states = %v, want %v", states, want)
		}
	})

	t.Run("journals", func(t *testing.T) {
		got, err := ledgertest.Journals(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		assertJournals(t, got, res.Journals)
	})

	t.Run("a re-run posts nothing new", func(t *testing.T) {
		again := result(startRun(t, db, "run-2"))
		posted, err := db.CompleteRun(ctx, ledger.Outcome{Result: again})
		if err != nil {
			t.Fatalf("CompleteRun: %v", err)
		}
		if posted != 0 {
			t.Errorf("re-run posted %d journals, want 0", posted)
		}
		if n, err := ledgertest.JournalCount(ctx, db); err != nil || n != 2 {
			t.Errorf("JournalCount = %d, %v; want 2", n, err)
		}
		// The re-run's findings still point at the journals posted before.
		if got := findingStates(t, db, "run-2")["wx-4b"]; got != "REVERSED reversal/wechatpay/wx-4b" {
			t.Errorf("re-run finding wx-4b = %q, want REVERSED with the existing journal's key", got)
		}
		var lines int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM journal_lines`).Scan(&lines); err != nil || lines != 4 {
			t.Errorf("journal_lines has %d rows (%v), want 4", lines, err)
		}
	})

	t.Run("completing a finished run is a conflict", func(t *testing.T) {
		_, err := db.CompleteRun(ctx, ledger.Outcome{Result: res})
		if !errors.Is(err, reconcile.ErrConflict) {
			t.Errorf("second CompleteRun(run-1) error = %v, want ErrConflict", err)
		}
		got, err := db.RunFindings(ctx, run.ID)
		if err != nil || len(got) != len(res.Findings) {
			t.Errorf("run-1 has %d findings (%v), want %d", len(got), err, len(res.Findings))
		}
	})

	t.Run("an unknown run is not found", func(t *testing.T) {
		r := res.Run
		r.ID = "no-such-run"
		_, err := db.CompleteRun(ctx, ledger.Outcome{Result: &reconcile.Result{Run: r}})
		if !errors.Is(err, reconcile.ErrNotFound) {
			t.Errorf("CompleteRun(unknown) error = %v, want ErrNotFound", err)
		}
	})
}

func TestCompleteRunRefusesBadResults(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	run := startRun(t, db, "run-bad")

	unbalanced := result(run)
	unbalanced.Journals[0].Lines[0].Amount++
	noJournal := result(run)
	noJournal.Journals = noJournal.Journals[:1]
	tests := []struct {
		name string
		res  *reconcile.Result
		want string
	}{
		{"unbalanced journal", unbalanced, "unbalanced"},
		{"auto-reversed finding without a journal", noJournal, "has no journal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.CompleteRun(ctx, ledger.Outcome{Result: tt.res})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CompleteRun error = %v, want one saying %q", err, tt.want)
			}
			assertNothingWritten(t, db, run.ID)
		})
	}
}

func TestCompleteRunConcurrently(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	const n = 4
	results := make([]*reconcile.Result, n)
	for i := range n {
		results[i] = result(startRun(t, db, fmt.Sprintf("run-%d", i)))
	}
	posted := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			posted[i], errs[i] = db.CompleteRun(ctx, ledger.Outcome{Result: results[i]})
		}()
	}
	wg.Wait()
	total := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("CompleteRun(run-%d): %v", i, errs[i])
		}
		total += posted[i]
	}
	if total != 2 {
		t.Errorf("concurrent runs posted %v journals, %d in all; want 2 in all", posted, total)
	}
	journals, err := ledgertest.Journals(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	assertJournals(t, journals, results[0].Journals)
	for i := range n {
		got, err := db.RunFindings(ctx, fmt.Sprintf("run-%d", i))
		if err != nil || len(got) != 5 {
			t.Errorf("run-%d has %d findings (%v), want 5", i, len(got), err)
		}
	}
}

// TestCompleteRunCancelled cancels CompleteRun after it has written its
// journals and findings, while it waits to update the run row, and checks
// that none of it was committed.
func TestCompleteRunCancelled(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	run := startRun(t, db, "run-cancel")

	// Hold the run row so CompleteRun blocks on its final UPDATE. NO KEY
	// UPDATE still lets the findings' and journals' foreign keys through.
	blocker, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(ctx)
	if _, err := blocker.Exec(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR NO KEY UPDATE`, run.ID); err != nil {
		t.Fatal(err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := db.CompleteRun(runCtx, ledger.Outcome{Result: result(run)})
		done <- err
	}()
	waitForBlockedUpdate(t, db)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled CompleteRun error = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("CompleteRun did not return after its context was cancelled")
	}
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	assertNothingWritten(t, db, run.ID)
}

// waitForBlockedUpdate waits until a session waits on a lock in UPDATE runs.
func waitForBlockedUpdate(t *testing.T, db *ledger.DB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.Pool().QueryRow(context.Background(), `
SELECT count(*) FROM pg_stat_activity
 WHERE datname = current_database() AND wait_event_type = 'Lock'
   AND query LIKE '%UPDATE runs%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("CompleteRun never reached its UPDATE of the run")
}

func assertNothingWritten(t *testing.T, db *ledger.DB, runID string) {
	t.Helper()
	ctx := context.Background()
	var findings, journals, lines int
	if err := db.Pool().QueryRow(ctx, `
SELECT (SELECT count(*) FROM findings), (SELECT count(*) FROM journals), (SELECT count(*) FROM journal_lines)`).
		Scan(&findings, &journals, &lines); err != nil {
		t.Fatal(err)
	}
	if findings != 0 || journals != 0 || lines != 0 {
		t.Errorf("after a failed CompleteRun: %d findings, %d journals, %d lines; want none", findings, journals, lines)
	}
	got, err := db.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != reconcile.RunRunning {
		t.Errorf("run status = %s, want RUNNING", got.Status)
	}
}

func TestJournalBalanceTrigger(t *testing.T) {
	tests := []struct {
		name  string
		lines string // VALUES rows of (line_no, account, amount, currency)
		ok    bool
	}{
		{"balanced", `(1, 'a', 100, 'CNY'), (2, 'b', -100, 'CNY')`, true},
		{"balanced in two currencies", `(1, 'a', 100, 'CNY'), (2, 'b', -100, 'CNY'), (3, 'a', 5, 'USD'), (4, 'b', -5, 'USD')`, true},
		{"off by one", `(1, 'a', 100, 'CNY'), (2, 'b', -99, 'CNY')`, false},
		{"zero overall but not per currency", `(1, 'a', 100, 'CNY'), (2, 'b', -100, 'USD')`, false},
		{"no lines", ``, false},
	}
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("raw-%d", i)
			tx, err := db.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var id int64
			if err := tx.QueryRow(ctx, `
INSERT INTO journals (idempotency_key, kind, channel, channel_txn_id, currency, amount)
VALUES ($1, 'reversal', 'wechatpay', $1, 'CNY', 100) RETURNING id`, key).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if tt.lines != "" {
				// Each line its own statement: the check must wait for commit.
				for _, row := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(tt.lines, "("), ")"), "), (") {
					if _, err := tx.Exec(ctx, fmt.Sprintf(
						`INSERT INTO journal_lines (journal_id, line_no, account, amount, currency) VALUES (%d, %s)`, id, row)); err != nil {
						t.Fatalf("insert line (%s): %v", row, err)
					}
				}
			}
			err = tx.Commit(ctx)
			var pgErr *pgconn.PgError
			switch {
			case tt.ok && err != nil:
				t.Errorf("commit: %v, want success", err)
			case !tt.ok && (!errors.As(err, &pgErr) || pgErr.Code != "23514"):
				t.Errorf("commit error = %v, want a check violation (23514)", err)
			}
			var n int
			if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM journals WHERE idempotency_key = $1`, key).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.ok]; n != want {
				t.Errorf("journals with key %s = %d, want %d", key, n, want)
			}
		})
	}

	t.Run("an update that unbalances is refused", func(t *testing.T) {
		err := db.Exec(ctx, `UPDATE journal_lines SET amount = amount + 1 WHERE line_no = 1`)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("unbalancing update error = %v, want a check violation (23514)", err)
		}
	})
}

func TestFailRun(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	run := startRun(t, db, "run-fail")
	finished := run.StartedAt.Add(time.Minute)
	const msg = "wechatpay-2026-11-28.csv:7: column 订单金额: not a plain decimal amount"

	if err := db.FailRun(ctx, run.ID, finished, msg); err != nil {
		t.Fatalf("FailRun: %v", err)
	}
	got, err := db.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != reconcile.RunFailed || got.Error != msg || !got.FinishedAt.Equal(finished) {
		t.Errorf("run = %s %q finished %v, want FAILED %q finished %v", got.Status, got.Error, got.FinishedAt, msg, finished)
	}

	tests := []struct {
		name string
		id   string
		want error
	}{
		{"twice", run.ID, reconcile.ErrConflict},
		{"unknown run", "no-such-run", reconcile.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := db.FailRun(ctx, tt.id, finished, "again"); !errors.Is(err, tt.want) {
				t.Errorf("FailRun(%s) error = %v, want %v", tt.id, err, tt.want)
			}
		})
	}
	t.Run("a failed run cannot complete", func(t *testing.T) {
		if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(run)}); !errors.Is(err, reconcile.ErrConflict) {
			t.Errorf("CompleteRun(failed run) error = %v, want ErrConflict", err)
		}
	})
}

func TestStartRunTwiceIsConflict(t *testing.T) {
	db, _ := ledgertest.DB(t)
	run := startRun(t, db, "run-dup")
	err := db.StartRun(context.Background(), run, ledger.Lease{})
	if !errors.Is(err, reconcile.ErrConflict) {
		t.Errorf("StartRun with a taken id: error = %v, want ErrConflict", err)
	}
}

func findingStates(t *testing.T, db *ledger.DB, runID string) map[string]string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `
SELECT coalesce(channel_txn_id, ''), state || coalesce(' ' || journal_key, '')
  FROM findings WHERE run_id = $1`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var txn, state string
		if err := rows.Scan(&txn, &state); err != nil {
			t.Fatal(err)
		}
		out[txn] = state
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertFindings(t *testing.T, got, want []reconcile.Finding) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d findings, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.OccurredAt.Equal(w.OccurredAt) {
			t.Errorf("finding %d OccurredAt = %v, want %v", i, g.OccurredAt, w.OccurredAt)
		}
		g.OccurredAt, w.OccurredAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("finding %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func assertJournals(t *testing.T, got, want []reconcile.Journal) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d journals, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Lines.Balanced() {
			t.Errorf("journal %s lines %v do not sum to zero", g.IdempotencyKey, g.Lines)
		}
		if fmt.Sprint(g.Lines) != fmt.Sprint(w.Lines) {
			t.Errorf("journal %s lines = %v, want %v", g.IdempotencyKey, g.Lines, w.Lines)
		}
		g.Lines, w.Lines = nil, nil
		if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
			t.Errorf("journal %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
