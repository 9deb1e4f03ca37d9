package matcher

import (
	"fmt"
	"sort"

	"reconcile"
)

// Rule 13 for payments: a payment row is keyed by its order number, so
// its order is ours by definition; the row names another order when its
// channel id is what our records hold under that other order. Our
// records are asked (PaymentIDs, AddPaymentOwners) about the payments
// that do not simply match: missing, mismatched, repeated, or of an order
// our record of which holds another channel id. A plain match, whose
// record holds the row's own id, needs no asking.

// paymentIDs returns the channel ids of tonight's payment rows whose
// group is not a plain match, to be looked up among our orders' channel
// ids. Call it once every local record is in.
func (m *Matcher) paymentIDs() []string {
	seen := map[string]bool{}
	var out []string
	for gi := range int32(m.store.Groups()) {
		if m.store.Kind(gi) != reconcile.KindPayment || m.plainMatch(gi) {
			continue
		}
		for _, r := range m.store.Rows(gi) {
			if id := r.ChannelTxnID; id != "" && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	sort.Strings(out)
	return out
}

// addPaymentOwners takes our orders whose channel ids PaymentIDs asked
// about (OrderNo and ChannelTxnID set).
func (m *Matcher) addPaymentOwners(orders []reconcile.LocalRecord) {
	if m.owners == nil {
		m.owners = map[string]string{}
	}
	for _, o := range orders {
		if prev, ok := m.owners[o.ChannelTxnID]; !ok || o.OrderNo < prev {
			m.owners[o.ChannelTxnID] = o.OrderNo // of several, one named alike every run
		}
	}
}

// elsewhere returns the order our records hold a row's channel id under,
// where it is not the row's own: "" for a row that names no other order.
func (g *group) elsewhere(r reconcile.Transaction) string {
	if r.Kind != reconcile.KindPayment || r.ChannelTxnID == "" {
		return ""
	}
	if o := g.owners[r.ChannelTxnID]; o != "" && o != r.OrderNo {
		return o
	}
	return ""
}

// paidElsewhere is rule 13's finding of a payment row whose channel id
// our records hold under another order.
func paidElsewhere(tx reconcile.Transaction, loc *reconcile.LocalRecord, owner string) reconcile.Finding {
	f := fromRow(tx, loc)
	f.Category = reconcile.OrderMismatch
	f.Related = []string{fmt.Sprintf("channel id %s is our record of order %s", tx.ChannelTxnID, owner)}
	ours := "we have no record of order " + tx.OrderNo
	if loc != nil {
		ours = fmt.Sprintf("our order %s is %s, %s%s", tx.OrderNo, loc.Status, money(loc.Amount, loc.Currency), idNote(loc.ChannelTxnID))
		f.Related = append(f.Related, ours)
	}
	f.Hint = fmt.Sprintf("The channel settled a payment for order %s (%s) under channel id %s, which our records hold as the payment of order %s; %s. One payment booked on two orders, or the channel's order number is wrong: find which order was paid; never reversed automatically.",
		tx.OrderNo, money(tx.Amount, tx.Currency), reconcile.Quote(tx.ChannelTxnID), owner, ours)
	return f
}
