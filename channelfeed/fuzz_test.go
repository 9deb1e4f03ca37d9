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
	f.Fuzz(func(t *testing.T, data []byte) {
		opts, payouts := fuzzPayouts(fuzzOptions())
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
		last := 0
		for _, r := range rows {
			if r.Amount < 0 {
				t.Errorf("line %d: Amount %d < 0", r.Line, r.Amount)
			}
			if _, ok := reconcile.CurrencyDigits(r.Currency); !ok {
				t.Errorf("line %d: unknown currency %q accepted", r.Line, r.Currency)
			}
			switch r.Kind {
			case reconcile.KindPayment, reconcile.KindOther:
			case reconcile.KindBatch:
				if format == "csv" && strings.ToLower(r.RawKind) != "payout" {
					t.Errorf("line %d: batch row from the word %q; the canonical CSV's one batch row is a payout", r.Line, r.RawKind)
				}
			case reconcile.KindRefund:
				if r.RefundNo == "" && r.RefundID() == "" {
					t.Errorf("line %d: refund with neither a RefundNo nor a channel id to match it by", r.Line)
				}
			case reconcile.KindChargeback, reconcile.KindChargebackReversal, reconcile.KindSecondChargeback, reconcile.KindRefundReversal:
				if got := eventWords[format][strings.ToLower(r.RawKind)]; got != r.Kind {
					t.Errorf("line %d: Kind %q from the word %q of a %s file", r.Line, r.Kind, r.RawKind, format)
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
			if r.Line <= last {
				t.Errorf("line %d follows line %d: rows out of file order", r.Line, last)
			}
			last = r.Line
		}
	})
}

// eventWords are, by format, the words of a file, in lower case, that
// make a row one of a dispute's events or a refund reversal: a row of
// such a kind read from any other word is misread. WeChat Pay and Alipay
// bills have none.
var eventWords = map[string]map[string]reconcile.Kind{
	"stripe": {
		"dispute":          reconcile.KindChargeback,
		"dispute_reversal": reconcile.KindChargebackReversal,
	},
	"adyen": {
		"chargeback":                           reconcile.KindChargeback,
		"chargebackexternally":                 reconcile.KindChargeback,
		"chargebackexternallywithinfo":         reconcile.KindChargeback,
		"secondchargeback":                     reconcile.KindSecondChargeback,
		"chargebackreversed":                   reconcile.KindChargebackReversal,
		"chargebackreversedexternally":         reconcile.KindChargebackReversal,
		"chargebackreversedexternallywithinfo": reconcile.KindChargebackReversal,
		"refundedreversed":                     reconcile.KindRefundReversal,
	},
	"csv": {
		"chargeback":          reconcile.KindChargeback,
		"chargeback_reversal": reconcile.KindChargebackReversal,
		"second_chargeback":   reconcile.KindSecondChargeback,
		"refund_reversal":     reconcile.KindRefundReversal,
	},
}

// checkEventIDs fails when a row carries an id or a reason its kind does
// not: a dispute's id and reason only on a dispute's events, the
// disputed payment's id only there and on a refund reversal.
func checkEventIDs(t *testing.T, r reconcile.Transaction) {
	t.Helper()
	if !r.Kind.Disputed() && (r.DisputeID != "" || r.Reason != "") {
		t.Errorf("line %d: %s row with DisputeID %q, Reason %q", r.Line, r.Kind, r.DisputeID, r.Reason)
	}
	if !r.Kind.Disputed() && r.Kind != reconcile.KindRefundReversal && r.PaymentID != "" {
		t.Errorf("line %d: %s row with PaymentID %q", r.Line, r.Kind, r.PaymentID)
	}
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

// fuzzPayouts returns opts keeping the payouts a parse gives in the slice
// it returns.
func fuzzPayouts(opts Options) (Options, *[]reconcile.Payout) {
	var payouts []reconcile.Payout
	opts.Payouts = func(p reconcile.Payout) error {
		payouts = append(payouts, p)
		return nil
	}
	return opts, &payouts
}

// checkFuzzPayouts fails unless the payouts of a file accepted with rows
// are well formed: each named once, first named on a row of the file in
// its currency, and its own row, where it has one, paying out what its
// rows net to. A file refused (err) gives none.
func checkFuzzPayouts(t *testing.T, err error, rows []reconcile.Transaction, payouts []reconcile.Payout) {
	t.Helper()
	if err != nil && len(payouts) > 0 {
		t.Fatalf("a file refused (%v) gave payouts %+v", err, payouts)
	}
	byLine := map[int]reconcile.Transaction{}
	for _, r := range rows {
		byLine[r.Line] = r
	}
	seen := map[string]bool{}
	for _, p := range payouts {
		first, ok := byLine[p.Line]
		switch {
		case p.ID == "" || seen[p.ID]:
			t.Errorf("payout %+v: empty id, or named twice", p)
		case !ok || first.Currency != p.Currency:
			t.Errorf("payout %+v: its line is no row of the file in its currency", p)
		case p.HasStated && p.Stated != p.Amount:
			t.Errorf("payout %+v: pays out other than its rows net to", p)
		case !p.HasStated && p.Rows == 0:
			t.Errorf("payout %+v: neither its own row nor rows", p)
		}
		seen[p.ID] = true
	}
}

// checkFuzzRows fails unless every row's text can be stored in PostgreSQL
// (valid UTF-8 without NUL) and its time is within the window of opts.
func checkFuzzRows(t *testing.T, opts Options, rows []reconcile.Transaction) {
	t.Helper()
	for _, r := range rows {
		for _, s := range []string{r.OrderNo, r.RefundNo, r.ChannelTxnID, r.Currency, r.RawKind, r.DisputeID, r.PaymentID, r.Reason} {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
				t.Errorf("line %d: field %q is not text PostgreSQL can store", r.Line, s)
			}
		}
		if r.OccurredAt.Before(opts.Earliest) || r.OccurredAt.After(opts.Latest) {
			t.Errorf("line %d: OccurredAt %v outside %v to %v", r.Line, r.OccurredAt, opts.Earliest, opts.Latest)
		}
	}
}
