package reconcile

// JournalKindReversal is the kind of the journals the job posts.
const JournalKindReversal = "reversal"

// Posting moves Amount minor units of Currency into Account; a negative
// amount moves it out. The postings of a journal sum to zero per currency.
type Posting struct {
	Account  string
	Amount   int64
	Currency string
}

// Postings is a set of postings that belong together.
type Postings []Posting

// Reverse returns the postings that undo p, in reverse order.
func (p Postings) Reverse() Postings {
	out := make(Postings, len(p))
	for i, x := range p {
		x.Amount = -x.Amount
		out[len(p)-1-i] = x
	}
	return out
}

// Balanced reports whether the postings sum to zero in every currency.
func (p Postings) Balanced() bool {
	sum := map[string]int64{}
	for _, x := range p {
		sum[x.Currency] += x.Amount
	}
	for _, v := range sum {
		if v != 0 {
			return false
		}
	}
	return true
}

// Journal is a balanced entry the job posts to the ledger.
type Journal struct {
	// IdempotencyKey is unique across all journals: one duplicate row gets
	// at most one journal however often the job runs.
	IdempotencyKey string
	Kind           string
	Channel        string
	OrderNo        string
	RefundNo       string
	ChannelTxnID   string // the duplicate row's channel id
	// Row is the reversed row's Finding.RowKey: its channel id, or its
	// fingerprint when the file gave it none.
	Row      string
	Currency string
	Amount   int64 // the duplicate's amount, minor units
	Memo     string
	Lines    Postings
}
