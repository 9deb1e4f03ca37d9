package channelfeed

import (
	"context"
	"io"
	"strings"
	"time"

	"reconcile"
)

// stripeParser reads a Stripe Reporting API itemized report:
// payout_reconciliation.itemized.5, or balance_change_from_activity.itemized.3
// which has the same columns without the payout ones. One row is one
// balance transaction; reporting_category says what it is. Columns are
// found by name because the report run's columns parameter chooses both
// the set and the order.
//
// Our order and refund numbers are not Stripe columns: they are the
// PaymentIntent and Refund metadata the services set, which the report
// carries as payment_metadata[<key>] and refund_metadata[<key>] when those
// columns are requested.
//
// A dispute row (reporting_category dispute, a chargeback) and its
// reversal (dispute_reversal) carry the dispute's id in source_id (dp_…,
// du_…) and, when the report has those columns, the disputed payment's
// payment_intent_id and charge_id and the scheme's dispute_reason. A
// dispute's gross must be negative or zero and a reversal's positive or
// zero; the fee is taken as written (the dispute fee, negative on a
// reversal that returns it).
//
// The report has no control total of its own. What ops hold against the
// bank statement is Σnet per automatic_payout_id, the payout amount; that
// sum is only as good as every row's net, so each row must satisfy
// net = gross − fee, and in a payout report every row must name its payout.
type stripeParser struct{}

var _ Parser = stripeParser{}

// Columns the parser reads, by slot.
const (
	stTxnID = iota
	stCurrency
	stGross
	stCategory
	stCreatedUTC
	stCreated
	stFee
	stNet
	stPayout
	stSource // the refund's id on a refund row, the dispute's on a dispute row
	stCharge // the disputed charge on a dispute row
	stIntent // the disputed payment intent on a dispute row
	stReason // the scheme's reason on a dispute row
	stPayoutOn
	stOrder  // payment_metadata[<OrderKey>]
	stRefund // refund_metadata[<RefundKey>]
	stColumns
)

var stFixedColumns = [...]string{
	stTxnID:      "balance_transaction_id",
	stCurrency:   "currency",
	stGross:      "gross",
	stCategory:   "reporting_category",
	stCreatedUTC: "created_utc",
	stCreated:    "created",
	stFee:        "fee",
	stNet:        "net",
	stPayout:     "automatic_payout_id",
	stSource:     "source_id",
	stCharge:     "charge_id",
	stIntent:     "payment_intent_id",
	stReason:     "dispute_reason",
	stPayoutOn:   "automatic_payout_effective_at",
}

// stRequired must be present whatever the rows; a time column and the
// order metadata column are required too, see header.
var stRequired = []int{stTxnID, stCurrency, stGross, stCategory}

const (
	stDefaultOrderKey  = "order_id"
	stDefaultRefundKey = "merchant_refund_id"
	stTimeLayout       = "2006-01-02 15:04:05"
)

// stBatchCategories are bookings of the balance itself rather than money a
// customer paid or got back: counted, never matched. A partial capture
// reversal is Stripe releasing the uncaptured part of an authorisation,
// not a refund the customer asked for.
var stBatchCategories = map[string]bool{
	"fee":                         true,
	"payout":                      true,
	"payout_reversal":             true,
	"transfer":                    true,
	"transfer_reversal":           true,
	"tax":                         true,
	"network_cost":                true,
	"platform_earning":            true,
	"platform_earning_refund":     true,
	"connect_collection_transfer": true,
	"connect_reserved_funds":      true,
	"risk_reserved_funds":         true,
	"topup":                       true,
	"topup_reversal":              true,
	"advance":                     true,
	"advance_funding":             true,
	"anticipation_repayment":      true,
	"contribution":                true,
	"partial_capture_reversal":    true,
}

// stBatchPrefixes cover families Stripe extends with new members
// (financing_paydown_reversal, issuing_dispute, …).
var stBatchPrefixes = []string{"financing_", "issuing_"}

func stIsBatch(category string) bool {
	if stBatchCategories[category] {
		return true
	}
	for _, p := range stBatchPrefixes {
		if strings.HasPrefix(category, p) {
			return true
		}
	}
	return false
}

// stReport is the state of one report being read.
type stReport struct {
	columns
	timeCol int            // stCreatedUTC or stCreated
	loc     *time.Location // the zone the time column is written in
	payouts payoutBook     // a payout report's rows by automatic_payout_id
}

func (stripeParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	br, rows, err := openText(ctx, r, opts, emit)
	if err != nil {
		return err
	}
	// The API's JSON would otherwise fail as CSV with a puzzling quote error.
	if b, _ := br.Peek(1); len(b) == 1 && (b[0] == '{' || b[0] == '[') {
		return opts.errorf(1, "", "a JSON document (the balance transactions API?), not a Stripe Reporting API CSV report")
	}

	cr := newCSVReader(br, opts, 1)
	rec, err := cr.Read()
	if err == io.EOF {
		return opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return csvReadError(opts, 1, err)
	}
	headerLine, _ := cr.FieldPos(0)
	rp := &stReport{}
	if err := rp.readHeader(opts, rec, headerLine); err != nil {
		return err
	}
	rows.reversalColumn = rp.name(stGross)
	rp.payouts.field, rp.payouts.dateField = rp.name(stPayout), rp.name(stPayoutOn)

	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rp.payouts.close(opts)
		}
		if err != nil {
			return csvReadError(opts, 0, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(rp.names) {
			return opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(rp.names))
		}
		if err := opts.checkRow(line, rec, rp.names); err != nil {
			return err
		}
		trimFields(rec, "")
		if err := rows.put(rp.row(rec, line)); err != nil {
			return err
		}
	}
}

func (rp *stReport) readHeader(opts Options, rec []string, line int) error {
	orderKey, refundKey := opts.OrderKey, opts.RefundKey
	if orderKey == "" {
		orderKey = stDefaultOrderKey
	}
	if refundKey == "" {
		refundKey = stDefaultRefundKey
	}
	want := stDefaultColumns
	if orderKey != stDefaultOrderKey || refundKey != stDefaultRefundKey {
		want = stColumnNames(orderKey, refundKey)
	}

	if err := opts.checkHeader(line, rec); err != nil {
		return err
	}
	// ReuseRecord: the header's strings must be copied out before the
	// next Read overwrites the slice.
	header := make([]string, len(rec))
	for i, h := range rec {
		header[i] = strings.TrimSpace(h)
	}
	rp.columns = newColumns(opts, header, want)
	if rp.isDashboardExport() {
		return opts.errorf(line, "", "this is the Stripe Dashboard balance export (id,Type,Source,Amount,…), not the Reporting API report: "+
			"run payout_reconciliation.itemized.5 (or balance_change_from_activity.itemized.3) with the columns %s",
			strings.Join([]string{"automatic_payout_id", "balance_transaction_id", "created_utc", "currency", "gross", "fee", "net",
				"reporting_category", want[stOrder], want[stRefund]}, ","))
	}

	for i := range header {
		if c := rp.place(i, rp.stColumnIs); c >= 0 {
			return rp.duplicate(line, i, c)
		}
	}
	for _, c := range stRequired {
		if !rp.has(c) {
			return opts.errorf(line, want[c], "missing required column (%s)", describeHeader(header, ','))
		}
	}
	switch {
	case rp.has(stCreatedUTC):
		rp.timeCol, rp.loc = stCreatedUTC, time.UTC
	case rp.has(stCreated):
		// created is written in the report run's timezone parameter, without
		// a suffix; the channel's business zone is that parameter.
		rp.timeCol, rp.loc = stCreated, opts.location()
	default:
		return opts.errorf(line, want[stCreatedUTC], "missing required column (nor created; %s)", describeHeader(header, ','))
	}
	if !rp.has(stOrder) {
		return opts.errorf(line, want[stOrder], "missing required column: our order numbers are in this metadata; "+
			"add it to the report run's columns, or configure the metadata key (%s)", describeHeader(header, ','))
	}
	return nil
}

// stDefaultColumns are the names of the columns with the default
// metadata keys, those of the usual report; they are only read.
var stDefaultColumns = stColumnNames(stDefaultOrderKey, stDefaultRefundKey)

// stColumnNames are the names of the columns the parser reads, by slot,
// the metadata columns' of orderKey and refundKey.
func stColumnNames(orderKey, refundKey string) []string {
	names := make([]string, stColumns)
	copy(names, stFixedColumns[:])
	names[stOrder] = "payment_metadata[" + orderKey + "]"
	names[stRefund] = "refund_metadata[" + refundKey + "]"
	return names
}

// stColumnIs reports whether field i of the header is the column of slot c.
// Stripe writes its own names in lower case, which is matched loosely as
// in the canonical CSV; a metadata key is case-sensitive at Stripe, so
// only the bracketed prefix is.
func (rp *stReport) stColumnIs(i, c int) bool {
	if c != stOrder && c != stRefund {
		return rp.sameFold(i, c)
	}
	h := rp.names[i]
	prefix, key, _ := strings.Cut(rp.want[c], "[")
	p, k, ok := strings.Cut(h, "[")
	return ok && strings.EqualFold(p, prefix) && k == key
}

// isDashboardExport recognises the Balance → All transactions export of
// the Dashboard by its Title Case columns; its Type is the API type, not
// reporting_category, so reading it as the report would misclassify rows.
func (rp *stReport) isDashboardExport() bool {
	has := func(name string) bool {
		for _, h := range rp.names {
			if h == name {
				return true
			}
		}
		return false
	}
	return !has("balance_transaction_id") && has("id") && (has("Type") || has("Amount") || has("Created (UTC)"))
}

func (rp *stReport) row(rec []string, line int) (reconcile.Transaction, error) {
	t := reconcile.Transaction{
		RawKind:      rp.field(rec, stCategory),
		OrderNo:      rp.field(rec, stOrder),
		RefundNo:     rp.field(rec, stRefund),
		ChannelTxnID: rp.field(rec, stTxnID),
		// Every row is a balance transaction Stripe has already booked.
		Status: reconcile.StatusSuccess,
		Line:   line,
	}
	if t.ChannelTxnID == "" {
		return t, rp.errorf(line, stTxnID, "empty balance_transaction_id")
	}
	if t.RawKind == "" {
		return t, rp.errorf(line, stCategory, "empty reporting_category")
	}
	if rp.has(stPayout) && rp.field(rec, stPayout) == "" {
		return t, rp.errorf(line, stPayout, "empty automatic_payout_id: every row of a payout reconciliation report belongs to a payout, so its payout total would not add up")
	}

	cur := rp.field(rec, stCurrency)
	t.Currency = strings.ToUpper(cur)
	digits, ok := reconcile.CurrencyDigits(t.Currency)
	if !ok {
		return t, rp.errorf(line, stCurrency, "unknown currency %s", reconcile.Quote(cur))
	}
	// Stripe signs an amount by its direction: a refund's is negative.
	gross, err := rp.money(rec, line, stGross, digits, true)
	if err != nil {
		return t, err
	}

	at := rp.field(rec, rp.timeCol)
	t.OccurredAt, err = time.ParseInLocation(stTimeLayout, at, rp.loc)
	if err != nil {
		return t, rp.errorf(line, rp.timeCol, "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(at))
	}

	if err := rp.fee(rec, line, &t, gross, digits); err != nil {
		return t, err
	}
	if err := rp.payout(rec, line, &t, gross); err != nil {
		return t, err
	}
	err = rp.classify(&t, rec, gross, line)
	return t, err
}

// payout counts the row's net in its automatic payout, in a payout
// report: what the payout brings to the bank is the sum of its rows' net.
func (rp *stReport) payout(rec []string, line int, t *reconcile.Transaction, gross int64) error {
	if !rp.has(stPayout) {
		return nil
	}
	// Without a net column nothing has checked gross − fee yet: a gross
	// past thousandths, or a fee that takes the net past an int64, would
	// count in the payout as another amount.
	grossMilli, ok := toMilli(gross)
	netMilli, ok2 := reconcile.AddChecked(grossMilli, -t.FeeMilli)
	if !ok || !ok2 {
		return rp.errorf(line, stGross, "the row's net, gross − fee, for its payout: %w", reconcile.ErrAmountRange)
	}
	if netMilli%1000 != 0 {
		return rp.errorf(line, stFee, "a fee in fractions of a cent leaves the row's net, and so its payout's amount, unknown: add the net column to the report")
	}
	var on time.Time
	if v := rp.field(rec, stPayoutOn); v != "" {
		d, err := time.Parse(stTimeLayout, v)
		if err != nil {
			return rp.errorf(line, stPayoutOn, "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(v))
		}
		// The date the report's zone gives: the day the bank books it.
		on = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	id := rp.field(rec, stPayout)
	if strings.EqualFold(t.RawKind, "payout") {
		// The payout's own row, where a report itemizes it: it takes from
		// the balance what the payout sends, which its other rows must
		// add up to.
		return rp.payouts.state(rp.opts, id, t.Currency, -netMilli/1000, "", line)
	}
	return rp.payouts.add(rp.opts, id, t.Currency, netMilli/1000, on, line)
}

// classify sets the kind and amount of t, a row of gross, from its
// reporting_category.
func (rp *stReport) classify(t *reconcile.Transaction, rec []string, gross int64, line int) error {
	switch category := strings.ToLower(t.RawKind); {
	case category == "charge" && t.OrderNo == "":
		// A charge our services did not create (a Payment Link, an invoice,
		// a charge made by hand in the Dashboard) is real money, not a
		// malformed file: a person looks at it, the rest of the file runs.
		t.Kind = reconcile.KindOther
		t.RawKind = t.RawKind + " without " + rp.want[stOrder]
		t.Amount = absAmount(gross)
	case category == "refund" && t.RefundNo == "" && rp.field(rec, stSource) == "":
		t.Kind = reconcile.KindOther
		t.RawKind = t.RawKind + " without " + rp.want[stRefund] + " or source_id"
		t.Amount = absAmount(gross)
	case category == "charge":
		t.Kind = reconcile.KindPayment
		t.RefundNo = ""
		if gross < 0 {
			return rp.errorf(line, stGross, "negative gross %s on a charge row", rp.field(rec, stGross))
		}
		t.Amount = gross
	case category == "refund":
		// Merchants rarely tag refunds with our refund number: a refund
		// without one is matched by its re_… (source_id), which our
		// records keep as the refund's channel id.
		t.Kind = reconcile.KindRefund
		t.ChannelRefundID = rp.field(rec, stSource)
		if gross > 0 {
			return rp.errorf(line, stGross, "positive gross %s on a refund row: Stripe books refunds as negative", rp.field(rec, stGross))
		}
		t.Amount = -gross
	case category == "dispute":
		// A dispute without our order number keeps its kind: it is found
		// by the disputed payment's id (PaymentID).
		if gross > 0 {
			return rp.errorf(line, stGross, "positive gross %s on a dispute row: Stripe books disputes as negative", rp.field(rec, stGross))
		}
		rp.dispute(t, rec, reconcile.KindChargeback)
		t.Amount = -gross
	case category == "dispute_reversal":
		if gross < 0 {
			return rp.errorf(line, stGross, "negative gross %s on a dispute_reversal row: Stripe books reversals as positive", rp.field(rec, stGross))
		}
		rp.dispute(t, rec, reconcile.KindChargebackReversal)
		t.Amount = gross
	case stIsBatch(category):
		// issuing_dispute among them: a dispute of a card we issued, not
		// of a payment we took.
		t.Kind = reconcile.KindBatch
		t.Amount = absAmount(gross)
	default:
		// refund_failure, charge_failure, other_adjustment and whatever
		// Stripe adds next: money moved on a customer's payment, so a
		// person looks at it.
		t.Kind = reconcile.KindOther
		t.Amount = absAmount(gross)
	}
	return nil
}

// dispute makes t, a row of rec, an event of kind of a dispute: its id is
// source_id (the balance transaction's when empty), its payment the
// payment intent, else the charge. A dispute has no refund number.
func (rp *stReport) dispute(t *reconcile.Transaction, rec []string, kind reconcile.Kind) {
	t.Kind = kind
	t.RefundNo = ""
	t.DisputeID = rp.field(rec, stSource)
	if t.DisputeID == "" {
		t.DisputeID = t.ChannelTxnID
	}
	t.PaymentID = rp.field(rec, stIntent)
	if t.PaymentID == "" {
		t.PaymentID = rp.field(rec, stCharge)
	}
	t.Reason = rp.field(rec, stReason)
}

// fee sets t.FeeMilli and checks the row's net against gross − fee. With a
// net column but no fee column the fee is what the identity leaves.
func (rp *stReport) fee(rec []string, line int, t *reconcile.Transaction, gross int64, digits int) error {
	hasFee, hasNet := rp.has(stFee), rp.has(stNet)
	if hasFee {
		// Thousandths of a minor unit, as every parser reports fees.
		v, err := rp.money(rec, line, stFee, digits+3, true)
		if err != nil {
			return err
		}
		t.FeeMilli = v
	}
	if !hasNet {
		return nil
	}
	net, err := rp.money(rec, line, stNet, digits, true)
	if err != nil {
		return err
	}
	grossMilli, ok1 := toMilli(gross)
	netMilli, ok2 := toMilli(net)
	if !ok1 || !ok2 {
		return rp.errorf(line, stNet, "net = gross − fee cannot be checked: %w", reconcile.ErrAmountRange)
	}
	if !hasFee {
		// Each side is within ±MaxInt64/1000, their difference need not be.
		fee, ok := reconcile.AddChecked(grossMilli, -netMilli)
		if !ok {
			return rp.errorf(line, stNet, "the fee, gross − net, cannot be worked out: %w", reconcile.ErrAmountRange)
		}
		t.FeeMilli = fee
		return nil
	}
	want, ok := reconcile.AddChecked(grossMilli, -t.FeeMilli)
	if !ok {
		return rp.errorf(line, stNet, "net = gross − fee cannot be checked: %w", reconcile.ErrAmountRange)
	}
	if netMilli != want {
		scale := digits + 3
		if want%1000 == 0 {
			want, scale = want/1000, digits
		}
		return rp.errorf(line, stNet, "%w: net %s, but gross %s − fee %s is %s",
			reconcile.ErrControlTotal, rp.field(rec, stNet), rp.field(rec, stGross), rp.field(rec, stFee),
			reconcile.FormatDecimal(want, scale))
	}
	return nil
}
