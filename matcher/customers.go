package matcher

import (
	"cmp"
	"fmt"
	"slices"

	"reconcile"
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
// within the payment window (and the cut-off's grace) of the day's start,
// or before it.
func (m *Matcher) EarlyOrders() []reconcile.LocalRecord {
	m.flush()
	if m.opts.PaymentWindow <= 0 {
		return nil
	}
	bound := m.day.Start().Add(m.opts.PaymentWindow + m.opts.Grace)
	var out []reconcile.LocalRecord
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil && l.created < unixNano(bound) {
			out = append(out, *m.local(m.groups[gi].local))
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

// tonightsOrders lists the orders rule 10 looks at tonight: paid, with a
// customer of the run's, and settled by a row of tonight's file. Of the
// index's orders only those whose customer, amount and currency another
// order shares are listed: they are first counted in a small table of
// counters, for at millions of orders nearly every one is alone.
func (m *Matcher) tonightsOrders() []reconcile.LocalRecord {
	n := 1024
	for n < 2*len(m.groups) {
		n *= 2
	}
	counters := make([]uint8, n)
	slot := func(customer, amount int64, cur [3]byte) *uint8 {
		h := uint64(customer)*0x9E3779B97F4A7C15 ^ uint64(amount)*0xC2B2AE3D27D4EB4F ^
			uint64(cur[0])<<40 ^ uint64(cur[1])<<48 ^ uint64(cur[2])<<56
		h ^= h >> 31 // splitmix64's finish
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 29
		return &counters[h&uint64(n-1)]
	}
	count := func(customer, amount int64, cur [3]byte, least uint8) {
		if c := slot(customer, amount, cur); *c < least {
			*c = least
		} else if *c < 2 {
			*c++
		}
	}
	others := m.settledOthers()
	// An order of an earlier night or of another shard pairs with the
	// index's, if with any: it counts as two.
	for _, rec := range append(slices.Clone(m.earlierOrders), others...) {
		count(rec.Customer, rec.Amount, curOf(rec.Currency), 2)
	}
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil {
			count(l.customer, l.amount, l.cur, 1)
		}
	}
	out := others
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil && *slot(l.customer, l.amount, l.cur) >= 2 {
			out = append(out, *m.local(m.groups[gi].local))
		}
	}
	return out
}

// orderLocal is the local record of group gi when it is an order that
// rule 10 looks at: paid, with a customer of the run's, and settled by a
// row of tonight's file.
func (m *Matcher) orderLocal(gi int32) *localRow {
	g := &m.groups[gi]
	if g.kind != paymentCode || g.local < 0 {
		return nil
	}
	l := &m.locals[g.local]
	if !l.hasCustomer || localOutcome(m.words[l.status]) != reconcile.StatusSuccess || !m.opts.Shard.HasCustomer(l.customer) {
		return nil
	}
	for ri := g.first; ri >= 0; ri = m.rows[ri].next {
		if statusCodes[m.rows[ri].status] == reconcile.StatusSuccess {
			return l
		}
	}
	return nil
}

// paidOrder is an order rule 10 compares, settled tonight or on an
// earlier night.
type paidOrder struct {
	reconcile.LocalRecord
	tonight bool
}

// customerCases applies rule 10.
func (m *Matcher) customerCases(add func(reconcile.Finding)) {
	if m.opts.PaymentWindow <= 0 {
		return
	}
	var orders []paidOrder
	for _, o := range m.tonightsOrders() {
		orders = append(orders, paidOrder{o, true})
	}
	for _, o := range m.earlierOrders {
		orders = append(orders, paidOrder{o, false})
	}
	slices.SortFunc(orders, func(a, b paidOrder) int {
		return cmp.Or(cmp.Compare(a.Customer, b.Customer), cmp.Compare(a.Currency, b.Currency),
			cmp.Compare(a.Amount, b.Amount), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.OrderNo, b.OrderNo))
	})
	for j := 1; j < len(orders); j++ {
		later := &orders[j]
		for i := j - 1; i >= 0; i-- {
			earlier := &orders[i]
			if earlier.Customer != later.Customer || earlier.Currency != later.Currency || earlier.Amount != later.Amount ||
				later.CreatedAt.Sub(earlier.CreatedAt) > m.opts.PaymentWindow {
				break
			}
			if earlier.OrderNo == later.OrderNo {
				continue // an order of tonight the ledger also gave as earlier
			}
			if earlier.tonight || later.tonight {
				add(suspectedPayment(earlier.LocalRecord, later.LocalRecord))
			}
			break
		}
	}
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
