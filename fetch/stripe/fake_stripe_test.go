package stripe

import (
	"bufio"
	"strings"

	"reconcile/fetch/stripe/stripetest"
)

// The keys of the tests: the fake Stripe's own, and one it does not know.
// Each ends in a tail of its own, so a test can tell whether any part of
// it leaked.
const (
	goodKey       = stripetest.SecretKey
	restrictedKey = stripetest.RestrictedKey
	expiredKey    = stripetest.ExpiredKey
	wrongKey      = "sk_test_51FakeWrongKey00000000000000000000000000wrZ2"
)

// reportCSV is a report with the columns asked for, in their order, as
// Stripe writes it: a charge and its partial refund, in one payout.
func reportCSV(cols []string) []byte {
	rows := []map[string]string{
		{"balance_transaction_id": "txn_1Fake01", "gross": "49.99", "fee": "1.75", "net": "48.24",
			"reporting_category": "charge", "source_id": "ch_1Fake01", "created_utc": "2026-11-01 15:04:05",
			"order": "ORD20261101001"},
		{"balance_transaction_id": "txn_1Fake02", "gross": "-20.00", "fee": "0.00", "net": "-20.00",
			"reporting_category": "refund", "source_id": "re_1Fake01", "created_utc": "2026-11-01 18:30:00",
			"order": "ORD20261101001", "refund": "RF20261101001"},
	}
	var b strings.Builder
	w := bufio.NewWriter(&b)
	w.WriteString(strings.Join(cols, ",") + "\n")
	for _, row := range rows {
		var fields []string
		for _, c := range cols {
			switch {
			case c == "automatic_payout_id":
				fields = append(fields, "po_1Fake01")
			case c == "currency":
				fields = append(fields, "usd")
			case strings.HasPrefix(c, "payment_metadata["):
				fields = append(fields, row["order"])
			case strings.HasPrefix(c, "refund_metadata["):
				fields = append(fields, row["refund"])
			default:
				fields = append(fields, row[c])
			}
		}
		w.WriteString(strings.Join(fields, ",") + "\n")
	}
	w.Flush()
	return []byte(b.String())
}

// rewrite is a stripetest rewrite that edits the answers of kind only.
func rewrite(kind string, edit func(obj map[string]any)) func(string, map[string]any) {
	return func(k string, obj map[string]any) {
		if k == kind {
			edit(obj)
		}
	}
}

// rewriteResult is a stripetest rewrite that edits the result file of a
// succeeded run.
func rewriteResult(edit func(file map[string]any)) func(string, map[string]any) {
	return rewrite("poll", func(obj map[string]any) {
		if file, ok := obj["result"].(map[string]any); ok {
			edit(file)
		}
	})
}
