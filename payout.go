package reconcile

import "time"

// Payout is money a channel paid out of its balance to our bank account:
// one Stripe automatic payout (po_…), one Adyen settlement batch, one
// payout of the canonical or a mapped CSV. The channel's file tells which
// of its rows each payout holds; the bank statement tells whether it
// arrived.
type Payout struct {
	Channel string
	// ID is the channel's id of the payout: Stripe's po_…, Adyen's
	// "batch 412", the canonical CSV's payout_id, a mapped file's payout
	// column.
	ID string
	// Reference is what the bank is expected to show of the payout, where
	// the file says it (Adyen's transfer reference, TX000000412XT); the
	// ID is looked for besides.
	Reference string
	// Amount is the sum of the net of the payout's rows, in minor units of
	// Currency: what should reach the bank; what its own row states when
	// the file has none of its rows. Negative when the rows took more
	// than they brought (the channel then debits the account).
	Amount   int64
	Currency string
	// Stated is the amount the payout's own row says, where the file has
	// one (Adyen's MerchantPayout, a payout row of the canonical or a
	// mapped CSV); the file is refused when it differs from Amount.
	Stated    int64
	HasStated bool
	// ExpectedOn is the date the payout should reach the bank (Stripe's
	// automatic_payout_effective_at, a CSV's payout_date); zero when the
	// file does not say, and the channel's payout delay then sets it.
	ExpectedOn time.Time
	Rows       int // rows of the file in the payout
	Line       int // the payout's first row in its file
}

// PayoutTerms are what rule 15 needs of a channel's payouts.
type PayoutTerms struct {
	// Counterparties are the names the channel's money carries on the
	// bank statement ("STRIPE", "ADYEN"): an entry whose counterparty or
	// remittance text holds one as a word, in any case, is the channel's.
	Counterparties []string
	// Window is how many days a payout may arrive after its expected
	// date, and a credit be taken for it by amount on either side of it.
	Window int
}

// PayoutFacts are a payout finding's payout and bank entry, beside what
// every finding says.
type PayoutFacts struct {
	Channel    string    // the payout's channel; "" for a credit no payout explains
	ID         string    // the payout's id; "" likewise
	ExpectedOn time.Time // when the payout should have arrived
	// Account and BankRef name the bank entry (BankRef is the entry's key
	// when the bank gives no reference); BookedOn is its date.
	Account, BankRef string
	BookedOn         time.Time
	// Together is, on a finding about a group of payouts (one credit for
	// several), how many: its amounts are the group's. Not kept by the
	// ledger: the night's alert reads it.
	Together int
}

// Payout statuses, as the Payouts sheet says them.
const (
	PayoutExpected = "expected" // not arrived, not yet due
	PayoutArrived  = "arrived"  // its credits are its amount
	PayoutShort    = "mismatch" // found by its reference, another amount
	PayoutOverdue  = "missing"  // not arrived by its date and the window
	PayoutSentBack = "returned" // debited back after it arrived
)

// PayoutCase is a payout as the Payouts sheet shows it: where it stands
// tonight.
type PayoutCase struct {
	Payout
	Status    string
	Arrived   int64     // what its credits brought, minor units of Currency
	ArrivedOn time.Time // the date of its last credit
	Account   string
	BankRefs  []string // its credits' references
}

// OpenPayout is a payout as a bank statement's night finds it (rule 15):
// its Amount signed (below zero the channel debits us), its ExpectedOn
// set, and what earlier nights found of it.
type OpenPayout struct {
	Payout
	Told      bool // payout_missing was told on an earlier night
	Arrived   bool // an earlier night matched it
	ArrivedOn time.Time
	// ArrivedAmount is what earlier nights' entries brought, Short
	// whether that is not its amount (as its latest file says it),
	// Returned whether a night found it sent back.
	ArrivedAmount   int64
	Short, Returned bool
	ShortTold       bool // a payout_amount_mismatch of it was told
}

// KeyedEntry is a bank entry as a statement's night finds it: with its
// key across nights (BankEntry.Key, "-2" and on for the repeats within
// one statement) and, for an entry of an earlier statement no payout
// took, whether it was told unexpected.
type KeyedEntry struct {
	BankEntry
	Key     string
	Earlier bool // from an earlier night's statement
	// Told says an earlier night told it: an unexpected_credit, or the
	// payout_returned of a reversal no one payout could be named for.
	Told bool
}

// PayoutArrival is a payout whose money a statement's night found, or
// (Returned) found sent back: the entries that did it.
type PayoutArrival struct {
	Channel, PayoutID string
	Keys              []string // the entries
	// Amount is what they brought, signed as the payout's: for several
	// entries of one payout their sum, for one entry of several payouts
	// this payout's share.
	Amount int64
	On     time.Time // the date of the last of them
	// Short says it was found by reference as another amount
	// (payout_amount_mismatch was told).
	Short    bool
	Returned bool
}
