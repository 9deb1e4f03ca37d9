package matcher_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"reconcile"
	"reconcile/matcher"
	"reconcile/matcher/memory"
)

// memoryRows is a night's file for TestMemoryLayout: each kind, each
// status, a status the parser did not know, three currencies, a negative
// amount, a row without a channel id, and rows that are not remembered.
func memoryRows() []reconcile.Transaction {
	processing := pay("O2", "T2", 250, "10:00")
	processing.Status = reconcile.StatusProcessing
	failed := refund("O3", "R3", "RT3", 990, "11:00")
	failed.Status = reconcile.StatusFailed
	jpy := pay("O4", "T4", 1200, "12:00")
	jpy.Currency = "JPY"
	unknown := pay("O5", "T5", -75, "13:00")
	unknown.Currency, unknown.Status = "USD", ""
	return []reconcile.Transaction{
		pay("O1", "T1", 100, "09:00"),
		refund("O1", "R1", "RT1", 40, "09:30"),
		processing,
		failed,
		jpy,
		unknown,
		refund("O6", "R6", "", 5990, "14:00"), // no channel id: its fingerprint stands for it
		{Kind: reconcile.KindBatch, ChannelTxnID: "B1", Amount: -300, Currency: "CNY", OccurredAt: at("15:00"), Status: reconcile.StatusSuccess},
		{Kind: reconcile.KindOther, RawKind: "ADJUSTMENT", ChannelTxnID: "X1", Amount: 1, Currency: "CNY", OccurredAt: at("16:00"), Status: reconcile.StatusSuccess},
	}
}

// wantMemory is the memory of memoryRows, one record a line, its fields
// apart: key hash, channel id hash, amount, currency, status (one up:
// success, processing, failed), kind (payment 1, refund 2), padding.
// Memories are kept in the database across nights, so these bytes are
// what earlier nights wrote: a change here is a migration, not a test to
// refresh.
const wantMemory = `
280b0eea7b9c7ee209c97b5128e7f510 26b883eeb27bb101 0000000000001766 434e59 01 02 000000
2d01970629519f398ea815988ce32a6e 0934ff07b5c72ff6 0000000000000064 434e59 01 01 000000
6556962021c01e7cbf87e534c8faf6f5 09350407b5c73875 00000000000004b0 4a5059 01 01 000000
adf5af55c256d241fda3c6bbb09f43fb a02c0f19fedde706 0000000000000028 434e59 01 02 000000
baa8c9592195d79be97852e92cf80ab9 a02c0d19fedde3a0 00000000000003de 434e59 03 02 000000
de61c42c07ee1b937d875a89c212b16b 0934fe07b5c72e43 00000000000000fa 434e59 02 01 000000
f0a271ff5d9f0060e00e19b4a58fc142 09350307b5c736c2 ffffffffffffffb5 555344 01 01 000000
`

// TestMemoryLayout: the memory a run writes is, byte for byte, the one
// earlier runs wrote, and the next night reads it back.
func TestMemoryLayout(t *testing.T) {
	want, err := hex.DecodeString(strings.Join(strings.Fields(wantMemory), ""))
	if err != nil {
		t.Fatal(err)
	}
	m := matcher.New(day, matcher.Options{})
	for _, r := range memoryRows() {
		m.AddRow(r)
	}
	m.Classify(matcher.Known{})
	if got := memory.Blob(m.Memory()); !bytes.Equal(got, want) {
		t.Errorf("Memory:\n%s\nwant:\n%s", records(got), records(want))
	}
	if got := memory.Blob(memory.Encode(memoryRows())); !bytes.Equal(got, want) {
		t.Errorf("memory.Encode:\n%s\nwant:\n%s", records(got), records(want))
	}

	// The next night: O1's row again is the same row; O4 under a new id
	// is a duplicate of a completed JPY payment, reversed; O2 under a new
	// id is a duplicate of a movement still processing, for review.
	next := matcher.New(day, matcher.Options{})
	again := pay("O4", "T4b", 1200, "09:00")
	again.Currency = "JPY"
	for _, r := range []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), again, pay("O2", "T2b", 250, "09:00")} {
		next.AddRow(r)
	}
	jpy := order("O4", "PAID", 1200, "09:00")
	jpy.Currency = "JPY"
	for _, l := range []reconcile.LocalRecord{order("O1", "PAID", 100, "09:00"), jpy, order("O2", "PAID", 250, "09:00")} {
		next.AddLocal(l)
	}
	if err := next.Nights().Add(day.Start(), want); err != nil {
		t.Fatal(err)
	}
	res := next.Classify(matcher.Known{})
	gotBriefs := briefs(res.Findings)
	wantBriefs := []brief{{reconcile.DuplicatePayment, "T2bO2", false}, {reconcile.DuplicatePayment, "T4bO4", true}}
	if fmt.Sprint(gotBriefs) != fmt.Sprint(wantBriefs) {
		t.Fatalf("the next night: got %+v, want %+v", gotBriefs, wantBriefs)
	}
	if h := res.Findings[0].Hint; !strings.Contains(h, "not every row is a completed movement") || strings.Contains(h, "different amounts") {
		t.Errorf("O2's hint: got %q, want only its earlier row still processing", h)
	}
	if res.Counts[reconcile.Matched] != 1 {
		t.Errorf("matched: got %d, want 1 (O1's row again)", res.Counts[reconcile.Matched])
	}
}

// records formats a memory blob as wantMemory is written.
func records(blob []byte) string {
	var b strings.Builder
	for i := 0; i+40 <= len(blob); i += 40 {
		r := blob[i : i+40]
		fmt.Fprintf(&b, "%x %x %x %x %x %x %x\n", r[:16], r[16:24], r[24:32], r[32:35], r[35:36], r[36:37], r[37:40])
	}
	return b.String()
}
