package config_test

import (
	"slices"
	"strings"
	"testing"

	"reconcile/config"
)

// TestPayoutSettings: a bank account names its account and pays out
// nothing; a channel's payout terms take their defaults and bounds.
func TestPayoutSettings(t *testing.T) {
	const stripe = `{"name": "stripe", "format": "stripe", "path": "/in/stripe-{date}.csv"`
	const bank = `{"name": "bank-eur", "format": "camt053", "path": "/in/camt-{date}.xml"`
	for _, tc := range []struct {
		name, channels string
		want           string // a problem's words, "" for none
		window, delay  int    // stripe's terms when loaded
		counterparties []string
	}{
		{"defaults", stripe + `}, ` + bank + `, "account": "DE89370400440532013000"}`, "", 3, 2, nil},
		{"several accounts", stripe + `}, ` + bank + `, "account": ["DE89370400440532013000", "DE12500105170648489890"]}`, "", 3, 2, nil},
		{"an account of nothing", bank + `, "account": []}`, `give the "account"`, 0, 0, nil},
		{"an account that is a number", bank + `, "account": 42}`, "want an account or a list of accounts", 0, 0, nil},
		{"terms", stripe + `, "payouts": {"counterparties": ["STRIPE", "Stripe Payments UK"], "window_days": 5, "delay_days": 1}}`, "", 5, 1,
			[]string{"STRIPE", "Stripe Payments UK"}},
		{"no account", bank + `}`, `give the "account"`, 0, 0, nil},
		{"account with a NUL", bank + `, "account": "DE89\u0000"}`, "want an IBAN or account number", 0, 0, nil},
		{"a bank paying out", bank + `, "account": "DE89", "payouts": {"window_days": 2}}`, "a bank account pays out nothing", 0, 0, nil},
		{"account of a channel", stripe + `, "account": "DE89"}`, `"account" is a bank statement's`, 0, 0, nil},
		{"empty counterparty", stripe + `, "payouts": {"counterparties": [" "]}}`, "payouts.counterparties[0]", 0, 0, nil},
		{"window too long", stripe + `, "payouts": {"window_days": 31}}`, "payouts.window_days 31: want 1 to 30", 0, 0, nil},
		{"negative delay", stripe + `, "payouts": {"delay_days": -1}}`, "payouts.delay_days -1", 0, 0, nil},
		{"unknown format", `{"name": "bank", "format": "camt054", "path": "/in/x"}`, "bank statements: bai2, camt053, mt940", 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(writeFile(t, `{"channels": [`+tc.channels+`]}`))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Load: %v; want a problem saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			ch, _ := cfg.Lookup("stripe")
			terms := ch.Terms()
			if terms.Window != tc.window || ch.PayoutDelay() != tc.delay || !slices.Equal(terms.Counterparties, tc.counterparties) {
				t.Errorf("terms %+v, delay %d; want window %d, delay %d, counterparties %q", terms, ch.PayoutDelay(), tc.window, tc.delay, tc.counterparties)
			}
			if ch.Statement() {
				t.Error("stripe is a bank statement")
			}
			if b, ok := cfg.Lookup("bank-eur"); ok {
				if !b.Statement() {
					t.Error("a camt053 channel is not a bank statement")
				}
				if !b.Account.Holds("DE89 3704 0044 0532 0130 00", "EUR") || b.Account.Holds("DE00370400440532013000", "EUR") {
					t.Errorf("accounts %q hold the wrong ones", b.Account)
				}
			}
		})
	}
}
