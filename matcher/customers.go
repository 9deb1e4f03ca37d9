package matcher

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"reconcile"
	"reconcile/matcher/internal/offheap"
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
// from the file which of those settled tonight (AddSettledElsewhere). A
// case is told from our records alone, so that every shard, and the run
// of the whole, tell it alike.

// EarlyOrders returns tonight's settled orders of the run's customers that
// were created early enough for a partner settled on an earlier night:
// within the payment window of the day's start, or before it. (A partner
// settled before the day was created before it: an order created later
// than the window after the day's start has none.)
func (m *Matcher) EarlyOrders() []reconcile.LocalRecord {
	m.flush()
	if m.opts.PaymentWindow <= 0 {
		return nil
	}
	bound := m.day.Start().Add(m.opts.PaymentWindow)
	var out []reconcile.LocalRecord
	for li := range m.locals {
		if l := &m.locals[li]; l.is(localPairable) && l.created < unixNano(bound) {
			out = append(out, *m.local(int32(li)))
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
	for _, rec := range m.otherOrders {
		if rec.HasCustomer && rec.Settled() && m.opts.Shard.HasCustomer(rec.Customer) && m.settledTonight(rec.OrderNo) {
			out = append(out, rec)
		}
	}
	return out
}

// AddEarlierOrder takes a paid order of a customer of tonight, settled on
// an earlier night.
func (m *Matcher) AddEarlierOrder(rec reconcile.LocalRecord) {
	m.earlierOrders = append(m.earlierOrders, rec)
}

// tonightsOrders lists the orders rule 10 compares: tonight's, paid, with
// a customer of the run's and settled by a row of tonight's file, and
// those of earlier nights the ledger gave. Of the index's orders only
// those whose customer, amount and currency another order may share are
// listed: they were counted in a small table of counters as their records
// attached (pairs), since at millions of orders nearly every one is
// alone; and they are listed as index values, made records only when they
// pair. About one order in eight shares a counter there by chance: those
// the first table lets through are counted again in a second, with a
// hash of its own, and listed only if it agrees, which leaves about one
// in sixty (at ten million orders, 140,000 listed rather than 1.2
// million).
func (m *Matcher) tonightsOrders() []paidOrder {
	c := m.pairs // the index's orders are counted as their records attach
	if c.words == nil {
		c = m.newPairCounters(len(m.groups))
	}
	// An order of an earlier night or of another shard pairs with the
	// index's, if with any: it counts as two.
	m.records = append(slices.Clone(m.earlierOrders), m.settledOthers()...)
	for _, rec := range m.records {
		c.add(rec.Customer, rec.Amount, curOf(rec.Currency), 2)
	}
	// The local records are walked in their order, not the index's: one
	// after the other in memory.
	// A counter is a load from a table larger than the cache: the
	// counters of a batch are loaded first, loads that overlap, as the
	// index's lookups are (batch.go).
	var maybe []int32
	var sum uint64
	for lo := 0; lo < len(m.locals); lo += batchSize {
		batch := m.locals[lo:min(lo+batchSize, len(m.locals))]
		for i := range batch {
			if l := &batch[i]; l.is(localPairable) {
				sum += c.word(l.customer, l.amount, m.localCur(int32(lo+i), l))
			}
		}
		for i := range batch {
			l := &batch[i]
			if !l.is(localPairable) {
				continue
			}
			li := int32(lo + i)
			if c.twice(l.customer, l.amount, m.localCur(li, l)) {
				maybe = append(maybe, li)
			}
		}
	}
	m.batch.sink = sum
	again := m.newPairCounters(len(maybe) + len(m.records))
	again.mul = 0x94D049BB133111EB
	for _, rec := range m.records {
		again.add(rec.Customer, rec.Amount, curOf(rec.Currency), 2)
	}
	for _, li := range maybe {
		l := &m.locals[li]
		again.add(l.customer, l.amount, m.localCur(li, l), 1)
	}
	var out []paidOrder
	for _, li := range maybe {
		l := &m.locals[li]
		if cur := m.localCur(li, l); again.twice(l.customer, l.amount, cur) {
			out = append(out, paidOrder{customer: l.customer, amount: l.amount, created: l.created, li: li, ri: -1, cur: cur, tonight: true})
		}
	}
	for ri, rec := range m.records {
		out = append(out, paidOrder{customer: rec.Customer, amount: rec.Amount, created: unixNano(rec.CreatedAt),
			li: -1, ri: int32(ri), cur: curOf(rec.Currency), tonight: ri >= len(m.earlierOrders)})
	}
	return out
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

// word is the word that holds the counter of the customer, amount and
// currency: loaded ahead of add or twice, so that their load hits the cache.
func (c pairCounters) word(customer, amount int64, cur [3]byte) uint64 {
	w, _ := c.slot(customer, amount, cur)
	return c.words[w]
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

// countPair counts a pairable order of the index in rule 10's counters,
// sized for the file, whose rows may not all be in yet.
func (m *Matcher) countPair(li int32, l *localRow) {
	if m.pairs.words == nil {
		m.pairs = m.newPairCounters(max(len(m.groups), m.opts.ExpectRows))
	}
	m.pairs.add(l.customer, l.amount, m.localCur(li, l), 1)
}

// pairable reports whether a local record that attaches to group gi is
// an order rule 10 looks at: paid, with a customer of the run's, and
// settled by a row of tonight's file. It is decided as the record
// attaches, when every row is in; a record that attaches while the file
// is still being read is decided again once it is (RowsDone).
func (m *Matcher) pairable(gi, li int32, l *localRow) bool {
	return m.mayPair(li, l) && m.settledRow(m.groups[gi].first)
}

// mayPair reports whether the record itself is one rule 10 looks at:
// a paid order with a customer of the run's.
func (m *Matcher) mayPair(li int32, l *localRow) bool {
	return !l.is(localRefund) && l.is(localCustomer) && localOutcome(m.word(li, l, false)) == reconcile.StatusSuccess &&
		m.opts.Shard.HasCustomer(l.customer)
}

// settledRow reports whether a row of the group whose first row is first
// says the channel settled it.
func (m *Matcher) settledRow(first int32) bool {
	for ri := first; ri >= 0; ri = m.rows[ri].next {
		if statusCodes[m.rows[ri].status] == reconcile.StatusSuccess {
			return true
		}
	}
	return false
}

// paidOrder is an order rule 10 compares: a local record of the index
// (locals[li], li ≥ 0), or a record (records[ri]) of an earlier night or
// of another shard; tonight says whether tonight's file settled it.
type paidOrder struct {
	customer, amount, created int64
	li, ri                    int32
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

// orderNo is the order's number; of the index's, without copying it.
func (m *Matcher) orderNo(p paidOrder) string {
	if p.li >= 0 {
		b := m.arena.bytes(m.rows[m.locals[p.li].row].order()) // a payment's key
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return m.records[p.ri].OrderNo
}

// paidRecord is the order's local record.
func (m *Matcher) paidRecord(p paidOrder) reconcile.LocalRecord {
	if p.li >= 0 {
		return *m.local(p.li)
	}
	return m.records[p.ri]
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

// orderHash is an order number's hash in settledElsewhere, the index's
// own 64 bits: a few orders looked up among millions collide about once
// in ten billion nights.
func (m *Matcher) orderHash(order string) uint64 {
	return m.tab.hashString(paymentCode, order)
}

// settledTonight reports whether another shard's row settled the order
// tonight.
func (m *Matcher) settledTonight(order string) bool {
	if !m.elsewhereSorted {
		slices.Sort(m.settledElsewhere)
		m.elsewhereSorted = true
	}
	_, ok := slices.BinarySearch(m.settledElsewhere, m.orderHash(order))
	return ok
}
