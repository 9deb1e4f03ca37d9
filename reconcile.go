// Package reconcile holds the domain of the nightly reconciliation job: the
// canonical settlement row, the local record it is compared with, the
// finding that comparison produces, and the reversal journal posted for an
// unambiguous duplicate.
//
// The adapters live in their own packages: channelfeed reads settlement
// files, ledger talks to PostgreSQL, reports writes the workbook, the
// summary and the Slack alert. matcher and compensate are pure.
package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Kind says what a row or record is.
type Kind string

const (
	KindPayment Kind = "payment"
	KindRefund  Kind = "refund"
	// KindOther is a settlement row the parser did not recognise (a WeChat
	// REVOKED row, a new Stripe category). It is never dropped: the matcher
	// surfaces it for review.
	KindOther Kind = "other"
	// KindBatch is a booking of the settlement batch itself: a fee, a
	// payout, a balance transfer. It is counted, never matched.
	KindBatch Kind = "batch"

	// KindChargeback is money the card scheme took back from us for a
	// disputed payment (Stripe dispute, Adyen Chargeback): it went to the
	// customer by a door of its own, beside any refund.
	KindChargeback Kind = "chargeback"
	// KindChargebackReversal gives a chargeback's money back: the dispute
	// was won (Stripe dispute_reversal, Adyen ChargebackReversed).
	KindChargebackReversal Kind = "chargeback_reversal"
	// KindSecondChargeback takes the money again after a reversal: the
	// dispute is lost for good (Adyen SecondChargeback).
	KindSecondChargeback Kind = "second_chargeback"
	// KindRefundReversal is a refund that bounced and came back to us
	// (Adyen RefundedReversed): its money is no longer the customer's.
	KindRefundReversal Kind = "refund_reversal"
	// KindPayout is a channel's payout to our bank account, or a bank
	// entry that should be one: what a payout finding is about (rule 15).
	KindPayout Kind = "payout"
)

// Disputed reports whether the kind is one of a dispute's events: a
// chargeback, its reversal, a second chargeback.
func (k Kind) Disputed() bool {
	return k == KindChargeback || k == KindChargebackReversal || k == KindSecondChargeback
}

// Returned reports whether the kind moves money to the customer in the
// order's money returned (rule 8): a refund or a chargeback of either
// round. Their reversals move it back.
func (k Kind) Returned() bool {
	return k == KindRefund || k == KindChargeback || k == KindSecondChargeback
}

// TxnStatus is the channel's word on a row, reduced to three outcomes.
type TxnStatus string

const (
	StatusSuccess    TxnStatus = "success"
	StatusProcessing TxnStatus = "processing"
	StatusFailed     TxnStatus = "failed"
)

// Transaction is one row of a settlement file in canonical form.
type Transaction struct {
	Kind     Kind
	OrderNo  string // merchant order number
	RefundNo string // merchant refund number; empty for payments
	// ChannelTxnID identifies the row at the channel: the payment's
	// transaction id, or the refund's id for refunds.
	ChannelTxnID string
	// ChannelRefundID is, on a refund row, the channel's id of the refund
	// where it is not ChannelTxnID (Stripe's source_id re_…, beside the
	// balance transaction's txn_…). See RefundID.
	ChannelRefundID string
	Amount          int64 // minor units of Currency, never negative
	Currency        string
	OccurredAt      time.Time
	// FeeMilli is the channel fee in thousandths of a minor unit, so
	// WeChat's five-decimal fees are kept exactly. Negative when the
	// channel returns a fee.
	FeeMilli int64
	// FeeRate is the rate the file says it charged, as it says it (WeChat
	// Pay's 费率, "0.60%"), where it says one.
	FeeRate string
	Status  TxnStatus
	// RawKind is the file's own word for the row kind (WeChat 交易状态,
	// a Stripe reporting_category); it names unrecognised rows in review.
	RawKind string
	// Line is the 1-based line of the row in its file.
	Line int

	// DisputeID is, on a dispute's event, the channel's id of the dispute
	// the events share (Stripe's dp_…, Adyen's Modification Reference).
	DisputeID string `json:",omitempty"`
	// PaymentID is, on a dispute's event or a refund reversal, the channel
	// id of the payment it concerns (Stripe's charge or payment intent,
	// Adyen's Psp Reference): the order is found by it when the row does
	// not name one.
	PaymentID string `json:",omitempty"`
	// Reason is the scheme's reason for a dispute, as the file says it.
	Reason string `json:",omitempty"`
}

// Clone returns t with its text copied, for keeping a row whose text is
// only lent while the row is handed on (channelfeed.ParseFileAside).
// The text is copied into one allocation: a night keeps one such row per
// dispute event, and ten small copies cost twice the memory of one.
func (t Transaction) Clone() Transaction {
	fields := [...]*string{&t.OrderNo, &t.RefundNo, &t.ChannelTxnID, &t.ChannelRefundID, &t.Currency, &t.FeeRate, &t.RawKind, &t.DisputeID, &t.PaymentID, &t.Reason}
	n := 0
	for _, s := range fields {
		n += len(*s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range fields {
		b.WriteString(*s)
	}
	all := b.String()
	for _, s := range fields {
		n := len(*s)
		*s, all = all[:n], all[n:]
	}
	return t
}

// Key is the matching key of a row: the order number for payments, the
// refund number for refunds.
func (t Transaction) Key() string {
	if t.Kind == KindRefund {
		return t.RefundNo
	}
	return t.OrderNo
}

// RefundID is the channel's id of a refund row's refund, as our records
// keep it (refunds.channel_refund_id): a refund row that does not carry
// our refund number is matched by it, within its order.
func (t Transaction) RefundID() string {
	if t.ChannelRefundID != "" {
		return t.ChannelRefundID
	}
	return t.ChannelTxnID
}

// Fingerprint identifies a row by what it says, for a row its file gives
// no channel id: its kind, order and refund numbers, amount, currency and
// time (to the microsecond, as PostgreSQL keeps it). The line is left out,
// so a corrected file that moves the row keeps its fingerprint, and so is
// the status, which a later file may change. 32 hex digits.
func (t Transaction) Fingerprint() string {
	return fingerprint(t.Kind, t.OrderNo, t.RefundNo, t.Amount, t.Currency, t.OccurredAt)
}

func fingerprint(kind Kind, orderNo, refundNo string, amount int64, currency string, at time.Time) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%s\x00", kind, orderNo, refundNo, amount, currency)
	if !at.IsZero() {
		fmt.Fprintf(h, "%d", at.UnixMicro())
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Local order and refund statuses of the reference schema.
const (
	OrderPending   = "PENDING"
	OrderPaid      = "PAID"
	OrderShipped   = "SHIPPED"
	OrderRefunding = "REFUNDING"
	OrderRefunded  = "REFUNDED"
	OrderCancelled = "CANCELLED"

	RefundPending   = "PENDING"
	RefundSucceeded = "SUCCEEDED"
	RefundFailed    = "FAILED"
)

// Idempotency record statuses.
const (
	IdemInProgress = "IN_PROGRESS"
	IdemDone       = "DONE"
	IdemFailed     = "FAILED"
)

// LocalRecord is an order or refund as our own services recorded it.
type LocalRecord struct {
	Kind         Kind
	OrderNo      string
	RefundNo     string // empty for orders
	Amount       int64  // minor units
	Currency     string
	Status       string // PAID, SUCCEEDED, … as stored
	ChannelTxnID string // channel_txn_id or channel_refund_id, may be empty
	// SettledAt is paid_at for orders, refunded_at for refunds; zero when
	// the record has not settled.
	SettledAt time.Time
	// IdemStatus is the status of the idempotency record for this key
	// (scope payment or refund), empty when there is none.
	IdemStatus string
	// Customer is the order's orders.user_id, when the local tables give
	// one (HasCustomer); CreatedAt is when the order was created. Orders
	// only: the same payment again under another order is found by them.
	Customer    int64
	HasCustomer bool
	CreatedAt   time.Time
}

// Key is the matching key of the record, as Transaction.Key.
func (r LocalRecord) Key() string {
	if r.Kind == KindRefund {
		return r.RefundNo
	}
	return r.OrderNo
}

// Settled reports whether the record is in a state in which the channel
// has moved its money: a paid order or a SUCCEEDED refund.
func (r LocalRecord) Settled() bool {
	return r.Outcome() == StatusSuccess
}

// Outcome maps the local status onto the channel's three outcomes, so the
// two sides can be compared: paid orders and SUCCEEDED refunds are
// success, PENDING is processing, CANCELLED and FAILED are failed.
func (r LocalRecord) Outcome() TxnStatus { return StatusOutcome(r.Status) }

// StatusOutcome is the outcome of a local record whose status is status.
func StatusOutcome(status string) TxnStatus {
	switch status {
	case OrderPaid, OrderShipped, OrderRefunding, OrderRefunded, RefundSucceeded:
		return StatusSuccess
	case OrderPending: // also RefundPending
		return StatusProcessing
	default:
		return StatusFailed
	}
}

// BusinessDay is one calendar date in a channel's business time zone.
type BusinessDay struct {
	Date     time.Time // midnight at the start of the day, in Location
	Location *time.Location
}

// NewBusinessDay returns the day named by YYYY-MM-DD in loc.
func NewBusinessDay(date string, loc *time.Location) (BusinessDay, error) {
	if loc == nil {
		loc = time.UTC
	}
	d, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return BusinessDay{}, fmt.Errorf("business date %q: want YYYY-MM-DD", date)
	}
	return BusinessDay{Date: d, Location: loc}, nil
}

// Start is the first instant of the day.
func (d BusinessDay) Start() time.Time { return d.Date }

// End is the first instant of the next day (days can be 23 or 25 hours).
func (d BusinessDay) End() time.Time { return d.Date.AddDate(0, 0, 1) }

// Contains reports whether t falls on the day.
func (d BusinessDay) Contains(t time.Time) bool {
	return !t.Before(d.Start()) && t.Before(d.End())
}

// String is the date as YYYY-MM-DD.
func (d BusinessDay) String() string { return d.Date.Format(time.DateOnly) }

// UTCDate is the date as a UTC midnight: a calendar date, as PostgreSQL
// keeps a date and bank statements and payouts say one, whatever the
// day's own zone.
func (d BusinessDay) UTCDate() time.Time {
	y, m, day := d.Date.Date()
	return time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
}

// LocalRow is a local record whose text fields borrow the database
// driver's buffer: valid only during the call that hands it over. Reading
// millions of records a night this way allocates nothing per record.
type LocalRow struct {
	Kind                                                          Kind
	OrderNo, RefundNo, ChannelTxnID, Currency, Status, IdemStatus []byte
	Amount                                                        int64
	SettledAt                                                     time.Time // zero when not settled
	// Customer, HasCustomer and CreatedAt are LocalRecord's.
	Customer    int64
	HasCustomer bool
	CreatedAt   time.Time
	// OtherShard marks an order of another shard's key that a shard reads
	// for the cases of its customers (see Shard.HasCustomer).
	OtherShard bool
}

// Record copies the row into a LocalRecord.
func (r *LocalRow) Record() LocalRecord {
	return LocalRecord{
		Kind: r.Kind, OrderNo: string(r.OrderNo), RefundNo: string(r.RefundNo),
		Amount: r.Amount, Currency: string(r.Currency), Status: string(r.Status),
		ChannelTxnID: string(r.ChannelTxnID), SettledAt: r.SettledAt, IdemStatus: string(r.IdemStatus),
		Customer: r.Customer, HasCustomer: r.HasCustomer, CreatedAt: r.CreatedAt,
	}
}

// CopyText returns the row with its text copied to the end of buf, and
// buf grown: for a row that borrows a driver's buffers, to be kept past
// the next row. Should buf grow into a new array, rows copied before keep
// the old one alive.
func (r LocalRow) CopyText(buf []byte) (LocalRow, []byte) {
	keep := func(b []byte) []byte {
		off := len(buf)
		buf = append(buf, b...)
		return buf[off:len(buf):len(buf)]
	}
	r.OrderNo, r.RefundNo, r.ChannelTxnID = keep(r.OrderNo), keep(r.RefundNo), keep(r.ChannelTxnID)
	r.Currency, r.Status, r.IdemStatus = keep(r.Currency), keep(r.Status), keep(r.IdemStatus)
	return r, buf
}

// Row is the record as a LocalRow, its text in slices of its own.
func (r LocalRecord) Row() LocalRow {
	return LocalRow{
		Kind: r.Kind, OrderNo: []byte(r.OrderNo), RefundNo: []byte(r.RefundNo),
		ChannelTxnID: []byte(r.ChannelTxnID), Currency: []byte(r.Currency), Status: []byte(r.Status),
		IdemStatus: []byte(r.IdemStatus), Amount: r.Amount, SettledAt: r.SettledAt,
		Customer: r.Customer, HasCustomer: r.HasCustomer, CreatedAt: r.CreatedAt,
	}
}

// Dispute is a dispute as the merchant's own records keep it (the
// optional disputes relation): the chargeback a channel's file should
// settle.
type Dispute struct {
	ID, OrderNo, Currency, Status string
	Amount                        int64 // minor units of Currency
	OpenedAt                      time.Time
}

// OrderRefunds is what is known of one order that a refund touches
// tonight, apart from tonight's file: the order, every local refund of it
// whatever its date and status, and the refund rows of earlier nights'
// files that no local record confirmed (kept with their findings).
type OrderRefunds struct {
	Order   LocalRecord
	Refunds []LocalRecord
	Earlier []Transaction
	// Reported is the refunded total an earlier night's over_refund of
	// the order reported (0: none); Suspected are the refund numbers
	// earlier nights reported as suspected duplicates. A case is told
	// once: again only when more money went out.
	Reported  int64
	Suspected []string
	// Disputes are the order's dispute events and refund reversals of
	// earlier nights' files (ledger dispute_events): chargebacks count in
	// what was returned, reversals take it back (rule 14).
	Disputes []Transaction
}
