package payouts

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Rule 15c: by amount, only what reference did not take. An entry is a
// channel's when its counterparty or remittance text holds one of the
// channel's counterparty names (holdsName). It carries a payout of that
// channel of exactly its amount, currency and direction whose expected
// date is within the channel's window of the entry's date, on either
// side (dayRange) — only when that payout is the one such payout fitting
// the entry, and the entry the one such entry tonight fitting the
// payout. Two payouts fitting one entry, or two entries one payout, are
// never matched by amount alone: the entry is told at once as an
// unexpected_credit naming what it could be, for a person to choose.

// entryChannels lists each booked entry's channels: those whose
// counterparty names its counterparty or remittance text holds.
func (n *night) entryChannels() spans {
	type name struct {
		text string
		ch   int32
	}
	var names []name // by channel: an entry's channels come in order
	for c, ch := range n.chans {
		for _, t := range ch.terms.Counterparties {
			if t = strings.TrimSpace(t); t != "" {
				names = append(names, name{t, int32(c)})
			}
		}
	}
	s := spans{at: make([]int32, 1, len(n.ents)+1)}
	for _, e := range n.ents {
		if booked(e.BankEntry) {
			from := len(s.list)
			for _, nm := range names {
				if !slices.Contains(s.list[from:], nm.ch) && (holdsName(e.Counterparty, nm.text) || holdsName(e.Remittance, nm.text)) {
					s.list = append(s.list, nm.ch)
				}
			}
		}
		s.end()
	}
	return s
}

// byAmount applies rule 15c.
func (n *night) byAmount() {
	pays, ents := n.amountIndexes()
	if len(pays.items) == 0 || len(ents.items) == 0 {
		return
	}
	var fits []int32
	for e := range n.ents {
		if !n.amountEntry(e) {
			continue
		}
		x := n.ents[e]
		fits = fits[:0]
		for _, c := range n.entCh.of(e) {
			from, to := dayRange(n.dates[e], n.window(c))
			fits = append(fits, pays.within(amountKey{c, x.Currency, x.Signed()}, from, to)...)
		}
		switch {
		case len(fits) == 0:
		case len(fits) > 1:
			n.ambiguous(e, fits, nil)
		default:
			p := fits[0]
			o := n.pays[p]
			from, to := dayRange(o.ExpectedOn, n.window(n.payCh[p]))
			if rivals := ents.within(amountKey{n.payCh[p], o.Currency, o.Amount}, from, to); len(rivals) > 1 {
				n.ambiguous(e, fits, rivals)
				continue
			}
			n.taken[e] = true
			n.got[p] = found{arrived: true, amount: o.Amount, on: n.dates[e], keys: n.alone(e)}
		}
	}
}

// alone is the list of entry e alone, in an array all such lists share:
// a night's matches by amount are as many as its entries.
func (n *night) alone(e int) []int32 {
	if n.places == nil {
		n.places = make([]int32, len(n.ents))
		for i := range n.places {
			n.places[i] = int32(i)
		}
	}
	return n.places[e : e+1 : e+1]
}

// amountEntry reports whether entry e is looked for by amount: a booked
// entry of a channel's counterparty that reference did not take, and
// that can carry a payout at all.
func (n *night) amountEntry(e int) bool {
	x := n.ents[e].BankEntry
	return !n.taken[e] && booked(x) && !x.Reversal && x.Amount != 0 && len(n.entCh.of(e)) > 0
}

// amountIndexes index the payouts still to arrive by their channel,
// currency and amount, and the entries looked for by amount by each of
// their channels, currency and signed amount: a payout and an entry that
// fit each other have one key.
func (n *night) amountIndexes() (pays, ents byDate) {
	var ps, es []dated
	for p := range n.pays {
		if o := n.pays[p]; n.waiting(p) && !n.got[p].arrived {
			ps = append(ps, dated{amountKey{n.payCh[p], o.Currency, o.Amount}, o.ExpectedOn, int32(p)})
		}
	}
	for e := range n.ents {
		if n.amountEntry(e) {
			for _, c := range n.entCh.of(e) {
				es = append(es, dated{amountKey{c, n.ents[e].Currency, n.ents[e].Signed()}, n.dates[e], int32(e)})
			}
		}
	}
	return newByDate(ps), newByDate(es)
}

type amountKey struct {
	channel  int32
	currency string
	amount   int64 // signed: the payout's, or the entry's effect on the balance
}

// byDate holds payouts or entries in runs of one key, each run by date,
// so that those within a window are found by halving: a hundred
// thousand payouts of one amount cost a night no more than of many.
type byDate struct {
	runs  map[amountKey][2]int32
	items []int32
	dates []time.Time
}

type dated struct {
	key  amountKey
	date time.Time
	item int32
}

func newByDate(list []dated) byDate {
	slices.SortFunc(list, func(a, b dated) int {
		if c := cmp.Compare(a.key.amount, b.key.amount); c != 0 {
			return c // first: the key that tells most apart
		}
		return cmp.Or(cmp.Compare(a.key.channel, b.key.channel), strings.Compare(a.key.currency, b.key.currency),
			a.date.Compare(b.date), cmp.Compare(a.item, b.item))
	})
	x := byDate{runs: make(map[amountKey][2]int32), items: make([]int32, len(list)), dates: make([]time.Time, len(list))}
	for i, d := range list {
		x.items[i], x.dates[i] = d.item, d.date
		r, ok := x.runs[d.key]
		if !ok {
			r[0] = int32(i)
		}
		r[1] = int32(i + 1)
		x.runs[d.key] = r
	}
	return x
}

// within returns the items of key dated from to to, both included.
func (x *byDate) within(k amountKey, from, to time.Time) []int32 {
	r, ok := x.runs[k]
	if !ok {
		return nil
	}
	dates := x.dates[r[0]:r[1]]
	lo, _ := slices.BinarySearchFunc(dates, from, time.Time.Compare)
	hi, _ := slices.BinarySearchFunc(dates, to, func(d, t time.Time) int {
		if d.After(t) {
			return 1
		}
		return -1
	})
	return x.items[r[0]+int32(lo) : r[0]+int32(hi)]
}
