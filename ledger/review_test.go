package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"reconcile"
	"reconcile/compensate"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

var (
	reviewAt1 = time.Date(2026, 11, 29, 9, 10, 0, 0, time.UTC)
	reviewAt2 = time.Date(2026, 11, 29, 11, 30, 0, 0, time.UTC)
)

// reviewDay is a business date of its own, so these tests do not depend
// on the other ledger tests' fixtures.
func reviewDay(t *testing.T, date string) reconcile.BusinessDay {
	t.Helper()
	d, err := reconcile.NewBusinessDay(date, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// completeReviewRun writes a successful wechatpay run of date with the
// findings, and the automatic reversals of those marked AutoReverse.
func completeReviewRun(t *testing.T, db *ledger.DB, id, date string, fs []reconcile.Finding) {
	t.Helper()
	ctx := context.Background()
	run := reconcile.Run{
		ID: id, Channel: "wechatpay", Day: reviewDay(t, date), Format: "wechatpay",
		File: "/bills/wechatpay-" + date + ".csv", FileSHA256: "sha-" + id,
		StartedAt: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC),
	}
	if err := db.StartRun(ctx, run, ledger.Lease{}); err != nil {
		t.Fatalf("StartRun(%s): %v", id, err)
	}
	run.Status = reconcile.RunRunning
	run.FinishedAt = run.StartedAt.Add(time.Minute)
	counts := map[reconcile.Category]int{}
	for _, c := range reconcile.Categories {
		counts[c] = 0
	}
	for _, f := range fs {
		counts[f.Category]++
	}
	res := &reconcile.Result{
		Run: run, ChannelRows: len(fs), Counts: counts, Findings: fs,
		Journals: compensate.Plan("wechatpay", fs),
	}
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: res}); err != nil {
		t.Fatalf("CompleteRun(%s): %v", id, err)
	}
}

func duplicateFinding(ref, txn string, auto bool) reconcile.Finding {
	return reconcile.Finding{
		Ref: ref, Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O-4",
		ChannelTxnID: txn, OriginalTxnID: "wx-4a", LocalTxnID: "wx-4a", HasChannel: true,
		ChannelAmount: 1200, Currency: "CNY", HasLocal: true, LocalAmount: 1200, LocalCurrency: "CNY",
		ChannelStatus: reconcile.StatusSuccess, LocalStatus: "PAID", Line: 6, AutoReverse: auto,
	}
}

func missingLocal(ref, order string) reconcile.Finding {
	return reconcile.Finding{
		Ref: ref, Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, OrderNo: order,
		ChannelTxnID: "wx-" + order, HasChannel: true, ChannelAmount: 500, Currency: "CNY",
		ChannelStatus: reconcile.StatusSuccess, Line: 3,
	}
}

// reviewDB is a database with one run whose findings wait for decisions,
// and one finding reversed automatically.
func reviewDB(t *testing.T) *ledger.DB {
	t.Helper()
	db, _ := ledgertest.DB(t)
	fs := []reconcile.Finding{
		{Ref: "r1-amount", Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "O-1",
			ChannelTxnID: "wx-1", LocalTxnID: "wx-1", HasChannel: true, ChannelAmount: 9980, Currency: "CNY",
			HasLocal: true, LocalAmount: 9900, LocalCurrency: "CNY", ChannelStatus: reconcile.StatusSuccess,
			LocalStatus: "PAID", Line: 2},
		missingLocal("r1-missing", "O-2"),
		duplicateFinding("r1-dup", "wx-4c", false),
		duplicateFinding("r1-auto", "wx-4b", true),
	}
	for i := range 4 {
		fs = append(fs, missingLocal(fmt.Sprintf("r1-race-%d", i), fmt.Sprintf("O-race-%d", i)))
	}
	completeReviewRun(t, db, "r1", "2026-11-28", fs)
	return db
}

// findingRow is what the findings table says of a finding's review.
type findingRow struct {
	State                       reconcile.State
	DecidedBy, Note, JournalKey string
	Version                     int
	DecidedAt                   time.Time
}

func readFindingRow(t *testing.T, db *ledger.DB, ref string) findingRow {
	t.Helper()
	var r findingRow
	var at *time.Time
	err := db.Pool().QueryRow(context.Background(), `
SELECT state, coalesce(decided_by, ''), coalesce(note, ''), coalesce(journal_key, ''), version, decided_at
  FROM findings WHERE ref = $1`, ref).Scan(&r.State, &r.DecidedBy, &r.Note, &r.JournalKey, &r.Version, &at)
	if err != nil {
		t.Fatalf("read finding %s: %v", ref, err)
	}
	if at != nil {
		r.DecidedAt = at.UTC()
	}
	return r
}

func TestDecide(t *testing.T) {
	reject := ledger.Decision{Ref: "r1-amount", Version: 0, State: reconcile.StateRejected,
		Reviewer: "alice", Note: "channel short 0.80", At: reviewAt1}
	investigate := ledger.Decision{Ref: "r1-missing", Version: 0, State: reconcile.StateInvestigating,
		Reviewer: "alice", Note: "asking the order service", At: reviewAt1}
	rejectedByAlice := findingRow{State: reconcile.StateRejected, DecidedBy: "alice", Note: "channel short 0.80",
		Version: 1, DecidedAt: reviewAt1}

	tests := []struct {
		name        string
		before      []ledger.Decision // each must be recorded
		decide      ledger.Decision
		wantOutcome string
		wantDetail  []string // phrases the detail must hold
		ref         string   // the finding to check, when not decide.Ref
		wantRow     findingRow
	}{
		{
			name:        "recorded",
			decide:      reject,
			wantOutcome: ledger.OutcomeRecorded,
			wantRow:     rejectedByAlice,
		},
		{
			name:        "the same decision again is unchanged",
			before:      []ledger.Decision{reject},
			decide:      with(reject, func(d *ledger.Decision) { d.At = reviewAt2; d.Note = "imported again" }),
			wantOutcome: ledger.OutcomeUnchanged,
			wantRow:     rejectedByAlice,
		},
		{
			name:   "another decision on the old version is a conflict",
			before: []ledger.Decision{reject},
			decide: with(reject, func(d *ledger.Decision) {
				d.State, d.Reviewer, d.Note, d.At = reconcile.StateApproved, "bob", "fine by me", reviewAt2
			}),
			wantOutcome: ledger.OutcomeConflict,
			wantDetail:  []string{"REJECTED by alice", "2026-11-29", "version 1", "version 0"},
			wantRow:     rejectedByAlice,
		},
		{
			name:        "the same decision by another reviewer is a conflict",
			before:      []ledger.Decision{reject},
			decide:      with(reject, func(d *ledger.Decision) { d.Reviewer, d.At = "bob", reviewAt2 }),
			wantOutcome: ledger.OutcomeConflict,
			wantDetail:  []string{"REJECTED by alice"},
			wantRow:     rejectedByAlice,
		},
		{
			name:        "not found",
			decide:      with(reject, func(d *ledger.Decision) { d.Ref = "r9-nothing" }),
			wantOutcome: ledger.OutcomeNotFound,
			ref:         "r1-amount",
			wantRow:     findingRow{State: reconcile.StateOpen},
		},
		{
			name: "a finding reversed automatically is not open",
			decide: ledger.Decision{Ref: "r1-auto", State: reconcile.StateRejected, Reviewer: "alice",
				At: reviewAt1},
			wantOutcome: ledger.OutcomeNotOpen,
			wantDetail:  []string{string(reconcile.StateReversed)},
			wantRow: findingRow{State: reconcile.StateReversed,
				JournalKey: compensate.IdempotencyKey("wechatpay", reconcile.Finding{ChannelTxnID: "wx-4b"})},
		},
		{
			name:   "investigating may be approved on the new version",
			before: []ledger.Decision{investigate},
			decide: ledger.Decision{Ref: "r1-missing", Version: 1, State: reconcile.StateApproved,
				Reviewer: "bob", Note: "found the order", At: reviewAt2},
			wantOutcome: ledger.OutcomeRecorded,
			wantRow: findingRow{State: reconcile.StateApproved, DecidedBy: "bob", Note: "found the order",
				Version: 2, DecidedAt: reviewAt2},
		},
		{
			name:   "investigating approved on the old version is a conflict",
			before: []ledger.Decision{investigate},
			decide: ledger.Decision{Ref: "r1-missing", Version: 0, State: reconcile.StateApproved,
				Reviewer: "bob", At: reviewAt2},
			wantOutcome: ledger.OutcomeConflict,
			wantDetail:  []string{"INVESTIGATING by alice"},
			wantRow: findingRow{State: reconcile.StateInvestigating, DecidedBy: "alice",
				Note: "asking the order service", Version: 1, DecidedAt: reviewAt1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := reviewDB(t)
			for _, d := range tt.before {
				if got, err := db.Decide(ctx, d, nil); err != nil || got.Outcome != ledger.OutcomeRecorded {
					t.Fatalf("before: Decide(%+v) = %+v, %v, want recorded", d, got, err)
				}
			}
			got, err := db.Decide(ctx, tt.decide, nil)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if got.Outcome != tt.wantOutcome || got.Ref != tt.decide.Ref || got.Posted {
				t.Errorf("Decide = %+v, want outcome %q for %s, nothing posted", got, tt.wantOutcome, tt.decide.Ref)
			}
			for _, phrase := range tt.wantDetail {
				if !strings.Contains(got.Detail, phrase) {
					t.Errorf("detail %q does not say %q", got.Detail, phrase)
				}
			}
			ref := tt.ref
			if ref == "" {
				ref = tt.decide.Ref
			}
			if row := readFindingRow(t, db, ref); row != tt.wantRow {
				t.Errorf("finding %s: got %+v, want %+v", ref, row, tt.wantRow)
			}
		})
	}
}

func with(d ledger.Decision, change func(*ledger.Decision)) ledger.Decision {
	change(&d)
	return d
}

// approveDuplicate is the decision and journal for approving r1-dup.
func approveDuplicate(t *testing.T, db *ledger.DB) (ledger.Decision, *reconcile.Journal) {
	t.Helper()
	f, err := db.FindingByRef(context.Background(), "r1-dup")
	if err != nil {
		t.Fatal(err)
	}
	f.AutoReverse = true
	js := compensate.Plan(f.Channel, []reconcile.Finding{f.Finding})
	if len(js) != 1 {
		t.Fatalf("Plan gave %d journals, want 1", len(js))
	}
	return ledger.Decision{Ref: "r1-dup", State: reconcile.StateApproved, Reviewer: "alice", At: reviewAt1}, &js[0]
}

func TestDecideApprovedDuplicatePostsOneJournal(t *testing.T) {
	ctx := context.Background()
	db := reviewDB(t)
	d, j := approveDuplicate(t, db)
	wantKey := "reversal/wechatpay/wx-4c"
	if j.IdempotencyKey != wantKey {
		t.Fatalf("journal key %q, want %q", j.IdempotencyKey, wantKey)
	}

	got, err := db.Decide(ctx, d, j)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != ledger.OutcomeRecorded || !got.Posted || !strings.Contains(got.Detail, wantKey) {
		t.Errorf("Decide = %+v, want recorded, posted, detail naming %s", got, wantKey)
	}
	journals, err := ledgertest.Journals(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var found *reconcile.Journal
	for i := range journals {
		if journals[i].IdempotencyKey == wantKey {
			found = &journals[i]
		}
	}
	if len(journals) != 2 || found == nil {
		t.Fatalf("journals: got %d, want the automatic one and %s", len(journals), wantKey)
	}
	if len(found.Lines) != 2 || !found.Lines.Balanced() || found.Amount != 1200 || found.ChannelTxnID != "wx-4c" {
		t.Errorf("journal %+v, want two balanced lines reversing 1200 of wx-4c", *found)
	}
	var runID string
	if err := db.Pool().QueryRow(ctx, `SELECT run_id FROM journals WHERE idempotency_key = $1`, wantKey).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if runID != "r1" {
		t.Errorf("journal run_id %q, want the finding's run r1", runID)
	}
	row := readFindingRow(t, db, "r1-dup")
	if row.State != reconcile.StateApproved || row.JournalKey != wantKey || row.Version != 1 {
		t.Errorf("finding: got %+v, want APPROVED at version 1 pointing at %s", row, wantKey)
	}

	again, err := db.Decide(ctx, d, j)
	if err != nil {
		t.Fatal(err)
	}
	if again.Outcome != ledger.OutcomeUnchanged || again.Posted {
		t.Errorf("Decide again = %+v, want unchanged, nothing posted", again)
	}
	if n, err := ledgertest.JournalCount(ctx, db); err != nil || n != 2 {
		t.Errorf("journals after deciding again: %d, %v, want 2", n, err)
	}
}

func TestDecideReversalAlreadyPosted(t *testing.T) {
	ctx := context.Background()
	db := reviewDB(t)
	// A later night reversed the same channel row automatically.
	completeReviewRun(t, db, "r2", "2026-11-29", []reconcile.Finding{duplicateFinding("r2-auto", "wx-4c", true)})
	d, j := approveDuplicate(t, db)
	got, err := db.Decide(ctx, d, j)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != ledger.OutcomeRecorded || got.Posted || !strings.Contains(got.Detail, "already posted") {
		t.Errorf("Decide = %+v, want recorded, not posted, already posted", got)
	}
	if n, err := ledgertest.JournalCount(ctx, db); err != nil || n != 2 {
		t.Errorf("journals: %d, %v, want 2 (the row reversed once)", n, err)
	}
	if row := readFindingRow(t, db, "r1-dup"); row.JournalKey != j.IdempotencyKey {
		t.Errorf("finding journal_key %q, want %q", row.JournalKey, j.IdempotencyKey)
	}
}

func TestDecideRefusesAMisplacedReversal(t *testing.T) {
	ctx := context.Background()
	db := reviewDB(t)
	_, j := approveDuplicate(t, db)
	tests := []struct {
		name string
		d    ledger.Decision
		j    reconcile.Journal
	}{
		{"with a rejection", ledger.Decision{Ref: "r1-dup", State: reconcile.StateRejected, Reviewer: "alice"}, *j},
		{"on a finding that is no duplicate", ledger.Decision{Ref: "r1-amount", State: reconcile.StateApproved, Reviewer: "alice"}, *j},
		{"of another channel row", ledger.Decision{Ref: "r1-dup", State: reconcile.StateApproved, Reviewer: "alice"},
			func() reconcile.Journal { x := *j; x.ChannelTxnID = "wx-other"; return x }()},
		{"unbalanced", ledger.Decision{Ref: "r1-dup", State: reconcile.StateApproved, Reviewer: "alice"},
			func() reconcile.Journal { x := *j; x.Lines = x.Lines[:1]; return x }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := db.Decide(ctx, tt.d, &tt.j); err == nil {
				t.Errorf("Decide = %+v, want an error", got)
			}
			if row := readFindingRow(t, db, tt.d.Ref); row.State != reconcile.StateOpen || row.Version != 0 {
				t.Errorf("finding %s: got %+v, want still OPEN at version 0", tt.d.Ref, row)
			}
		})
	}
	if n, err := ledgertest.JournalCount(ctx, db); err != nil || n != 1 {
		t.Errorf("journals: %d, %v, want only the automatic one", n, err)
	}
}

func TestDecideRefusesAnIncompleteDecision(t *testing.T) {
	db := reviewDB(t)
	for _, d := range []ledger.Decision{
		{Ref: "r1-amount", State: reconcile.StateRejected},
		{Ref: "r1-amount", State: reconcile.StateOpen, Reviewer: "alice"},
		{State: reconcile.StateRejected, Reviewer: "alice"},
	} {
		if got, err := db.Decide(context.Background(), d, nil); err == nil {
			t.Errorf("Decide(%+v) = %+v, want an error", d, got)
		}
	}
	if row := readFindingRow(t, db, "r1-amount"); row.State != reconcile.StateOpen {
		t.Errorf("finding: got %+v, want still OPEN", row)
	}
}

func TestDecideConcurrentReviewers(t *testing.T) {
	ctx := context.Background()
	db := reviewDB(t)
	for i := range 4 {
		ref := fmt.Sprintf("r1-race-%d", i)
		ds := []ledger.Decision{
			{Ref: ref, State: reconcile.StateApproved, Reviewer: "alice", At: reviewAt1},
			{Ref: ref, State: reconcile.StateRejected, Reviewer: "bob", At: reviewAt2},
		}
		results := make([]ledger.DecisionResult, len(ds))
		errs := make([]error, len(ds))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for k, d := range ds {
			wg.Go(func() {
				<-start
				results[k], errs[k] = db.Decide(ctx, d, nil)
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		winner := -1
		for k, r := range results {
			switch r.Outcome {
			case ledger.OutcomeRecorded:
				if winner >= 0 {
					t.Fatalf("%s: both decisions recorded: %+v", ref, results)
				}
				winner = k
			case ledger.OutcomeConflict:
			default:
				t.Fatalf("%s: outcome %+v, want recorded or conflict", ref, r)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: neither decision recorded: %+v", ref, results)
		}
		loser := results[1-winner]
		if !strings.Contains(loser.Detail, ds[winner].Reviewer) {
			t.Errorf("%s: conflict detail %q does not name %s", ref, loser.Detail, ds[winner].Reviewer)
		}
		row := readFindingRow(t, db, ref)
		if row.State != ds[winner].State || row.DecidedBy != ds[winner].Reviewer || row.Version != 1 {
			t.Errorf("%s: got %+v, want %s by %s at version 1", ref, row, ds[winner].State, ds[winner].Reviewer)
		}
	}
}

func TestFindingByRefForReview(t *testing.T) {
	ctx := context.Background()
	db := reviewDB(t)
	f, err := db.FindingByRef(ctx, "r1-dup")
	if err != nil {
		t.Fatal(err)
	}
	if f.Ref != "r1-dup" || f.Category != reconcile.DuplicatePayment || f.ChannelTxnID != "wx-4c" ||
		f.ChannelAmount != 1200 || f.Channel != "wechatpay" || f.RunID != "r1" ||
		f.State != reconcile.StateOpen || f.Version != 0 || f.DecidedBy != "" {
		t.Errorf("FindingByRef = %+v, want the open duplicate wx-4c of run r1 at version 0", f)
	}
	if _, err := db.Decide(ctx, ledger.Decision{Ref: "r1-dup", State: reconcile.StateInvestigating,
		Reviewer: "alice", Note: "n", At: reviewAt1}, nil); err != nil {
		t.Fatal(err)
	}
	f, err = db.FindingByRef(ctx, "r1-dup")
	if err != nil {
		t.Fatal(err)
	}
	if f.State != reconcile.StateInvestigating || f.Version != 1 || f.DecidedBy != "alice" || f.Note != "n" ||
		!f.DecidedAt.Equal(reviewAt1) {
		t.Errorf("FindingByRef after a decision = %+v, want INVESTIGATING v1 by alice", f)
	}
	if _, err := db.FindingByRef(ctx, "r9-nothing"); !errors.Is(err, reconcile.ErrNotFound) {
		t.Errorf("FindingByRef(unknown) error %v, want ErrNotFound", err)
	}
}
