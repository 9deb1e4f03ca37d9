package payouts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// date0 is a date as YYYY-MM-DD; "" is none.
func date0(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

var terms = map[string]reconcile.PayoutTerms{
	"stripe": {Counterparties: []string{"STRIPE"}, Window: 3},
	"adyen":  {Counterparties: []string{"Adyen N.V."}, Window: 2},
}

// pay is an open payout in USD.
func pay(channel, id string, amount int64, expected string) Open {
	return Open{Payout: reconcile.Payout{Channel: channel, ID: id, Amount: amount, Currency: "USD", ExpectedOn: date0(expected)}}
}

// credit is a booked credit in USD, its key its bank reference.
func credit(ref string, amount int64, on, counterparty, remittance string) Entry {
	return Entry{Key: "NL01/" + ref, BankEntry: reconcile.BankEntry{Account: "NL01", Amount: amount, Currency: "USD", Credit: true,
		Status: "BOOK", BookedOn: date0(on), BankRef: ref, Counterparty: counterparty, Remittance: remittance}}
}

func debit(ref string, amount int64, on, counterparty, remittance string) Entry {
	e := credit(ref, amount, on, counterparty, remittance)
	e.Credit = false
	return e
}

// outcome is a Result in short lines, for tables.
type outcome struct {
	arrivals, findings, cases, taken []string
}

func summarize(r Result) outcome {
	var o outcome
	for _, a := range r.Arrivals {
		s := fmt.Sprintf("%s/%s %v %d %s", a.Channel, a.PayoutID, a.Keys, a.Amount, date(a.On))
		if a.Short {
			s += " short"
		}
		if a.Returned {
			s += " returned"
		}
		o.arrivals = append(o.arrivals, s)
	}
	for _, f := range r.Findings {
		o.findings = append(o.findings, fmt.Sprintf("%s %s risk %d", f.Category, f.ChannelTxnID, f.AtRisk()))
	}
	for _, c := range r.Cases {
		o.cases = append(o.cases, fmt.Sprintf("%s/%s %s %d", c.Channel, c.ID, c.Status, c.Arrived))
	}
	if len(r.Taken) > 0 {
		o.taken = r.Taken
	}
	return o
}

// Payouts and entries the table of TestMatch shares.
var (
	adyen      = with(pay("adyen", "batch 412", 17910, "2026-12-01"), func(p *Open) { p.Reference = "TX000000412XT batch 412, AcmeShopECOM" })
	arrived    = with(pay("stripe", "po_1Arrived", 5000, "2026-11-28"), func(p *Open) { p.Arrived, p.ArrivedOn, p.ArrivedAmount = true, date0("2026-11-28"), p.Amount })
	toldLate   = with(pay("stripe", "po_1Late", 5000, "2026-11-28"), func(p *Open) { p.Told = true })
	e2e        = with(credit("B1", 10000, "2026-12-02", "", ""), func(e *Entry) { e.EndToEndID = "po_1Qx7AbC" })
	pending    = with(credit("B1", 10000, "2026-12-02", "STRIPE", "po_1Qx7AbC"), func(e *Entry) { e.Status = "PDNG" })
	euro       = with(credit("B1", 10000, "2026-12-02", "", "po_1Qx7AbC"), func(e *Entry) { e.Currency = "EUR" })
	toldCredit = with(credit("B9", 777, "2026-11-20", "STRIPE", ""), func(e *Entry) { e.Earlier, e.Told = true, true })
	reversal   = with(debit("B7", 5000, "2026-12-01", "STRIPE", "RETURN"), func(e *Entry) { e.Reversal = true })
)

// with is v changed by f.
func with[T any](v T, f func(*T)) T {
	f(&v)
	return v
}

type matchTest struct {
	name    string
	day     string // default 2026-12-03
	payouts []Open
	entries []Entry
	want    outcome
}

var matchTests = []matchTest{
	{
		name:    "id in remittance",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "PAYOUT po_1Qx7AbC/STRIPE")},
		want: outcome{arrivals: []string{"stripe/po_1Qx7AbC [NL01/B1] 10000 2026-12-02"},
			cases: []string{"stripe/po_1Qx7AbC arrived 10000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "id in end-to-end id, far from its date",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-11-02")},
		entries: []Entry{e2e},
		want: outcome{arrivals: []string{"stripe/po_1Qx7AbC [NL01/B1] 10000 2026-12-02"},
			cases: []string{"stripe/po_1Qx7AbC arrived 10000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "adyen reference, whole, found by its first word",
		payouts: []Open{adyen},
		entries: []Entry{credit("B2", 17910, "2026-12-01", "", "/REMI/TX000000412XT batch 412, AcmeShopECOM/")},
		want: outcome{arrivals: []string{"adyen/batch 412 [NL01/B2] 17910 2026-12-01"},
			cases: []string{"adyen/batch 412 arrived 17910"}, taken: []string{"NL01/B2"}},
	},
	{
		name:    "adyen batch id of several words",
		payouts: []Open{adyen, pay("adyen", "batch 4121", 500, "2026-12-01")},
		entries: []Entry{credit("B2", 17910, "2026-12-01", "", "SETTLEMENT batch 412 ACME")},
		want: outcome{arrivals: []string{"adyen/batch 412 [NL01/B2] 17910 2026-12-01"},
			cases: []string{"adyen/batch 412 arrived 17910", "adyen/batch 4121 expected 0"}, taken: []string{"NL01/B2"}},
	},
	{
		name:    "id not whole: po_12 is not po_123",
		payouts: []Open{pay("stripe", "po_12", 10000, "2026-12-02"), pay("stripe", "po_1234", 10000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "po_123 xpo_12 po_12a"), credit("B2", 10000, "2026-12-02", "", "(po_1234)")},
		want: outcome{arrivals: []string{"stripe/po_1234 [NL01/B2] 10000 2026-12-02"},
			cases: []string{"stripe/po_12 expected 0", "stripe/po_1234 arrived 10000"}, taken: []string{"NL01/B2"}},
	},
	{
		name: "reference of several words, not whole",
		payouts: []Open{with(pay("mapped", "mp_77", 10000, "2026-12-03"), func(p *Open) { p.Reference = "PAYOUT-2026-12-01 ACME" }),
			with(pay("mapped", "mp_78", 20000, "2026-12-03"), func(p *Open) { p.Reference = "PAYOUT-2026-12-02 ACME" })},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "PAYOUT-2026-12-01 ACMEX"), credit("B2", 20000, "2026-12-02", "", "PAYOUT-2026-12-02 ACME.")},
		want: outcome{arrivals: []string{"mapped/mp_78 [NL01/B2] 20000 2026-12-02"},
			cases: []string{"mapped/mp_77 expected 0", "mapped/mp_78 arrived 20000"}, taken: []string{"NL01/B2"}},
	},
	{
		name:    "id shorter than 4 characters",
		payouts: []Open{pay("mapped", "p17", 10000, "2026-12-03")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "p17")},
		want:    outcome{cases: []string{"mapped/p17 expected 0"}},
	},
	{
		name:    "id in another case",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "PO_1QX7ABC")},
		want:    outcome{cases: []string{"stripe/po_1Qx7AbC expected 0"}},
	},
	{
		name:    "by amount, one payout and one entry",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-11-30"), pay("stripe", "po_B", 20000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-03", "stripe payments uk", "")},
		want: outcome{arrivals: []string{"stripe/po_A [NL01/B1] 10000 2026-12-03"},
			cases: []string{"stripe/po_A arrived 10000", "stripe/po_B expected 0"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "by amount, outside the window",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-11-29")},
		entries: []Entry{credit("B1", 10000, "2026-12-03", "STRIPE", "")},
		want:    outcome{findings: []string{"payout_missing po_A risk 10000"}, cases: []string{"stripe/po_A missing 0"}},
	},
	{
		name:    "by amount, counterparty not a whole word",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "STRIPEX LTD", "")},
		want:    outcome{cases: []string{"stripe/po_A expected 0"}},
	},
	{
		name:    "by amount, two payouts fit one entry",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-12-01"), pay("stripe", "po_B", 10000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "STRIPE", "")},
		want: outcome{findings: []string{"unexpected_credit NL01/B1 risk 10000"},
			cases: []string{"stripe/po_A expected 0", "stripe/po_B expected 0"}},
	},
	{
		name:    "by amount, two entries fit one payout",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "STRIPE", ""), credit("B2", 10000, "2026-11-30", "", "FROM STRIPE")},
		want: outcome{findings: []string{"unexpected_credit NL01/B1 risk 10000", "unexpected_credit NL01/B2 risk 10000"},
			cases: []string{"stripe/po_A expected 0"}},
	},
	{
		name:    "by amount, ambiguous told before",
		payouts: []Open{pay("stripe", "po_A", 777, "2026-11-20"), pay("stripe", "po_B", 777, "2026-11-21")},
		entries: []Entry{toldCredit},
		day:     "2026-11-22",
		want:    outcome{cases: []string{"stripe/po_A expected 0", "stripe/po_B expected 0"}},
	},
	{
		name:    "by reference first, then by amount",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-12-01"), pay("stripe", "po_B", 10000, "2026-12-02")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "STRIPE", ""), credit("B2", 10000, "2026-12-02", "STRIPE", "po_B")},
		want: outcome{arrivals: []string{"stripe/po_A [NL01/B1] 10000 2026-12-02", "stripe/po_B [NL01/B2] 10000 2026-12-02"},
			cases: []string{"stripe/po_A arrived 10000", "stripe/po_B arrived 10000"}, taken: []string{"NL01/B1", "NL01/B2"}},
	},
	{
		name:    "one entry of several payouts",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01"), pay("stripe", "po_B2", 2500, "2026-12-01")},
		entries: []Entry{credit("B1", 12500, "2026-12-02", "", "po_A1 po_B2")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 10000 2026-12-02", "stripe/po_B2 [NL01/B1] 2500 2026-12-02"},
			cases: []string{"stripe/po_A1 arrived 10000", "stripe/po_B2 arrived 2500"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "one entry of several payouts, another amount",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01"), pay("stripe", "po_B2", 2500, "2026-12-01")},
		entries: []Entry{credit("B1", 12000, "2026-12-02", "", "po_A1 po_B2")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 10000 2026-12-02 short", "stripe/po_B2 [NL01/B1] 2000 2026-12-02 short"},
			findings: []string{"payout_amount_mismatch po_A1 risk 500"},
			cases:    []string{"stripe/po_A1 mismatch 10000", "stripe/po_B2 mismatch 2000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "entries and payouts naming each other in a mesh",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01"), pay("stripe", "po_B2", 2500, "2026-12-01")},
		entries: []Entry{credit("B1", 10000, "2026-12-02", "", "po_A1 po_B2"), credit("B2", 2500, "2026-12-01", "", "po_B2")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 10000 2026-12-02", "stripe/po_B2 [NL01/B1 NL01/B2] 2500 2026-12-02"},
			cases: []string{"stripe/po_A1 arrived 10000", "stripe/po_B2 arrived 2500"}, taken: []string{"NL01/B1", "NL01/B2"}},
	},
	{
		name:    "several entries of one payout",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 6000, "2026-12-01", "", "po_A1 1/2"), credit("B2", 4000, "2026-12-02", "", "po_A1 2/2")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1 NL01/B2] 10000 2026-12-02"},
			cases: []string{"stripe/po_A1 arrived 10000"}, taken: []string{"NL01/B1", "NL01/B2"}},
	},
	{
		name:    "several entries of one payout, short",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 6000, "2026-12-01", "", "po_A1"), credit("B2", 3000, "2026-12-02", "", "po_A1")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1 NL01/B2] 9000 2026-12-02 short"},
			findings: []string{"payout_amount_mismatch po_A1 risk 1000"},
			cases:    []string{"stripe/po_A1 mismatch 9000"}, taken: []string{"NL01/B1", "NL01/B2"}},
	},
	{
		name:    "one credit, short",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 9950, "2026-12-02", "STRIPE", "po_A1")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 9950 2026-12-02 short"},
			findings: []string{"payout_amount_mismatch po_A1 risk 50"},
			cases:    []string{"stripe/po_A1 mismatch 9950"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "one credit, over",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 30000, "2026-12-02", "STRIPE", "po_A1")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 30000 2026-12-02 short"},
			findings: []string{"payout_amount_mismatch po_A1 risk 20000"},
			cases:    []string{"stripe/po_A1 mismatch 30000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "another currency",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-12-02")},
		entries: []Entry{euro},
		want:    outcome{cases: []string{"stripe/po_1Qx7AbC expected 0"}},
	},
	{
		name:    "another currency, told once it waited",
		day:     "2026-12-06",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-12-04")},
		entries: []Entry{euro},
		want: outcome{findings: []string{"unexpected_credit NL01/B1 risk 10000"},
			cases: []string{"stripe/po_1Qx7AbC expected 0"}},
	},
	{
		name:    "a debit does not carry a payout to us",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-12-02")},
		entries: []Entry{debit("B1", 10000, "2026-12-02", "STRIPE", "po_1Qx7AbC")},
		want:    outcome{cases: []string{"stripe/po_1Qx7AbC expected 0"}},
	},
	{
		name:    "a payout the channel takes arrives as a debit",
		payouts: []Open{pay("stripe", "po_Neg1", -4200, "2026-12-02"), pay("stripe", "po_Neg2", -300, "2026-12-02")},
		entries: []Entry{debit("B1", 4200, "2026-12-02", "", "po_Neg1"), debit("B3", 300, "2026-12-01", "STRIPE", "")},
		want: outcome{arrivals: []string{"stripe/po_Neg1 [NL01/B1] -4200 2026-12-02", "stripe/po_Neg2 [NL01/B3] -300 2026-12-01"},
			cases: []string{"stripe/po_Neg1 arrived -4200", "stripe/po_Neg2 arrived -300"}, taken: []string{"NL01/B1", "NL01/B3"}},
	},
	{
		name:    "a payout of nothing",
		payouts: []Open{pay("stripe", "po_Zero", 0, "2026-11-01")},
		entries: []Entry{credit("B1", 0, "2026-12-02", "STRIPE", "po_Zero")},
		want:    outcome{cases: []string{"stripe/po_Zero arrived 0"}},
	},
	{
		name:    "not yet due",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-11-30")},
		want:    outcome{cases: []string{"stripe/po_A expected 0"}},
	},
	{
		name:    "due and the window over",
		payouts: []Open{pay("stripe", "po_A", 10000, "2026-11-29"), pay("nowindow", "np_1", 100, "2026-12-02")},
		want: outcome{findings: []string{"payout_missing np_1 risk 100", "payout_missing po_A risk 10000"},
			cases: []string{"nowindow/np_1 missing 0", "stripe/po_A missing 0"}},
	},
	{
		name:    "missing, told before",
		payouts: []Open{toldLate},
		want:    outcome{cases: []string{"stripe/po_1Late missing 0"}},
	},
	{
		name:    "missing, arrives at last",
		payouts: []Open{toldLate},
		entries: []Entry{credit("B1", 5000, "2026-12-03", "", "po_1Late")},
		want: outcome{arrivals: []string{"stripe/po_1Late [NL01/B1] 5000 2026-12-03"},
			cases: []string{"stripe/po_1Late arrived 5000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "a channel's credit within its window",
		entries: []Entry{credit("B1", 999, "2026-11-30", "STRIPE", "")},
		want:    outcome{},
	},
	{
		name:    "a channel's credit past its window",
		entries: []Entry{credit("B1", 999, "2026-11-29", "Stripe Technology Europe", "")},
		want:    outcome{findings: []string{"unexpected_credit NL01/B1 risk 999"}},
	},
	{
		name:    "a channel's credit, told before",
		entries: []Entry{toldCredit},
		want:    outcome{},
	},
	{
		name:    "a credit of no channel",
		entries: []Entry{credit("B1", 999, "2026-10-01", "ACME CUSTOMER", "INVOICE 12")},
		want:    outcome{},
	},
	{
		name:    "a credit naming an arrived payout",
		payouts: []Open{arrived},
		entries: []Entry{credit("B1", 5000, "2026-11-29", "", "po_1Arrived")},
		want:    outcome{findings: []string{"unexpected_credit NL01/B1 risk 5000"}, cases: []string{"stripe/po_1Arrived arrived 5000"}},
	},
	{
		name:    "arrived short on an earlier night",
		payouts: []Open{with(arrived, func(p *Open) { p.ArrivedAmount, p.Short, p.ShortTold = 4500, true, true })},
		want:    outcome{cases: []string{"stripe/po_1Arrived mismatch 4500"}},
	},
	{
		name:    "arrived whole, its file corrected to another amount since",
		payouts: []Open{with(arrived, func(p *Open) { p.ArrivedAmount, p.Short = 4500, true })},
		want: outcome{findings: []string{"payout_amount_mismatch po_1Arrived risk 500"},
			cases: []string{"stripe/po_1Arrived mismatch 4500"}},
	},
	{
		name:    "returned by reference",
		payouts: []Open{arrived},
		entries: []Entry{debit("B1", 5000, "2026-12-02", "", "RETURN po_1Arrived")},
		want: outcome{arrivals: []string{"stripe/po_1Arrived [NL01/B1] -5000 2026-12-02 returned"},
			findings: []string{"payout_returned po_1Arrived risk 5000"},
			cases:    []string{"stripe/po_1Arrived returned 5000"}, taken: []string{"NL01/B1"}},
	},
	{
		name:    "arrived and returned the same night",
		payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01")},
		entries: []Entry{credit("B1", 10000, "2026-12-01", "", "po_A1"), debit("B2", 10000, "2026-12-02", "", "RETURN po_A1")},
		want: outcome{arrivals: []string{"stripe/po_A1 [NL01/B1] 10000 2026-12-01", "stripe/po_A1 [NL01/B2] -10000 2026-12-02 returned"},
			findings: []string{"payout_returned po_A1 risk 10000"},
			cases:    []string{"stripe/po_A1 returned 10000"}, taken: []string{"NL01/B1", "NL01/B2"}},
	},
	{
		name:    "returned by a reversal of its amount",
		payouts: []Open{arrived, pay("stripe", "po_Other", 5000, "2026-12-10")},
		entries: []Entry{reversal},
		want: outcome{arrivals: []string{"stripe/po_1Arrived [NL01/B7] -5000 2026-12-01 returned"},
			findings: []string{"payout_returned po_1Arrived risk 5000"},
			cases:    []string{"stripe/po_1Arrived returned 5000", "stripe/po_Other expected 0"}, taken: []string{"NL01/B7"}},
	},
	{
		name:    "a reversal two arrived payouts fit",
		payouts: []Open{arrived, with(arrived, func(p *Open) { p.ID = "po_2Arrived" })},
		entries: []Entry{reversal},
		want: outcome{findings: []string{"payout_returned NL01/B7 risk 5000"},
			cases: []string{"stripe/po_1Arrived arrived 5000", "stripe/po_2Arrived arrived 5000"}, taken: []string{"NL01/B7"}},
	},
	{
		name:    "a reversal two arrived payouts fit, told on an earlier night",
		payouts: []Open{arrived, with(arrived, func(p *Open) { p.ID = "po_2Arrived" })},
		entries: []Entry{with(reversal, func(e *Entry) { e.Earlier, e.Told = true, true })},
		want:    outcome{cases: []string{"stripe/po_1Arrived arrived 5000", "stripe/po_2Arrived arrived 5000"}},
	},
	{
		name:    "a reversal past the window",
		day:     "2026-12-10",
		payouts: []Open{arrived},
		entries: []Entry{with(reversal, func(e *Entry) { e.BookedOn = date0("2026-12-09") })},
		want:    outcome{cases: []string{"stripe/po_1Arrived arrived 5000"}},
	},
	{
		name:    "a debit naming no payout, not a reversal",
		payouts: []Open{arrived},
		entries: []Entry{debit("B1", 5000, "2026-12-02", "STRIPE", "")},
		want:    outcome{cases: []string{"stripe/po_1Arrived arrived 5000"}},
	},
	{
		name:    "pending entries take no part",
		payouts: []Open{pay("stripe", "po_1Qx7AbC", 10000, "2026-11-20")},
		entries: []Entry{pending},
		want:    outcome{findings: []string{"payout_missing po_1Qx7AbC risk 10000"}, cases: []string{"stripe/po_1Qx7AbC missing 0"}},
	},
}

func TestMatch(t *testing.T) {
	for _, tt := range matchTests {
		t.Run(tt.name, func(t *testing.T) {
			day := "2026-12-03"
			if tt.day != "" {
				day = tt.day
			}
			got := summarize(Match(Input{Day: date0(day), Payouts: tt.payouts, Entries: tt.entries, Terms: terms}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", show(got), show(tt.want))
			}
		})
	}
}

func show(o outcome) string {
	var b strings.Builder
	for _, part := range []struct {
		name  string
		lines []string
	}{{"arrivals", o.arrivals}, {"findings", o.findings}, {"cases", o.cases}, {"taken", o.taken}} {
		fmt.Fprintf(&b, "  %s:\n", part.name)
		for _, l := range part.lines {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return b.String()
}
