package main

// Rule 15 at scale: a channel paying out to one bank account. Each
// night has a channel file in the canonical CSV telling of its payouts
// (one payout row each: the payout's own row states its amount and
// payout_date, and no payment rows are needed, so no local records) and
// the bank's camt.053 of the next day, with about one entry per payout.
// As the settlement files, the data is made in blocks, each from its
// own seeded generator, so that a night is written a block at a time
// and made again for a second pass (the statement's balances come
// before its entries).

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"reconcile"
)

const (
	blockPayouts   = 1000
	payoutCurrency = "EUR"
	// payoutIBAN is the account the channel pays into, the bank
	// channel's account.
	payoutIBAN = "DE02120300000000202051"
	// pspName is the channel's counterparty name on the statement, as
	// the config gives it; pspParty is how the bank writes it.
	pspName  = "ACME PSP"
	pspParty = "ACME PSP GMBH"
	// payoutWindow is the channel's window_days: a payout expected on
	// the 23rd is missing on the night of the 27th.
	payoutWindow = 3
	// missingDays is how long before its statement's date a missing
	// payout was expected: past the window on that night.
	missingDays = payoutWindow + 2
	// tellCreditAfter is how many nights after its own an unexpected
	// credit is told: once it has waited the window (rule 15e).
	tellCreditAfter = payoutWindow + 1
)

// PayoutSpec says how much of rule 15's data to make: payouts per night.
type PayoutSpec struct {
	Payouts int
	Seed    uint64
}

func (s PayoutSpec) blocks() int { return (s.Payouts + blockPayouts - 1) / blockPayouts }

// How one payout, or two, reach the bank.
type payoutUnit uint8

const (
	unitByRef    payoutUnit = iota // one credit naming it
	unitByAmount                   // one credit of its amount from the counterparty, naming nothing (15c)
	unitSplit                      // two credits naming it, adding up to it
	unitBatch                      // two payouts, one credit naming both, of their sum
	unitShort                      // one credit naming it, of less: payout_amount_mismatch
	unitMissing                    // expected missingDays before the statement, never arrives: payout_missing
)

// Per full block of 1,000 payouts: 3 % by amount, 2 % in two credits, 4 %
// in batches of two, 0.5 % short, 0.5 % missing, the other 90 % by
// reference; besides them 5 unexpected credits (0.5 %), 20 ordinary
// debits and 5 credits of others, so about 1,025 entries.
var payoutUnits = []struct {
	unit payoutUnit
	n    int
}{{unitByAmount, 30}, {unitSplit, 20}, {unitBatch, 20}, {unitShort, 5}, {unitMissing, 5}}

const (
	blockUnexpected   = 5
	blockDebits       = 20
	blockOtherCredits = 5
	// blockUnique bounds the amounts a block draws that must fit
	// nothing else (by amount, missing, unexpected): see uniqueAmount.
	blockUnique = 40
)

// payoutRow is one payout of the channel's file.
type payoutRow struct {
	id       string
	amount   int64
	expected time.Time
}

// stmtEntry is one entry of the statement: a credit when amount > 0.
type stmtEntry struct {
	amount                  int64
	ref, counterparty, text string
}

// payoutBlock is one block of a night: its payouts, its entries and what
// it plants.
type payoutBlock struct {
	payouts    []payoutRow
	entries    []stmtEntry
	short      int
	missing    int
	unexpected int // credits no payout explains, told tellCreditAfter nights later
}

// payoutNightDays are the dates of the night back nights before
// tonight's: its channel file's business date, and its statement's.
func payoutNightDays(back int) (channel, statement time.Time) {
	statement = businessDate.AddDate(0, 0, -back)
	return statement.AddDate(0, 0, -1), statement
}

// block makes block b of the night back nights before tonight.
func (s PayoutSpec) block(back, b int) payoutBlock {
	rng := rand.New(rand.NewPCG(s.Seed, 1<<63|uint64(back)<<32|uint64(b)))
	chDay, stDay := payoutNightDays(back)
	first := b*blockPayouts + 1
	n := min(blockPayouts, s.Payouts-first+1)
	g := payoutGen{rng: rng, back: back, unique: b * blockUnique, stDay: stDay,
		ids: keysOf(chDay), refs: keysOf(stDay), entry: b * (2 * blockPayouts)}
	var blk payoutBlock
	next := first
	for _, u := range layUnits(rng, n) {
		next = g.unit(&blk, u, next)
	}
	for range scaled(blockUnexpected, n) {
		blk.entries = append(blk.entries, g.credit(g.uniqueAmount(), pspParty, pspName+" ADJUSTMENT"))
		blk.unexpected++
	}
	for k := range scaled(blockOtherCredits, n) {
		blk.entries = append(blk.entries, g.credit(1000+rng.Int64N(500_000), "Kunde Meyer KG", fmt.Sprintf("Rechnung %d-%d", b, k)))
	}
	for range scaled(blockDebits, n) {
		e := g.credit(-(5000 + rng.Int64N(500_000)), debitParties[rng.IntN(len(debitParties))], "Lastschrift")
		blk.entries = append(blk.entries, e)
	}
	return blk
}

var debitParties = []string{"Vermieter GmbH", "Stadtwerke AG", "Finanzamt", "Telekom Deutschland GmbH", "Lieferant Schulz OHG"}

// scaled is a block's count of something, for a block of n payouts.
func scaled(perBlock, n int) int { return perBlock * n / blockPayouts }

// layUnits places a block's units in a shuffled order, as many as make
// n payouts: a batch that would pass n is made one by reference.
func layUnits(rng *rand.Rand, n int) []payoutUnit {
	var units []payoutUnit
	planted := 0
	for _, u := range payoutUnits {
		for range u.n {
			units = append(units, u.unit)
		}
		planted += u.n * unitPayouts(u.unit)
	}
	for range blockPayouts - planted {
		units = append(units, unitByRef)
	}
	rng.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	out := units[:0]
	for _, u := range units {
		switch left := n - payoutsOf(out); {
		case left <= 0:
			return out
		case left < unitPayouts(u):
			u = unitByRef
		}
		out = append(out, u)
	}
	return out
}

func unitPayouts(u payoutUnit) int {
	if u == unitBatch {
		return 2
	}
	return 1
}

func payoutsOf(units []payoutUnit) int {
	n := 0
	for _, u := range units {
		n += unitPayouts(u)
	}
	return n
}

// payoutGen makes one block's payouts and entries.
type payoutGen struct {
	rng    *rand.Rand
	back   int
	unique int // the block's next unique amount
	stDay  time.Time
	ids    keysOn // the channel file's date: in every payout id
	refs   keysOn // the statement's date: in every bank reference
	entry  int    // the block's next entry number
}

func (g *payoutGen) payoutID(i int) string { return fmt.Sprintf("PO-%s%08d", g.ids, i) }

// uniqueAmount is an amount no other payout or credit within reach has:
// a block's own numbers, the night's in the cents (tonight's and those of
// the nights a few days away differ), so a credit by amount fits its
// payout alone and an unexpected credit none.
func (g *payoutGen) uniqueAmount() int64 {
	g.unique++
	return 100_000 + int64(g.unique)*100 + int64(g.back%100)
}

func (g *payoutGen) credit(amount int64, party, text string) stmtEntry {
	g.entry++
	return stmtEntry{amount: amount, ref: fmt.Sprintf("BR%s%08d", g.refs, g.entry), counterparty: party, text: text}
}

// unit adds unit u, its payouts numbered from i, and returns the next
// payout's number.
func (g *payoutGen) unit(blk *payoutBlock, u payoutUnit, i int) int {
	p := payoutRow{id: g.payoutID(i), amount: 10_000 + g.rng.Int64N(5_000_000), expected: g.stDay}
	naming := func(ids ...string) string {
		text := pspName + " PAYOUT"
		for _, id := range ids {
			text += " " + id
		}
		return text
	}
	switch u {
	case unitByRef:
		blk.entries = append(blk.entries, g.credit(p.amount, pspParty, naming(p.id)))
	case unitByAmount:
		p.amount = g.uniqueAmount()
		blk.entries = append(blk.entries, g.credit(p.amount, pspParty, pspName+" SETTLEMENT"))
	case unitSplit:
		part := 1 + g.rng.Int64N(p.amount-1)
		blk.entries = append(blk.entries, g.credit(part, pspParty, naming(p.id)+" 1/2"),
			g.credit(p.amount-part, pspParty, naming(p.id)+" 2/2"))
	case unitBatch:
		q := payoutRow{id: g.payoutID(i + 1), amount: 10_000 + g.rng.Int64N(5_000_000), expected: g.stDay}
		blk.payouts = append(blk.payouts, p)
		blk.entries = append(blk.entries, g.credit(p.amount+q.amount, pspParty, naming(p.id, q.id)))
		p = q
	case unitShort:
		blk.entries = append(blk.entries, g.credit(p.amount-1-g.rng.Int64N(500), pspParty, naming(p.id)))
		blk.short++
	case unitMissing:
		p.amount, p.expected = g.uniqueAmount(), g.stDay.AddDate(0, 0, -missingDays)
		blk.missing++
	}
	blk.payouts = append(blk.payouts, p)
	return i + unitPayouts(u)
}

// PayoutNight is one night's files and what reconciling them must
// report.
type PayoutNight struct {
	Back                    int // nights before tonight; 0 is tonight
	ChannelDay, Day         time.Time
	ChannelFile, Statement  string
	Payouts, Entries        int
	Short, Missing          int
	Unexpected              int // credits planted tonight, told tellCreditAfter nights later
	Credits, Debits         int64
	Opening, Closing        int64
	ChannelBytes, StmtBytes int64
}

// payoutTotals adds up the night back's blocks: what the statement's
// balances and the checks need, before anything is written.
func (s PayoutSpec) payoutTotals(back int) PayoutNight {
	chDay, day := payoutNightDays(back)
	n := PayoutNight{Back: back, ChannelDay: chDay, Day: day, Opening: 250_000_000}
	for b := range s.blocks() {
		blk := s.block(back, b)
		n.Payouts += len(blk.payouts)
		n.Entries += len(blk.entries)
		n.Short += blk.short
		n.Missing += blk.missing
		n.Unexpected += blk.unexpected
		for _, e := range blk.entries {
			if e.amount > 0 {
				n.Credits += e.amount
			} else {
				n.Debits -= e.amount
			}
		}
	}
	n.Closing = n.Opening + n.Credits - n.Debits
	return n
}

// Want is what the statement night must report when made after earlier
// nights (the unexpected credits it tells are those of the night
// tellCreditAfter before it, if that night was made).
func (n PayoutNight) Want(told int) Expected {
	return Expected{Counts: map[reconcile.Category]int{
		reconcile.PayoutAmountMismatch: n.Short,
		reconcile.PayoutMissing:        n.Missing,
		reconcile.UnexpectedCredit:     told,
	}}
}

// WritePayoutNight writes the night back's channel file and statement
// into dir.
func WritePayoutNight(s PayoutSpec, dir string, back int) (PayoutNight, error) {
	n := s.payoutTotals(back)
	n.ChannelFile = filepath.Join(dir, "psp-"+n.ChannelDay.Format(time.DateOnly)+".csv")
	n.Statement = filepath.Join(dir, "bank-"+n.Day.Format(time.DateOnly)+".xml")
	var err error
	if n.ChannelBytes, err = writeFile(n.ChannelFile, func(w *bufio.Writer) {
		w.WriteString(payoutCSVHeader)
		for b := range s.blocks() {
			for _, p := range s.block(back, b).payouts {
				writePayoutRow(w, p, n.ChannelDay)
			}
		}
	}); err != nil {
		return n, err
	}
	n.StmtBytes, err = writeFile(n.Statement, func(w *bufio.Writer) {
		writeCamtHead(w, n)
		for b := range s.blocks() {
			for _, e := range s.block(back, b).entries {
				writeCamtEntry(w, e, n.Day)
			}
		}
		w.WriteString("</Stmt></BkToCstmrStmt></Document>\n")
	})
	return n, err
}

// writeFile writes path through a buffer and returns its size.
func writeFile(path string, write func(*bufio.Writer)) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	write(w)
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

const payoutCSVHeader = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status,payout_id,payout_date\n"

// writePayoutRow writes a payout's own row, at 22:00 of the channel
// file's day.
func writePayoutRow(w *bufio.Writer, p payoutRow, day time.Time) {
	w.WriteString("payout,,,")
	w.WriteString(p.id)
	w.WriteByte(',')
	w.WriteString(reconcile.FormatDecimal(p.amount, 2))
	w.WriteString("," + payoutCurrency + ",")
	w.WriteString(day.Add(22 * time.Hour).Format(time.RFC3339))
	w.WriteString(",,SUCCESS,")
	w.WriteString(p.id)
	w.WriteByte(',')
	w.WriteString(p.expected.Format(time.DateOnly))
	w.WriteByte('\n')
}

func writeCamtHead(w *bufio.Writer, n PayoutNight) {
	date := n.Day.Format(time.DateOnly)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M-%s</MsgId><CreDtTm>%sT06:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>S-%s</Id><Acct><Id><IBAN>%s</IBAN></Id><Ccy>%s</Ccy></Acct>
`, date, date, date, payoutIBAN, payoutCurrency)
	for _, b := range []struct {
		code   string
		amount int64
	}{{"OPBD", n.Opening}, {"CLBD", n.Closing}} {
		ind, amount := "CRDT", b.amount
		if amount < 0 {
			ind, amount = "DBIT", -amount
		}
		fmt.Fprintf(w, `<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy="%s">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>
`, b.code, payoutCurrency, reconcile.FormatDecimal(amount, 2), ind, date)
	}
}

func writeCamtEntry(w *bufio.Writer, e stmtEntry, day time.Time) {
	ind, role, amount := "CRDT", "Dbtr", e.amount
	if amount < 0 {
		ind, role, amount = "DBIT", "Cdtr", -amount
	}
	date := day.Format(time.DateOnly)
	fmt.Fprintf(w, `<Ntry><Amt Ccy="%s">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef>
<NtryDtls><TxDtls><RltdPties><%s><Nm>%s</Nm></%s></RltdPties><RmtInf><Ustrd>%s</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
`, payoutCurrency, reconcile.FormatDecimal(amount, 2), ind, date, date, e.ref, role, e.counterparty, role, e.text)
}
