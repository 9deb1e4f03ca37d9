package channelfeed

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"reconcile"
)

// FuzzMapped reads arbitrary bytes through the semicolon_minor_units
// mapping: fuzzParser passes no mapping, which would only reach the
// missing-mapping error. It checks what fuzzParser checks: no panic, a
// *reconcile.ParseError that can be stored for every failure, and a
// well-formed canonical row that can be stored for every row accepted.
func FuzzMapped(f *testing.F) {
	fuzzMapped(f, filepath.Join("testdata", "mapped", "semicolon_minor_units"))
}

// FuzzMappedPayouts is FuzzMapped through the payouts mapping, which
// reads payout ids, dates and payout rows.
func FuzzMappedPayouts(f *testing.F) {
	fuzzMapped(f, filepath.Join("testdata", "mapped", "payouts"))
}

// fuzzMapped fuzzes the mapped parser with the mapping of golden case
// dir, seeded from every golden input.
func fuzzMapped(f *testing.F, dir string) {
	base := loadFuzzMapping(f, dir)
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*", "input.*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("Typ;Merchant Reference;Refund Reference;PSP Reference;Betrag;Waehrung;Buchungsdatum;Gebuehr\n" +
		"REFUND;O;R;P;-1;JPY;01.01.2026 00:00;-9223372036854775807\n"))
	p, err := Lookup("mapped")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts, payouts := fuzzPayouts(base)
		var rows []reconcile.Transaction
		err := p.Parse(t.Context(), bytes.NewReader(data), opts, func(tx reconcile.Transaction) error {
			rows = append(rows, tx)
			return nil
		})
		if err != nil {
			checkFuzzError(t, err)
			checkFuzzPayouts(t, err, nil, *payouts)
			return
		}
		checkFuzzRows(t, opts, rows)
		checkFuzzPayouts(t, nil, rows, *payouts)
		last := 1 // the header
		for _, r := range rows {
			if r.Amount < 0 {
				t.Errorf("line %d: Amount %d < 0", r.Line, r.Amount)
			}
			if _, ok := reconcile.CurrencyDigits(r.Currency); !ok {
				t.Errorf("line %d: unknown currency %q accepted", r.Line, r.Currency)
			}
			switch r.Kind {
			case reconcile.KindOther:
			case reconcile.KindBatch:
				if !mappingLists(opts.Mapping, reconcile.KindBatch, r.RawKind) && !mappingLists(opts.Mapping, reconcile.KindPayout, r.RawKind) {
					t.Errorf("line %d: batch row from %q, which the mapping lists under neither batch nor payout", r.Line, r.RawKind)
				}
			case reconcile.KindPayment:
				if r.OrderNo == "" || r.ChannelTxnID == "" || r.RefundNo != "" {
					t.Errorf("line %d: payment %+v without order number or channel id, or with a refund number", r.Line, r)
				}
			case reconcile.KindRefund:
				// Our refund number may be empty: the refund is then
				// matched by its channel id, which it must have.
				if r.ChannelTxnID == "" {
					t.Errorf("line %d: refund %+v without a channel id", r.Line, r)
				}
			case reconcile.KindChargeback, reconcile.KindChargebackReversal, reconcile.KindSecondChargeback, reconcile.KindRefundReversal:
				if !mappingLists(opts.Mapping, r.Kind, r.RawKind) {
					t.Errorf("line %d: Kind %q from %q, which the mapping does not list under it", r.Line, r.Kind, r.RawKind)
				}
			default:
				t.Errorf("line %d: Kind %q", r.Line, r.Kind)
			}
			checkEventIDs(t, r)
			switch r.Status {
			case reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed:
			default:
				t.Errorf("line %d: Status %q", r.Line, r.Status)
			}
			if y := r.OccurredAt.Year(); y < 1 || y > 9999 {
				t.Errorf("line %d: OccurredAt %v cannot be written as RFC 3339", r.Line, r.OccurredAt)
			}
			if r.Line <= last {
				t.Errorf("line %d follows line %d: rows out of file order", r.Line, last)
			}
			last = r.Line
		}
	})
}

// mappingLists reports whether m lists raw, a value of the kind column,
// under kind.
func mappingLists(m *Mapping, kind reconcile.Kind, raw string) bool {
	for _, v := range m.Kinds[string(kind)] {
		if matchKey(v) == matchKey(raw) {
			return true
		}
	}
	return false
}

// loadFuzzMapping reads a golden case's options.json as loadCaseOptions
// does, which needs a *testing.T.
func loadFuzzMapping(f *testing.F, dir string) Options {
	f.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "options.json"))
	if err != nil {
		f.Fatal(err)
	}
	var co caseOptions
	if err := json.Unmarshal(b, &co); err != nil {
		f.Fatalf("%s/options.json: %v", dir, err)
	}
	if co.Mapping == nil {
		f.Fatalf("%s/options.json has no Mapping", dir)
	}
	opts := fuzzOptions()
	opts.Mapping = co.Mapping
	return opts
}
