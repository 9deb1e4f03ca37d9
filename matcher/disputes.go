package matcher

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"reconcile"
)

// Rule 14: chargebacks. A dispute's events (a chargeback, its reversal, a
// second chargeback) and refunds that bounced are not matched by key:
// they are kept apart (addDispute), placed on their order by the
// payment's channel id when the row names none (placeDisputes), and
// counted in their order's money returned with its refunds (rule 8,
// refunds.go). Each new chargeback is a finding of its own; a later
// event of a known dispute is no finding: kept, it sets the dispute's
// standing (won or lost) when the ledger commits the night. The events
// of every night are kept by the ledger, so that a dispute is followed
// across nights and each event counts once however often a file
// repeats it.

// addDispute keeps a dispute's event or a refund reversal of the shard.
func (m *Matcher) addDispute(tx reconcile.Transaction) {
	tx = tx.Clone()
	tx.DisputeID = disputeKey(tx) // the key it is kept and asked by
	if len(m.disputes) == cap(m.disputes) {
		// Doubled: append grows a long slice by a quarter, which copies
		// a night's events five times over on their way in.
		m.disputes = slices.Grow(m.disputes, max(len(m.disputes), 64))
	}
	m.disputes = append(m.disputes, tx)
	m.noteDisputed(tx, true)
}

// noteDisputed notes a dispute's event, whichever shard owns it: its
// dispute is in tonight's file, and the order of a chargeback has a
// dispute, so a duplicate of its payment or refunds is not reversed
// automatically (rule 4). kept says tx's text is the matcher's own, not
// lent: it is not copied again.
func (m *Matcher) noteDisputed(tx reconcile.Transaction, kept bool) {
	clone := strings.Clone
	if kept {
		clone = func(s string) string { return s }
	}
	if !tx.Kind.Disputed() || tx.Status != reconcile.StatusSuccess {
		return
	}
	if m.filed == nil {
		m.filed = map[string]bool{}
	}
	if k := disputeKey(tx); !m.filed[k] {
		m.filed[clone(k)] = true // a recorded dispute is not overdue (Known.Overdue)
	}
	if tx.OrderNo == "" || tx.Kind == reconcile.KindChargebackReversal {
		return
	}
	if m.disputed == nil {
		m.disputed = map[string]string{}
	}
	if _, ok := m.disputed[tx.OrderNo]; !ok {
		m.disputed[clone(tx.OrderNo)] = clone(disputeKey(tx))
	}
}

// unplacedDisputes returns the payment ids of tonight's dispute events
// that name no order, to be looked up among our orders.
func (m *Matcher) unplacedDisputes() []string {
	seen := map[string]bool{}
	var out []string
	for _, tx := range m.disputes {
		if tx.OrderNo == "" && tx.PaymentID != "" && !seen[tx.PaymentID] {
			seen[tx.PaymentID] = true
			out = append(out, tx.PaymentID)
		}
	}
	sort.Strings(out)
	return out
}

// placeDisputes gives the events that name no order the order holding
// their payment id among owners (our orders, OrderNo and ChannelTxnID
// set), where exactly one does; then keeps the shard's own. Every shard
// took the unplaced events; the one owning the order keeps each, and an
// event nothing places stays with the first shard, reported there.
func (m *Matcher) placeDisputes(owners []reconcile.LocalRecord) {
	byID := map[string][]string{}
	for _, o := range owners {
		if !slices.Contains(byID[o.ChannelTxnID], o.OrderNo) {
			byID[o.ChannelTxnID] = append(byID[o.ChannelTxnID], o.OrderNo)
		}
	}
	kept := m.disputes[:0]
	for _, tx := range m.disputes {
		if tx.OrderNo == "" {
			if orders := byID[tx.PaymentID]; tx.PaymentID != "" && len(orders) == 1 {
				tx.OrderNo = orders[0]
				m.noteDisputed(tx, true)
			}
		}
		if !m.opts.Shard.Owns(tx) {
			m.counted.rows-- // another shard's row
			continue
		}
		kept = append(kept, tx)
	}
	clear(m.disputes[len(kept):])
	m.disputes = kept
}

// disputeIDs returns the disputes of tonight's events, whose events of
// earlier nights the ledger is asked for (Questions.Disputes).
func (m *Matcher) disputeIDs() []string {
	seen := map[string]bool{}
	var out []string
	for _, tx := range m.disputes {
		if k := disputeKey(tx); tx.Kind.Disputed() && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// disputeKey is the dispute an event belongs to: the dispute's id, else
// the row's channel id, else its fingerprint (a row that names nothing
// is a dispute of its own).
func disputeKey(tx reconcile.Transaction) string {
	switch {
	case tx.DisputeID != "":
		return tx.DisputeID
	case tx.ChannelTxnID != "":
		return tx.ChannelTxnID
	}
	return "#" + tx.Fingerprint()
}

// eventKey tells one event apart from another: the same row again in a
// later file is the same event, counted once, whichever dispute it was
// linked to. It is the row's own: its kind and channel id, else its
// fingerprint.
type eventKey struct {
	kind reconcile.Kind
	id   string
}

func eventID(tx reconcile.Transaction) eventKey {
	if tx.ChannelTxnID != "" {
		return eventKey{tx.Kind, tx.ChannelTxnID}
	}
	return eventKey{tx.Kind, "#" + tx.Fingerprint()}
}

// disputeCase is one dispute as tonight sees it: its events of earlier
// nights, then tonight's new ones, in the order they happened.
type disputeCase struct {
	key    string
	events []reconcile.Transaction
	new    []bool // events[i] is new tonight
	hint   []byte // the buffer a finding's hint is written in
}

// sums are the money the dispute returned to the customer (chargebacks
// of both rounds) and gave back to us (reversals).
func (d *disputeCase) sums() (charged, reversed int64) {
	for _, e := range d.events {
		if e.Kind == reconcile.KindChargebackReversal {
			reversed = reconcile.AddSaturating(reversed, e.Amount)
		} else {
			charged = reconcile.AddSaturating(charged, e.Amount)
		}
	}
	return charged, reversed
}

// status is the dispute's standing after its last event.
func (d *disputeCase) status() string {
	return reconcile.DisputeStanding(d.events[len(d.events)-1].Kind)
}

// first is the index of the dispute's first chargeback, -1 when none: a
// second chargeback opens no dispute.
func (d *disputeCase) first() int {
	return slices.IndexFunc(d.events, func(e reconcile.Transaction) bool { return e.Kind == reconcile.KindChargeback })
}

// disputeCases applies rule 14 to tonight's events: a finding for each
// new chargeback and each event that fits no chargeback, the standing
// of earlier nights' disputes that tonight's events settle, and the new
// events, for the ledger to keep.
func (m *Matcher) disputeCases(res *Classification, add func(reconcile.Finding)) {
	if len(m.disputes) == 0 && len(m.overdue) == 0 {
		return
	}
	seen := make(map[eventKey]bool, len(m.disputes))
	earlier := map[string][]reconcile.Transaction{}
	m.earlierEvents(func(tx reconcile.Transaction) {
		if !seen[eventID(tx)] {
			seen[eventID(tx)] = true
			earlier[disputeKey(tx)] = append(earlier[disputeKey(tx)], tx)
		}
	})
	var order []string // of the disputes, as tonight's file first names them
	// tonight's new events by dispute, as places in res.DisputeEvents
	tonight := make(map[string][]int32, len(m.disputes))
	// The new events are tonight's less those known: kept in the place
	// of tonight's, which nothing reads after this.
	res.DisputeEvents = m.disputes[:0]
	for _, tx := range m.disputes {
		if seen[eventID(tx)] {
			continue // an event an earlier file (or this one) carried: counted then
		}
		seen[eventID(tx)] = true
		res.DisputeEvents = append(res.DisputeEvents, tx)
		if tx.Kind == reconcile.KindRefundReversal {
			add(refundReversed(tx, m.orders[tx.OrderNo]))
			continue
		}
		m.disputeFee(tx, add)
		k := disputeKey(tx)
		if tonight[k] == nil {
			order = append(order, k)
		}
		tonight[k] = append(tonight[k], int32(len(res.DisputeEvents)-1))
	}
	m.disputes = nil // its array is res.DisputeEvents
	m.overdueDisputes(tonight, add)
	// One case, its lists and buffer used again for each dispute: no
	// finding keeps them.
	d := &disputeCase{}
	for _, k := range order {
		d.key, d.events, d.new = k, d.events[:0], d.new[:0]
		for _, e := range earlier[k] {
			d.events, d.new = append(d.events, e), append(d.new, false)
		}
		for _, i := range tonight[k] {
			d.events, d.new = append(d.events, res.DisputeEvents[i]), append(d.new, true)
		}
		sortEvents(d)
		m.disputeCase(d, add)
	}
}

// earlierEvents calls fn with each dispute event of earlier nights the
// ledger told of: those of tonight's disputes, and those of the orders
// tonight touches.
func (m *Matcher) earlierEvents(fn func(reconcile.Transaction)) {
	for _, tx := range m.earlierDisputes {
		fn(tx)
	}
	for _, o := range m.orders {
		for _, tx := range o.Disputes {
			fn(tx)
		}
	}
}

// linkOrphans gives a reversal or second chargeback of tonight whose
// dispute has no chargeback to the one dispute of its order that has
// one, tonight's or an earlier night's: a channel whose later events do
// not repeat the dispute's id (Adyen's reports without a Dispute
// Reference give each event a Modification Reference of its own). With none or several, it stays apart and
// is told. Call it once the ledger's answers are in, before rules 8 and
// 14 count the events.
func (m *Matcher) linkOrphans() {
	// Most nights every event names its dispute or is a chargeback: no
	// maps of the night's disputes are made for none to link.
	if !slices.ContainsFunc(m.disputes, mayBeOrphan) {
		return
	}
	charged := map[string]bool{}     // disputes with a (first) chargeback
	byOrder := map[string][]string{} // those disputes, by order
	note := func(e reconcile.Transaction) {
		if e.Kind != reconcile.KindChargeback {
			return
		}
		k := disputeKey(e)
		charged[k] = true
		if e.OrderNo != "" && !slices.Contains(byOrder[e.OrderNo], k) {
			byOrder[e.OrderNo] = append(byOrder[e.OrderNo], k)
		}
	}
	m.earlierEvents(note)
	for _, e := range m.disputes {
		note(e)
	}
	for i := range m.disputes {
		e := &m.disputes[i]
		if !mayBeOrphan(*e) || charged[disputeKey(*e)] {
			continue
		}
		if to := byOrder[e.OrderNo]; len(to) == 1 {
			e.DisputeID = to[0]
		}
	}
}

// mayBeOrphan says whether e may be linked to its order's dispute: a
// reversal or second chargeback of an order that names no dispute. A
// row whose dispute id is its own channel id names none (Adyen's
// Modification Reference, a CSV row without dispute_id). A chargeback
// opens its own.
func mayBeOrphan(e reconcile.Transaction) bool {
	return e.Kind.Disputed() && e.Kind != reconcile.KindChargeback && e.OrderNo != "" && e.DisputeID == e.ChannelTxnID
}

// disputeFee checks a new chargeback's fee against the contract's
// dispute_fee, where it states one (rule 11 for disputes).
func (m *Matcher) disputeFee(tx reconcile.Transaction, add func(reconcile.Finding)) {
	if m.opts.Fees == nil || m.opts.Fees.Dispute == nil || tx.Kind == reconcile.KindChargebackReversal {
		return
	}
	rule, ok, err := m.opts.Fees.Rule(tx.Kind, tx.Currency)
	if err != nil || !ok {
		return
	}
	want, err := rule.Fee(tx.Amount)
	if err == nil && reconcile.FeeDifference(tx.FeeMilli, want) > rule.ToleranceMilli {
		add(feeMismatch(tx, want, &rule))
	}
}

// disputeCase tells one dispute: a new chargeback, or an event that fits
// none.
func (m *Matcher) disputeCase(d *disputeCase, add func(reconcile.Finding)) {
	first := d.first()
	if first < 0 {
		for i, e := range d.events {
			if d.new[i] {
				add(disputeMismatch(e, "no chargeback of its dispute is known, nor one of its order it could be tied to"))
			}
		}
		return
	}
	charged, reversed := d.sums()
	if reversed > charged {
		for i, e := range d.events {
			if d.new[i] && e.Kind == reconcile.KindChargebackReversal {
				add(disputeMismatch(e, fmt.Sprintf("its dispute's reversals (%s) give back more than its chargebacks took (%s)",
					money(reversed, e.Currency), money(charged, e.Currency))))
			}
		}
	}
	// A chargeback an earlier night told takes its new standing from the
	// events the ledger keeps (ledger.CompleteRun).
	if d.new[first] {
		add(chargeback(d, m.orders[d.events[first].OrderNo]))
		if _, ok := m.recorded[d.key]; m.recorded != nil && !ok {
			add(unrecordedDispute(d.events[first], d.key))
		}
	}
}

// sortEvents puts a dispute's events in the order they happened: at one
// time, earlier nights' first, then a file's in its order of lines.
func sortEvents(d *disputeCase) {
	if len(d.events) < 2 {
		return
	}
	type event struct {
		tx  reconcile.Transaction
		new bool
	}
	events := make([]event, len(d.events))
	for i := range events {
		events[i] = event{d.events[i], d.new[i]}
	}
	sort.SliceStable(events, func(i, j int) bool {
		a, b := events[i], events[j]
		switch {
		case !a.tx.OccurredAt.Equal(b.tx.OccurredAt):
			return a.tx.OccurredAt.Before(b.tx.OccurredAt)
		case a.new != b.new:
			return !a.new
		}
		return a.tx.Line < b.tx.Line
	})
	for i, e := range events {
		d.events[i], d.new[i] = e.tx, e.new
	}
}

// chargeback is rule 14's finding of a new dispute: its first
// chargeback, with what became of it tonight, and the refunds of its
// order beside it.
func chargeback(d *disputeCase, o *reconcile.OrderRefunds) reconcile.Finding {
	cb := d.events[d.first()]
	f := fromRow(cb, nil)
	f.Category, f.Kind = reconcile.Chargeback, reconcile.KindChargeback
	f.FeeMilli = cb.FeeMilli
	f.Dispute = &reconcile.DisputeFacts{ID: d.key, Status: d.status(), Reason: cb.Reason}
	for _, e := range d.events[d.first()+1:] {
		f.Related = append(f.Related, describeEvent(e))
	}
	b := d.hint[:0]
	switch {
	case cb.OrderNo == "":
		b = fmt.Appendf(b, "The channel took back %s under dispute %s, on a payment no order of ours holds", money(cb.Amount, cb.Currency), d.key)
		if cb.PaymentID != "" {
			b = fmt.Appendf(b, " (payment id %s)", cb.PaymentID)
		}
		b = append(b, ": money we cannot place. Find the payment, then answer the dispute or accept it."...)
	case o == nil:
		b = fmt.Appendf(b, "The channel took back %s of order %s under dispute %s, but the order is not in our records: find it, then answer the dispute or accept it.",
			money(cb.Amount, cb.Currency), cb.OrderNo, d.key)
	default:
		f.HasLocal, f.LocalAmount, f.LocalCurrency, f.LocalStatus, f.LocalTxnID =
			true, o.Order.Amount, o.Order.Currency, o.Order.Status, o.Order.ChannelTxnID
		if o.Order.HasCustomer {
			f.Dispute.Customer = strconv.FormatInt(o.Order.Customer, 10)
		}
		b = fmt.Appendf(b, "The customer of order %s (paid %s) disputed the payment with their bank: the channel took back %s under dispute %s",
			cb.OrderNo, money(o.Order.Amount, o.Order.Currency), money(cb.Amount, cb.Currency), d.key)
		if cb.Reason != "" {
			b = fmt.Appendf(b, " (reason: %s)", cb.Reason)
		}
		b = append(b, ". Answer the dispute with the channel, or accept it."...)
		refunded := 0
		for _, r := range o.Refunds {
			if r.Status == reconcile.RefundSucceeded {
				refunded++
			}
			f.Related = append(f.Related, fmt.Sprintf("refund %s of the order, %s, %s in our records", r.RefundNo, money(r.Amount, r.Currency), r.Status))
		}
		if refunded > 0 {
			b = append(b, " The order has been refunded too: see its refunds."...)
		}
	}
	switch f.Dispute.Status {
	case reconcile.DisputeWon:
		b = append(b, " Tonight's file also reverses it: the dispute is won."...)
	case reconcile.DisputeLost:
		b = append(b, " Tonight's file also charges it back a second time: the dispute is lost."...)
	}
	f.Hint, d.hint = string(b), b // the hint at its length, the buffer for the next
	return f
}

// disputeMismatch is an event of a dispute that fits no chargeback.
func disputeMismatch(e reconcile.Transaction, why string) reconcile.Finding {
	f := fromRow(e, nil)
	f.Category, f.Dispute = reconcile.DisputeMismatch, reconcile.OfDispute(disputeKey(e))
	what := "A reversal"
	if e.Kind == reconcile.KindSecondChargeback {
		what = "A second chargeback"
	}
	f.Hint = fmt.Sprintf("%s of %s (dispute %s, line %d) does not fit: %s. Find its chargeback with the channel.",
		what, money(e.Amount, e.Currency), f.DisputeID(), e.Line, why)
	return f
}

// overdueDisputes tells the merchant's recorded disputes whose window
// for a channel's chargeback ended tonight without one, tonight's file
// included.
func (m *Matcher) overdueDisputes(tonight map[string][]int32, add func(reconcile.Finding)) {
	for _, d := range m.overdue {
		owned := m.opts.Shard.Has(d.OrderNo) && d.OrderNo != "" || d.OrderNo == "" && m.opts.Shard.Index == 0
		if !owned || tonight[d.ID] != nil || m.filed[d.ID] {
			continue
		}
		f := reconcile.Finding{Category: reconcile.MissingChannel, Kind: reconcile.KindChargeback, OrderNo: d.OrderNo,
			Dispute: reconcile.OfDispute(d.ID), HasLocal: true, LocalAmount: d.Amount, LocalCurrency: d.Currency, LocalStatus: d.Status,
			OccurredAt: d.OpenedAt}
		f.Hint = fmt.Sprintf("Our records hold dispute %s of order %s (%s, %s), opened %s, but no file of the channel has charged it back since: check its standing with the channel, or correct our record.",
			d.ID, d.OrderNo, money(d.Amount, d.Currency), d.Status, d.OpenedAt.Format("2006-01-02 15:04"))
		add(f)
	}
}

// unrecordedDispute is a new chargeback the merchant's record of
// disputes does not hold.
func unrecordedDispute(e reconcile.Transaction, key string) reconcile.Finding {
	f := fromRow(e, nil)
	f.Category, f.Kind, f.Dispute = reconcile.MissingLocal, reconcile.KindChargeback, reconcile.OfDispute(key)
	f.Hint = fmt.Sprintf("The channel charged back %s under dispute %s, but our records of disputes do not hold it: record it, so that it is answered in time.",
		money(e.Amount, e.Currency), key)
	return f
}

// refundReversed is a refund the scheme could not credit: the money came
// back to us, and the customer has not got it.
func refundReversed(e reconcile.Transaction, o *reconcile.OrderRefunds) reconcile.Finding {
	f := fromRow(e, nil)
	f.Category = reconcile.RefundReversed
	if o != nil {
		if i := bouncedRefund(e, len(o.Refunds), func(i int) (string, string, int64, string) {
			r := o.Refunds[i]
			return r.RefundNo, r.ChannelTxnID, r.Amount, r.Currency
		}); i >= 0 {
			r := o.Refunds[i]
			f.HasLocal, f.LocalAmount, f.LocalCurrency, f.LocalStatus, f.RefundNo = true, r.Amount, r.Currency, r.Status, r.RefundNo
		}
	}
	name := f.RefundNo
	if name == "" {
		name = "with channel id " + e.ChannelTxnID
	}
	f.Hint = fmt.Sprintf("Refund %s of order %s (%s) came back from the customer's bank: the customer did not get that money. Refund it again another way, or mark our refund failed.",
		name, e.OrderNo, money(e.Amount, e.Currency))
	return f
}

// describeEvent is one line of a chargeback's Related column.
func describeEvent(e reconcile.Transaction) string {
	what := map[reconcile.Kind]string{reconcile.KindChargeback: "chargeback", reconcile.KindChargebackReversal: "reversal (won)",
		reconcile.KindSecondChargeback: "second chargeback (lost)"}[e.Kind]
	s := fmt.Sprintf("%s, %s", what, money(e.Amount, e.Currency))
	if e.ChannelTxnID != "" {
		s += ", channel id " + e.ChannelTxnID
	}
	if !e.OccurredAt.IsZero() {
		s += ", " + e.OccurredAt.Format("2006-01-02 15:04:05")
	}
	return s
}

// disputedOrder says why group g's duplicates may not be reversed by
// themselves: its order has a chargeback, tonight's or one still
// standing from an earlier night (rule 14), "" when it has none.
func (m *Matcher) disputedOrder(order string) string {
	if k, ok := m.disputed[order]; ok {
		return "order " + order + " has a chargeback (dispute " + k + "): the dispute may already have returned this money"
	}
	return ""
}

// disputesOfOrders returns the places in m.disputes of tonight's
// dispute events, by order, for rule 8 (chargebacks are money returned
// by another door): places, not copies, listed by order rather than
// mapped, as an order's events are read once. One an earlier file
// carried under no order, placed tonight, joins its order's earlier
// events instead: it is not new money.
func (m *Matcher) disputesOfOrders() placedEvents {
	known := map[eventKey]bool{}
	for _, tx := range m.earlierDisputes {
		known[eventID(tx)] = true
	}
	var out placedEvents
	for i, tx := range m.disputes {
		o := m.orders[tx.OrderNo]
		switch {
		case o == nil:
		case known[eventID(tx)]:
			o.Disputes = append(o.Disputes, tx)
		default:
			out = append(out, placedEvent{tx.OrderNo, int32(i)})
		}
	}
	slices.SortStableFunc(out, func(a, b placedEvent) int { return strings.Compare(a.order, b.order) })
	return out
}

// placedEvent is a dispute event's place in the night's events, with its
// order; placedEvents are sorted by order, each order's in their place's
// order.
type placedEvent struct {
	order string
	at    int32
}

type placedEvents []placedEvent

// of returns the events of order.
func (p placedEvents) of(order string) placedEvents {
	i, _ := slices.BinarySearchFunc(p, order, func(e placedEvent, order string) int { return strings.Compare(e.order, order) })
	j := i
	for j < len(p) && p[j].order == order {
		j++
	}
	return p[i:j]
}

// disputed begins the name of a dispute among an order's refunds (rule
// 8): its events count as one refund.
const disputed = "\x01"

// disputesSeen adds to an order's refunds, by number (byNo), its
// disputes as refunds of their own, each the money its chargebacks took
// less what its reversals gave back, from the events of earlier nights
// and of tonight (rows; refund rows among them are not theirs); and marks
// the refunds that bounced. An event counts once, however many files
// carry it.
func disputesSeen(byNo *refundSet, earlier, rows []reconcile.Transaction) {
	var seen []eventKey // an order has a few events: a list, not a map
	var bounced []reconcile.Transaction
	visit := func(tx reconcile.Transaction, tonight bool) {
		if tx.Kind == reconcile.KindRefund {
			return
		}
		if k := eventID(tx); slices.Contains(seen, k) {
			return
		} else {
			seen = append(seen, k)
		}
		if tx.Kind == reconcile.KindRefundReversal {
			bounced = append(bounced, tx)
			return
		}
		r, made := byNo.get(disputed + disputeKey(tx))
		if made {
			r.dispute, r.channel, r.currency = true, true, tx.Currency
		}
		if tx.Kind == reconcile.KindChargebackReversal {
			r.back = reconcile.AddSaturating(r.back, tx.Amount)
			return
		}
		r.amount = reconcile.AddSaturating(r.amount, tx.Amount)
		if tx.OccurredAt.After(r.at) || r.at.IsZero() {
			r.at, r.id, r.line = tx.OccurredAt, tx.ChannelTxnID, tx.Line
		}
		if tonight {
			r.tonight = true
		} else {
			r.before = true
		}
	}
	for _, tx := range earlier {
		visit(tx, false)
	}
	for _, tx := range rows {
		visit(tx, true)
	}
	for _, r := range byNo.list {
		if r.dispute {
			r.amount = max(0, r.amount-r.back)
			// A chargeback new tonight takes money again, whatever the
			// dispute took before: the order's case is told anew.
			r.before = r.before && !r.tonight
		}
	}
	var refunds []*refundSeen
	for _, r := range byNo.list {
		if !r.dispute {
			refunds = append(refunds, r)
		}
	}
	for _, tx := range bounced {
		if i := bouncedRefund(tx, len(refunds), func(i int) (string, string, int64, string) {
			r := refunds[i]
			return r.number(), r.id, r.amount, r.currency
		}); i >= 0 {
			refunds[i].bounced = true
		}
	}
}

// bouncedRefund is which of n refunds (number, channel id, amount and
// currency of each by refund) a refund reversal gives back: the one of its
// refund number, else of its channel id, else the one refund of its
// amount and currency (a reversal that names neither, as Adyen's under a
// reference of its own); -1 when none, or several, fit.
func bouncedRefund(tx reconcile.Transaction, n int, refund func(int) (no, id string, amount int64, cur string)) int {
	found := -1
	for _, pass := range []func(no, id string, amount int64, cur string) bool{
		func(no, _ string, _ int64, _ string) bool { return tx.RefundNo != "" && no == tx.RefundNo },
		func(_, id string, _ int64, _ string) bool { return tx.ChannelTxnID != "" && id == tx.ChannelTxnID },
		func(_, _ string, amount int64, cur string) bool { return amount == tx.Amount && cur == tx.Currency },
	} {
		for i := range n {
			if pass(refund(i)) {
				if found >= 0 {
					return -1 // several: none is certain
				}
				found = i
			}
		}
		if found >= 0 {
			return found
		}
	}
	return -1
}

// lastDispute is the dispute of an over-refunded order's refunds that
// took money last, "" when no chargeback counts among them.
func lastDispute(refunds []*refundSeen) string {
	k := ""
	for _, r := range refunds {
		if r.dispute && r.amount > 0 {
			k = strings.TrimPrefix(r.no, disputed)
		}
	}
	return k
}

// countDoors says how an order's money went back: "2 refunds", "1
// refund and 1 chargeback".
func countDoors(refunds []*refundSeen) string {
	n, c := 0, 0
	for _, r := range refunds {
		switch {
		case !r.dispute:
			n++
		case r.amount > 0:
			c++
		}
	}
	plural := func(k int, what string) string {
		if k == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", k, what)
	}
	switch {
	case c == 0:
		return plural(n, "refund")
	case n == 0:
		return plural(c, "chargeback")
	}
	return plural(n, "refund") + " and " + plural(c, "chargeback")
}

// RepeatedOrders returns the orders of tonight's keys with more than one
// row, tonight's or earlier nights': the duplicates whose reversal waits
// on a chargeback of their order (Known.Disputed). Call it once the
// earlier nights are in (Nights).
func (m *Matcher) RepeatedOrders() []string {
	seen := map[string]bool{}
	var out []string
	note := func(gi int32) {
		if order := m.store.Order(gi); order != "" && !seen[order] {
			seen[strings.Clone(order)] = true
			out = append(out, strings.Clone(order))
		}
	}
	// The groups' own counts only: a pass over millions of groups that
	// touches neither their rows nor their records.
	for gi := range int32(m.store.Groups()) {
		if m.store.GroupSize(gi) > 1 {
			note(gi)
		}
	}
	for gi := range m.earlier {
		note(gi)
	}
	sort.Strings(out)
	return out
}
