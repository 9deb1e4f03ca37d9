package channelfeed

import (
	"context"
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
//   - Fee, MiscCosts, MerchantPayout, Balancetransfer and the other
//     bookings of the batch itself (adyenBatchTypes): batch rows in the Net
//     columns, counted, never matched.
//   - Anything else (chargebacks, reversals, *Externally* types, types
//     Adyen adds later): kept for review with its gross amount.
//
// Every row is a booking Adyen has made, so every row is a success.
//
// Checks, each refusing the file: the fee identity of each row (Net
// Credit = Gross Credit − fees for Settled, Net Debit = Gross Debit + fees
// for Refunded and chargebacks), skipped for rows converted between
// currencies, where Adyen's rounding of the converted gross is not
// documented; one Net Currency per file; and the batch's control total,
// Σ(Net Credit − Net Debit) of every row but the payouts equal to what the
// MerchantPayout rows pay out. A file with neither a payout nor a
// Balancetransfer cannot be checked and is taken as truncated.
type adyenParser struct{}

var _ Parser = adyenParser{}

// Columns read by name, as Adyen spells them.
const (
	adyCompany     = "Company Account"
	adyMerchantRef = "Merchant Reference"
	adyPSPRef      = "Psp Reference"
	adyCreated     = "Creation Date"
	adyTimeZone    = "TimeZone"
	adyType        = "Type"
	adyModRef      = "Modification Reference"
	adyGrossCcy    = "Gross Currency"
	adyGrossDebit  = "Gross Debit (GC)"
	adyGrossCredit = "Gross Credit (GC)"
	adyRate        = "Exchange Rate"
	adyNetCcy      = "Net Currency"
	adyNetDebit    = "Net Debit (NC)"
	adyNetCredit   = "Net Credit (NC)"
	adyCommission  = "Commission (NC)"
	adyMarkup      = "Markup (NC)"
	adySchemeFees  = "Scheme Fees (NC)"
	adyInterchange = "Interchange (NC)"
	adyModMerchRef = "Modification Merchant Reference"
)

// adyRequired must each appear exactly once in the header.
var adyRequired = []string{
	adyMerchantRef, adyPSPRef, adyCreated, adyTimeZone, adyType, adyModRef,
	adyGrossCcy, adyGrossDebit, adyGrossCredit, adyNetCcy, adyNetDebit,
	adyNetCredit, adyModMerchRef,
}

// adyFees are the fee columns, in the Net Currency. A report without one
// of them (an account on blended pricing may hide the IC++ columns) reads
// it as zero; the per-row identity still catches a fee hidden that way.
var adyFees = []string{adyCommission, adyMarkup, adySchemeFees, adyInterchange}

// adyOptional are read when present and must not be duplicated then.
var adyOptional = append([]string{adyCompany, adyRate}, adyFees...)

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
	if emit == nil {
		emit = discard
	}
	br, err := openText(ctx, r, opts)
	if err != nil {
		return err
	}

	cr := newCSVReader(br, opts, 1) // ragged batch rows are normal here
	b := &adyBatch{opts: opts, zones: map[string]*time.Location{}}

	// Rows before the header (a title, an export note) are skipped.
	for n := 1; ; n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := cr.Read()
		if err == io.EOF {
			if b.lastLine == 0 {
				return opts.errorf(0, "", "empty file: no header row")
			}
			return opts.errorf(0, adyCompany, "no header row: no row has a %s field", adyCompany)
		}
		if err != nil {
			return csvReadError(opts, b.lastLine+1, err)
		}
		line, _ := cr.FieldPos(0)
		b.lastLine, _ = cr.FieldPos(len(rec) - 1)
		// Before the header a field has a place, not a name.
		if err := opts.checkRow(line, rec, nil); err != nil {
			return err
		}
		if adyIsHeader(rec) {
			if err := b.header(rec, line); err != nil {
				return err
			}
			break
		}
	}

	for n := 1; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvReadError(opts, b.lastLine+1, err)
		}
		line, _ := cr.FieldPos(0)
		b.lastLine, _ = cr.FieldPos(len(rec) - 1)
		t, ok, err := b.row(rec, line)
		if err != nil {
			return err
		}
		if ok {
			if err := emit(t); err != nil {
				return err
			}
		}
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return b.controlTotal()
}

func adyIsHeader(rec []string) bool {
	for _, f := range rec {
		if strings.EqualFold(strings.TrimSpace(f), adyCompany) {
			return true
		}
	}
	return false
}

// adyBatch is the state of one report being read.
type adyBatch struct {
	opts     Options
	names    []string       // header names as written
	cols     map[string]int // lower-case canonical name → field index
	lastLine int            // line of the last field read
	zones    map[string]*time.Location

	netCcy string
	// net sums Net Credit − Net Debit over every row but the payouts; paid
	// sums what the payouts send to the bank. Minor units of netCcy.
	net, paid int64
	// payoutLine is the last MerchantPayout row, else the last
	// Balancetransfer row: where a control total that is off is reported.
	payoutLine             int
	payoutColumn           string
	sawPayout, sawTransfer bool
}

func (b *adyBatch) header(rec []string, line int) error {
	b.names = make([]string, len(rec))
	b.cols = make(map[string]int, len(rec))
	known := map[string]bool{}
	for _, c := range append(adyRequired[:len(adyRequired):len(adyRequired)], adyOptional...) {
		known[strings.ToLower(c)] = true
	}
	for i, h := range rec {
		h = strings.TrimSpace(h)
		b.names[i] = h
		key := strings.ToLower(h)
		if !known[key] {
			continue // Reserved4…, Batch Number, newer columns: not read
		}
		if j, dup := b.cols[key]; dup {
			return b.opts.errorf(line, h, "duplicate column (fields %d and %d)", j+1, i+1)
		}
		b.cols[key] = i
	}
	for _, c := range adyRequired {
		if _, ok := b.cols[strings.ToLower(c)]; !ok {
			return b.opts.errorf(line, c, "missing required column")
		}
	}
	return nil
}

// name is the header name of a column as the file spells it.
func (b *adyBatch) name(col string) string {
	if i, ok := b.cols[strings.ToLower(col)]; ok {
		return b.names[i]
	}
	return col
}

// adyRow is one record being read, with the header it belongs to.
type adyRow struct {
	b    *adyBatch
	rec  []string
	line int
}

func (r adyRow) get(col string) string {
	i, ok := r.b.cols[strings.ToLower(col)]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

func (r adyRow) errorf(col, format string, args ...any) error {
	return r.b.opts.errorf(r.line, r.b.name(col), format, args...)
}

// amount reads an unsigned amount of currency from col; empty is zero.
func (r adyRow) amount(col, currency string) (int64, error) {
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
	v, err := parseAmount(s, currency)
	if err != nil {
		return 0, r.errorf(col, "%w", err)
	}
	return v, nil
}

// pair reads a Debit and a Credit column. A booking goes one way: both
// non-zero is refused rather than netted, as it means the columns are not
// what this parser takes them for.
func (r adyRow) pair(debitCol, creditCol, currency string) (debit, credit int64, err error) {
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

func (r adyRow) currency(col string) (string, error) {
	c := r.get(col)
	if c == "" {
		return "", nil
	}
	if _, ok := reconcile.CurrencyDigits(c); !ok {
		return "", r.errorf(col, "unknown currency %s", reconcile.Quote(c))
	}
	return c, nil
}

// row turns one record into a transaction; ok is false for a blank row.
func (b *adyBatch) row(rec []string, line int) (t reconcile.Transaction, ok bool, err error) {
	opts := b.opts
	if len(rec) > len(b.names) {
		return t, false, opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(b.names))
	}
	if err := opts.checkRow(line, rec, b.names); err != nil {
		return t, false, err
	}
	blank := true
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			blank = false
		}
	}
	if blank {
		return t, false, nil
	}
	r := adyRow{b: b, rec: rec, line: line}
	if adyIsHeader(rec) {
		return t, false, opts.errorf(line, "", "a second header row (two reports joined into one file?)")
	}

	typ := r.get(adyType)
	if typ == "" {
		return t, false, r.errorf(adyType, "empty Type")
	}
	lower := strings.ToLower(typ)
	t = reconcile.Transaction{
		RawKind:      typ,
		OrderNo:      r.get(adyMerchantRef),
		ChannelTxnID: r.get(adyModRef),
		Status:       reconcile.StatusSuccess,
		Line:         line,
	}
	switch lower {
	case "settled", "settledbulk":
		t.Kind = reconcile.KindPayment
	case "refunded", "refundedbulk":
		t.Kind = reconcile.KindRefund
	default:
		t.Kind = reconcile.KindOther
		if adyenBatchTypes[lower] {
			t.Kind = reconcile.KindBatch
		}
	}

	if t.OccurredAt, err = b.time(r); err != nil {
		return t, false, err
	}

	grossCcy, err := r.currency(adyGrossCcy)
	if err != nil {
		return t, false, err
	}
	netCcy, err := r.currency(adyNetCcy)
	if err != nil {
		return t, false, err
	}
	grossDebit, grossCredit, err := r.pair(adyGrossDebit, adyGrossCredit, grossCcy)
	if err != nil {
		return t, false, err
	}
	netDebit, netCredit, err := r.pair(adyNetDebit, adyNetCredit, netCcy)
	if err != nil {
		return t, false, err
	}
	var fees int64
	for _, c := range adyFees {
		v, err := r.amount(c, netCcy)
		if err != nil {
			return t, false, err
		}
		if fees, ok = addChecked(fees, v); !ok {
			return t, false, r.errorf(c, "fees of the row overflow")
		}
	}
	if netCcy != "" {
		if b.netCcy == "" {
			b.netCcy = netCcy
		} else if netCcy != b.netCcy {
			return t, false, r.errorf(adyNetCcy, "net currency %s in a batch of %s: the payout cannot be checked", netCcy, b.netCcy)
		}
	}

	// FeeMilli is in the row's currency, the gross one, and fees are in
	// the net one: across an exchange there is no exact conversion, so an
	// FX row reports no fee rather than a rounded one.
	sameCcy := grossCcy != "" && grossCcy == netCcy
	if sameCcy {
		f, ok := adyMulChecked(fees, 1000)
		if !ok {
			return t, false, r.errorf(adyCommission, "fees of the row overflow")
		}
		t.FeeMilli = f
	}
	rate, err := r.rateIsOne()
	if err != nil {
		return t, false, err
	}
	checkIdentity := sameCcy && rate

	switch t.Kind {
	case reconcile.KindPayment:
		if t.OrderNo == "" {
			return t, false, r.errorf(adyMerchantRef, "empty Merchant Reference on a %s row", typ)
		}
		if grossCcy == "" {
			return t, false, r.errorf(adyGrossCcy, "empty Gross Currency on a %s row", typ)
		}
		if r.get(adyGrossCredit) == "" {
			return t, false, r.errorf(adyGrossCredit, "empty amount on a %s row", typ)
		}
		t.Amount, t.Currency = grossCredit, grossCcy
	case reconcile.KindRefund:
		t.RefundNo = r.get(adyModMerchRef)
		// "<auto>" is what Adyen writes for automatic captures; as a
		// refund number it would key unrelated refunds together.
		if t.RefundNo == "" || t.RefundNo == "<auto>" {
			return t, false, r.errorf(adyModMerchRef, "%s row without a refund number (%s)", typ, reconcile.Quote(t.RefundNo))
		}
		if grossCcy == "" {
			return t, false, r.errorf(adyGrossCcy, "empty Gross Currency on a %s row", typ)
		}
		if r.get(adyGrossDebit) == "" {
			return t, false, r.errorf(adyGrossDebit, "empty amount on a %s row", typ)
		}
		t.Amount, t.Currency = grossDebit, grossCcy
	case reconcile.KindBatch:
		if netCcy == "" {
			return t, false, r.errorf(adyNetCcy, "empty Net Currency on a %s row", typ)
		}
		t.Amount, t.Currency = max(netDebit, netCredit), netCcy
	default:
		// The gross amount is what a reviewer compares with the order;
		// a row without one still shows its net movement.
		switch {
		case grossCcy != "":
			t.Amount, t.Currency = max(grossDebit, grossCredit), grossCcy
		case netCcy != "":
			t.Amount, t.Currency = max(netDebit, netCredit), netCcy
		default:
			// Any Type comes here: quoted, as a value from the file is.
			return t, false, r.errorf(adyGrossCcy, "empty Gross Currency and Net Currency on a row of Type %s", reconcile.Quote(typ))
		}
	}

	if checkIdentity {
		// Only types whose fee arithmetic is documented are checked: a
		// reversal or an externally settled row may book differently,
		// and refusing the file over it would hide the whole batch.
		switch lower {
		case "settled", "settledbulk":
			if want := grossCredit - fees; netCredit != want {
				return t, false, r.errorf(adyNetCredit, "%s is not %s %s − fees %s = %s",
					b.fmt(netCredit), r.b.name(adyGrossCredit), b.fmt(grossCredit), b.fmt(fees), b.fmt(want))
			}
		case "refunded", "refundedbulk", "chargeback", "secondchargeback":
			want, ok := addChecked(grossDebit, fees)
			if !ok || netDebit != want {
				return t, false, r.errorf(adyNetDebit, "%s is not %s %s + fees %s = %s",
					b.fmt(netDebit), r.b.name(adyGrossDebit), b.fmt(grossDebit), b.fmt(fees), b.fmt(want))
			}
		}
	}

	switch lower {
	case adyPayout:
		b.sawPayout = true
		b.payoutLine, b.payoutColumn = line, adyNetDebit
		if b.paid, ok = addChecked(b.paid, netDebit-netCredit); !ok {
			return t, false, r.errorf(adyNetDebit, "payout total overflows")
		}
		return t, true, nil
	case adyTransfer:
		b.sawTransfer = true
		if !b.sawPayout {
			b.payoutLine, b.payoutColumn = line, adyNetDebit
			if netCredit != 0 {
				b.payoutColumn = adyNetCredit
			}
		}
	}
	if b.net, ok = addChecked(b.net, netCredit-netDebit); !ok {
		return t, false, r.errorf(adyNetCredit, "batch total overflows")
	}
	return t, true, nil
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
		return opts.wrap(b.lastLine+1, adyType, fmt.Errorf("%w: no MerchantPayout or Balancetransfer row, the file ends after line %d (truncated download?)",
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

// adyMulChecked multiplies a by a positive m, reporting false on overflow.
func adyMulChecked(a, m int64) (int64, bool) {
	c := a * m
	if a != 0 && c/m != a {
		return c, false
	}
	return c, true
}
