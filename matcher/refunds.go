package matcher

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"reconcile"
)

// Rules 8 and 9 look at an order, not a key: every refund of it that
// either side says succeeded, tonight's, earlier nights' and the local
// ones of any date, by refund number. The run asks the ledger about the
// orders a refund touches tonight (RefundOrders, AddOrderRefunds); the
// ledger answers for the orders where something can be wrong (more than
// one refund, or one larger than the order), and for every order of a
// refund row tonight that the day's local records did not hold.

// refundOrders returns the orders the ledger must be asked about by name:
// those of tonight's refund rows whose local refund is not one of the
// day's records (refunds it cannot find through the day's window), and
// those of the day's refunds that the index cannot vouch for. Asked about
// the day's refunds, the ledger answers only for orders with more than
// one refund (DayOrderRefunds); a single refund is in order when the
// index holds its order's record for at least as much, and otherwise the
// order is named here.
func (m *Matcher) refundOrders() []string {
	seen := map[string]bool{}
	var out []string
	name := func(order string) {
		if order != "" && !seen[order] {
			seen[order] = true
			out = append(out, order)
		}
	}
	for gi := range int32(m.store.Groups()) {
		if m.store.Kind(gi) != reconcile.KindRefund {
			continue
		}
		// The ledger finds a plain match through the day's records; a
		// refund whose record is of another day, or whose row says
		// another amount or outcome, it is asked about by name.
		order := m.store.Order(gi)
		if g := m.store.Glance(gi); g.HasLocal && m.day.Contains(m.store.Time(g.Local.At)) && m.plainMatch(gi) &&
			m.holdsOrderFor(order, g.Local.Amount, g.Local.Currency) {
			continue
		}
		name(strings.Clone(order))
	}
	for _, rec := range m.unseen { // the day's refunds without a row tonight
		if rec.Kind == reconcile.KindRefund && !m.holdsOrderFor(rec.OrderNo, rec.Amount, curOf(rec.Currency)) {
			name(rec.OrderNo)
		}
	}
	for _, rows := range [][]reconcile.Transaction{m.unkeyed, m.shard.context, m.disputes} {
		for _, tx := range rows {
			name(tx.OrderNo)
		}
	}
	sort.Strings(out)
	return out
}

// holdsOrderFor reports whether the index holds the local record of the
// order, paid at least amount in cur: a single refund of that much can
// be no refund past what was paid.
func (m *Matcher) holdsOrderFor(order string, amount int64, cur [3]byte) bool {
	if order == "" {
		return false
	}
	gi := m.store.Find(reconcile.KindPayment, order)
	if gi < 0 {
		return false
	}
	g := m.store.Glance(gi)
	return g.HasLocal && g.Local.Currency == cur && g.Local.Amount >= amount
}

// orderCases bounds the findings rules 8 and 9 may make of the orders the
// ledger told of: one for each, but an order of a chargeback with no
// refund, which is told as its dispute (disputes.go) and over-refunded by
// its chargebacks alone only when they took more than was paid: rare
// enough to grow the findings for.
func (m *Matcher) orderCases() int {
	n := 0
	for order, o := range m.orders {
		if _, disputed := m.disputed[order]; !disputed || len(o.Refunds) > 0 || len(o.Earlier) > 0 {
			n++
		}
	}
	return n
}

// addOrderRefunds takes what the ledger knows of an order a refund or a
// dispute touches tonight, as the ledger answered it: kept, not copied.
func (m *Matcher) addOrderRefunds(o *reconcile.OrderRefunds) {
	if m.orders == nil {
		m.orders = map[string]*reconcile.OrderRefunds{}
	}
	m.orders[o.Order.OrderNo] = o
}

// refundSeen is one refund of an order as both sides know it.
type refundSeen struct {
	no, id   string
	amount   int64
	currency string
	at       time.Time // when it settled: the channel's time, else ours
	line     int
	channel  bool // a row of a file says it succeeded
	local    bool // our record is SUCCEEDED
	tonight  bool // tonight's file has it
	before   bool // known before tonight: an earlier night's row, or our record of an earlier date
	ourDay   bool // our record is of tonight's date
	ourLater bool // our record is of a later date
	// A dispute (rule 14) counts as one more refund of what its
	// chargebacks took, less what their reversals gave back; a refund
	// that bounced (a refund reversal) counts no more.
	dispute bool
	back    int64 // of a dispute: what its reversals gave back
	bounced bool
}

// counted reports whether the refund is part of tonight's refunded total:
// one either side says succeeded, unless only our records know it and
// date it after tonight (that night's run counts it).
func (r *refundSeen) counted() bool { return !r.bounced && (r.channel || r.local && !r.ourLater) }

// fresh reports whether tonight is the first night the refund is known:
// an over-refunded order names the last such refund, the one that took
// its total over.
func (r *refundSeen) fresh() bool { return !r.before && (r.tonight || r.ourDay) }

// refundCases applies rules 8 and 9 to the orders the ledger told about.
func (m *Matcher) refundCases(add func(reconcile.Finding)) {
	if len(m.orders) == 0 {
		return
	}
	events := m.disputesOfOrders()
	// Sized for the orders of refund rows: those the ledger told of, less
	// those a dispute brought in (most are of a chargeback alone).
	tonight := make(map[string][]reconcile.Transaction, max(len(m.orders)-len(events), 0))
	// Refunds an earlier night's file carried, by number, which its
	// memory knows but the ledger's findings do not: not new tonight.
	remembered := map[string]bool{}
	for gi := range int32(m.store.Groups()) {
		if m.store.Kind(gi) != reconcile.KindRefund {
			continue
		}
		o, ok := m.orders[m.store.Order(gi)]
		if !ok {
			continue
		}
		if len(m.earlier[gi]) > 0 {
			remembered[strings.Clone(m.store.Key(gi))] = true
		}
		order := o.Order.OrderNo // the lent one is the store's
		tonight[order] = append(tonight[order], m.store.Rows(gi)...)
	}
	for i, rec := range m.unseen {
		if rec.Kind == reconcile.KindRefund && m.unseenSeen[i] {
			remembered[rec.RefundNo] = true
		}
	}
	// A refund nothing linked to ours is money refunded all the same; and
	// of a shard, its orders' refunds under other shards' numbers count.
	for _, rows := range [][]reconcile.Transaction{m.unkeyed, m.shard.context} {
		for _, tx := range rows {
			tonight[tx.OrderNo] = append(tonight[tx.OrderNo], tx)
		}
	}
	var rows []reconcile.Transaction // an order's, its refunds' then its disputes'
	for _, o := range m.orders {
		order := o.Order.OrderNo
		rows = append(rows[:0], tonight[order]...)
		refundRows := len(rows)
		for _, e := range events.of(order) {
			rows = append(rows, m.disputes[e.at])
		}
		if refundRows == 0 && onlyDisputed(o, rows) {
			continue
		}
		for _, f := range orderRefunds(m.day, m.opts.RefundWindow, o, rows, remembered) {
			add(f)
		}
	}
}

// onlyDisputed says rules 8 and 9 have nothing to tell of order o: no
// refund of it is known, tonight or before, nor an earlier dispute, and
// tonight's dispute events (events) took back, in its currency, no more
// than it was paid, reversals left uncounted. Most chargebacks' orders:
// their case is the dispute's (rule 14).
func onlyDisputed(o *reconcile.OrderRefunds, events []reconcile.Transaction) bool {
	if len(o.Refunds) > 0 || len(o.Earlier) > 0 || len(o.Disputes) > 0 {
		return false
	}
	var taken int64
	for _, e := range events {
		if !e.Kind.Disputed() || e.Currency != o.Order.Currency {
			return false
		}
		if e.Kind != reconcile.KindChargebackReversal {
			taken = reconcile.AddSaturating(taken, e.Amount)
		}
	}
	return taken <= o.Order.Amount
}

// orderRefunds applies rules 8 and 9 to one order: rows are tonight's
// refund rows of it. A case is told once: an over-refunded order again
// only on a night a refund new that night keeps it over, or its total
// grew past what an earlier night told; a suspected refund never again.
// A refund in another currency than the order's cannot be added to its
// total: it is told on its own, the night it is new.
func orderRefunds(day reconcile.BusinessDay, window time.Duration, o *reconcile.OrderRefunds, rows []reconcile.Transaction,
	remembered map[string]bool) []reconcile.Finding {
	refunds := seenRefunds(day, o, rows, remembered)
	order := o.Order
	var total int64
	var counted, foreign []*refundSeen
	fresh := false
	for _, r := range refunds {
		switch {
		case !r.counted():
		case r.currency != order.Currency:
			foreign = append(foreign, r)
		default:
			counted = append(counted, r)
			total = reconcile.AddSaturating(total, r.amount)
			fresh = fresh || r.fresh()
		}
	}
	var out []reconcile.Finding
	for _, r := range foreign {
		if r.fresh() {
			out = append(out, otherCurrency(o, r))
		}
	}
	if total > order.Amount {
		// The pairs of an over-refunded order are its case, not cases
		// of their own. What an earlier night told named the refunds of
		// then: a refund new tonight that keeps the order over is told,
		// though the total be no higher than told before (a refund
		// failed and another took its place).
		if fresh || total > o.Reported {
			out = append(out, overRefund(o, counted, foreign, total))
		}
		return out
	}
	if window <= 0 {
		return out
	}
	for j, later := range counted {
		if later.dispute {
			continue
		}
		for i := j - 1; i >= 0; i-- {
			earlier := counted[i]
			if earlier.dispute {
				continue
			}
			if later.at.Sub(earlier.at) > window {
				break
			}
			if earlier.amount == later.amount {
				if !slices.Contains(o.Suspected, later.number()) {
					out = append(out, suspectedRefund(o, earlier, later))
				}
				break
			}
		}
	}
	return out
}

// seenRefunds merges what the two sides know of an order's refunds, by
// refund number, in the order they settled. remembered are the numbers
// an earlier night's file carried.
func seenRefunds(day reconcile.BusinessDay, o *reconcile.OrderRefunds, rows []reconcile.Transaction, remembered map[string]bool) []*refundSeen {
	byNo := &refundSet{}
	get := func(no string) *refundSeen {
		r, _ := byNo.get(no)
		return r
	}
	// A channel's row settles the amount and the time: it is what moved.
	fromRow := func(tx reconcile.Transaction, r *refundSeen) {
		if tx.Status != reconcile.StatusSuccess || r.channel && !tx.OccurredAt.Before(r.at) {
			return
		}
		r.channel, r.amount, r.currency, r.at, r.id, r.line = true, tx.Amount, tx.Currency, tx.OccurredAt, tx.ChannelTxnID, tx.Line
	}
	for _, tx := range o.Earlier {
		r := get(refundKey(tx))
		r.before = true
		fromRow(tx, r)
	}
	for _, tx := range rows {
		if tx.Kind != reconcile.KindRefund {
			continue // a dispute's event, below
		}
		r := get(refundKey(tx))
		r.tonight = true
		fromRow(tx, r)
	}
	for _, rec := range o.Refunds {
		r := get(rec.RefundNo)
		switch {
		case rec.SettledAt.IsZero():
		case rec.SettledAt.Before(day.Start()):
			r.before = true
		case day.Contains(rec.SettledAt):
			r.ourDay = true
		default:
			r.ourLater = true
		}
		if rec.Status != reconcile.RefundSucceeded {
			continue
		}
		r.local = true
		if !r.channel {
			r.amount, r.currency, r.at = rec.Amount, rec.Currency, rec.SettledAt
			if r.id == "" {
				r.id = rec.ChannelTxnID
			}
		}
	}
	disputesSeen(byNo, o.Disputes, rows)
	out := byNo.list
	for _, r := range out {
		r.before = r.before || remembered[r.no]
	}
	slices.SortFunc(out, func(a, b *refundSeen) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.no, b.no)
	})
	return out
}

// refundSet is an order's refunds by number: a list while the order has
// a few, as nearly every order has (one map each cost a chargeback's
// order more than its refunds), indexed once it has more.
type refundSet struct {
	list  []*refundSeen
	index map[string]*refundSeen
}

// refundSetList is how many refunds a set finds by reading its list.
const refundSetList = 16

// get returns the refund numbered no, made and added when new.
func (s *refundSet) get(no string) (r *refundSeen, made bool) {
	if s.index != nil {
		r = s.index[no]
	} else {
		for _, x := range s.list {
			if x.no == no {
				r = x
				break
			}
		}
	}
	if r != nil {
		return r, false
	}
	r = &refundSeen{no: no}
	s.list = append(s.list, r)
	switch {
	case s.index != nil:
		s.index[no] = r
	case len(s.list) > refundSetList:
		s.index = make(map[string]*refundSeen, 2*len(s.list))
		for _, x := range s.list {
			s.index[x.no] = x
		}
	}
	return r, true
}

// overRefund is rule 8's finding: about the order, named by the last
// refund that is new tonight, the one that took the total past the
// amount.
func overRefund(o *reconcile.OrderRefunds, refunds, foreign []*refundSeen, total int64) reconcile.Finding {
	order := o.Order
	last := refunds[len(refunds)-1]
	for _, r := range refunds {
		if r.fresh() {
			last = r
		}
	}
	f := reconcile.Finding{
		Category: reconcile.OverRefund, Kind: reconcile.KindRefund,
		OrderNo: order.OrderNo, RefundNo: last.number(), ChannelTxnID: last.id, OccurredAt: last.at, Line: last.line,
		Dispute:    reconcile.OfDispute(lastDispute(refunds)),
		HasChannel: true, ChannelAmount: total, Currency: order.Currency, ChannelStatus: reconcile.StatusSuccess,
		HasLocal: true, LocalAmount: order.Amount, LocalCurrency: order.Currency, LocalStatus: order.Status,
		LocalTxnID: order.ChannelTxnID,
	}
	for _, r := range refunds {
		f.Related = append(f.Related, r.describe())
	}
	for _, r := range foreign {
		f.Related = append(f.Related, r.describe()+", not added: another currency than the order's")
	}
	took := "Refund " + last.name()
	if last.dispute {
		f.Kind = reconcile.KindChargeback // keyed by its order: it has no refund number
		took = "Chargeback " + last.name()
	}
	f.Hint = fmt.Sprintf("Order %s was paid %s and has been refunded %s in %s: %s more than was paid. %s took it past the order's amount.",
		order.OrderNo, money(order.Amount, order.Currency), money(total, order.Currency), countDoors(refunds),
		money(total-order.Amount, order.Currency), took)
	return f
}

// otherCurrency is the finding of a refund in another currency than its
// order's: it cannot count against what was paid, so it would fall
// between the order's currency and its own.
func otherCurrency(o *reconcile.OrderRefunds, r *refundSeen) reconcile.Finding {
	order := o.Order
	f := reconcile.Finding{
		Category: reconcile.RefundCurrencyMismatch, Kind: reconcile.KindRefund,
		OrderNo: order.OrderNo, RefundNo: r.number(), ChannelTxnID: r.id, OccurredAt: r.at, Line: r.line,
		HasChannel: r.channel, ChannelAmount: r.amount, Currency: r.currency,
		HasLocal: true, LocalAmount: order.Amount, LocalCurrency: order.Currency, LocalStatus: order.Status,
		LocalTxnID: order.ChannelTxnID,
		Related:    []string{fmt.Sprintf("order %s, paid %s", order.OrderNo, money(order.Amount, order.Currency))},
	}
	if r.channel {
		f.ChannelStatus = reconcile.StatusSuccess
	}
	f.Hint = fmt.Sprintf("Refund %s of order %s is %s, but the order was paid in %s (%s): a refund cannot be in another currency than its payment, so one side's records are wrong, and the refund is not counted against what was paid. Find the right currency and correct the record.",
		r.name(), order.OrderNo, money(r.amount, r.currency), order.Currency, money(order.Amount, order.Currency))
	return f
}

// suspectedRefund is rule 9's finding: about the later refund, naming
// the earlier one.
func suspectedRefund(o *reconcile.OrderRefunds, earlier, later *refundSeen) reconcile.Finding {
	f := reconcile.Finding{
		Category: reconcile.SuspectedDuplicateRefund, Kind: reconcile.KindRefund,
		OrderNo: o.Order.OrderNo, RefundNo: later.number(), ChannelTxnID: later.id, OriginalTxnID: earlier.id,
		OccurredAt: later.at, Line: later.line,
		HasChannel: later.channel, ChannelAmount: later.amount, Currency: later.currency,
		Related: []string{earlier.describe()},
	}
	if later.channel {
		f.ChannelStatus = reconcile.StatusSuccess
	}
	if later.local {
		f.HasLocal, f.LocalAmount, f.LocalCurrency, f.LocalStatus = true, later.amount, later.currency, reconcile.RefundSucceeded
	}
	f.Hint = fmt.Sprintf("Refund %s of order %s (%s) settled %s after refund %s of the same amount: the same refund again under another number? Approve to reverse this one.",
		later.name(), o.Order.OrderNo, money(later.amount, later.currency), gap(later.at.Sub(earlier.at)), earlier.name())
	return f
}

// unnumbered begins the name of a refund a file does not give our number
// for, and our records do not know: it is known by its row's channel id,
// the same however often the row comes.
const unnumbered = "\x00"

// refundKey is what tells a refund row's refund apart: our number, else
// its row.
func refundKey(tx reconcile.Transaction) string {
	if tx.RefundNo == "" {
		return unnumbered + tx.ChannelTxnID
	}
	return tx.RefundNo
}

// number is the refund's number, "" for one known by its channel id
// only, and for a dispute.
func (r *refundSeen) number() string {
	if r.dispute || strings.HasPrefix(r.no, unnumbered) {
		return ""
	}
	return r.no
}

// name is the refund's number, as a hint names it.
func (r *refundSeen) name() string {
	if r.dispute {
		return strings.TrimPrefix(r.no, disputed)
	}
	if strings.HasPrefix(r.no, unnumbered) {
		return "with channel id " + r.id + " (no refund number of ours)"
	}
	return r.no
}

// describe is one line of a case's Related column.
func (r *refundSeen) describe() string {
	var b strings.Builder
	if r.dispute {
		b.WriteString("chargeback " + strings.TrimPrefix(r.no, disputed))
	} else if r.number() == "" {
		b.WriteString("a refund without our refund number")
	} else {
		b.WriteString("refund " + r.no)
	}
	if r.id != "" {
		b.WriteString(", channel id " + r.id)
	}
	b.WriteString(", " + money(r.amount, r.currency))
	if !r.at.IsZero() {
		b.WriteString(", " + r.at.Format("2006-01-02 15:04:05"))
	}
	switch {
	case r.dispute && r.back > 0:
		b.WriteString(", what its chargebacks took less " + money(r.back, r.currency) + " its reversals gave back")
	case r.dispute:
		b.WriteString(", the channel's file")
	case r.channel && r.local:
		b.WriteString(", both sides")
	case r.channel:
		b.WriteString(", the channel's file only")
	default:
		b.WriteString(", our records only")
	}
	return b.String()
}

// gap says how far apart two times are, in the unit a person would use.
func gap(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return d.Round(time.Minute).String()
	}
}

// A refund row may not carry our refund number (Stripe reports without
// the refund metadata, Adyen's payment reference repeated on every refund
// of the order): it is matched by the channel's id of the refund, which
// our records keep, within its order.

// unkeyedRefunds returns the channel refund ids of tonight's refund rows
// that carry no refund number of ours, to be looked up in our records.
func (m *Matcher) unkeyedRefunds() []string {
	seen := map[string]bool{}
	var out []string
	for _, tx := range m.unkeyed {
		if id := tx.RefundID(); id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// resolveRefunds takes our refunds whose channel refund ids
// unkeyedRefunds asked for (RefundNo, OrderNo and ChannelTxnID set), and
// indexes each row they link to under the refund's number: the row's id
// is the refund's, and the row is of the refund's order. Call it before
// rowsDone: a record that came first waits for its rows. A row whose key,
// with its number, is another shard's is not kept; one whose order the
// shard owns counts in its order's refunds. A row kept unlinked is
// reported.
func (m *Matcher) resolveRefunds(refunds []reconcile.LocalRecord) {
	keep, ownsOrder := m.opts.Shard.Owns, m.opts.Shard.Has
	byID := map[string][]reconcile.LocalRecord{}
	for _, r := range refunds {
		byID[r.ChannelTxnID] = append(byID[r.ChannelTxnID], r)
	}
	var unlinked []reconcile.Transaction
	for _, tx := range m.unkeyed {
		for _, r := range byID[tx.RefundID()] {
			if tx.OrderNo == "" || tx.OrderNo == r.OrderNo {
				tx.RefundNo, tx.OrderNo = r.RefundNo, r.OrderNo
				break
			}
		}
		switch {
		case !keep(tx):
			m.counted.rows-- // another shard's row
			if ownsOrder(tx.OrderNo) {
				m.addContextRow(tx)
			}
		case tx.RefundNo == "":
			unlinked = append(unlinked, tx)
		default:
			m.store.Add(tx, m.opts.Fees != nil)
		}
	}
	m.unkeyed = unlinked
}
