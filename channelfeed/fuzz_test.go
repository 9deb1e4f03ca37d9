package channelfeed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"reconcile"
)

func FuzzCSV(f *testing.F)       { fuzzParser(f, "csv") }
func FuzzWeChatPay(f *testing.F) { fuzzParser(f, "wechatpay") }

// fuzzParser seeds from every golden input of the format and checks that
// the parser never panics, that every failure is a *reconcile.ParseError
// whose text can be stored, and that whatever it accepts is a well-formed
// canonical row that can be stored too.
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
	f.Add([]byte("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\rpayment,ORD1,,TX1,1.00,CNY,2026-11-28 00:00:00\r"))
	f.Add([]byte("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\npayment,OR\x00D1,,TX1,1.00,CNY,2026-11-28 00:00:00\n"))
	f.Add([]byte("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\npayment,ORD1,,TX1,1.00,CNY,9999-11-28 00:00:00\n"))
	p, err := Lookup(format)
	if err != nil {
		f.Fatal(err)
	}
	opts := fuzzOptions()
	f.Fuzz(func(t *testing.T, data []byte) {
		var rows []reconcile.Transaction
		err := p.Parse(t.Context(), bytes.NewReader(data), opts, func(tx reconcile.Transaction) error {
			rows = append(rows, tx)
			return nil
		})
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		checkFuzzRows(t, opts, rows)
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
				if r.RefundNo == "" && r.RefundID() == "" {
					t.Errorf("line %d: refund with neither a RefundNo nor a channel id to match it by", r.Line)
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

// fuzzOptions are the settings the fuzzers parse with. The time window
// holds every row of the seeds (1970 to 2026), so they still reach the
// end of their files, and a year the fuzzer changes a digit of falls
// outside it often enough to fuzz the check too.
func fuzzOptions() Options {
	return Options{Name: "fuzz.csv", Location: shanghai, Earliest: time.Unix(0, 0), Latest: time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC)}
}

// checkFuzzError fails unless err is a *reconcile.ParseError naming the
// file, whose message PostgreSQL can store as the run's error.
func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %q (%T) is not a *reconcile.ParseError", err, err)
	}
	if pe.File != "fuzz.csv" || pe.Line < 0 {
		t.Fatalf("error %q names file %q line %d", err, pe.File, pe.Line)
	}
	if msg := err.Error(); !utf8.ValidString(msg) || strings.IndexByte(msg, 0) >= 0 {
		t.Fatalf("error %q is not text PostgreSQL can store", msg)
	}
}

// checkFuzzRows fails unless every row's text can be stored in PostgreSQL
// (valid UTF-8 without NUL) and its time is within the window of opts.
func checkFuzzRows(t *testing.T, opts Options, rows []reconcile.Transaction) {
	t.Helper()
	for _, r := range rows {
		for _, s := range []string{r.OrderNo, r.RefundNo, r.ChannelTxnID, r.Currency, r.RawKind} {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
				t.Errorf("line %d: field %q is not text PostgreSQL can store", r.Line, s)
			}
		}
		if r.OccurredAt.Before(opts.Earliest) || r.OccurredAt.After(opts.Latest) {
			t.Errorf("line %d: OccurredAt %v outside %v to %v", r.Line, r.OccurredAt, opts.Earliest, opts.Latest)
		}
	}
}
