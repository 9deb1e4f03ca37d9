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

// EarlyOrders returns tonight's settled orders with a customer that were
// created early enough for a partner settled on an earlier night: within
// the payment window (and the cut-off's grace) of the day's start, or
// before it.
func (m *Matcher) EarlyOrders() []reconcile.LocalRecord {
	m.flush()
	if m.opts.PaymentWindow <= 0 {
		return nil
	}
	bound := unixNano(m.day.Start().Add(m.opts.PaymentWindow + m.opts.Grace))
	var out []reconcile.LocalRecord
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil && l.created < bound {
			out = append(out, *m.local(m.groups[gi].local))
		}
	}
	return out
}

// AddEarlierOrder takes a paid order of a customer of tonight, settled on
// an earlier night.
func (m *Matcher) AddEarlierOrder(rec reconcile.LocalRecord) {
	m.earlierOrders = append(m.earlierOrders, rec)
}

// orderLocal is the local record of group gi when it is an order that
// rule 10 looks at: paid, with a customer, and settled by a row of
// tonight's file.
func (m *Matcher) orderLocal(gi int32) *localRow {
	g := &m.groups[gi]
	if g.kind != paymentCode || g.local < 0 {
		return nil
	}
	l := &m.locals[g.local]
	if !l.hasCustomer || localOutcome(m.words[l.status]) != reconcile.StatusSuccess {
		return nil
	}
	for ri := g.first; ri >= 0; ri = m.rows[ri].next {
		if statusCodes[m.rows[ri].status] == reconcile.StatusSuccess {
			return l
		}
	}
	return nil
}

// paidOrder is an order rule 10 compares: of tonight's file (gi ≥ 0) or
// settled on an earlier night (earlierOrders[ei]).
type paidOrder struct {
	customer, amount, created int64
	gi, ei                    int32
	cur                       [3]byte
}

// customerCases applies rule 10.
func (m *Matcher) customerCases(add func(reconcile.Finding)) {
	if m.opts.PaymentWindow <= 0 {
		return
	}
	orders := m.paidOrders()
	slices.SortFunc(orders, func(a, b paidOrder) int {
		return cmp.Or(cmp.Compare(a.customer, b.customer), cmp.Compare(string(a.cur[:]), string(b.cur[:])),
			cmp.Compare(a.amount, b.amount), cmp.Compare(a.created, b.created), cmp.Compare(m.orderNo(a), m.orderNo(b)))
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
			if earlier.gi >= 0 || later.gi >= 0 {
				add(m.suspectedPayment(m.paidRecord(*earlier), m.paidRecord(*later), later.gi))
			}
			break
		}
	}
}

// paidOrders lists the orders rule 10 compares. Tonight's are first
// counted by customer, amount and currency in a small table of counters,
// and only those whose count reached two are listed: at millions of
// orders, nearly every customer's order is alone.
func (m *Matcher) paidOrders() []paidOrder {
	n := 1024
	for n < 2*len(m.groups) {
		n *= 2
	}
	counters := make([]uint8, n)
	mask := uint64(n - 1)
	slot := func(customer, amount int64, cur [3]byte) *uint8 {
		h := uint64(customer)*0x9E3779B97F4A7C15 ^ uint64(amount)*0xC2B2AE3D27D4EB4F ^
			uint64(cur[0])<<40 ^ uint64(cur[1])<<48 ^ uint64(cur[2])<<56
		h ^= h >> 31 // splitmix64's finish
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 29
		return &counters[h&mask]
	}
	for _, rec := range m.earlierOrders {
		if c := slot(rec.Customer, rec.Amount, curOf(rec.Currency)); *c < 2 {
			*c = 2 // an earlier order always pairs with tonight's, if with any
		}
	}
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil {
			if c := slot(l.customer, l.amount, l.cur); *c < 2 {
				*c++
			}
		}
	}
	var out []paidOrder
	for gi := range m.groups {
		if l := m.orderLocal(int32(gi)); l != nil && *slot(l.customer, l.amount, l.cur) >= 2 {
			out = append(out, paidOrder{customer: l.customer, amount: l.amount, created: l.created, gi: int32(gi), ei: -1, cur: l.cur})
		}
	}
	for ei, rec := range m.earlierOrders {
		out = append(out, paidOrder{customer: rec.Customer, amount: rec.Amount, created: unixNano(rec.CreatedAt),
			gi: -1, ei: int32(ei), cur: curOf(rec.Currency)})
	}
	return out
}

func (m *Matcher) orderNo(p paidOrder) string {
	if p.gi >= 0 {
		return m.arena.str(m.groups[p.gi].key)
	}
	return m.earlierOrders[p.ei].OrderNo
}

// paidRecord is the order's local record, with the channel id of its row
// tonight where it has one.
func (m *Matcher) paidRecord(p paidOrder) reconcile.LocalRecord {
	if p.gi < 0 {
		return m.earlierOrders[p.ei]
	}
	g := &m.groups[p.gi]
	rec := *m.local(g.local)
	if id := m.arena.str(m.rows[g.first].id); id != "" {
		rec.ChannelTxnID = id
	}
	return rec
}

// suspectedPayment is rule 10's finding, about the later order; gi is
// its group when tonight's file carries it.
func (m *Matcher) suspectedPayment(earlier, later reconcile.LocalRecord, gi int32) reconcile.Finding {
	f := fromRow(reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: later.OrderNo, ChannelTxnID: later.ChannelTxnID,
		Amount: later.Amount, Currency: later.Currency, OccurredAt: later.SettledAt, Status: reconcile.StatusSuccess}, &later)
	if gi >= 0 {
		tx := m.transaction(m.groups[gi].first)
		f.OccurredAt, f.Line, f.ChannelAmount, f.Currency = tx.OccurredAt, tx.Line, tx.Amount, tx.Currency
	}
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
