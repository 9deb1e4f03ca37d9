package matcher_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"reconcile"
	"reconcile/matcher"
	"reconcile/matcher/memory"
)

var shanghai = mustLoc("Asia/Shanghai")

func mustLoc(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

var day, _ = reconcile.NewBusinessDay("2026-11-28", shanghai)

func at(hhmm string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", "2026-11-28 "+hhmm, shanghai)
	if err != nil {
		panic(err)
	}
	return t
}

func pay(order, id string, amount int64, when string) reconcile.Transaction {
	return reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: order, ChannelTxnID: id,
		Amount: amount, Currency: "CNY", OccurredAt: at(when), Status: reconcile.StatusSuccess}
}

func refund(order, refundNo, id string, amount int64, when string) reconcile.Transaction {
	return reconcile.Transaction{Kind: reconcile.KindRefund, OrderNo: order, RefundNo: refundNo, ChannelTxnID: id,
		Amount: amount, Currency: "CNY", OccurredAt: at(when), Status: reconcile.StatusSuccess}
}

func order(no, status string, amount int64, when string) reconcile.LocalRecord {
	r := reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: no, Amount: amount, Currency: "CNY", Status: status}
	if when != "" {
		r.SettledAt = at(when)
	}
	return r
}

func localRefund(orderNo, no, status string, amount int64, when string) reconcile.LocalRecord {
	r := reconcile.LocalRecord{Kind: reconcile.KindRefund, OrderNo: orderNo, RefundNo: no, Amount: amount, Currency: "CNY", Status: status}
	if when != "" {
		r.SettledAt = at(when)
	}
	return r
}

func run(rows []reconcile.Transaction, locals []reconcile.LocalRecord) matcher.Classification {
	m := matcher.New(day, matcher.Options{})
	for _, r := range rows {
		m.AddRow(r)
	}
	for _, l := range locals {
		m.AddLocal(l)
	}
	return m.Classify(matcher.Known{})
}

// runInterleaved is run with the local records streamed before the rows
// are all in, as a run reads the day's window beside the file: every
// record first, then the rows.
func runInterleaved(rows []reconcile.Transaction, locals []reconcile.LocalRecord) matcher.Classification {
	m := matcher.New(day, matcher.Options{})
	m.Interleave()
	for i, l := range locals {
		// As the window hands them over: a batch whose text the caller
		// reuses once AddLocalRows returns.
		batch := []reconcile.LocalRow{l.Row()}
		m.AddLocalRows(batch)
		for _, b := range [][]byte{batch[0].OrderNo, batch[0].RefundNo, batch[0].ChannelTxnID,
			batch[0].Currency, batch[0].Status, batch[0].IdemStatus} {
			for j := range b {
				b[j] = '#'
			}
		}
		if i < len(rows) {
			m.AddRow(rows[i]) // and some rows between them
		}
	}
	for i := len(locals); i < len(rows); i++ {
		m.AddRow(rows[i])
	}
	m.RowsDone()
	return m.Classify(matcher.Known{})
}

// brief is the part of a finding a table test compares.
type brief struct {
	cat  reconcile.Category
	id   string
	auto bool
}

func briefs(fs []reconcile.Finding) []brief {
	var out []brief
	for _, f := range fs {
		out = append(out, brief{f.Category, f.ChannelTxnID + f.Key(), f.AutoReverse})
	}
	return out
}

func TestClassify(t *testing.T) {
	inProgress := func(r reconcile.LocalRecord) reconcile.LocalRecord { r.IdemStatus = reconcile.IdemInProgress; return r }
	failed := func(r reconcile.LocalRecord) reconcile.LocalRecord { r.IdemStatus = reconcile.IdemFailed; return r }
	yesterday := func(r reconcile.LocalRecord) reconcile.LocalRecord {
		r.SettledAt = r.SettledAt.AddDate(0, 0, -1)
		return r
	}
	processing := func(tx reconcile.Transaction) reconcile.Transaction {
		tx.Status = reconcile.StatusProcessing
		return tx
	}
	closed := func(tx reconcile.Transaction) reconcile.Transaction { tx.Status = reconcile.StatusFailed; return tx }
	usd := func(tx reconcile.Transaction) reconcile.Transaction { tx.Currency = "USD"; return tx }

	tests := []struct {
		name   string
		rows   []reconcile.Transaction
		locals []reconcile.LocalRecord
		want   []brief
		counts map[reconcile.Category]int
		hint   string // a phrase the first finding's hint must contain
	}{
		{
			name:   "matched payment and refund",
			rows:   []reconcile.Transaction{pay("O1", "T1", 9900, "09:00"), refund("O1", "R1", "RT1", 1000, "10:00")},
			locals: []reconcile.LocalRecord{order("O1", "REFUNDING", 9900, "09:00"), localRefund("O1", "R1", "SUCCEEDED", 1000, "10:00")},
			counts: map[reconcile.Category]int{reconcile.Matched: 2},
		},
		{
			name:   "matched with a local record of another date",
			rows:   []reconcile.Transaction{pay("O1", "T1", 9900, "09:00")},
			locals: []reconcile.LocalRecord{yesterday(order("O1", "SHIPPED", 9900, "23:59"))},
			counts: map[reconcile.Category]int{reconcile.Matched: 1},
		},
		{
			name: "missing local",
			rows: []reconcile.Transaction{pay("O1", "T1", 9900, "09:00")},
			want: []brief{{reconcile.MissingLocal, "T1O1", false}},
			hint: "no record",
		},
		{
			name:   "amount mismatch",
			rows:   []reconcile.Transaction{pay("O7", "T7", 8000, "09:00")},
			locals: []reconcile.LocalRecord{order("O7", "PAID", 8800, "09:00")},
			want:   []brief{{reconcile.AmountMismatch, "T7O7", false}},
			hint:   "80.00 CNY; we recorded 88.00 CNY",
		},
		{
			name:   "currency mismatch is an amount mismatch",
			rows:   []reconcile.Transaction{usd(pay("O7", "T7", 8000, "09:00"))},
			locals: []reconcile.LocalRecord{order("O7", "PAID", 8000, "09:00")},
			want:   []brief{{reconcile.AmountMismatch, "T7O7", false}},
		},
		{
			name:   "status mismatch: lost callback",
			rows:   []reconcile.Transaction{pay("O2", "T2", 100, "09:00")},
			locals: []reconcile.LocalRecord{order("O2", "PENDING", 100, "")},
			want:   []brief{{reconcile.StatusMismatch, "T2O2", false}},
			hint:   "lost callback",
		},
		{
			name:   "status mismatch: crash window",
			rows:   []reconcile.Transaction{refund("O2", "R2", "RT2", 100, "09:00")},
			locals: []reconcile.LocalRecord{inProgress(localRefund("O2", "R2", "PENDING", 100, ""))},
			want:   []brief{{reconcile.StatusMismatch, "RT2R2", false}},
			hint:   "IN_PROGRESS",
		},
		{
			name:   "processing refund agrees with a pending record",
			rows:   []reconcile.Transaction{processing(refund("O2", "R2", "RT2", 100, "09:00"))},
			locals: []reconcile.LocalRecord{localRefund("O2", "R2", "PENDING", 100, "")},
			counts: map[reconcile.Category]int{reconcile.Matched: 1},
		},
		{
			name:   "closed refund disagrees with a succeeded record",
			rows:   []reconcile.Transaction{closed(refund("O2", "R2", "RT2", 100, "09:00"))},
			locals: []reconcile.LocalRecord{localRefund("O2", "R2", "SUCCEEDED", 100, "09:00")},
			want:   []brief{{reconcile.StatusMismatch, "RT2R2", false}},
		},
		{
			name:   "missing channel: paid order of the day",
			locals: []reconcile.LocalRecord{order("O9", "PAID", 500, "12:00"), localRefund("O9", "R9", "SUCCEEDED", 500, "13:00")},
			want:   []brief{{reconcile.MissingChannel, "O9", false}, {reconcile.MissingChannel, "R9", false}},
			hint:   "no row",
		},
		{
			name: "not missing: pending, failed, or another day",
			locals: []reconcile.LocalRecord{
				order("O9", "PENDING", 500, ""), localRefund("O9", "R9", "FAILED", 500, "13:00"),
				yesterday(order("O8", "PAID", 500, "12:00")),
			},
			counts: map[reconcile.Category]int{},
		},
		{
			name:   "unambiguous duplicate refund",
			rows:   []reconcile.Transaction{refund("O5", "R3", "RT4", 5990, "17:10"), refund("O5", "R3", "RT3", 5990, "17:09")},
			locals: []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")},
			want:   []brief{{reconcile.DuplicateRefund, "RT4R3", true}},
			counts: map[reconcile.Category]int{reconcile.Matched: 1, reconcile.DuplicateRefund: 1},
			hint:   "reversed automatically",
		},
		{
			name:   "unambiguous duplicate payment, three copies: two reversals",
			rows:   []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T2", 100, "09:01"), pay("O1", "T3", 100, "09:02")},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")},
			want:   []brief{{reconcile.DuplicatePayment, "T2O1", true}, {reconcile.DuplicatePayment, "T3O1", true}},
		},
		{
			name:   "original is the earliest, then the lowest channel id",
			rows:   []reconcile.Transaction{pay("O1", "TB", 100, "09:00"), pay("O1", "TA", 100, "09:00")},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")},
			want:   []brief{{reconcile.DuplicatePayment, "TBO1", true}},
		},
		{
			name:   "ambiguous: different amounts",
			rows:   []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T2", 200, "09:01")},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")},
			want:   []brief{{reconcile.DuplicatePayment, "T2O1", false}},
			hint:   "different amounts",
		},
		{
			name:   "ambiguous: different currencies",
			rows:   []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), usd(pay("O1", "T2", 100, "09:01"))},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")},
			want:   []brief{{reconcile.DuplicatePayment, "T2O1", false}},
			hint:   "different amounts",
		},
		{
			name:   "ambiguous: repeated channel id",
			rows:   []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T1", 100, "09:00")},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")},
			want:   []brief{{reconcile.DuplicatePayment, "T1O1", false}},
			hint:   "appears more than once",
		},
		{
			name: "ambiguous: no local record",
			rows: []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T2", 100, "09:01")},
			want: []brief{{reconcile.MissingLocal, "T1O1", false}, {reconcile.DuplicatePayment, "T2O1", false}},
		},
		{
			name:   "ambiguous: local record not settled",
			rows:   []reconcile.Transaction{refund("O1", "R1", "RT1", 100, "09:00"), refund("O1", "R1", "RT2", 100, "09:01")},
			locals: []reconcile.LocalRecord{localRefund("O1", "R1", "PENDING", 100, "")},
			want:   []brief{{reconcile.StatusMismatch, "RT1R1", false}, {reconcile.DuplicateRefund, "RT2R1", false}},
		},
		{
			name:   "ambiguous: local amount differs",
			rows:   []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T2", 100, "09:01")},
			locals: []reconcile.LocalRecord{order("O1", "PAID", 90, "09:00")},
			want:   []brief{{reconcile.AmountMismatch, "T1O1", false}, {reconcile.DuplicatePayment, "T2O1", false}},
		},
		{
			name:   "ambiguous: idempotency record in progress",
			rows:   []reconcile.Transaction{refund("O1", "R1", "RT1", 100, "09:00"), refund("O1", "R1", "RT2", 100, "09:01")},
			locals: []reconcile.LocalRecord{inProgress(localRefund("O1", "R1", "SUCCEEDED", 100, "09:00"))},
			want:   []brief{{reconcile.DuplicateRefund, "RT2R1", false}},
			hint:   "IN_PROGRESS",
		},
		{
			name:   "ambiguous: idempotency record failed",
			rows:   []reconcile.Transaction{refund("O1", "R1", "RT1", 100, "09:00"), refund("O1", "R1", "RT2", 100, "09:01")},
			locals: []reconcile.LocalRecord{failed(localRefund("O1", "R1", "SUCCEEDED", 100, "09:00"))},
			want:   []brief{{reconcile.DuplicateRefund, "RT2R1", false}},
			hint:   "FAILED",
		},
		{
			name:   "ambiguous: a copy still processing",
			rows:   []reconcile.Transaction{refund("O1", "R1", "RT1", 100, "09:00"), processing(refund("O1", "R1", "RT2", 100, "09:01"))},
			locals: []reconcile.LocalRecord{localRefund("O1", "R1", "SUCCEEDED", 100, "09:00")},
			want:   []brief{{reconcile.DuplicateRefund, "RT2R1", false}},
			hint:   "not every row",
		},
		{
			name: "partial refunds with different refund numbers are not duplicates",
			rows: []reconcile.Transaction{refund("O1", "R1", "RT1", 100, "09:00"), refund("O1", "R2", "RT2", 100, "09:01")},
			locals: []reconcile.LocalRecord{
				localRefund("O1", "R1", "SUCCEEDED", 100, "09:00"), localRefund("O1", "R2", "SUCCEEDED", 100, "09:01"),
			},
			counts: map[reconcile.Category]int{reconcile.Matched: 2},
		},
		{
			name: "unrecognised row is surfaced",
			rows: []reconcile.Transaction{{Kind: reconcile.KindOther, OrderNo: "O1", ChannelTxnID: "T1", RawKind: "REVOKED", Amount: 100, Currency: "CNY", Line: 4}},
			want: []brief{{reconcile.Unrecognized, "T1O1", false}},
			hint: `"REVOKED"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(tt.rows, tt.locals)
			got := briefs(res.Findings)
			if inter := runInterleaved(tt.rows, tt.locals); !reflect.DeepEqual(inter, res) {
				t.Errorf("records streamed beside the rows: got %+v, want what one after the other gives, %+v", inter, res)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("finding %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			for cat, n := range tt.counts {
				if res.Counts[cat] != n {
					t.Errorf("count %s: got %d, want %d", cat, res.Counts[cat], n)
				}
			}
			if len(res.Counts) != len(reconcile.Categories) {
				t.Errorf("counts: got %d categories, want all %d", len(res.Counts), len(reconcile.Categories))
			}
			total := 0
			for _, n := range res.Counts {
				total += n
			}
			if want := len(res.Findings) + res.Counts[reconcile.Matched]; total != want {
				t.Errorf("counts sum: got %d, want %d", total, want)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint: got %q, want it to contain %q", res.Findings[0].Hint, tt.hint)
			}
		})
	}
}

func TestDuplicateCarriesOriginalAndLocal(t *testing.T) {
	res := run(
		[]reconcile.Transaction{refund("O5", "R3", "RT4", 5990, "17:10"), refund("O5", "R3", "RT3", 5990, "17:09")},
		[]reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")},
	)
	f := res.Findings[0]
	if f.OriginalTxnID != "RT3" || f.ChannelTxnID != "RT4" {
		t.Errorf("ids: got original %q duplicate %q, want RT3 and RT4", f.OriginalTxnID, f.ChannelTxnID)
	}
	if !f.HasLocal || f.LocalAmount != 5990 || f.LocalStatus != "SUCCEEDED" {
		t.Errorf("local side: got %+v", f)
	}
}

func TestKeys(t *testing.T) {
	m := matcher.New(day, matcher.Options{})
	m.AddRow(pay("O2", "T2", 1, "09:00"))
	m.AddRow(pay("O1", "T1", 1, "09:00"))
	m.AddRow(refund("O1", "R1", "RT1", 1, "09:00"))
	m.AddRow(pay("O1", "T3", 1, "09:00"))
	orders, refunds := m.Keys()
	if strings.Join(orders, ",") != "O1,O2" || strings.Join(refunds, ",") != "R1" {
		t.Errorf("keys: got %v %v, want [O1 O2] [R1]", orders, refunds)
	}
}

func TestDeterministic(t *testing.T) {
	rows := []reconcile.Transaction{pay("O3", "T3", 1, "09:00"), pay("O1", "T1", 2, "09:00"), pay("O2", "T2", 3, "09:00"), pay("O1", "T9", 2, "09:05")}
	first := briefs(run(rows, nil).Findings)
	for i := 0; i < 20; i++ {
		got := briefs(run(rows, nil).Findings)
		for j := range got {
			if got[j] != first[j] {
				t.Fatalf("run %d: got %+v, want %+v", i, got, first)
			}
		}
	}
}

func TestBatchRowsAreCountedNotMatched(t *testing.T) {
	rows := []reconcile.Transaction{
		pay("O1", "T1", 100, "09:00"),
		{Kind: reconcile.KindBatch, RawKind: "Fee", Amount: 120, Currency: "CNY", Line: 3},
		{Kind: reconcile.KindBatch, RawKind: "MerchantPayout", Amount: 17910, Currency: "CNY", Line: 4},
	}
	res := run(rows, []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00")})
	if res.ChannelRows != 3 || res.BatchRows != 2 {
		t.Errorf("rows: got %d channel, %d batch; want 3 and 2", res.ChannelRows, res.BatchRows)
	}
	if len(res.Findings) != 0 || res.Counts[reconcile.Matched] != 1 {
		t.Errorf("findings: got %+v, counts %v; want one match and nothing else", res.Findings, res.Counts)
	}
}

func runWith(opts matcher.Options, rows, earlier []reconcile.Transaction, locals []reconcile.LocalRecord, prev ...reconcile.Finding) matcher.Classification {
	m := matcher.New(day, opts)
	for _, r := range rows {
		m.AddRow(r)
	}
	for _, r := range earlier {
		m.AddEarlier(r)
	}
	for _, l := range locals {
		m.AddLocal(l)
	}
	var known matcher.Known
	for _, p := range prev {
		if p.Category == reconcile.Pending {
			known.Pending = append(known.Pending, p)
		} else {
			known.Reversed = append(known.Reversed, p)
		}
	}
	return m.Classify(known)
}

// TestMemoryAcrossNights: rule 7. A refund retried the next day after a
// crash is a duplicate of the earlier day's row; the same channel id again
// is the same row.
func TestMemoryAcrossNights(t *testing.T) {
	yesterdayRefund := refund("O5", "R3", "RT3", 5990, "17:09")
	yesterdayRefund.OccurredAt = yesterdayRefund.OccurredAt.AddDate(0, 0, -1)
	local := []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")}
	local[0].SettledAt = local[0].SettledAt.AddDate(0, 0, -1)

	tests := []struct {
		name  string
		rows  []reconcile.Transaction
		local []reconcile.LocalRecord
		want  []brief
		hint  string
	}{
		{
			name:  "retried next day under a new id: duplicate, reversed",
			rows:  []reconcile.Transaction{refund("O5", "R3", "RT4", 5990, "09:00")},
			local: local,
			want:  []brief{{reconcile.DuplicateRefund, "RT4R3", true}},
			hint:  "the original was settled in the file of 2026-11-27",
		},
		{
			name:  "the same id again is the same row: matched",
			rows:  []reconcile.Transaction{refund("O5", "R3", "RT3", 5990, "09:00")},
			local: local,
		},
		{
			name:  "retried with another amount: for review",
			rows:  []reconcile.Transaction{refund("O5", "R3", "RT4", 1000, "09:00")},
			local: local,
			want:  []brief{{reconcile.DuplicateRefund, "RT4R3", false}},
			hint:  "different amounts",
		},
		{
			name:  "the same row and a new one: the new one is the duplicate",
			rows:  []reconcile.Transaction{refund("O5", "R3", "RT3", 5990, "08:00"), refund("O5", "R3", "RT4", 5990, "09:00")},
			local: local,
			want:  []brief{{reconcile.DuplicateRefund, "RT4R3", true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(matcher.Options{}, tt.rows, []reconcile.Transaction{yesterdayRefund}, tt.local)
			got := briefs(res.Findings)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint %q does not contain %q", res.Findings[0].Hint, tt.hint)
			}
			if f := res.Findings; len(f) > 0 && f[0].OriginalTxnID != "RT3" {
				t.Errorf("original: got %q, want yesterday's RT3", f[0].OriginalTxnID)
			}
		})
	}
}

// TestCutOff: a record paid at 23:55 and missing from the day's file is
// pending; the next day's run resolves it when its file has it, and makes
// it missing_channel when not.
func TestCutOff(t *testing.T) {
	grace := matcher.Options{Grace: 30 * time.Minute}
	late := order("O9", "PAID", 500, "23:55")
	early := order("O8", "PAID", 500, "23:00")
	res := runWith(grace, nil, nil, []reconcile.LocalRecord{late, early})
	got := briefs(res.Findings)
	want := []brief{{reconcile.MissingChannel, "O8", false}, {reconcile.Pending, "O9", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("day D: got %+v, want %+v", got, want)
	}
	p := res.Findings[1]
	if p.NeedsReview() || res.Counts[reconcile.Pending] != 1 {
		t.Errorf("pending: needs review %v, count %d; want false and 1", p.NeedsReview(), res.Counts[reconcile.Pending])
	}
	p.Ref = "run1-0002"

	// D+1: the file has it, settled just after midnight.
	next := pay("O9", "T9", 500, "00:03")
	next.OccurredAt = next.OccurredAt.AddDate(0, 0, 1)
	res = runWith(grace, []reconcile.Transaction{next}, nil, []reconcile.LocalRecord{late}, p)
	if len(res.Findings) != 0 || fmt.Sprint(res.Resolved) != "[run1-0002]" || res.Counts[reconcile.Matched] != 1 {
		t.Errorf("D+1 with the row: findings %+v, resolved %v; want none, [run1-0002], one match", res.Findings, res.Resolved)
	}

	// D+1: the file does not have it.
	res = runWith(grace, nil, nil, nil, p)
	if got := briefs(res.Findings); fmt.Sprint(got) != fmt.Sprint([]brief{{reconcile.MissingChannel, "O9", false}}) ||
		fmt.Sprint(res.Escalated) != "[run1-0002]" {
		t.Errorf("D+1 without the row: findings %+v, escalated %v", got, res.Escalated)
	}

	// A record settled after a day's end and matched by that day's file is
	// not missing from the next day's.
	seen := order("O7", "PAID", 500, "00:05")
	m := matcher.New(day, grace)
	m.AddLocal(seen)
	if err := m.Nights().Add(day.Start().AddDate(0, 0, -1), memory.Blob(memory.Encode([]reconcile.Transaction{pay("O7", "T7", 500, "23:59")}))); err != nil {
		t.Fatal(err)
	}
	if res := m.Classify(matcher.Known{}); len(res.Findings) != 0 {
		t.Errorf("seen before: got %+v, want nothing", res.Findings)
	}
}

func TestVanishedDuplicate(t *testing.T) {
	reversed := reconcile.Finding{Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund, OrderNo: "O5",
		RefundNo: "R3", ChannelTxnID: "RT4", ChannelAmount: 5990, Currency: "CNY", AutoReverse: true, HasChannel: true}
	rows := []reconcile.Transaction{refund("O5", "R3", "RT3", 5990, "17:09")}
	res := runWith(matcher.Options{}, rows, nil, []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")}, reversed)
	got := briefs(res.Findings)
	if fmt.Sprint(got) != fmt.Sprint([]brief{{reconcile.DuplicateVanished, "RT4R3", false}}) || !res.Findings[0].NeedsReview() {
		t.Fatalf("got %+v, want one duplicate_vanished for review", got)
	}
	// Still carried: nothing to say.
	rows = append(rows, refund("O5", "R3", "RT4", 5990, "17:10"))
	res = runWith(matcher.Options{}, rows, nil, []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")}, reversed)
	for _, f := range res.Findings {
		if f.Category == reconcile.DuplicateVanished {
			t.Errorf("duplicate still in the file reported vanished: %+v", f)
		}
	}
}

// TestMemoryRoundTrip: a night's rows written as a memory blob and read
// back by the next night's matcher give the same classification as the
// rows themselves.
func TestMemoryRoundTrip(t *testing.T) {
	yesterday := []reconcile.Transaction{
		refund("O5", "R3", "RT3", 5990, "17:09"),
		pay("O1", "T1", 100, "09:00"),
		pay("O2", "T2", 200, "09:00"),
	}
	blob := memory.Blob(memory.Encode(yesterday))
	if len(blob) != 3*40 {
		t.Fatalf("blob: got %d bytes, want 3 records of 40", len(blob))
	}
	local := []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09"), order("O1", "PAID", 100, "09:00")}
	local[0].SettledAt = local[0].SettledAt.AddDate(0, 0, -1)
	local[1].SettledAt = local[1].SettledAt.AddDate(0, 0, -1)
	// Paid just after yesterday's end and carried by yesterday's file: not
	// missing from today's.
	late := order("O2", "PAID", 200, "00:04")

	m := matcher.New(day, matcher.Options{Grace: 30 * time.Minute})
	m.AddRow(refund("O5", "R3", "RT4", 5990, "09:00")) // retried under a new id
	m.AddRow(pay("O1", "T1", 100, "10:00"))            // the same row again
	for _, l := range append(local, late) {
		m.AddLocal(l)
	}
	if err := m.Nights().Add(day.Start().AddDate(0, 0, -1), blob); err != nil {
		t.Fatal(err)
	}
	res := m.Classify(matcher.Known{})
	got := briefs(res.Findings)
	want := []brief{{reconcile.DuplicateRefund, "RT4R3", true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("findings: got %+v, want %+v", got, want)
	}
	if f := res.Findings[0]; f.OriginalTxnID != "" || !strings.Contains(f.Hint, "file of 2026-11-27") {
		t.Errorf("duplicate of an earlier night: original %q, hint %q", f.OriginalTxnID, f.Hint)
	}
	if res.Counts[reconcile.Matched] != 1 {
		t.Errorf("matched: got %d, want 1 (the same row again)", res.Counts[reconcile.Matched])
	}
	if err := m.Nights().Add(day.Start(), blob[:39]); !errors.Is(err, memory.ErrDamaged) {
		t.Errorf("damaged blob: got %v, want ErrMemory", err)
	}
}

func BenchmarkMatch(b *testing.B) {
	const n = 200000
	rows := make([]reconcile.Transaction, n)
	locals := make([]reconcile.LocalRecord, n)
	for i := range rows {
		key := fmt.Sprintf("ORD2026112800%07d", i)
		rows[i] = pay(key, fmt.Sprintf("42000099992026112800%08d", i), int64(100+i%900), "10:00")
		locals[i] = order(key, "PAID", int64(100+i%900), "10:00")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		m := matcher.New(day, matcher.Options{ExpectRows: n})
		for _, r := range rows {
			m.AddRow(r)
		}
		for _, l := range locals {
			m.AddLocal(l)
		}
		res := m.Classify(matcher.Known{})
		_ = m.Memory()
		if res.Counts[reconcile.Matched] != n {
			b.Fatalf("matched %d of %d", res.Counts[reconcile.Matched], n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkClassify times the classification alone, over an index built
// once: the matcher's share of a run once the rows are in.
func BenchmarkClassify(b *testing.B) {
	const n = 200000
	m := matcher.New(day, matcher.Options{ExpectRows: n})
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("ORD2026112800%07d", i)
		m.AddRow(pay(key, fmt.Sprintf("42000099992026112800%08d", i), int64(100+i%900), "10:00"))
		m.AddLocal(order(key, "PAID", int64(100+i%900), "10:00"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		if res := m.Classify(matcher.Known{}); res.Counts[reconcile.Matched] != n {
			b.Fatalf("matched %d of %d", res.Counts[reconcile.Matched], n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestMemoryIsSorted: the records come out sorted by key hash, each
// exactly once, also when several processors scatter and sort them.
func TestMemoryIsSorted(t *testing.T) {
	for _, n := range []int{1, 2, 5000, 150000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var rows []reconcile.Transaction
			for i := 0; i < n; i++ {
				rows = append(rows, pay(fmt.Sprintf("O%d", i), fmt.Sprintf("T%d", i), int64(i), "10:00"))
			}
			blob := memory.Blob(memory.Encode(rows))
			if len(blob) != n*40 {
				t.Fatalf("blob: %d bytes, want %d", len(blob), n*40)
			}
			keys := map[string]bool{}
			for i := 0; i < n; i++ {
				keys[string(blob[i*40:i*40+16])] = true
				if i > 0 && bytes.Compare(blob[(i-1)*40:(i-1)*40+16], blob[i*40:i*40+16]) > 0 {
					t.Fatalf("record %d is out of order", i)
				}
			}
			if len(keys) != n {
				t.Errorf("%d different keys in the blob, want %d", len(keys), n)
			}
		})
	}
}

// TestMemoryInParts: a night's memory laid out in parts with its filter,
// of which tonight reads only the parts its keys may be in, gives what the
// whole blob gives; and the filter leaves most parts unread.
func TestMemoryInParts(t *testing.T) {
	const n = 100_000
	var earlier []reconcile.Transaction
	for i := 0; i < n; i++ {
		earlier = append(earlier, pay(fmt.Sprintf("O%06d", i), fmt.Sprintf("T%06d", i), 100, "10:00"))
	}
	lay := memory.Encode(earlier)
	blob := memory.Blob(lay)
	rows := 0
	for i, p := range lay.Parts {
		if i > 0 && p.Index <= lay.Parts[i-1].Index {
			t.Fatalf("part %d has index %d after %d", i, p.Index, lay.Parts[i-1].Index)
		}
		if p.Rows != len(p.Records)/memory.RecordSize {
			t.Fatalf("part %d: %d rows in %d bytes", i, p.Rows, len(p.Records))
		}
		rows += p.Rows
	}
	if rows != n || len(lay.Parts) < 16 || len(lay.Filter) != 128<<lay.Bits {
		t.Fatalf("layout: %d parts (%d bits), filter %d bytes, %d rows; want every row of %d in the parts",
			len(lay.Parts), lay.Bits, len(lay.Filter), rows, n)
	}
	byIndex := map[int][]byte{}
	for _, p := range lay.Parts {
		byIndex[p.Index] = p.Records
	}

	run := func(parts bool) ([]brief, int) {
		m := matcher.New(day, matcher.Options{})
		// Every ten-thousandth key again under a new channel id: a
		// duplicate of the earlier night's row, wherever its hash falls;
		// many keys the earlier night never had; a local record missing
		// tonight that the earlier night carried (not missing) and one it
		// did not.
		for i := 0; i < n; i += 10000 {
			key := fmt.Sprintf("O%06d", i)
			m.AddRow(pay(key, "NEW"+key, 100, "09:00"))
			m.AddLocal(order(key, "PAID", 100, "09:00"))
		}
		for i := 0; i < 5000; i++ {
			key := fmt.Sprintf("N%06d", i)
			m.AddRow(pay(key, "T"+key, 100, "09:00"))
			m.AddLocal(order(key, "PAID", 100, "09:00"))
		}
		m.AddLocal(order("O000001", "PAID", 100, "09:00"))
		m.AddLocal(order("GONE", "PAID", 100, "09:00"))
		date := day.Start().AddDate(0, 0, -1)
		read := 0
		if !parts {
			if err := m.Nights().Add(date, blob); err != nil {
				t.Fatal(err)
			}
			return briefs(m.Classify(matcher.Known{}).Findings), len(lay.Parts)
		}
		chosen, err := m.Nights().Parts(lay.Bits, lay.Filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range chosen {
			if records, ok := byIndex[p]; ok {
				read++
				if err := m.Nights().Add(date, records); err != nil {
					t.Fatal(err)
				}
			}
		}
		return briefs(m.Classify(matcher.Known{}).Findings), read
	}
	whole, _ := run(false)
	inParts, read := run(true)
	if len(whole) != n/10000+1 {
		t.Fatalf("whole blob: %d findings %v, want %d duplicates and GONE missing", len(whole), whole, n/10000)
	}
	if fmt.Sprint(inParts) != fmt.Sprint(whole) {
		t.Errorf("in parts: got %v, want %v", inParts, whole)
	}
	// 11 keys were in the earlier night: at most 11 parts hold them, and
	// 5,001 keys that were not should add hardly any.
	if read < 2 || read > 15 {
		t.Errorf("read %d of %d parts for 11 keys the earlier night had and 5,001 it had not; want 2 to 15", read, len(lay.Parts))
	}
	m := matcher.New(day, matcher.Options{})
	if _, err := m.Nights().Parts(lay.Bits, lay.Filter[1:]); !errors.Is(err, memory.ErrDamaged) {
		t.Errorf("a short filter: got %v, want ErrMemory", err)
	}
}

// TestMemoryAgainstManyKeys: with enough keys tonight that several
// processors hash and sort them, every key an earlier night carried is
// found, and only those.
func TestMemoryAgainstManyKeys(t *testing.T) {
	const n = 250_000
	var earlier []reconcile.Transaction
	m := matcher.New(day, matcher.Options{ExpectRows: n})
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("O%07d", i)
		m.AddRow(pay(key, "T"+key, 100, "09:00"))
		m.AddLocal(order(key, "PAID", 100, "09:00"))
		if i%1000 == 7 {
			earlier = append(earlier, pay(key, "OLD"+key, 100, "10:00"))
		}
	}
	if err := m.Nights().Add(day.Start().AddDate(0, 0, -1), memory.Blob(memory.Encode(earlier))); err != nil {
		t.Fatal(err)
	}
	res := m.Classify(matcher.Known{})
	if got := res.Counts[reconcile.DuplicatePayment]; got != len(earlier) {
		t.Errorf("duplicates of an earlier night: got %d, want %d", got, len(earlier))
	}
	if got := res.Counts[reconcile.Matched]; got != n-len(earlier) {
		t.Errorf("matched: got %d, want %d", got, n-len(earlier))
	}
}

// TestRawKindsKept: every finding shows its own row's word for its kind,
// whether the file names two such words or many more than the index
// keeps shared.
func TestRawKindsKept(t *testing.T) {
	for _, words := range []int{2, 20} {
		t.Run(fmt.Sprint(words), func(t *testing.T) {
			m := matcher.New(day, matcher.Options{})
			want := map[string]string{}
			for i := range 40 {
				no := fmt.Sprintf("O%02d", i)
				tx := pay(no, "T"+no, 100, "10:00")
				tx.RawKind = fmt.Sprintf("word-%d", i%words)
				if i%words == 13 {
					tx.RawKind += strings.Repeat("k", 300) // a length of two bytes before it
				}
				want[no] = tx.RawKind
				m.AddRow(tx)
				m.AddLocal(order(no, "PAID", 90, "10:00")) // an amount mismatch: a finding per row
			}
			res := m.Classify(matcher.Known{})
			if len(res.Findings) != 40 {
				t.Fatalf("got %d findings, want 40", len(res.Findings))
			}
			for _, f := range res.Findings {
				if f.RawKind != want[f.OrderNo] {
					t.Errorf("%s: got row kind %q, want %q", f.OrderNo, f.RawKind, want[f.OrderNo])
				}
			}
		})
	}
}

// TestRowTextLent: the matcher copies what it keeps of a row, so a row
// whose text is lent (a parser's reused slab) and overwritten once AddRow
// returns still reads as it was: the row of an unknown kind it reports,
// and the refund kept until its number is found.
func TestRowTextLent(t *testing.T) {
	buf := []byte("O1T1REVOKEDCNYO2WXR2")
	lent := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	m := matcher.New(day, matcher.Options{})
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	m.AddRow(reconcile.Transaction{Kind: reconcile.KindOther, OrderNo: lent(0, 2), ChannelTxnID: lent(2, 4),
		RawKind: lent(4, 11), Amount: 100, Currency: lent(11, 14), OccurredAt: at, Line: 4})
	m.AddRow(reconcile.Transaction{Kind: reconcile.KindRefund, OrderNo: lent(14, 16), ChannelTxnID: lent(16, 20),
		Amount: 50, Currency: lent(11, 14), Status: reconcile.StatusSuccess, OccurredAt: at, Line: 5})
	for i := range buf {
		buf[i] = 'x'
	}
	if ids := m.UnkeyedRefunds(); len(ids) != 1 || ids[0] != "WXR2" {
		t.Errorf("refund kept without its number: got ids %q, want WXR2", ids)
	}
	var got *reconcile.Finding
	c := m.Classify(matcher.Known{})
	for i, f := range c.Findings {
		if f.Category == reconcile.Unrecognized {
			got = &c.Findings[i]
		}
	}
	if got == nil || got.OrderNo != "O1" || got.ChannelTxnID != "T1" || got.RawKind != "REVOKED" || got.Currency != "CNY" {
		t.Errorf("the row of an unknown kind: got %+v, want O1 T1 REVOKED CNY", got)
	}
}

// currency is the i-th of the codes AAA, AAB, …, which sort as i does.
func currency(i int) string {
	return string([]byte{'A' + byte(i/26/26%26), 'A' + byte(i/26%26), 'A' + byte(i%26)})
}

// TestManyLocalCurrencies: a local table with more currencies than a run
// codes has each record's currency read back as it was.
func TestManyLocalCurrencies(t *testing.T) {
	const n = 600
	m := matcher.New(day, matcher.Options{})
	for i := range n {
		no := fmt.Sprintf("O%04d", i)
		m.AddRow(pay(no, "T"+no, 100, "10:00"))
		rec := order(no, "PAID", 100, "10:00")
		rec.Currency = currency(i)
		m.AddLocal(rec)
	}
	res := m.Classify(matcher.Known{})
	if len(res.Findings) != n {
		t.Fatalf("got %d findings, want an amount mismatch for each of the %d records", len(res.Findings), n)
	}
	for _, f := range res.Findings {
		var i int
		fmt.Sscanf(f.OrderNo, "O%04d", &i)
		if f.LocalCurrency != currency(i) || f.Category != reconcile.AmountMismatch {
			t.Fatalf("%s: %s with local currency %q, want amount_mismatch and %q", f.OrderNo, f.Category, f.LocalCurrency, currency(i))
		}
	}
}

// TestManyRowCurrencies: a file with more currencies than a run codes has
// each row's currency read back as it was, in its findings and its fees.
func TestManyRowCurrencies(t *testing.T) {
	const n = 600
	m := matcher.New(day, matcher.Options{})
	for i := range n {
		no := fmt.Sprintf("O%04d", i)
		tx := pay(no, "T"+no, 100, "10:00")
		tx.Currency = currency(i)
		m.AddRow(tx)
		rec := order(no, "PAID", 100, "10:00")
		rec.Currency = currency(i + i%2) // the odd ones differ
		m.AddLocal(rec)
	}
	res := m.Classify(matcher.Known{})
	if res.Counts[reconcile.AmountMismatch] != n/2 || len(res.Fees) != n {
		t.Fatalf("got %v and fees in %d currencies, want %d amount mismatches and %d currencies", res.Counts, len(res.Fees), n/2, n)
	}
	for _, f := range res.Findings {
		var i int
		fmt.Sscanf(f.OrderNo, "O%04d", &i)
		if f.Currency != currency(i) || f.LocalCurrency != currency(i+1) || i%2 == 0 {
			t.Fatalf("%s: %s in %q, local %q; want an odd order in %q, local %q", f.OrderNo, f.Category, f.Currency, f.LocalCurrency, currency(i), currency(i+1))
		}
	}
	for i, fee := range res.Fees {
		if fee.Currency != currency(i) || fee.Rows != 1 {
			t.Fatalf("fees %d: %+v, want one row of %s", i, fee, currency(i))
		}
	}
}

// TestKeyPastBound: the matcher refuses, loudly, a row whose key is
// longer than reconcile.MaxKeyBytes, which the parsers and the ledger
// never give it: its lengths are kept in 16 bits.
func TestKeyPastBound(t *testing.T) {
	m := matcher.New(day, matcher.Options{})
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "order number of 2049 bytes") {
			t.Errorf("recovered %v, want a panic naming the order number's length", r)
		}
	}()
	m.AddRow(pay(strings.Repeat("O", reconcile.MaxKeyBytes+1), "T1", 100, "10:00"))
}

// TestManyLocalWords: local tables that write a status of their own on
// every record (a view gone wrong, or a hostile one) still have each
// record's status read back as it was, past the words a run keeps coded.
func TestManyLocalWords(t *testing.T) {
	const n = 70_000
	m := matcher.New(day, matcher.Options{ExpectRows: n})
	for i := range n {
		no := fmt.Sprintf("O%06d", i)
		m.AddRow(pay(no, "T"+no, 100, "10:00"))
	}
	for i := range n {
		no := fmt.Sprintf("O%06d", i)
		m.AddLocal(order(no, fmt.Sprintf("S%06d", i), 100, "10:00"))
	}
	res := m.Classify(matcher.Known{})
	if len(res.Findings) != n {
		t.Fatalf("got %d findings, want one status mismatch for each of the %d records", len(res.Findings), n)
	}
	for _, f := range res.Findings {
		if want := "S" + f.OrderNo[1:]; f.LocalStatus != want {
			t.Fatalf("%s: local status read back as %q, want %q", f.OrderNo, f.LocalStatus, want)
		}
	}
}
