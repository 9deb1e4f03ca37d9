// Package payouts applies rule 15 to a bank statement's night: it finds
// each channel payout's money among the statement's entries, by
// reference, else by exact amount from the channel's counterparty within
// a window, and tells what did not arrive, what arrived as another
// amount, what came that no payout explains and what was sent back.
//
// It reads no file and no database and asks no clock: the night's
// payouts, entries and terms in, its arrivals, findings and the payouts'
// standing out. The same input, in whatever order, gives the same result.
//
// The rules, as the README numbers them:
//
//   - 15a: which entries take part, and which payout an entry can carry
//     (booked, same currency, the payout's direction);
//   - 15b: by reference: the entries naming payouts, in groups;
//   - 15c: by amount from the channel's counterparty, only when one
//     payout and one entry fit each other;
//   - 15d: payout_missing once the window after its date is over;
//   - 15e: unexpected_credit for a channel's credit nothing took;
//   - 15f: payout_returned for money of an arrived payout going back.
package payouts

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"reconcile"
)

// Input is what a bank statement's night knows.
type Input struct {
	Day time.Time // the statement's business date, midnight UTC
	// Payouts are the payouts not yet arrived (or arrived but within
	// reach of a return), of every channel paying into these accounts.
	Payouts []Open
	// Entries are tonight's statement entries, and earlier nights'
	// credits no payout has taken.
	Entries []Entry
	// Terms are each channel's counterparty names and window in days.
	Terms map[string]reconcile.PayoutTerms
}

// Open is a payout as the night finds it (the ledger's answer).
type Open = reconcile.OpenPayout

// Entry is a bank entry as the night finds it.
type Entry = reconcile.KeyedEntry

// Result is what the night makes of its input.
type Result struct {
	// Arrivals are the payouts whose money is found tonight, not those an
	// earlier night found.
	Arrivals []Arrival
	// Findings are tonight's findings, each told once across nights, by
	// category (reconcile.PayoutCategories), then payout id or entry key.
	Findings []reconcile.Finding
	// Cases are every payout of the input where it stands tonight (the
	// Payouts sheet), by channel and id.
	Cases []reconcile.PayoutCase
	// Taken are the keys of the entries a payout took tonight, sorted:
	// they leave the pool of credits nothing explains.
	Taken []string
}

// Arrival is a payout whose money the night found, or found sent back.
type Arrival = reconcile.PayoutArrival

// Match applies rule 15 to one bank statement's night.
func Match(in Input) Result {
	n := newNight(in)
	n.byReference()
	n.byAmount()
	n.returns()
	n.missing()
	n.changed()
	n.unexpected()
	return n.result()
}

// night is the state of one Match: the input in a fixed order, and what
// the rules found so far. Payouts and entries are named by their place.
type night struct {
	day   time.Time
	pays  []*Open     // the input's, by channel, then id
	ents  []*Entry    // the input's, by key
	dates []time.Time // each entry's date (entryDate)
	chans []channel   // by name
	payCh []int32     // each payout's channel
	entCh spans       // each entry's channels by its counterparty (15c)
	named spans       // the payouts each entry's text names (15b)
	got   []found     // what tonight found of each payout
	taken []bool      // entries a payout took tonight
	told  []bool      // entries told of tonight as ambiguous (15c)
	// places[i] is i: a match by amount's list of one entry is a part
	// of it (alone), not an array of its own.
	places []int32

	findings []reconcile.Finding
}

// channel is a channel paying into the accounts, with its terms; a
// channel without terms has no counterparty and no window.
type channel struct {
	name  string
	terms reconcile.PayoutTerms
}

// found is what tonight found of a payout.
type found struct {
	arrived  bool
	short    bool
	amount   int64     // what its entries brought, signed as the payout's
	on       time.Time // the date of the last of them
	keys     []int32   // its entries
	returned bool
	back     []int32   // the entries that sent it back tonight
	backOn   time.Time // the date of the last of them
}

// spans holds a short list of numbers for each of many items in one
// array: an entry's channels, the payouts its text names.
type spans struct {
	at   []int32 // item i's list is list[at[i]:at[i+1]]
	list []int32
}

func (s *spans) of(i int) []int32 { return s.list[s.at[i]:s.at[i+1]] }

// end closes the list of the next item.
func (s *spans) end() { s.at = append(s.at, int32(len(s.list))) }

func newNight(in Input) *night {
	// Sorted first, so that everything after walks them in one order
	// whatever order the input came in; by pointer, which moves 8 bytes
	// where an entry is some 300.
	n := &night{day: in.Day, pays: pointers(in.Payouts), ents: pointers(in.Entries)}
	slices.SortFunc(n.pays, comparePayouts)
	slices.SortFunc(n.ents, compareEntries)
	n.channels(in.Terms)
	n.dates = make([]time.Time, len(n.ents))
	for i := range n.ents {
		n.dates[i] = entryDate(n.ents[i].BankEntry, n.day)
	}
	n.got = make([]found, len(n.pays))
	n.taken = make([]bool, len(n.ents))
	n.told = make([]bool, len(n.ents))
	n.entCh = n.entryChannels()
	n.named = newRefIndex(n.pays).scan(n.ents)
	return n
}

// channels lists the channels of the terms and of the payouts, and
// places each payout's.
func (n *night) channels(terms map[string]reconcile.PayoutTerms) {
	var names []string
	for name := range terms {
		names = append(names, name)
	}
	for _, p := range n.pays {
		if len(names) == 0 || names[len(names)-1] != p.Channel {
			names = append(names, p.Channel) // the payouts come by channel
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	index := make(map[string]int32, len(names))
	for i, name := range names {
		index[name] = int32(i)
		n.chans = append(n.chans, channel{name: name, terms: terms[name]})
	}
	n.payCh = make([]int32, len(n.pays))
	for i, p := range n.pays {
		n.payCh[i] = index[p.Channel]
	}
}

// window is a channel's window in days; a negative one is none.
func (n *night) window(c int32) int { return max(n.chans[c].terms.Window, 0) }

// waiting reports whether a payout was still to arrive when the night
// began: not found by an earlier night, and of some money (a payout of
// nothing never travels and is never open).
func (n *night) waiting(p int) bool { return !n.pays[p].Arrived && n.pays[p].Amount != 0 }

// arrived reports whether a payout's money is at the bank, found by an
// earlier night or tonight, and since when.
func (n *night) arrived(p int) (bool, time.Time) {
	if n.got[p].arrived {
		return true, n.got[p].on
	}
	return n.pays[p].Arrived, n.pays[p].ArrivedOn
}

// pointers points at each of list, read only.
func pointers[T any](list []T) []*T {
	out := make([]*T, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// comparePayouts orders payouts by channel and id; the rest only orders
// a payout given twice, which no file gives, the same way every time.
func comparePayouts(a, b *Open) int {
	if c := strings.Compare(a.Channel, b.Channel); c != 0 {
		return c
	}
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Currency, b.Currency), cmp.Compare(a.Amount, b.Amount), a.ExpectedOn.Compare(b.ExpectedOn),
		strings.Compare(a.Reference, b.Reference), cmp.Compare(a.Line, b.Line), compareBool(a.Arrived, b.Arrived),
		a.ArrivedOn.Compare(b.ArrivedOn), cmp.Compare(a.ArrivedAmount, b.ArrivedAmount), compareBool(a.Short, b.Short),
		compareBool(a.Told, b.Told))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareEntries orders entries by key, unique in a night; the rest
// likewise orders an entry given twice.
func compareEntries(a, b *Entry) int {
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Account, b.Account),
		strings.Compare(a.BankRef, b.BankRef), cmp.Compare(a.Signed(), b.Signed()), strings.Compare(a.Currency, b.Currency),
		a.BookedOn.Compare(b.BookedOn), a.ValueOn.Compare(b.ValueOn), cmp.Compare(a.Line, b.Line))
}

// result gathers what the rules found, in the order Result promises.
func (n *night) result() Result {
	var r Result
	arrivals, keys := 0, 0
	for p := range n.got {
		if n.got[p].arrived {
			arrivals, keys = arrivals+1, keys+len(n.got[p].keys)
		}
	}
	// The arrivals' keys share one array, each its own part of it.
	all := make([]string, 0, keys)
	r.Arrivals = make([]Arrival, 0, arrivals)
	for p, o := range n.pays {
		if g := &n.got[p]; g.arrived {
			from := len(all)
			for _, e := range g.keys {
				all = append(all, n.ents[e].Key)
			}
			r.Arrivals = append(r.Arrivals, Arrival{Channel: o.Channel, PayoutID: o.ID,
				Keys: all[from:len(all):len(all)], Amount: g.amount, On: g.on, Short: g.short})
		}
		if g := &n.got[p]; len(g.back) > 0 {
			var keys []string
			var sum int64
			for _, e := range g.back {
				keys = append(keys, n.ents[e].Key)
				sum = reconcile.AddSaturating(sum, n.ents[e].Signed())
			}
			r.Arrivals = append(r.Arrivals, Arrival{Channel: o.Channel, PayoutID: o.ID, Keys: keys, Amount: sum, On: g.backOn,
				Returned: true})
		}
	}
	r.Taken = make([]string, 0, keys)
	for e, t := range n.taken {
		if t {
			r.Taken = append(r.Taken, n.ents[e].Key)
		}
	}
	r.Findings = n.findings
	slices.SortStableFunc(r.Findings, compareFindings)
	r.Cases = n.cases()
	return r
}

// compareFindings orders findings by category as the reports list them,
// then by the payout or entry they are about.
func compareFindings(a, b reconcile.Finding) int {
	return cmp.Or(cmp.Compare(slices.Index(reconcile.PayoutCategories, a.Category), slices.Index(reconcile.PayoutCategories, b.Category)),
		strings.Compare(a.ChannelTxnID, b.ChannelTxnID), strings.Compare(a.Payout.Channel, b.Payout.Channel),
		strings.Compare(a.Payout.Account, b.Payout.Account), strings.Compare(a.Payout.BankRef, b.Payout.BankRef))
}

// cases says where each payout stands tonight.
func (n *night) cases() []reconcile.PayoutCase {
	out := make([]reconcile.PayoutCase, len(n.pays))
	refs := 0
	for p := range n.got {
		refs += len(n.got[p].keys)
	}
	all := make([]string, 0, refs) // the cases' references share one array
	for p, o := range n.pays {
		c := reconcile.PayoutCase{Payout: o.Payout, Status: reconcile.PayoutExpected}
		g := &n.got[p]
		switch {
		case g.arrived:
			// With what an earlier night brought of a split payout
			// (o.Amount − due); nights of statements may add up past an
			// int64, one statement may not (reconcile.MaxFileTotal).
			c.Status, c.Arrived, c.ArrivedOn = reconcile.PayoutArrived, reconcile.AddSaturating(g.amount, o.Amount-n.due(p)), g.on
			if g.short {
				c.Status = reconcile.PayoutShort
			}
			c.Account = n.ents[g.keys[0]].Account
			from := len(all)
			for _, e := range g.keys {
				all = append(all, bankRef(n.ents[e]))
			}
			c.BankRefs = all[from:len(all):len(all)]
		case o.Amount == 0:
			c.Status = reconcile.PayoutArrived // nothing to carry: never open
		case o.Arrived:
			// An earlier night found it; what it brought is the ledger's.
			c.Status, c.Arrived, c.ArrivedOn = reconcile.PayoutArrived, o.ArrivedAmount, o.ArrivedOn
			if o.Short {
				c.Status = reconcile.PayoutShort
			}
			if o.Returned {
				c.Status = reconcile.PayoutSentBack
			}
		case overdue(n.day, o.ExpectedOn, n.window(n.payCh[p])):
			c.Status = reconcile.PayoutOverdue
		}
		if g.returned {
			c.Status = reconcile.PayoutSentBack
		}
		out[p] = c
	}
	return out
}
