package channelfeed

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"

	"reconcile"
)

// adyenParser reads Adyen's Settlement details report
// (settlement_detail_report_batch_<N>.csv): every booking of one
// settlement batch, ending with the payout it adds up to.
//
// The report is RFC 4180 CSV, UTF-8 with an optional BOM. Its header is the
// first row with a Company Account field; columns are found by name,
// case-insensitively, because Adyen moves them between account vintages
// and lets users add and reorder them. Batch-level rows stop after their
// last non-empty cell, so a short row is read as if padded with empty
// cells; a row longer than the header is refused. Rows whose every cell is
// empty carry nothing and are skipped.
//
// Row kinds, by Type:
//   - Settled, SettledBulk: a payment of Merchant Reference for Gross
//     Credit, identified by Modification Reference (the capture).
//   - Refunded, RefundedBulk: a refund numbered by Modification Merchant
//     Reference for Gross Debit. When the refund request carried no
//     reference Adyen writes the payment's Merchant Reference there; it is
//     taken as is, so such a refund is keyed by the order number and finds
//     no local refund.
//   - Chargeback, ChargebackExternally(WithInfo): a chargeback, and
//     SecondChargeback a second one, for Gross Debit. ChargebackReversed,
//     ChargebackReversedExternally(WithInfo): a chargeback reversal for
//     Gross Credit. Their dispute is the Dispute Reference (a newer
//     column) or else the Modification Reference, their payment the Psp
//     Reference; the Merchant Reference may be empty.
//   - RefundedReversed: a refund that came back, for Gross Credit,
//     numbered as a Refunded row is, its payment the Psp Reference.
//   - Fee, MiscCosts, MerchantPayout, Balancetransfer and the other
//     bookings of the batch itself (adyenBatchTypes): batch rows in the Net
//     columns, counted, never matched.
//   - Anything else (SettledExternally and the other *Externally* types
//     but the chargebacks', NotificationOfChargeback and
//     RequestForInformation, which are events of the dispute report and
//     not journal types, types Adyen adds later): kept for review with its
//     gross amount.
//
// Every row is a booking Adyen has made, so every row is a success.
//
// Checks, each refusing the file: the fee identity of each row (Net
// Credit = Gross Credit − fees for Settled, ChargebackReversed and
// RefundedReversed, Net Debit = Gross Debit + fees for Refunded,
// Chargeback and SecondChargeback), skipped for rows converted between
// currencies, where Adyen's rounding of the converted gross is not
// documented; one Net Currency per file; and the batch's control total,
// Σ(Net Credit − Net Debit) of every row but the payouts equal to what the
// MerchantPayout rows pay out. A file with neither a payout nor a
// Balancetransfer cannot be checked and is taken as truncated.
type adyenParser struct{}

var _ Parser = adyenParser{}

// Columns the parser reads, by slot, found by name (adyColumns)
// ignoring case.
const (
	adyCompany = iota
	adyMerchantRef
	adyPSPRef
	adyCreated
	adyTimeZone
	adyType
	adyModRef
	adyGrossCcy
	adyGrossDebit
	adyGrossCredit
	adyRate
	adyNetCcy
	adyNetDebit
	adyNetCredit
	adyCommission
	adyMarkup
	adySchemeFees
	adyInterchange
	adyModMerchRef
	adyDisputeRef
	adySlots
)

// adyColumns names the columns of the slots as Adyen spells them.
var adyColumns = [adySlots]string{
	adyCompany:     "Company Account",
	adyMerchantRef: "Merchant Reference",
	adyPSPRef:      "Psp Reference",
	adyCreated:     "Creation Date",
	adyTimeZone:    "TimeZone",
	adyType:        "Type",
	adyModRef:      "Modification Reference",
	adyGrossCcy:    "Gross Currency",
	adyGrossDebit:  "Gross Debit (GC)",
	adyGrossCredit: "Gross Credit (GC)",
	adyRate:        "Exchange Rate",
	adyNetCcy:      "Net Currency",
	adyNetDebit:    "Net Debit (NC)",
	adyNetCredit:   "Net Credit (NC)",
	adyCommission:  "Commission (NC)",
	adyMarkup:      "Markup (NC)",
	adySchemeFees:  "Scheme Fees (NC)",
	adyInterchange: "Interchange (NC)",
	adyModMerchRef: "Modification Merchant Reference",
	adyDisputeRef:  "Dispute Reference",
}

// adyLower are adyColumns in lower case, as the header's names are
// compared with them.
var adyLower = func() (lower [adySlots]string) {
	for c, name := range adyColumns {
		lower[c] = strings.ToLower(name)
	}
	return lower
}()

// adyRequired must each appear in the header; the other columns are read
// when present. None may appear twice.
var adyRequired = []int{
	adyMerchantRef, adyPSPRef, adyCreated, adyTimeZone, adyType, adyModRef,
	adyGrossCcy, adyGrossDebit, adyGrossCredit, adyNetCcy, adyNetDebit,
	adyNetCredit, adyModMerchRef,
}

// adyFees are the fee columns, in the Net Currency. A report without one
// of them (an account on blended pricing may hide the IC++ columns) reads
// it as zero; the per-row identity still catches a fee hidden that way.
var adyFees = []int{adyCommission, adyMarkup, adySchemeFees, adyInterchange}

// Adyen's journal types that book the batch itself rather than a payment.
var adyenBatchTypes = map[string]bool{
	"fee": true, "misccosts": true, "merchantpayout": true,
	"depositcorrection": true, "invoicededuction": true,
	"balancetransfer": true, "paymentcost": true, "matchedstatement": true,
	"manualcorrected": true, "bankinstructionreturned": true, "epapaid": true,
	"paidout": true, "paidoutreversed": true,
}

const (
	adyPayout   = "merchantpayout"
	adyTransfer = "balancetransfer"
)

// adyTimeZones maps the abbreviations Adyen writes in TimeZone onto their
// offsets. A fixed offset, not a region: the abbreviation already says
// whether summer time applies, and a region would make the result depend
// on the host's zone database. BST is British Summer Time, the one Adyen's
// European accounts write.
var adyTimeZones = map[string]int{ // minutes east of UTC
	"UTC": 0, "GMT": 0, "WET": 0, "WEST": 60, "BST": 60,
	"CET": 60, "CEST": 120, "MET": 60, "MEST": 120,
	"EET": 120, "EEST": 180, "MSK": 180,
	"EST": -300, "EDT": -240, "CDT": -300, "MST": -420, "MDT": -360,
	"PST": -480, "PDT": -420, "AKST": -540, "AKDT": -480, "HST": -600,
	"BRT": -180, "ART": -180,
	"SGT": 480, "HKT": 480, "AWST": 480, "PHT": 480, "MYT": 480, "WIB": 420, "ICT": 420,
	"JST": 540, "KST": 540, "ACST": 570, "ACDT": 630, "AEST": 600, "AEDT": 660,
	"NZST": 720, "NZDT": 780,
}

// adyAmbiguous are abbreviations refused because they name several
// zones: guessing would shift every time of the file by hours.
var adyAmbiguous = map[string]string{
	"CST": "China +08:00 or US Central −06:00",
	"IST": "India +05:30, Ireland +01:00 or Israel +02:00",
	"AST": "Atlantic −04:00 or Arabia +03:00",
}

const adyTimeLayout = "2006-01-02 15:04:05"

func (adyenParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	br, rows, err := openText(ctx, r, opts, emit)
	if err != nil {
		return err
	}
	b := &adyBatch{
		columns: columns{opts: opts},
		cr:      newCSVReader(br, opts, 1), // ragged batch rows are normal here
		zones:   map[string]*time.Location{},
	}
	if err := b.findHeader(&rows); err != nil {
		return err
	}
	if err := b.details(&rows); err != nil {
		return err
	}
	if err := b.controlTotal(); err != nil {
		return err
	}
	return b.payouts.close(opts)
}

// findHeader reads up to the header, the first row with a Company Account
// field, and reads it. The rows before it (a title, an export note) are
// skipped, and rows counts them.
func (b *adyBatch) findHeader(rows *rowSink) error {
	for {
		if err := rows.skip(); err != nil {
			return err
		}
		rec, line, err := b.read()
		if err == io.EOF {
			if b.lastLine == 0 {
				return b.opts.errorf(0, "", "empty file: no header row")
			}
			return b.opts.errorf(0, adyColumns[adyCompany], "no header row: no row has a %s field", adyColumns[adyCompany])
		}
		if err != nil {
			return err
		}
		// Before the header a field has a place, not a name.
		if err := b.opts.checkRow(line, rec, nil); err != nil {
			return err
		}
		if adyIsHeader(rec) {
			if err := b.header(rec, line); err != nil {
				return err
			}
			rows.reversalColumn = b.name(adyGrossCredit)
			return nil
		}
	}
}

// details reads the rows after the header into rows.
func (b *adyBatch) details(rows *rowSink) error {
	for {
		rec, line, err := b.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		blank, err := b.record(rec, line)
		if err != nil {
			return err
		}
		if blank {
			err = rows.skip()
		} else {
			err = rows.put(b.row(rec, line))
		}
		if err != nil {
			return err
		}
	}
}

// read returns the next record and the line it starts on, and io.EOF at
// the end of the file.
func (b *adyBatch) read() ([]string, int, error) {
	rec, err := b.cr.Read()
	if err == io.EOF {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, csvReadError(b.opts, b.lastLine+1, err)
	}
	line, _ := b.cr.FieldPos(0)
	b.lastLine, _ = b.cr.FieldPos(len(rec) - 1)
	trimFields(rec, "")
	return rec, line, nil
}

func adyIsHeader(rec []string) bool {
	for _, f := range rec {
		if strings.EqualFold(strings.TrimSpace(f), adyColumns[adyCompany]) {
			return true
		}
	}
	return false
}

// adyBatch is the state of one report being read.
type adyBatch struct {
	columns  // of adyColumns, the header's names as written
	cr       *csv.Reader
	lastLine int // line of the last field read
	zones    map[string]*time.Location

	netCcy string
	// net sums Net Credit − Net Debit over every row but the payouts; paid
	// sums what the payouts send to the bank. Minor units of netCcy.
	net, paid int64
	// payoutLine is the last MerchantPayout row, else the last
	// Balancetransfer row: where a control total that is off is reported.
	payoutLine             int
	payoutColumn           int
	sawPayout, sawTransfer bool
	payouts                payoutBook // one per MerchantPayout row
}

// header reads the header row rec. Columns the parser does not read
// (Reserved4…, Batch Number, newer ones) are let be.
func (b *adyBatch) header(rec []string, line int) error {
	names := make([]string, len(rec))
	lower := make([]string, len(rec))
	for i, h := range rec {
		names[i] = strings.TrimSpace(h)
		lower[i] = strings.ToLower(names[i])
	}
	b.columns = newColumns(b.opts, names, adyColumns[:])
	same := func(i, c int) bool { return lower[i] == adyLower[c] }
	for i := range names {
		if c := b.place(i, same); c >= 0 {
			return b.duplicate(line, i, c)
		}
	}
	for _, c := range adyRequired {
		if !b.has(c) {
			return b.opts.errorf(line, adyColumns[c], "missing required column")
		}
	}
	return nil
}

// adyRow is one record being read, with the header it belongs to.
type adyRow struct {
	b    *adyBatch
	rec  []string
	line int
}

func (r adyRow) get(col int) string { return r.b.field(r.rec, col) }

func (r adyRow) errorf(col int, format string, args ...any) error {
	return r.b.errorf(r.line, col, format, args...)
}

// amount reads an unsigned amount of currency from col; empty is zero.
// Adyen writes some amounts below one without their leading zero (a
// Markup of ".11"): they are read, and named in errors, with it.
func (r adyRow) amount(col int, currency string) (int64, error) {
	s := r.get(col)
	if s == "" {
		return 0, nil
	}
	if currency == "" {
		ccyCol := adyNetCcy
		if col == adyGrossDebit || col == adyGrossCredit {
			ccyCol = adyGrossCcy
		}
		return 0, r.errorf(col, "amount %s on a row without %s", reconcile.Quote(s), r.b.name(ccyCol))
	}
	digits, _ := reconcile.CurrencyDigits(currency) // known: see currency
	if s[0] == '.' {
		s = "0" + s
	}
	return r.b.moneyOf(s, r.line, col, digits, false)
}

// pair reads a Debit and a Credit column. A booking goes one way: both
// non-zero is refused rather than netted, as it means the columns are not
// what this parser takes them for.
func (r adyRow) pair(debitCol, creditCol int, currency string) (debit, credit int64, err error) {
	if debit, err = r.amount(debitCol, currency); err != nil {
		return 0, 0, err
	}
	if credit, err = r.amount(creditCol, currency); err != nil {
		return 0, 0, err
	}
	if debit != 0 && credit != 0 {
		return 0, 0, r.errorf(creditCol, "both %s and %s are set; a booking goes one way", r.b.name(debitCol), r.b.name(creditCol))
	}
	return debit, credit, nil
}

func (r adyRow) currency(col int) (string, error) {
	c := r.get(col)
	if c == "" {
		return "", nil
	}
	if _, ok := reconcile.CurrencyDigits(c); !ok {
		return "", r.errorf(col, "unknown currency %s", reconcile.Quote(c))
	}
	return c, nil
}

// adyMoney is what one row books, in minor units: the gross in its Gross
// Currency, the net and the fees in its Net Currency.
type adyMoney struct {
	grossCcy, netCcy        string
	grossDebit, grossCredit int64
	netDebit, netCredit     int64
	fees                    int64
}

// row turns one record, not blank, into a transaction.
func (b *adyBatch) row(rec []string, line int) (t reconcile.Transaction, err error) {
	r := adyRow{b: b, rec: rec, line: line}
	typ := r.get(adyType)
	if typ == "" {
		return t, r.errorf(adyType, "empty Type")
	}
	lower := strings.ToLower(typ)
	t = reconcile.Transaction{
		Kind:         adyKind(lower),
		RawKind:      typ,
		OrderNo:      r.get(adyMerchantRef),
		ChannelTxnID: r.get(adyModRef),
		Status:       reconcile.StatusSuccess,
		Line:         line,
	}
	if t.OccurredAt, err = b.time(r); err != nil {
		return t, err
	}
	m, err := r.money()
	if err != nil {
		return t, err
	}
	if err := b.netCurrency(r, m.netCcy); err != nil {
		return t, err
	}
	checkIdentity, err := r.fee(&t, &m)
	if err != nil {
		return t, err
	}
	if err := r.setAmount(&t, &m); err != nil {
		return t, err
	}
	if checkIdentity {
		if err := r.checkFees(&m, lower); err != nil {
			return t, err
		}
	}
	if err := b.total(r, &m, lower); err != nil {
		return t, err
	}
	return t, nil
}

// record checks a record after the header as a whole; blank is true for
// one whose every field is empty, which carries nothing.
func (b *adyBatch) record(rec []string, line int) (blank bool, err error) {
	if len(rec) > len(b.names) {
		return false, b.opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(b.names))
	}
	if err := b.opts.checkRow(line, rec, b.names); err != nil {
		return false, err
	}
	blank = true
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			blank = false
		}
	}
	if !blank && adyIsHeader(rec) {
		return false, b.opts.errorf(line, "", "a second header row (two reports joined into one file?)")
	}
	return blank, nil
}

// adyKind is the kind of a row of Type lower, in lower case.
func adyKind(lower string) reconcile.Kind {
	switch lower {
	case "settled", "settledbulk":
		return reconcile.KindPayment
	case "refunded", "refundedbulk":
		return reconcile.KindRefund
	case "chargeback", "chargebackexternally", "chargebackexternallywithinfo":
		return reconcile.KindChargeback
	case "secondchargeback":
		return reconcile.KindSecondChargeback
	case "chargebackreversed", "chargebackreversedexternally", "chargebackreversedexternallywithinfo":
		return reconcile.KindChargebackReversal
	case "refundedreversed":
		return reconcile.KindRefundReversal
	}
	if adyenBatchTypes[lower] {
		return reconcile.KindBatch
	}
	return reconcile.KindOther
}

// money reads the currencies, amounts and fees of the row.
func (r adyRow) money() (m adyMoney, err error) {
	if m.grossCcy, err = r.currency(adyGrossCcy); err != nil {
		return m, err
	}
	if m.netCcy, err = r.currency(adyNetCcy); err != nil {
		return m, err
	}
	if m.grossDebit, m.grossCredit, err = r.pair(adyGrossDebit, adyGrossCredit, m.grossCcy); err != nil {
		return m, err
	}
	if m.netDebit, m.netCredit, err = r.pair(adyNetDebit, adyNetCredit, m.netCcy); err != nil {
		return m, err
	}
	for _, c := range adyFees {
		v, err := r.amount(c, m.netCcy)
		if err != nil {
			return m, err
		}
		var ok bool
		if m.fees, ok = reconcile.AddChecked(m.fees, v); !ok {
			return m, r.errorf(c, "fees of the row overflow")
		}
	}
	return m, nil
}

// netCurrency holds the rows of the batch to one Net Currency, ccy that of
// row r, since the payout is checked in it.
func (b *adyBatch) netCurrency(r adyRow, ccy string) error {
	switch {
	case ccy == "":
	case b.netCcy == "":
		b.netCcy = ccy
	case ccy != b.netCcy:
		return r.errorf(adyNetCcy, "net currency %s in a batch of %s: the payout cannot be checked", ccy, b.netCcy)
	}
	return nil
}

// fee sets the fee of t and reports whether the row's fee identity can be
// checked: only when gross and net are in the same money.
func (r adyRow) fee(t *reconcile.Transaction, m *adyMoney) (bool, error) {
	// FeeMilli is in the row's currency, the gross one, and fees are in
	// the net one: across an exchange there is no exact conversion, so an
	// FX row reports no fee rather than a rounded one.
	sameCcy := m.grossCcy != "" && m.grossCcy == m.netCcy
	if sameCcy {
		f, ok := toMilli(m.fees)
		if !ok {
			return false, r.errorf(adyCommission, "fees of the row overflow")
		}
		t.FeeMilli = f
	}
	rate, err := r.rateIsOne()
	if err != nil {
		return false, err
	}
	return sameCcy && rate, nil
}

// setAmount sets the amount and currency of t, as its kind reads them.
func (r adyRow) setAmount(t *reconcile.Transaction, m *adyMoney) error {
	switch t.Kind {
	case reconcile.KindPayment:
		if t.OrderNo == "" {
			return r.errorf(adyMerchantRef, "empty Merchant Reference on a %s row", t.RawKind)
		}
		return r.gross(t, m, adyGrossCredit, m.grossCredit)
	case reconcile.KindRefund:
		if err := r.refundNo(t); err != nil {
			return err
		}
		return r.gross(t, m, adyGrossDebit, m.grossDebit)
	case reconcile.KindChargeback, reconcile.KindSecondChargeback:
		r.dispute(t)
		return r.oneWay(t, m, adyGrossDebit, adyGrossCredit, m.grossDebit)
	case reconcile.KindChargebackReversal:
		r.dispute(t)
		return r.oneWay(t, m, adyGrossCredit, adyGrossDebit, m.grossCredit)
	case reconcile.KindRefundReversal:
		if err := r.refundNo(t); err != nil {
			return err
		}
		t.PaymentID = r.get(adyPSPRef)
		return r.oneWay(t, m, adyGrossCredit, adyGrossDebit, m.grossCredit)
	case reconcile.KindBatch:
		if m.netCcy == "" {
			return r.errorf(adyNetCcy, "empty Net Currency on a %s row", t.RawKind)
		}
		t.Amount, t.Currency = max(m.netDebit, m.netCredit), m.netCcy
		return nil
	}
	// The gross amount is what a reviewer compares with the order;
	// a row without one still shows its net movement.
	switch {
	case m.grossCcy != "":
		t.Amount, t.Currency = max(m.grossDebit, m.grossCredit), m.grossCcy
	case m.netCcy != "":
		t.Amount, t.Currency = max(m.netDebit, m.netCredit), m.netCcy
	default:
		// Any Type comes here: quoted, as a value from the file is.
		return r.errorf(adyGrossCcy, "empty Gross Currency and Net Currency on a row of Type %s", reconcile.Quote(t.RawKind))
	}
	return nil
}

// refundNo sets the refund number of t, a refund or a refund reversal,
// from Modification Merchant Reference.
func (r adyRow) refundNo(t *reconcile.Transaction) error {
	t.RefundNo = r.get(adyModMerchRef)
	// "<auto>" is what Adyen writes for automatic captures, and many
	// merchants' refunds carry the payment's own reference: as a refund
	// number either would key unrelated refunds together (two partial
	// refunds of one order). Such a refund is matched by its
	// Modification Reference, the refund's PSP reference, instead.
	if t.RefundNo == "" || t.RefundNo == "<auto>" || t.RefundNo == t.OrderNo {
		if t.ChannelTxnID == "" {
			return r.errorf(adyModMerchRef, "%s row without a refund number (%s) or a Modification Reference", t.RawKind, reconcile.Quote(t.RefundNo))
		}
		t.RefundNo = ""
	}
	return nil
}

// dispute sets the ids of t, a dispute's event: the dispute's, which a
// newer report writes in Dispute Reference and an older one leaves to
// the Modification Reference, and the disputed payment's.
func (r adyRow) dispute(t *reconcile.Transaction) {
	t.DisputeID = r.get(adyDisputeRef)
	if t.DisputeID == "" {
		t.DisputeID = t.ChannelTxnID
	}
	t.PaymentID = r.get(adyPSPRef)
}

// oneWay sets the amount of t, a dispute's event or a refund reversal, to
// v, read from col, the side of its gross that its kind books: the other
// side, other, must be empty.
func (r adyRow) oneWay(t *reconcile.Transaction, m *adyMoney, col, other int, v int64) error {
	if s := r.get(other); s != "" {
		return r.errorf(other, "%s on a %s row, which is booked in %s", reconcile.Quote(s), t.RawKind, r.b.name(col))
	}
	return r.gross(t, m, col, v)
}

// gross sets the amount of t, a row of a payment's money, to v, read
// from col: such a row must have its gross.
func (r adyRow) gross(t *reconcile.Transaction, m *adyMoney, col int, v int64) error {
	if m.grossCcy == "" {
		return r.errorf(adyGrossCcy, "empty Gross Currency on a %s row", t.RawKind)
	}
	if r.get(col) == "" {
		return r.errorf(col, "empty amount on a %s row", t.RawKind)
	}
	t.Amount, t.Currency = v, m.grossCcy
	return nil
}

// checkFees holds a row of Type lower to its fee identity. Only types
// whose fee arithmetic is documented are checked: an externally settled
// row may book differently (no net at all), and refusing the file over it
// would hide the whole batch.
func (r adyRow) checkFees(m *adyMoney, lower string) error {
	b := r.b
	switch lower {
	case "settled", "settledbulk", "chargebackreversed", "refundedreversed":
		if want := m.grossCredit - m.fees; m.netCredit != want {
			return r.errorf(adyNetCredit, "%s is not %s %s − fees %s = %s",
				b.fmt(m.netCredit), b.name(adyGrossCredit), b.fmt(m.grossCredit), b.fmt(m.fees), b.fmt(want))
		}
	case "refunded", "refundedbulk", "chargeback", "secondchargeback":
		want, ok := reconcile.AddChecked(m.grossDebit, m.fees)
		if !ok || m.netDebit != want {
			return r.errorf(adyNetDebit, "%s is not %s %s + fees %s = %s",
				b.fmt(m.netDebit), b.name(adyGrossDebit), b.fmt(m.grossDebit), b.fmt(m.fees), b.fmt(want))
		}
	}
	return nil
}

// total adds the row of Type lower to the batch's control total: a
// payout to what is paid out, any other row to what the rows net to.
func (b *adyBatch) total(r adyRow, m *adyMoney, lower string) error {
	var ok bool
	switch lower {
	case adyPayout:
		b.sawPayout = true
		b.payoutLine, b.payoutColumn = r.line, adyNetDebit
		if b.paid, ok = reconcile.AddChecked(b.paid, m.netDebit-m.netCredit); !ok {
			return r.errorf(adyNetDebit, "payout total overflows")
		}
		return b.payout(r, m.netDebit-m.netCredit)
	case adyTransfer:
		b.sawTransfer = true
		if !b.sawPayout {
			b.payoutLine, b.payoutColumn = r.line, adyNetDebit
			if m.netCredit != 0 {
				b.payoutColumn = adyNetCredit
			}
		}
	}
	if b.net, ok = reconcile.AddChecked(b.net, m.netCredit-m.netDebit); !ok {
		return r.errorf(adyNetCredit, "batch total overflows")
	}
	return nil
}

// payout records a MerchantPayout row's payout: its Modification
// Reference ("TX635094301XT batch 380, AcmeShopECOM") up to the comma is
// the payout's id; its first word, the transfer reference, is what the
// bank's entry carries.
func (b *adyBatch) payout(r adyRow, amount int64) error {
	id, _, _ := strings.Cut(r.get(adyModRef), ",")
	id = strings.TrimSpace(id)
	transfer, _, _ := strings.Cut(id, " ")
	if id == "" {
		return r.errorf(adyModRef, "a MerchantPayout row without its transfer reference: the bank could not be asked for it")
	}
	b.payouts.field = b.name(adyModRef)
	return b.payouts.state(b.opts, id, b.netCcy, amount, transfer, r.line)
}

// time reads Creation Date in the zone named by the row's TimeZone.
func (b *adyBatch) time(r adyRow) (time.Time, error) {
	loc := b.opts.location()
	if tz := r.get(adyTimeZone); tz != "" {
		l, ok := b.zones[tz]
		if !ok {
			abbr := strings.ToUpper(tz)
			if zones, ok := adyAmbiguous[abbr]; ok {
				return time.Time{}, r.errorf(adyTimeZone, "ambiguous time zone %s (%s)", reconcile.Quote(tz), zones)
			}
			off, ok := adyTimeZones[abbr]
			if !ok {
				return time.Time{}, r.errorf(adyTimeZone, "unknown time zone %s", reconcile.Quote(tz))
			}
			l = time.FixedZone(abbr, off*60)
			b.zones[tz] = l
		}
		loc = l
	}
	s := r.get(adyCreated)
	at, err := time.ParseInLocation(adyTimeLayout, s, loc)
	if err != nil {
		return time.Time{}, r.errorf(adyCreated, "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(s))
	}
	return at, nil
}

// rateIsOne reports whether Exchange Rate is empty or 1, the rows whose
// gross and net are in the same money.
func (r adyRow) rateIsOne() (bool, error) {
	s := r.get(adyRate)
	if s == "" {
		return true, nil
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || !adyDigits(intPart) || (hasDot && (frac == "" || !adyDigits(frac))) {
		return false, r.errorf(adyRate, "%s: not a plain decimal", reconcile.Quote(s))
	}
	return strings.TrimLeft(intPart, "0") == "1" && strings.Trim(frac, "0") == "", nil
}

func adyDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// fmt writes minor units of the net currency in major units.
func (b *adyBatch) fmt(v int64) string {
	return reconcile.FormatAmount(v, b.netCcy)
}

func (b *adyBatch) controlTotal() error {
	opts := b.opts
	if !b.sawPayout && !b.sawTransfer {
		return opts.wrap(b.lastLine+1, adyColumns[adyType], fmt.Errorf("%w: no MerchantPayout or Balancetransfer row, the file ends after line %d (truncated download?)",
			reconcile.ErrControlTotal, b.lastLine))
	}
	if b.net == b.paid {
		return nil
	}
	if !b.sawPayout {
		return opts.wrap(b.payoutLine, b.name(b.payoutColumn), fmt.Errorf("%w: no MerchantPayout row, so the rows should net to 0 after Balancetransfer; they net to %s",
			reconcile.ErrControlTotal, b.fmt(b.net)))
	}
	return opts.wrap(b.payoutLine, b.name(b.payoutColumn), fmt.Errorf("%w: MerchantPayout pays out %s, the other rows net to %s",
		reconcile.ErrControlTotal, b.fmt(b.paid), b.fmt(b.net)))
}
