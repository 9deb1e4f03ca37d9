package config

import (
	"encoding/json"
	"errors"
	"strings"

	"reconcile"
	"reconcile/bankfeed"
)

// Accounts are a bank channel's accounts: the config writes one as a
// string, several as a list.
type Accounts []string

func (a *Accounts) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Accounts{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("want an account or a list of accounts")
	}
	*a = list
	return nil
}

// Holds reports whether a statement's account is one of them
// (reconcile.SameAccount).
func (a Accounts) Holds(stated, currency string) bool {
	for _, c := range a {
		if reconcile.SameAccount(c, stated, currency) {
			return true
		}
	}
	return false
}

// Payouts says how a channel's payouts reach the bank (rule 15).
type Payouts struct {
	// Counterparties are the names the channel's money carries on the
	// bank statement ("STRIPE", "ADYEN"): a credit that names one as a
	// word, in any case, is the channel's, and may be taken for a payout
	// of its amount. Without them a payout is only found by its reference.
	Counterparties []string `json:"counterparties,omitempty"`
	// WindowDays is how many days a payout may arrive after its expected
	// date before it is payout_missing, and how far from that date a
	// credit is taken for it by amount (default 3).
	WindowDays int `json:"window_days,omitempty"`
	// DelayDays is how many days after its business date a payout whose
	// file gives no date of its own is expected at the bank (default 2:
	// Adyen's batches, a mapped file without a payout date).
	DelayDays int `json:"delay_days,omitempty"`
}

// Defaults and bounds of Payouts.
const (
	defaultPayoutWindow = 3
	defaultPayoutDelay  = 2
	maxPayoutDays       = 30
	maxCounterparty     = 64
)

// Terms are the channel's payout terms as rule 15 reads them, defaults
// applied.
func (ch Channel) Terms() reconcile.PayoutTerms {
	t := reconcile.PayoutTerms{Window: defaultPayoutWindow}
	if p := ch.Payouts; p != nil {
		t.Counterparties = p.Counterparties
		if p.WindowDays > 0 {
			t.Window = p.WindowDays
		}
	}
	return t
}

// PayoutDelay is how many days after its business date a payout is
// expected when its file does not say.
func (ch Channel) PayoutDelay() int {
	if p := ch.Payouts; p != nil && p.DelayDays > 0 {
		return p.DelayDays
	}
	return defaultPayoutDelay
}

// Statement reports whether the channel is a bank account whose
// statements the job reads (format camt053, mt940 or bai2).
func (ch Channel) Statement() bool {
	_, err := bankfeed.Lookup(ch.Format)
	return err == nil
}

// payoutProblems lists what is wrong with a channel's payouts and, for a
// bank account, its account.
func (ch Channel) payoutProblems(at, where string) []error {
	var errs []error
	if ch.Statement() {
		if len(ch.Account) == 0 {
			errs = append(errs, fieldErrorf(at+".account", "%s: format %s is a bank statement: give the \"account\" (IBAN or account number) its statements must be of", where, ch.Format))
		}
		for _, a := range ch.Account {
			if strings.TrimSpace(a) == "" || reconcile.TextFault(a) != "" || len(a) > 64 {
				errs = append(errs, fieldErrorf(at+".account", "%s: account %s: want an IBAN or account number", where, reconcile.Quote(a)))
			}
		}
		if ch.Payouts != nil {
			errs = append(errs, fieldErrorf(at+".payouts", "%s: a bank account pays out nothing: \"payouts\" belongs to the channels that pay into it", where))
		}
		return errs
	}
	if len(ch.Account) > 0 {
		errs = append(errs, fieldErrorf(at+".account", "%s: \"account\" is a bank statement's (formats %s), not format %s's",
			where, strings.Join(bankfeed.Formats(), ", "), reconcile.Quote(ch.Format)))
	}
	p := ch.Payouts
	if p == nil {
		return errs
	}
	at += ".payouts"
	for i, name := range p.Counterparties {
		if strings.TrimSpace(name) == "" || len(name) > maxCounterparty || reconcile.TextFault(name) != "" {
			errs = append(errs, fieldErrorf(at+".counterparties", "%s: payouts.counterparties[%d] %s: want a name of 1 to %d characters, as the bank writes it",
				where, i, reconcile.Quote(name), maxCounterparty))
		}
	}
	if d := p.WindowDays; d < 0 || d > maxPayoutDays {
		errs = append(errs, fieldErrorf(at+".window_days", "%s: payouts.window_days %d: want 1 to %d (0 for the default, %d)", where, d, maxPayoutDays, defaultPayoutWindow))
	}
	if d := p.DelayDays; d < 0 || d > maxPayoutDays {
		errs = append(errs, fieldErrorf(at+".delay_days", "%s: payouts.delay_days %d: want 1 to %d (0 for the default, %d)", where, d, maxPayoutDays, defaultPayoutDelay))
	}
	return errs
}
