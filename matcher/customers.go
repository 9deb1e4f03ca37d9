package matcher

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"reconcile"
	"reconcile/matcher/internal/offheap"
	"reconcile/matcher/rowstore"
)

// Rule 10 looks at a customer's orders: two paid orders of one customer,
// both settled by the channel, for the same amount and currency, created
// within the payment window of each other. Tonight's orders are paired in
// the index; an order of tonight created close enough to the day's start
// may pair with one settled on an earlier night, which the ledger finds
// (EarlyOrders, AddEarlierOrder). Without the customer in the local
// records (a deployment's view without orders.user_id) nothing pairs.
//
// Of a shard, a customer's case is the customer's shard's
// (Shard.HasCustomer): it reads the day's orders of its customers that
// other shards' keys hold (AddLocalRow of OtherShard records), and knows
// from the file which of those settled tonight (addSettledElsewhere). A
// case is told from our records alone, so that every shard, and the run
// of the whole, tell it alike.

// earlyOrders returns tonight's settled orders of the run's customers that
// were created early enough for a partner settled on an earlier night:
// within the payment window of the day's start, or before it. (A partner
// settled before the day was created before it: an order created later
// than the window after the day's start has none.)
func (m *Matcher) earlyOrders() []reconcile.LocalRecord {
	if m.opts.PaymentWindow <= 0 {
		return nil
	}
	bound := m.day.Start().Add(m.opts.PaymentWindow)
	early := rowstore.UnixNano(bound)
	var out []reconcile.LocalRecord
	for li := range int32(m.store.LocalCount()) {
		if m.store.LocalCreated(li) >= early {
			continue // most records: read no further
		}
		if l := m.store.LocalAt(li); m.pairable(&l) {
			out = append(out, *m.store.LocalRecord(li))
		}
	}
	for _, rec := range m.settledOthers() {
		if rec.CreatedAt.Before(bound) {
			out = append(out, rec)
		}
	}
	return out
}

// settledOthers are the orders of other shards' keys, of the run's
// customers, that rows of tonight's file settled.
func (m *Matcher) settledOthers() []reconcile.LocalRecord {
	var out []reconcile.LocalRecord
	for _, rec := range m.shard.otherOrders {
		if rec.HasCustomer && rec.Settled() && m.opts.Shard.HasCustomer(rec.Customer) && m.settledTonight(rec.OrderNo) {
			out = append(out, rec)
		}
	}
	return out
}

// addEarlierOrder takes a paid order of a customer of tonight, settled on
// an earlier night.
func (m *Matcher) addEarlierOrder(rec reconcile.LocalRecord) {
	m.earlierOrders = append(m.earlierOrders, rec)
}

// tonightsOrders lists the orders rule 10 compares: tonight's, paid, with
// a customer of the run's and settled by a row of tonight's file, and
// those of earlier nights the ledger gave. Of the store's orders only
// those whose customer, amount and currency another order may share are
// listed: they are counted first in a small table of counters, since at
// millions of orders nearly every one is alone; and they are listed as
// index values, made records only when they pair. About one order in
// eight shares a counter there by chance: those the first table lets
// through are counted again in a second, with a hash of its own, and
// listed only if it agrees, which leaves about one in sixty (at ten
// million orders, 140,000 listed rather than 1.2 million).
func (m *Matcher) tonightsOrders() []paidOrder {
	locals := int32(m.store.LocalCount())
	c := m.newPairCounters(int(locals))
	// An order of an earlier night or of another shard pairs with the
	// store's, if with any: it counts as two.
	records := append(slices.Clone(m.earlierOrders), m.settledOthers()...)
	for _, rec := range records {
		c.add(rec.Customer, rec.Amount, curOf(rec.Currency), 2)
	}
	// The local records are walked in their order, one after the other in
	// memory. A counter is a load from a table larger than the cache: the
	// counters of a batch are loaded first, loads that overlap, as the
	// store's lookups are.
	var maybe []int32
	m.pairBatches(locals, c, func(li int32, l *rowstore.LocalTerms) { c.add(l.Customer, l.Amount, l.Currency, 1) })
	m.pairBatches(locals, c, func(li int32, l *rowstore.LocalTerms) {
		if c.twice(l.Customer, l.Amount, l.Currency) {
			maybe = append(maybe, li)
		}
	})
	again := m.newPairCounters(len(maybe) + len(records))
	again.mul = 0x94D049BB133111EB
	for _, rec := range records {
		again.add(rec.Customer, rec.Amount, curOf(rec.Currency), 2)
	}
	for _, li := range maybe {
		l := m.store.LocalAt(li)
		again.add(l.Customer, l.Amount, l.Currency, 1)
	}
	offheap.Free(m.big, c.words)
	offheap.Free(m.big, again.words)
	var out []paidOrder
	for _, li := range maybe {
		if l := m.store.LocalAt(li); again.twice(l.Customer, l.Amount, l.Currency) {
			out = append(out, paidOrder{customer: l.Customer, amount: l.Amount, created: l.Created, li: li, cur: l.Currency, tonight: true})
		}
	}
	for ri := range records {
		rec := &records[ri]
		out = append(out, paidOrder{customer: rec.Customer, amount: rec.Amount, created: rowstore.UnixNano(rec.CreatedAt),
			li: -1, rec: rec, cur: curOf(rec.Currency), tonight: ri >= len(m.earlierOrders)})
	}
	return out
}

// pairBatches calls fn for each pairable local record of the store, in
// batches whose counters in c are loaded first: the records are read and
// their counters' places worked out, then the counters loaded in a loop
// of loads alone, so that the processor waits for many at once.
func (m *Matcher) pairBatches(locals int32, c pairCounters, fn func(li int32, l *rowstore.LocalTerms)) {
	var batch [rowstore.BatchSize]rowstore.LocalTerms
	var words [rowstore.BatchSize]int64 // a pairable record's counter word; -1 for the others
	var sum uint64
	for lo := int32(0); lo < locals; lo += rowstore.BatchSize {
		n := min(rowstore.BatchSize, locals-lo)
		for i := range n {
			l := &batch[i]
			*l = m.store.LocalAt(lo + i)
			words[i] = -1
			if m.pairable(l) {
				w, _ := c.slot(l.Customer, l.Amount, l.Currency)
				words[i] = int64(w)
			}
		}
		for _, w := range words[:n] {
			if w >= 0 {
				sum += c.words[w]
			}
		}
		for i, w := range words[:n] {
			if w >= 0 {
				fn(lo+int32(i), &batch[i])
			}
		}
	}
	m.store.Keep(sum)
}

// pairCounters count orders by customer, amount and currency, up to two,
// in two bits each: eight counters an order, 2 bytes, so that ten million
// orders' counters fit a processor's cache, and about one order in eight
// shares its counter with another by chance.
type pairCounters struct {
	words []uint64
	mask  uint64
	// mul is the customer's multiplier in the hash: tables with
	// different ones share counters by chance independently.
	mul uint64
}

func (m *Matcher) newPairCounters(orders int) pairCounters {
	n := 1024
	for n < 8*orders {
		n *= 2
	}
	// Probed at random, as the hash table is: on huge pages where large.
	return pairCounters{words: offheap.Slice[uint64](m.big, n/32, true, true), mask: uint64(n - 1), mul: 0x9E3779B97F4A7C15}
}

func (c pairCounters) slot(customer, amount int64, cur [3]byte) (word, shift uint64) {
	h := uint64(customer)*c.mul ^ uint64(amount)*0xC2B2AE3D27D4EB4F ^
		uint64(cur[0])<<40 ^ uint64(cur[1])<<48 ^ uint64(cur[2])<<56
	h ^= h >> 31 // splitmix64's finish
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 29
	i := h & c.mask
	return i >> 5, (i & 31) * 2
}

// add counts n more orders of the customer, amount and currency.
func (c pairCounters) add(customer, amount int64, cur [3]byte, n uint64) {
	w, s := c.slot(customer, amount, cur)
	v := min((c.words[w]>>s)&3+n, 2)
	c.words[w] = c.words[w]&^(3<<s) | v<<s
}

// twice reports whether the counter reached two.
func (c pairCounters) twice(customer, amount int64, cur [3]byte) bool {
	w, s := c.slot(customer, amount, cur)
	return (c.words[w]>>s)&3 >= 2
}

// pairable reports whether a local record is an order rule 10 looks at:
// paid, with a customer of the run's, and settled by a row of tonight's
// file.
func (m *Matcher) pairable(l *rowstore.LocalTerms) bool {
	return l.Kind == reconcile.KindPayment && l.HasCustomer && l.RowSettled &&
		reconcile.StatusOutcome(l.Status) == reconcile.StatusSuccess && m.opts.Shard.HasCustomer(l.Customer)
}

// paidOrder is an order rule 10 compares: a local record of the store
// (li ≥ 0), or a record (rec) of an earlier night or of another shard;
// tonight says whether tonight's file settled it.
type paidOrder struct {
	customer, amount, created int64
	li                        int32
	rec                       *reconcile.LocalRecord
	cur                       [3]byte
	tonight                   bool
}

// customerCases applies rule 10.
func (m *Matcher) customerCases(add func(reconcile.Finding)) {
	if m.opts.PaymentWindow <= 0 {
		return
	}
	orders := m.tonightsOrders()
	slices.SortFunc(orders, func(a, b paidOrder) int {
		return cmp.Or(cmp.Compare(a.customer, b.customer), bytes.Compare(a.cur[:], b.cur[:]),
			cmp.Compare(a.amount, b.amount), cmp.Compare(a.created, b.created), strings.Compare(m.orderNo(a), m.orderNo(b)))
	})
	window := m.opts.PaymentWindow.Nanoseconds()
	for j := 1; j < len(orders); j++ {
		later := &orders[j]
		for i := j - 1; i >= 0; i-- {
			earlier := &orders[i]
			if earlier.customer != later.customer || earlier.cur != later.cur || earlier.amount != later.amount ||
				later.created-earlier.created > window {
				break
			}
			if m.orderNo(*earlier) == m.orderNo(*later) {
				continue // an order of tonight the ledger also gave as earlier
			}
			if earlier.tonight || later.tonight {
				add(suspectedPayment(m.paidRecord(*earlier), m.paidRecord(*later)))
			}
			break
		}
	}
}

// orderNo is the order's number; of the store's, without copying it.
func (m *Matcher) orderNo(p paidOrder) string {
	if p.li >= 0 {
		return m.store.LocalKey(p.li) // a payment's key
	}
	return p.rec.OrderNo
}

// paidRecord is the order's local record.
func (m *Matcher) paidRecord(p paidOrder) reconcile.LocalRecord {
	if p.li >= 0 {
		return *m.store.LocalRecord(p.li)
	}
	return *p.rec
}

// suspectedPayment is rule 10's finding, about the later order, from our
// records: the row that settled it may be another shard's.
func suspectedPayment(earlier, later reconcile.LocalRecord) reconcile.Finding {
	f := fromRow(reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: later.OrderNo, ChannelTxnID: later.ChannelTxnID,
		Amount: later.Amount, Currency: later.Currency, OccurredAt: later.SettledAt, Status: reconcile.StatusSuccess}, &later)
	f.Category = reconcile.SuspectedDuplicatePayment
	f.OriginalTxnID = earlier.ChannelTxnID
	apart := later.CreatedAt.Sub(earlier.CreatedAt)
	f.Related = []string{fmt.Sprintf("order %s, channel id %s, %s, created %s, %s before",
		earlier.OrderNo, earlier.ChannelTxnID, money(earlier.Amount, earlier.Currency),
		earlier.CreatedAt.Format("2006-01-02 15:04:05.000"), gap(apart))}
	f.Hint = fmt.Sprintf("Customer %d paid %s twice, 2 orders %s apart: %s and then %s, both settled by the channel. The customer's second click? Approve to reverse this one.",
		later.Customer, money(later.Amount, later.Currency), gap(apart), earlier.OrderNo, later.OrderNo)
	return f
}

// settledTonight reports whether another shard's row settled the order
// tonight.
func (m *Matcher) settledTonight(order string) bool {
	if !m.shard.elsewhereSorted {
		slices.Sort(m.shard.settledElsewhere)
		m.shard.elsewhereSorted = true
	}
	// The store's own 64 bits: a few orders looked up among millions
	// collide about once in ten billion nights.
	_, ok := slices.BinarySearch(m.shard.settledElsewhere, m.store.HashOrder(order))
	return ok
}
