package reconcile_test

import (
	"errors"
	"testing"
	"time"

	"reconcile"
)

func TestSameAccount(t *testing.T) {
	for _, tc := range []struct {
		configured, stated string
		want               bool
	}{
		{"NL69INGB0123456789", "NL69INGB0123456789", true},
		{"NL69 INGB 0123 4567 89", "nl69ingb0123456789", true},
		{"NL69INGB0123456789", "NL69INGB0123456789EUR", true},
		{"NL34RABO0123456789", "NL34RABO0123456789 EUR", true},
		{"NL69INGB0123456789", "NL69INGB0123456789USD", false},
		{"NL69INGB0123456789", "NL69INGB012345678", false},
		{"", "", false},
	} {
		if got := reconcile.SameAccount(tc.configured, tc.stated, "EUR"); got != tc.want {
			t.Errorf("SameAccount(%q, %q) = %v, want %v", tc.configured, tc.stated, got, tc.want)
		}
	}
}

// TestBalanced: opening + credits − debits = closing, or a control total
// error; a statement without both balances has nothing to add up.
func TestBalanced(t *testing.T) {
	s := reconcile.BankStatement{Currency: "EUR", Opening: 1000, Closing: 1500, HasOpening: true, HasClosing: true, Credits: 700, Debits: 200}
	if err := s.Balanced(); err != nil {
		t.Errorf("balanced statement: %v", err)
	}
	s.Debits = 201
	if err := s.Balanced(); !errors.Is(err, reconcile.ErrControlTotal) {
		t.Errorf("off by a cent: %v", err)
	}
	s.Credits = 1<<63 - 1
	if err := s.Balanced(); !errors.Is(err, reconcile.ErrControlTotal) {
		t.Errorf("past int64: %v", err)
	}
	s.HasOpening = false
	if err := s.Balanced(); err != nil {
		t.Errorf("without an opening balance: %v", err)
	}
}

// TestEntryKey: the bank's reference names an entry; without one, what
// the entry says does, its line and statement aside.
func TestEntryKey(t *testing.T) {
	e := reconcile.BankEntry{Account: "ACC", Statement: "S1", Amount: 100, Currency: "EUR", Credit: true,
		BookedOn: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Remittance: "po_1", Line: 7}
	moved := e
	moved.Statement, moved.Line = "S1-corrected", 9
	if e.Key() != moved.Key() {
		t.Error("the key moved with the line or the statement")
	}
	for name, change := range map[string]func(*reconcile.BankEntry){
		"amount":       func(x *reconcile.BankEntry) { x.Amount = 101 },
		"account":      func(x *reconcile.BankEntry) { x.Account = "ACD" },
		"currency":     func(x *reconcile.BankEntry) { x.Currency = "USD" },
		"direction":    func(x *reconcile.BankEntry) { x.Credit = false },
		"reversal":     func(x *reconcile.BankEntry) { x.Reversal = true },
		"booking date": func(x *reconcile.BankEntry) { x.BookedOn = x.BookedOn.AddDate(0, 0, 1) },
		"value date":   func(x *reconcile.BankEntry) { x.ValueOn = x.BookedOn },
		"end to end":   func(x *reconcile.BankEntry) { x.EndToEndID = "E2E" },
		"type code":    func(x *reconcile.BankEntry) { x.TypeCode = "PMNT" },
		"counterparty": func(x *reconcile.BankEntry) { x.Counterparty = "STRIPE" },
		"remittance":   func(x *reconcile.BankEntry) { x.Remittance = "po_2" },
		// A field's text moved into its neighbour is another entry.
		"text moved": func(x *reconcile.BankEntry) { x.Counterparty, x.Remittance = "po", "_1" },
	} {
		other := e
		change(&other)
		if e.Key() == other.Key() {
			t.Errorf("two entries that differ in %s, one key", name)
		}
	}
	e.BankRef = "REF1"
	if got := e.Key(); got != "ACC/REF1" {
		t.Errorf("key with a reference: %q", got)
	}
}
