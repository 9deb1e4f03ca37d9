package payouts

import (
	"math"
	"slices"
	"time"

	"reconcile"
)

// Rule 15b: by reference first. An entry carries the payouts its text
// names (namesAt) that it can carry (carries). The payouts an entry names
// and the entries naming them are settled together: several entries of
// one payout (1:N), one entry of several payouts (N:1), or any mesh of
// both, taken as the connected groups of "names". A group arrives when
// its entries bring what its payouts add up to. Otherwise its payouts
// arrive all the same, short (or over), so that the ledger keeps them so
// and the case is told once: one payout_amount_mismatch for the group,
// naming its other payouts and entries.

// byReference applies rule 15b.
func (n *night) byReference() {
	np := len(n.pays)
	u := newUnion(np + len(n.ents))
	in := make([]bool, np+len(n.ents))
	linked := false
	for e := range n.ents {
		for _, p := range n.named.of(e) {
			if n.namesOpen(int(p), e) {
				u.join(int32(np+e), p)
				in[np+e], in[p], linked = true, true, true
			}
		}
	}
	if !linked {
		return
	}
	groups := u.groups(in)
	for g := range len(groups.at) - 1 {
		n.settle(groups.of(g))
	}
}

// namesOpen reports whether entry e's naming of payout p counts for its
// arrival: p was still to arrive, or arrived short on an earlier night
// (a split payout's rest), and e can carry it.
func (n *night) namesOpen(p, e int) bool {
	return (n.waiting(p) || n.rest(p) != 0) && carries(n.pays[p].Payout, n.ents[e].BankEntry)
}

// rest is what an earlier night's short arrival of payout p left to
// come, 0 when nothing does.
func (n *night) rest(p int) int64 {
	if o := n.pays[p]; o.Arrived && o.Short {
		return o.Amount - o.ArrivedAmount
	}
	return 0
}

// due is what payout p is to bring tonight: all of it, or its rest.
func (n *night) due(p int) int64 {
	if n.pays[p].Arrived {
		return n.rest(p)
	}
	return n.pays[p].Amount
}

// settle lets a group of payouts and the entries naming them arrive:
// members are payouts' places, then entries' places after the payouts'.
func (n *night) settle(members []int32) {
	np := int32(len(n.pays))
	split, _ := slices.BinarySearch(members, np)
	pays := members[:split]
	ents := members[split:]
	for i := range ents {
		ents[i] -= np // the group's own array: entries by their place
	}
	var want, brought int64
	for _, p := range pays {
		want = reconcile.AddSaturating(want, n.due(int(p)))
	}
	for _, e := range ents {
		n.taken[e] = true
		brought = reconcile.AddSaturating(brought, n.ents[e].Signed())
		for _, p := range n.named.of(int(e)) {
			if n.namesOpen(int(p), int(e)) {
				g := &n.got[p]
				g.on = later(g.on, n.dates[e])
				if len(pays) > 1 {
					g.keys = append(g.keys, e)
				}
			}
		}
	}
	if len(pays) == 1 {
		n.got[pays[0]].keys = slices.Clip(ents) // each entry names it: the group's array serves
	}
	left := magnitude(brought)
	for i, p := range pays {
		g := &n.got[p]
		g.arrived, g.short, g.amount = true, brought != want, n.pays[p].Amount
		switch {
		case len(pays) == 1:
			g.amount = brought
		case g.short:
			// One entry of several payouts that is not their sum: each
			// takes its amount while the money lasts, the last what is
			// left, so that the shares add up to what came.
			share := min(left, magnitude(n.pays[p].Amount))
			if i == len(pays)-1 {
				share = left
			}
			left -= share
			g.amount = share * sign(n.pays[p].Amount)
		}
	}
	if brought != want {
		n.findings = append(n.findings, n.mismatch(pays, ents, want, brought))
	}
}

// union finds the connected groups of payouts and entries that name each
// other, in time about linear in the names.
type union []int32

func newUnion(n int) union {
	u := make(union, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

func (u union) find(x int32) int32 {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

func (u union) join(a, b int32) {
	a, b = u.find(a), u.find(b)
	switch {
	case a < b:
		u[b] = a
	case b < a:
		u[a] = b
	}
}

// groups lists the groups of the members marked in, each in ascending
// order, the groups by their first member: the same input, the same
// groups in the same order.
func (u union) groups(in []bool) spans {
	group := make([]int32, len(u)) // a root's group, +1; 0 for none yet
	var sizes []int32
	for x := range u {
		if !in[x] {
			continue
		}
		r := u.find(int32(x))
		if group[r] == 0 {
			sizes = append(sizes, 0)
			group[r] = int32(len(sizes))
		}
		sizes[group[r]-1]++
	}
	s := spans{at: make([]int32, len(sizes)+1)}
	for g, size := range sizes {
		s.at[g+1] = s.at[g] + size
	}
	s.list = make([]int32, s.at[len(sizes)])
	fill := slices.Clone(s.at[:len(sizes)])
	for x := range u {
		if in[x] {
			g := group[u.find(int32(x))] - 1
			s.list[fill[g]] = int32(x)
			fill[g]++
		}
	}
	return s
}

// later is the later of two dates.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// magnitude is |v|, held at the largest int64.
func magnitude(v int64) int64 {
	switch {
	case v == math.MinInt64:
		return math.MaxInt64
	case v < 0:
		return -v
	}
	return v
}

func sign(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}
