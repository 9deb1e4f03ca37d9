package channelfeed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"reconcile"
)

func FuzzCSV(f *testing.F)       { fuzzParser(f, "csv") }
func FuzzWeChatPay(f *testing.F) { fuzzParser(f, "wechatpay") }

// fuzzParser seeds from every golden input of the format and checks that
// the parser never panics, that every failure is a *reconcile.ParseError,
// and that whatever it accepts is a well-formed canonical row.
func fuzzParser(f *testing.F, format string) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*", "input.csv"))
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
	p, err := Lookup(format)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rows []reconcile.Transaction
		err := p.Parse(t.Context(), bytes.NewReader(data), Options{Name: "fuzz.csv", Location: shanghai}, func(tx reconcile.Transaction) error {
			rows = append(rows, tx)
			return nil
		})
		if err != nil {
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q (%T) is not a *reconcile.ParseError", err, err)
			}
			if pe.File != "fuzz.csv" || pe.Line < 0 {
				t.Fatalf("error %q names file %q line %d", err, pe.File, pe.Line)
			}
			return
		}
		last := 0
		for _, r := range rows {
			if r.Amount < 0 {
				t.Errorf("line %d: Amount %d < 0", r.Line, r.Amount)
			}
			if _, ok := reconcile.CurrencyDigits(r.Currency); !ok {
				t.Errorf("line %d: unknown currency %q accepted", r.Line, r.Currency)
			}
			switch r.Kind {
			case reconcile.KindPayment, reconcile.KindOther, reconcile.KindBatch:
			case reconcile.KindRefund:
				if r.RefundNo == "" {
					t.Errorf("line %d: refund without RefundNo", r.Line)
				}
			default:
				t.Errorf("line %d: Kind %q", r.Line, r.Kind)
			}
			switch r.Status {
			case reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed:
			default:
				t.Errorf("line %d: Status %q", r.Line, r.Status)
			}
			if r.Line <= last {
				t.Errorf("line %d follows line %d: rows out of file order", r.Line, last)
			}
			last = r.Line
		}
	})
}
