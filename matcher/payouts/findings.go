package payouts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"reconcile"
)

// missing applies rule 15d: a payout still to arrive, that nothing took
// tonight, once the night is past its expected date and the channel's
// window (overdue) → one payout_missing, not told again on a later night.
// Before that night it is expected.
func (n *night) missing() {
	for p, o := range n.pays {
		w := n.window(n.payCh[p])
		if !n.waiting(p) || n.got[p].arrived || o.Told || !overdue(n.day, o.ExpectedOn, w) {
			continue
		}
		f := n.newFinding(reconcile.PayoutMissing, p, -1)
		if o.Amount > 0 {
			f.Hint = fmt.Sprintf("%s has not reached the bank by %s (%s allowed). Ask %s where it is, or look for it on another of our accounts.",
				n.payoutLine(p), date(n.day), days(w), o.Channel)
		} else {
			f.Hint = fmt.Sprintf("%s (the channel takes it from our account) has not been debited by %s (%s allowed). Ask %s how it was settled.",
				n.payoutLine(p), date(n.day), days(w), o.Channel)
		}
		n.findings = append(n.findings, f)
	}
}

// changed tells, once, an arrived payout whose credits are no longer its
// amount though no night told it so: its channel's corrected file says
// another amount than the one its credits brought (rule 15b's mismatch,
// told when it appears).
func (n *night) changed() {
	for p, o := range n.pays {
		if !o.Arrived || !o.Short || o.ShortTold || o.Returned || n.got[p].arrived {
			continue
		}
		f := n.newFinding(reconcile.PayoutAmountMismatch, p, -1)
		f.HasLocal, f.LocalAmount, f.LocalCurrency = true, magnitude(o.ArrivedAmount), o.Currency
		f.OccurredAt = o.ArrivedOn
		f.Hint = fmt.Sprintf("%s arrived on %s as %s, but its channel's file now says %s: %s apart. Ask %s which is right.",
			n.payoutLine(p), date(o.ArrivedOn), money(o.ArrivedAmount, o.Currency), money(o.Amount, o.Currency),
			money(magnitude(reconcile.AddSaturating(o.Amount, -o.ArrivedAmount)), o.Currency), o.Channel)
		n.findings = append(n.findings, f)
	}
}

// unexpected applies rule 15e: a booked credit of a channel's
// counterparty, or one naming a payout, that nothing took, once it has
// waited the channel's window as a payout would (overdue) → one
// unexpected_credit, not told again on a later night. A credit from no
// channel's counterparty that names no payout is none of the job's.
// (The ambiguous ones of rule 15c are told at once, there.)
func (n *night) unexpected() {
	for e, x := range n.ents {
		if !x.Credit || n.taken[e] || n.told[e] || x.Told || !booked(x.BankEntry) {
			continue
		}
		chans := n.creditChannels(e)
		if len(chans) == 0 {
			continue
		}
		w := 0
		for _, c := range chans {
			w = max(w, n.window(c)) // as long as any payout it could be
		}
		if !overdue(n.day, n.dates[e], w) {
			continue
		}
		f := n.newFinding(reconcile.UnexpectedCredit, -1, e)
		from := x.Counterparty
		if from == "" {
			from = n.chans[chans[0]].name
		}
		var b strings.Builder
		fmt.Fprintf(&b, "The %s from %s matches no payout after waiting the %s a payout of %s may take to arrive.",
			n.entryLine(e), from, days(w), n.chans[chans[0]].name)
		if named := n.named.of(e); len(named) > 0 {
			fmt.Fprintf(&b, " It names %s, which it cannot carry (see Related).", count(len(named), "payout", "payouts"))
			for _, p := range named {
				f.Related = append(f.Related, n.payoutLine(int(p))+n.whyNot(int(p), e))
			}
		}
		b.WriteString(" Find what it pays: a payout the channel's files do not hold, or money that is not the channel's.")
		f.Hint = b.String()
		n.findings = append(n.findings, f)
	}
}

// creditChannels are the channels a credit may be of: its
// counterparty's, and those of the payouts it names.
func (n *night) creditChannels(e int) []int32 {
	chans := n.entCh.of(e)
	for _, p := range n.named.of(e) {
		if !slices.Contains(chans, n.payCh[p]) {
			chans = append(slices.Clip(chans), n.payCh[p])
		}
	}
	return chans
}

// whyNot says why an entry cannot carry a payout it names.
func (n *night) whyNot(p, e int) string {
	o, x := n.pays[p], n.ents[e]
	switch {
	case o.Arrived || n.got[p].arrived:
		_, on := n.arrived(p)
		return ", arrived on " + date(on)
	case o.Currency != x.Currency:
		return ", in another currency"
	case x.Reversal:
		return ", and the entry is a reversal"
	}
	return ", which the channel takes from our account"
}

// mismatch is rule 15b's payout_amount_mismatch of a group of payouts
// whose entries do not bring what they add up to.
func (n *night) mismatch(pays, ents []int32, want, brought int64) reconcile.Finding {
	p := int(pays[0])
	o := n.pays[p]
	f := n.newFinding(reconcile.PayoutAmountMismatch, p, int(ents[0]))
	f.ChannelAmount, f.LocalAmount = magnitude(want), magnitude(brought)
	diff := money(magnitude(reconcile.AddSaturating(want, -brought)), o.Currency)
	than := "less"
	if f.LocalAmount > f.ChannelAmount {
		than = "more"
	}
	came := "as a " + n.entryLine(int(ents[0]))
	if len(ents) > 1 {
		came = fmt.Sprintf("in %d entries adding up to %s (see Related)", len(ents), money(f.LocalAmount, o.Currency))
	}
	if len(pays) == 1 {
		verb := "reached the bank"
		if o.Amount < 0 {
			verb = "was debited from the bank"
		}
		f.Hint = fmt.Sprintf("%s %s %s: %s %s than the payout. Ask %s, or the bank, where the difference went.",
			n.payoutLine(p), verb, came, diff, than, o.Channel)
	} else {
		f.Hint = fmt.Sprintf("%s of %s adding up to %s came to the bank %s: %s %s than they add up to (see Related). A person must tell which of them it carries; each is taken as arrived, the last with what is left.",
			count(len(pays), "payout", "payouts"), o.Channel, money(f.ChannelAmount, o.Currency), came, diff, than)
	}
	for _, q := range pays[1:] {
		f.Related = append(f.Related, n.payoutLine(int(q)))
	}
	if len(pays) > 1 {
		f.Payout.Together = len(pays)
	}
	if len(ents) > 1 {
		for _, e := range ents {
			f.Related = append(f.Related, n.entryLine(int(e)))
		}
	}
	return f
}

// ambiguous is rule 15c's unexpected_credit of an entry that more than
// one payout fits by amount (fits), or whose one payout more entries fit
// (rivals, the entry among them): told at once, for a person to choose.
func (n *night) ambiguous(e int, fits, rivals []int32) {
	n.told[e] = true
	if n.ents[e].Told {
		return
	}
	f := n.newFinding(reconcile.UnexpectedCredit, -1, e)
	if rivals == nil {
		f.Hint = fmt.Sprintf("The %s fits %s by amount and date (see Related). A person must choose which it is: the amount alone does not tell them apart.",
			n.entryLine(e), count(len(fits), "payout", "payouts"))
	} else {
		fit := "fits"
		if len(rivals) > 2 {
			fit = "fit"
		}
		f.Hint = fmt.Sprintf("The %s fits %s by amount and date, but %s %s it too (see Related). A person must choose which entry carries it.",
			n.entryLine(e), n.payoutLine(int(fits[0])), count(len(rivals)-1, "other entry", "other entries"), fit)
	}
	for _, p := range fits {
		if len(f.Related) == maxRelated {
			break
		}
		f.Related = append(f.Related, n.payoutLine(int(p)))
	}
	for _, r := range rivals {
		if len(f.Related) == maxRelated {
			break
		}
		if int(r) != e {
			f.Related = append(f.Related, n.entryLine(int(r)))
		}
	}
	if more := len(fits) + max(len(rivals)-1, 0) - len(f.Related); more > 0 {
		f.Related = append(f.Related, fmt.Sprintf("and %d more", more))
	}
	n.findings = append(n.findings, f)
}

// maxRelated bounds the lines an ambiguous finding names: a hundred
// payouts of one amount in one week would fill a cell with no use.
const maxRelated = 10

// returned is rule 15f's payout_returned of payouts an entry sends back.
func (n *night) returned(ps []int32, e int, named bool) reconcile.Finding {
	p := int(ps[0])
	f := n.newFinding(reconcile.PayoutReturned, p, e)
	f.ChannelAmount = 0
	for _, q := range ps {
		f.ChannelAmount = reconcile.AddSaturating(f.ChannelAmount, magnitude(n.pays[q].Amount))
	}
	_, on := n.arrived(p)
	how := "names it"
	if !named {
		how = fmt.Sprintf("from the channel's counterparty is of its amount, within %s of its arrival, and of no other payout's",
			days(n.window(n.payCh[p])))
	}
	f.Hint = fmt.Sprintf("%s, arrived on %s, went back: the %s %s. Ask %s why, and whether it will pay it again.",
		n.payoutLine(p), date(on), n.entryLine(e), how, n.pays[p].Channel)
	for _, q := range ps[1:] {
		f.Related = append(f.Related, n.payoutLine(int(q)))
	}
	return f
}

// unplacedReturn is rule 15f's payout_returned of a reversal that more
// than one arrived payout fits: it is told, its payout left to a person.
func (n *night) unplacedReturn(e int, ps []int32) reconcile.Finding {
	f := n.newFinding(reconcile.PayoutReturned, -1, e)
	f.Hint = fmt.Sprintf("The %s from the channel's counterparty reverses the amount of %s that arrived within the window (see Related): one of them went back. A person must tell which, and ask the channel why.",
		n.entryLine(e), count(len(ps), "payout", "payouts"))
	for _, p := range ps[:min(len(ps), maxRelated)] {
		f.Related = append(f.Related, n.payoutLine(int(p)))
	}
	return f
}

// newFinding is what every payout finding says of its payout p and its
// entry e, where it has them (-1 where not): the payout as its channel
// side, the bank's entry as its local side.
func (n *night) newFinding(c reconcile.Category, p, e int) reconcile.Finding {
	f := reconcile.Finding{Category: c, Kind: reconcile.KindPayout, Payout: &reconcile.PayoutFacts{}}
	if p >= 0 {
		o := n.pays[p]
		f.HasChannel, f.ChannelAmount, f.Currency = true, magnitude(o.Amount), o.Currency
		f.ChannelTxnID, f.OccurredAt, f.Line = o.ID, o.ExpectedOn, o.Line
		f.Payout.Channel, f.Payout.ID, f.Payout.ExpectedOn = o.Channel, o.ID, o.ExpectedOn
	}
	if e >= 0 {
		x := n.ents[e]
		f.HasLocal, f.LocalAmount, f.LocalCurrency = true, x.Amount, x.Currency
		f.LocalTxnID, f.OccurredAt = x.BankRef, n.dates[e]
		f.Payout.Account, f.Payout.BankRef, f.Payout.BookedOn = x.Account, bankRef(x), n.dates[e]
		if p < 0 {
			f.ChannelTxnID = x.Key
		}
	}
	return f
}

// payoutLine names a payout for a hint or a Related line.
func (n *night) payoutLine(p int) string {
	o := n.pays[p]
	return fmt.Sprintf("%s payout %s of %s expected on %s", o.Channel, o.ID, money(o.Amount, o.Currency), date(o.ExpectedOn))
}

// entryLine names a bank entry for a hint or a Related line.
func (n *night) entryLine(e int) string {
	x := n.ents[e]
	what := "credit"
	if !x.Credit {
		what = "debit"
	}
	if x.Reversal {
		what += " reversal"
	}
	ref := "bank reference " + x.BankRef
	if x.BankRef == "" {
		ref = "no bank reference, key " + x.Key
	}
	return fmt.Sprintf("%s of %s on %s (account %s, %s)", what, money(x.Amount, x.Currency), date(n.dates[e]), x.Account, ref)
}

func money(minor int64, currency string) string {
	return reconcile.FormatAmount(minor, currency) + " " + currency
}

func date(t time.Time) string { return t.Format(time.DateOnly) }

func days(k int) string { return count(k, "day", "days") }

// count is "1 payout", "2 payouts": k of what, in many when not one.
func count(k int, one, many string) string {
	if k == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", k, many)
}
