package reconcile

import "time"

// Category classifies a finding. The names are the ones operators see in
// summary.json, the workbook and the alert.
type Category string

const (
	Matched          Category = "matched"
	AmountMismatch   Category = "amount_mismatch"
	StatusMismatch   Category = "status_mismatch"
	MissingLocal     Category = "missing_local"
	MissingChannel   Category = "missing_channel"
	DuplicatePayment Category = "duplicate_payment"
	DuplicateRefund  Category = "duplicate_refund"
	// Unrecognized is a settlement row of a kind the parser does not know.
	Unrecognized Category = "unrecognized"
	// Pending is a local record settled just before the day's cut-off and
	// not in the day's file: the next day's file is expected to carry it.
	// It needs no person unless the next day's run does not find it, when
	// it becomes missing_channel.
	Pending Category = "pending"
	// DuplicateVanished is a duplicate an earlier run of the same date
	// reversed that a corrected file no longer carries: its journal stands
	// until a person decides.
	DuplicateVanished Category = "duplicate_vanished"
	// OverRefund is an order whose succeeded refunds, by refund number and
	// whichever side knows them, add up to more than was paid. Never
	// automatic.
	OverRefund Category = "over_refund"
	// SuspectedDuplicateRefund is a refund of an order under a new refund
	// number, for the same amount as another refund of it settled shortly
	// before: the operator's "refund once more", a retry under a fresh key.
	SuspectedDuplicateRefund Category = "suspected_duplicate_refund"
	// SuspectedDuplicatePayment is a paid order of a customer for the same
	// amount as another paid order of theirs created shortly before: the
	// second click that got an order number of its own.
	SuspectedDuplicatePayment Category = "suspected_duplicate_payment"
	// FeeMismatch is a row whose fee differs from the channel's contract by
	// more than the tolerance.
	FeeMismatch Category = "fee_mismatch"
	// OrderMismatch is a channel row under one of our keys whose order is
	// not the one our record names: a refund number of ours refunded on
	// another order, a payment whose channel id our records hold under
	// another order. The money went to another order's customer, or our
	// records are wrong; never matched, never reversed by itself.
	OrderMismatch Category = "order_mismatch"
	// RefundCurrencyMismatch is a refund in another currency than its
	// order's: it cannot be added to the order's refunds (rule 8), so it
	// is told on its own.
	RefundCurrencyMismatch Category = "refund_currency_mismatch"
	// Chargeback is a dispute the channel settled against us: the
	// customer's bank took the payment back. Someone answers it or
	// accepts it; it stays open until won (a reversal) or lost for good
	// (a second chargeback), which later nights link to it.
	Chargeback Category = "chargeback"
	// DisputeMismatch is a dispute's reversal or second chargeback that
	// fits no chargeback the job knows: none for its dispute or order, or
	// a reversal of more than was charged back.
	DisputeMismatch Category = "dispute_mismatch"
	// RefundReversed is a refund the scheme or bank could not credit and
	// returned to us: the customer did not get that money.
	RefundReversed Category = "refund_reversed"

	// PayoutMissing is a channel's payout that has not reached the bank
	// by its expected date and the window after it (rule 15).
	PayoutMissing Category = "payout_missing"
	// PayoutAmountMismatch is a payout whose credits, found by its
	// reference, are not its amount.
	PayoutAmountMismatch Category = "payout_amount_mismatch"
	// UnexpectedCredit is a credit from a channel's counterparty that no
	// payout explains, or that two could.
	UnexpectedCredit Category = "unexpected_credit"
	// PayoutReturned is a payout's money debited back from the account.
	PayoutReturned Category = "payout_returned"
)

// Dispute statuses, as a chargeback finding and the Chargebacks sheet
// say them.
const (
	DisputeOpen = "open" // charged back, not yet answered by the scheme
	DisputeWon  = "won"  // reversed: the money came back
	DisputeLost = "lost" // a second chargeback took it for good
)

// DisputeStanding is a dispute's standing after its last event, of kind.
func DisputeStanding(last Kind) string {
	switch last {
	case KindChargebackReversal:
		return DisputeWon
	case KindSecondChargeback:
		return DisputeLost
	}
	return DisputeOpen
}

// Categories lists every category of a channel's night in report order.
var Categories = []Category{
	Matched, AmountMismatch, StatusMismatch, MissingLocal, MissingChannel,
	DuplicatePayment, DuplicateRefund, OverRefund, SuspectedDuplicateRefund, SuspectedDuplicatePayment,
	OrderMismatch, RefundCurrencyMismatch, Chargeback, DisputeMismatch, RefundReversed,
	FeeMismatch, Unrecognized, Pending, DuplicateVanished,
}

// PayoutCategories lists the categories of a bank statement's night (rule
// 15) in report order.
var PayoutCategories = []Category{PayoutMissing, PayoutAmountMismatch, UnexpectedCredit, PayoutReturned}

// State is where a finding stands. A finding that needs a person is OPEN
// until a decision comes back from the review workbook; the others move
// on their own.
type State string

const (
	StateOpen          State = "OPEN"
	StateReversed      State = "REVERSED"      // an automatic reversal journal was posted
	StateApproved      State = "APPROVED"      // a person approved; a duplicate is then reversed
	StateRejected      State = "REJECTED"      // a person rejected the finding
	StateInvestigating State = "INVESTIGATING" // a person is looking into it
	StateResolved      State = "RESOLVED"      // a pending record turned up in the next day's file
	StateEscalated     State = "ESCALATED"     // a pending record did not: it became missing_channel
	StateSuperseded    State = "SUPERSEDED"    // a newer run of the same date replaced it
)

// Decisions are the words of the review workbook's Decision column, in
// the order its dropdown lists them, with the state each one moves a
// finding to.
var Decisions = []struct {
	Word  string
	State State
}{
	{"approve", StateApproved},
	{"reject", StateRejected},
	{"investigate", StateInvestigating},
}

// DecisionState is the state the Decision word moves a finding to.
func DecisionState(word string) (State, bool) {
	for _, d := range Decisions {
		if d.Word == word {
			return d.State, true
		}
	}
	return "", false
}

// Finding is the outcome of comparing one key of one channel and date.
type Finding struct {
	// Ref names the finding for people and for the review workbook: the
	// run id and the finding's place in the run's report order.
	Ref      string
	Category Category
	Kind     Kind
	OrderNo  string
	RefundNo string
	// ChannelTxnID is the channel id of the row the finding is about: for
	// a duplicate, the duplicate row's id.
	ChannelTxnID string
	// OriginalTxnID is, for a duplicate, the channel id of its group's
	// original row.
	OriginalTxnID string
	LocalTxnID    string // the channel id our own record carries
	// RowFingerprint identifies the row of a finding whose row has no
	// channel id (Transaction.Fingerprint), followed by "-2", "-3", … for
	// the second and later of rows identical in everything they say; empty
	// when the row has a channel id.
	RowFingerprint string

	HasChannel    bool
	ChannelAmount int64 // minor units of Currency
	Currency      string
	HasLocal      bool
	LocalAmount   int64 // minor units of LocalCurrency
	LocalCurrency string
	ChannelStatus TxnStatus
	LocalStatus   string
	IdemStatus    string
	OccurredAt    time.Time // the channel row's time, else the local record's
	Line          int       // line of the channel row in its file, 0 when none
	RawKind       string
	Hint          string // what an operator should know, in plain words
	// Related names the other rows of the finding's case, one line each:
	// the earlier refund or order of a suspected duplicate, every refund of
	// an over-refunded order.
	Related []string
	// FeeMilli and ExpectedFeeMilli are, for fee_mismatch, the fee the
	// row carries and the fee of the channel's contract, in thousandths of
	// a minor unit; FeeMilli is a chargeback's dispute fee.
	FeeMilli, ExpectedFeeMilli int64
	// Dispute is, on a finding of rule 14 (a chargeback, a
	// dispute_mismatch, an over_refund that a chargeback took past what
	// was paid), its dispute; nil on every other finding, which is most.
	Dispute *DisputeFacts
	// AutoReverse is set on unambiguous duplicates only: they get a
	// reversal journal without a person looking.
	AutoReverse bool
	// Payout is, on a payout finding (rule 15), the payout and the bank
	// entry it is about; nil on every other finding. A payout finding
	// holds the payout's amount as its channel side (ChannelAmount,
	// Currency) and the bank's as its local side (LocalAmount,
	// LocalCurrency): the bank account is ours.
	Payout *PayoutFacts
}

// DisputeFacts are what a finding of rule 14 says of its dispute,
// beside what every finding says.
type DisputeFacts struct {
	ID     string // the dispute's id
	Status string // a chargeback's standing: DisputeOpen, DisputeWon, DisputeLost
	Reason string // a chargeback's reason, as the file says it
	// Customer is the customer of a chargeback's order (orders.user_id),
	// "" when the local tables do not say.
	Customer string
}

// OfDispute is the facts of a finding that names dispute id and nothing
// else of it; nil for none.
func OfDispute(id string) *DisputeFacts {
	if id == "" {
		return nil
	}
	return &DisputeFacts{ID: id}
}

// DisputeFacts are the finding's dispute facts, none set when it has
// no dispute.
func (f *Finding) DisputeFacts() DisputeFacts {
	if f.Dispute == nil {
		return DisputeFacts{}
	}
	return *f.Dispute
}

// DisputeID is the id of the finding's dispute, "" when it has none.
func (f Finding) DisputeID() string { return f.DisputeFacts().ID }

// DisputeStatus is a chargeback's standing, "" on other findings.
func (f Finding) DisputeStatus() string { return f.DisputeFacts().Status }

// Key is the matching key of the finding.
func (f Finding) Key() string {
	if f.Kind == KindRefund {
		return f.RefundNo
	}
	return f.OrderNo
}

// RowKey identifies the channel row the finding is about: its channel id,
// or, when the file gave it none, "row:" and its Fingerprint.
func (f Finding) RowKey() string {
	if f.ChannelTxnID != "" {
		return f.ChannelTxnID
	}
	return "row:" + f.Fingerprint()
}

// Fingerprint is RowFingerprint, or, for a finding written before
// fingerprints were kept, the fingerprint of what it recorded of the row.
func (f Finding) Fingerprint() string {
	if f.RowFingerprint != "" {
		return f.RowFingerprint
	}
	return fingerprint(f.Kind, f.OrderNo, f.RefundNo, f.ChannelAmount, f.Currency, f.OccurredAt)
}

// Reversible reports whether a finding of the category is a row the
// channel moved twice, whose approval by a person posts the reversal
// journal of that row: a duplicate, or a suspected one under a new key.
func (c Category) Reversible() bool {
	switch c {
	case DuplicatePayment, DuplicateRefund, SuspectedDuplicatePayment, SuspectedDuplicateRefund:
		return true
	}
	return false
}

// NeedsReview reports whether a person must look at the finding.
func (f Finding) NeedsReview() bool {
	return f.Category != Matched && f.Category != Pending && !f.AutoReverse
}

// AtRisk is the money an operator should weigh for this finding, in minor
// units of the finding's currency: the difference for an amount mismatch,
// the row's amount otherwise. Matched findings carry no risk.
func (f Finding) AtRisk() int64 {
	switch f.Category {
	case Matched, Pending:
		return 0
	case AmountMismatch:
		if f.Currency != f.LocalCurrency {
			return f.ChannelAmount
		}
		d := f.ChannelAmount - f.LocalAmount
		if d < 0 {
			d = -d
		}
		return d
	case MissingChannel:
		return f.LocalAmount
	case MissingLocal:
		if f.Kind == KindChargeback {
			return 0 // its chargeback finding counts the money
		}
		return f.ChannelAmount
	case Chargeback:
		if f.DisputeStatus() == DisputeWon {
			return 0 // reversed: the money came back
		}
		return f.ChannelAmount
	case OverRefund:
		// ChannelAmount is the refunded total, LocalAmount what was paid.
		return f.ChannelAmount - f.LocalAmount
	case PayoutAmountMismatch:
		d := f.ChannelAmount - f.LocalAmount
		if d < 0 {
			d = -d
		}
		return d
	case UnexpectedCredit, PayoutReturned:
		return f.LocalAmount // the bank's entry: money nothing explains, or sent back
	case FeeMismatch:
		d := FeeDifference(f.FeeMilli, f.ExpectedFeeMilli)
		if d%1000 != 0 {
			return d/1000 + 1 // a part of a minor unit counts as one
		}
		return d / 1000
	default:
		return f.ChannelAmount
	}
}
