package matcher_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"reconcile"
	"reconcile/compensate"
	"reconcile/matcher"
	"reconcile/matcher/memory"
)

// TestRowsWithoutChannelID: a file may leave the channel id empty. Each
// duplicate row without one still has a fingerprint of its own, the same
// whatever the order of the file's lines, so each approved one gets a
// journal of its own; rows with a channel id keep the keys they had.
func TestRowsWithoutChannelID(t *testing.T) {
	rows := []reconcile.Transaction{
		pay("O1", "", 100, "09:00"),
		pay("O1", "", 100, "09:05"),
		pay("O1", "", 100, "09:05"), // the same as the line before in everything it says
		pay("O2", "T2", 100, "09:00"),
		pay("O2", "T3", 100, "09:01"),
	}
	locals := []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00"), order("O2", "PAID", 100, "09:00")}

	keysOf := func(rows []reconcile.Transaction) []string {
		var keys []string
		for _, f := range run(rows, locals).Findings {
			if f.Category != reconcile.DuplicatePayment {
				t.Fatalf("unexpected finding %+v", f)
			}
			if f.OrderNo == "O1" && (f.RowFingerprint == "" || f.AutoReverse) {
				t.Errorf("duplicate without a channel id: fingerprint %q, auto %v; want one, for review", f.RowFingerprint, f.AutoReverse)
			}
			keys = append(keys, compensate.IdempotencyKey("acme", f))
		}
		slices.Sort(keys)
		return keys
	}
	got := keysOf(rows)
	if len(got) != 3 || len(slices.Compact(slices.Clone(got))) != 3 {
		t.Fatalf("journal keys: got %q, want three different ones", got)
	}
	if !slices.Contains(got, "reversal/acme/T3") {
		t.Errorf("journal keys %q: the row with channel id T3 must keep reversal/acme/T3", got)
	}
	for _, k := range got {
		if k != "reversal/acme/T3" && !strings.HasPrefix(k, "reversal-row/acme/") {
			t.Errorf("journal key %q of a row without a channel id", k)
		}
	}
	// A corrected file with the lines in another order: the same keys.
	moved := []reconcile.Transaction{rows[4], rows[2], rows[3], rows[1], rows[0]}
	for i := range moved {
		moved[i].Line = i + 2
	}
	if again := keysOf(moved); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("keys after the lines moved: got %q, want %q", again, got)
	}
}

// TestRowWithoutChannelIDAcrossNights: a refund without a channel id
// settled again the next night at another time is a duplicate, for review;
// the same row delivered again is not. Both used to look like "the same
// channel id again" (the empty one), and the refund paid twice matched.
func TestRowWithoutChannelIDAcrossNights(t *testing.T) {
	yesterday := refund("O5", "R3", "", 5990, "17:09")
	yesterday.OccurredAt = yesterday.OccurredAt.AddDate(0, 0, -1)
	prev, _ := reconcile.NewBusinessDay("2026-11-27", shanghai)
	m := matcher.New(prev, matcher.Options{})
	m.AddRow(yesterday)
	m.Classify(matcher.Known{})
	blob := memory.Blob(m.Memory()) // as a run writes its night's memory

	local := localRefund("O5", "R3", "SUCCEEDED", 5990, "")
	local.SettledAt = yesterday.OccurredAt
	for _, tt := range []struct {
		name string
		row  reconcile.Transaction
		want []brief
	}{
		{"paid out again", refund("O5", "R3", "", 5990, "09:00"), []brief{{reconcile.DuplicateRefund, "R3", false}}},
		{"the same row again", yesterday, nil},
		{"the same row again, twice", yesterday, []brief{{reconcile.DuplicateRefund, "R3", false}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := matcher.New(day, matcher.Options{})
			m.AddRow(tt.row)
			if strings.HasSuffix(tt.name, "twice") {
				m.AddRow(tt.row)
			}
			m.AddLocal(local)
			if err := m.Nights().Add(prev.Start(), blob); err != nil {
				t.Fatal(err)
			}
			res := m.Classify(matcher.Known{})
			if got := briefs(res.Findings); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			if len(tt.want) > 0 && res.Findings[0].RowFingerprint == "" {
				t.Errorf("the duplicate has no row fingerprint")
			}
		})
	}
}

// TestVanishedRowWithoutChannelID: a reversed duplicate without a channel
// id is found again in a corrected file by its fingerprint.
func TestVanishedRowWithoutChannelID(t *testing.T) {
	rows := []reconcile.Transaction{refund("O5", "R3", "RT3", 5990, "17:09"), refund("O5", "R3", "", 5990, "17:10")}
	locals := []reconcile.LocalRecord{localRefund("O5", "R3", "SUCCEEDED", 5990, "17:09")}
	var reversed reconcile.Finding
	for _, f := range run(rows, locals).Findings {
		if f.Category == reconcile.DuplicateRefund {
			reversed = f
		}
	}
	if reversed.RowFingerprint == "" {
		t.Fatal("no duplicate with a fingerprint")
	}
	for _, tt := range []struct {
		name     string
		rows     []reconcile.Transaction
		vanished bool
	}{
		{"still there", rows, false},
		{"gone", rows[:1], true},
		{"another row without an id instead", []reconcile.Transaction{rows[0], refund("O5", "R3", "", 5990, "17:11")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(matcher.Options{}, tt.rows, nil, locals, reversed)
			got := false
			for _, f := range res.Findings {
				got = got || f.Category == reconcile.DuplicateVanished
			}
			if got != tt.vanished {
				t.Errorf("duplicate_vanished: got %v, want %v (%+v)", got, tt.vanished, briefs(res.Findings))
			}
		})
	}
}

// TestInterleavedRefundWithoutOurNumber: streamed beside the file, our
// record of a refund the file gives no refund number can come while the
// row waits for ResolveRefunds; it meets the row once that resolves it,
// whether it came before the file was read or after.
func TestInterleavedRefundWithoutOurNumber(t *testing.T) {
	row := refund("O1", "", "RE1", 30, "10:00")
	rec := localRefund("O1", "R1", "SUCCEEDED", 30, "10:00")
	rec.ChannelTxnID = "RE1"
	for _, before := range []bool{true, false} {
		m := matcher.New(day, matcher.Options{})
		m.Interleave()
		if before {
			m.AddLocal(rec) // held: no row has its key yet
		}
		m.AddRow(row)
		if !before {
			m.AddLocal(rec) // queued while the row waits for its number
		}
		m.ResolveRefunds([]reconcile.LocalRecord{rec})
		m.RowsDone()
		c := m.Classify(matcher.Known{})
		if c.Counts[reconcile.Matched] != 1 || len(c.Findings) != 0 {
			t.Errorf("record before the row %v: counts %v, findings %+v; want one match", before, c.Counts, c.Findings)
		}
	}
}
