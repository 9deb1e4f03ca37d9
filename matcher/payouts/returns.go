package payouts

import (
	"slices"
)

// Rule 15f: a payout sent back. An entry that moves an arrived payout's
// money the other way (sendsBack), the payout found by an earlier night
// or tonight, is its return when it names the payout by reference; or,
// naming none, when it is a reversal from the channel's counterparty of
// exactly the payout's amount within the window after its arrival
// (returnWindow), and the one arrived payout it fits. One
// payout_returned, money at risk the entry's amount; the payout's case
// becomes returned, and the entry is taken so it is told once.

// returns applies rule 15f.
func (n *night) returns() {
	reversals := map[amountKey][]int32{} // reversals naming no payout, by what they take back
	for e := range n.ents {
		x := n.ents[e]
		if n.taken[e] || n.told[e] || x.Told || !booked(x.BankEntry) || n.returnByReference(e) || !x.Reversal {
			continue
		}
		for _, c := range n.entCh.of(e) {
			k := amountKey{c, x.Currency, -x.Signed()} // a payout's amount is what it brought
			reversals[k] = append(reversals[k], int32(e))
		}
	}
	if len(reversals) == 0 {
		return
	}
	fits := map[int32][]int32{} // reversal → the arrived payouts it fits
	for p := range n.pays {
		ok, on := n.arrived(p)
		if !ok || n.got[p].returned {
			continue
		}
		o := n.pays[p]
		for _, e := range reversals[amountKey{n.payCh[p], o.Currency, o.Amount}] {
			if sendsBack(o.Payout, n.ents[e].BankEntry) && returnWindow(on, n.dates[e], n.window(n.payCh[p])) {
				fits[e] = append(fits[e], int32(p))
			}
		}
	}
	for e := range n.ents {
		switch ps := fits[int32(e)]; {
		case len(ps) == 1:
			n.sendBack(ps, e, false)
		case len(ps) > 1:
			n.taken[e] = true // a return all the same: told once, here
			n.findings = append(n.findings, n.unplacedReturn(e, ps))
		}
	}
}

// returnByReference tells entry e as the return of the arrived payouts
// it names and sends back, if any.
func (n *night) returnByReference(e int) bool {
	var back []int32
	for _, p := range n.named.of(e) {
		if ok, _ := n.arrived(int(p)); ok && sendsBack(n.pays[p].Payout, n.ents[e].BankEntry) {
			back = append(back, p)
		}
	}
	if len(back) == 0 {
		return false
	}
	slices.Sort(back)
	n.sendBack(back, e, true)
	return true
}

// sendBack marks payouts returned by entry e and tells it.
func (n *night) sendBack(ps []int32, e int, named bool) {
	n.taken[e] = true
	for _, p := range ps {
		g := &n.got[p]
		g.returned = true
		g.back, g.backOn = append(g.back, int32(e)), later(g.backOn, n.dates[e])
	}
	n.findings = append(n.findings, n.returned(ps, e, named))
}
