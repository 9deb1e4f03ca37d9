package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/config"
)

// TestTemplateTrouble: the path templates check-config accepts.
func TestTemplateTrouble(t *testing.T) {
	cases := []struct {
		path, want string // want "": accepted
	}{
		{"/in/{yyyymmdd}_ALL.csv.gz", ""},
		{"/in/{date}/report-{yyyymmdd}.csv", ""},
		{"/in/report.csv", "has no {date} or {yyyymmdd}"},
		{"/in/{Date}.csv", "unknown placeholder {Date}"},
		{"/in/{date}-{channel}.csv", "unknown placeholder {channel}"},
		{"", "path is empty"},
	}
	for _, tc := range cases {
		got := config.TemplateTrouble(tc.path)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("config.TemplateTrouble(%q): got %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestFeeContract: a channel's fee contract and duplicate windows as the
// config writes them, and every mistake named with its setting.
func TestFeeContract(t *testing.T) {
	good := `{"channels": [{"name": "stripe", "format": "stripe", "path": "/in/{date}.csv",
  "duplicate_window": {"refund": "0s", "payment": "5m"},
  "fee": {"payment": {"rate": "0.029", "fixed": "0.30", "min": "0.50", "max": "20", "rounding": "half-even"},
          "refund": {"returns_share": true}, "dispute_fee": {"fixed": "15.00"}},
  "fee_tolerance": 2}]}`
	cfg, err := config.Load(writeFile(t, good))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ch := cfg.Channels[0]
	if refund, payment := ch.Windows(); refund != 0 || payment != 5*time.Minute {
		t.Errorf("Windows() = %v, %v; want 0, 5m", refund, payment)
	}
	c := ch.Fees()
	if c == nil || c.Tolerance != 2 || c.Payment.RateNano != 29_000_000 || c.Payment.Rounding != reconcile.RoundHalfEven ||
		c.Payment.Fixed != "0.30" || c.Payment.Places != -1 || c.Refund == nil || !c.Refund.ReturnsShare ||
		c.Dispute == nil || c.Dispute.Fixed != "15.00" || c.Dispute.RateNano != 0 {
		t.Fatalf("Fees() = %+v", c)
	}
	if refund, payment := (config.Channel{}).Windows(); refund != 24*time.Hour || payment != 10*time.Minute {
		t.Errorf("default windows %v, %v; want 24h, 10m", refund, payment)
	}
	if (config.Channel{}).Fees() != nil {
		t.Error("a channel without a contract checks fees")
	}

	for _, tc := range []struct{ setting, json, want string }{
		{"fee.payment", `"fee": {"payment": {"rate": "0.6%"}}`, "fee.payment: rate"},
		{"fee.payment", `"fee": {"payment": {"rate": "1.5"}}`, "want a fraction from 0 to 1"},
		{"fee.payment", `"fee": {"payment": {"rate": "0.0000000001"}}`, "fee.payment: rate"},
		{"fee.payment", `"fee": {"payment": {"rate": "0.006", "rounding": "bankers"}}`, `rounding "bankers"`},
		{"fee.payment", `"fee": {"payment": {"rate": "0.006", "places": 9}}`, "places 9: want 0 to 6"},
		{"fee.payment", `"fee": {"payment": {"rate": "0.006", "min": "-1"}}`, "min \"-1\" is negative"},
		{"fee.payment", `"fee": {"payment": {"rate": "0.006", "min": "2", "max": "1"}}`, "is more than max"},
		{"fee.payment", `"fee": {"payment": {"rate": "0.006", "returns_share": true}}`, "returns_share is for refunds"},
		{"fee.refund", `"fee": {"refund": {"returns_share": true}}`, "needs fee.payment"},
		{"fee.refund", `"fee": {"payment": {"rate": "0.006"}, "refund": {"returns_share": true, "rate": "0.01"}}`, "no rate, fixed, min or max of its own"},
		{"fee.dispute_fee", `"fee": {"dispute_fee": {"fixed": "abc"}}`, "fee.dispute_fee: fixed: \"abc\": not a plain decimal"},
		{"fee.dispute_fee", `"fee": {"dispute_fee": {"returns_share": true}}`, "returns_share is for refunds"},
		{"fee", `"fee": {}`, "give terms for payment, refund, dispute_fee or some of them"},
		{"fee_tolerance", `"fee": {"payment": {"rate": "0.006"}}, "fee_tolerance": -1`, "want 0 to 1000000000"},
		{"fee_tolerance", `"fee_tolerance": 3`, "without a \"fee\" contract checks nothing"},
		{"duplicate_window.refund", `"duplicate_window": {"refund": "800h"}`, "at most 744h0m0s"},
	} {
		t.Run(tc.json, func(t *testing.T) {
			_, err := config.Load(writeFile(t, `{"channels": [{"name": "s", "format": "stripe", "path": "/in/{date}.csv", `+tc.json+`}]}`))
			var fe *config.FieldError
			if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.setting) ||
				strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("Load: %v; want one problem about %s saying %q", err, tc.setting, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reconcile.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretRead: a secret is its file's or variable's bytes less the one
// line ending a file usually ends with, nothing else: a password may
// begin or end with a space. What cannot be a secret is refused naming
// where it was looked for, never what was found.
func TestSecretRead(t *testing.T) {
	dir := t.TempDir()
	files := 0
	file := func(content string) config.Secret {
		files++
		p := filepath.Join(dir, fmt.Sprintf("secret-%d", files))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return config.Secret{File: p}
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	variable := func(v string) config.Secret {
		name := fmt.Sprintf("SECRET_%d", len(env))
		env[name] = v
		return config.Secret{Env: name}
	}
	for _, tc := range []struct {
		name   string
		secret config.Secret
		want   string // "" for a refusal
		says   string
	}{
		{"a file's spaces and tab are the password's", file(" pass word \t\n"), " pass word \t", ""},
		{"a file's CRLF", file("s3cret\r\n"), "s3cret", ""},
		{"a file without a line ending", file("s3cret"), "s3cret", ""},
		{"only one line ending is a file's", file("s3cret\n\n"), "s3cret\n", ""},
		{"a variable's spaces are the password's", variable(" pass word \t"), " pass word \t", ""},
		{"a variable's line ending", variable("s3cret\n"), "s3cret", ""},
		{"an empty file", file(""), "", "is empty"},
		{"a file of a line ending", file("\n"), "", "is empty"},
		{"a file of spaces", file("   \n"), "", "only white space"},
		{"a variable of spaces", variable("  "), "", "only white space"},
		{"an unset variable", config.Secret{Env: "UNSET"}, "", "$UNSET is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.secret.Read(getenv)
			if tc.says == "" {
				if err != nil || string(got) != tc.want {
					t.Errorf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %q, %v; want an error saying %q", got, err, tc.says)
			}
		})
	}
}

// TestEnvSecret: a secret the job reads from a variable it may leave
// unset (the DSN, the Slack token and webhook) follows the same rule,
// and one that no such secret can be (spaces at its ends) is refused,
// naming the variable and not the value.
func TestEnvSecret(t *testing.T) {
	env := map[string]string{"TOKEN": "xoxb-1-2-s3cret\n", "SPACED": " xoxb-1-2-s3cret ", "CRLF": "postgres://h/db\r\n"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct{ name, want, says string }{
		{"TOKEN", "xoxb-1-2-s3cret", ""},
		{"CRLF", "postgres://h/db", ""},
		{"UNSET", "", ""},
		{"SPACED", "", "$SPACED: the secret has leading or trailing spaces"},
	} {
		got, err := config.EnvSecret(getenv, tc.name)
		switch {
		case tc.says == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "s3cret")):
			t.Errorf("%s: got %q, %v; want an error saying %q without the value", tc.name, got, err, tc.says)
		case tc.says != "" && !errors.Is(err, reconcile.ErrSecretSpaces):
			t.Errorf("%s: %v is not reconcile.ErrSecretSpaces", tc.name, err)
		}
	}
}

// TestNumericBounds: every number of the config is bounded where it is
// read, so none can overflow when scaled (a fee tolerance in thousandths
// of a minor unit, days and durations added to times); each refusal names
// its setting and the bounds, and nothing else is refused with it.
func TestNumericBounds(t *testing.T) {
	const ch = `"name": "s", "format": "stripe", "path": "/in/{date}.csv"`
	const fee = `"fee": {"payment": {"rate": "0.006"}}`
	const fetch = `"fetch": {%s"stripe": {"api_key": {"env": "STRIPE_API_KEY"}%s}}`
	const adyen = `"name": "a", "format": "adyen", "path": "/in/adyen/{date}.csv",
	  "fetch": {"adyen": {"merchant_account": "Acme", "username": "report@Company.Acme", "password": {"env": "P"}, "first_batch": %s}}`
	channel := func(s string) string { return `{"channels": [{` + s + `}]}` }
	tests := []struct {
		name, json, setting, want string
	}{
		{"fee_tolerance that wraps when scaled", channel(ch + `, ` + fee + `, "fee_tolerance": 9223372036854776`),
			`channels[0] "s": fee_tolerance 9223372036854776`, "want 0 to 1000000000 minor units"},
		{"fee_tolerance past the bound", channel(ch + `, ` + fee + `, "fee_tolerance": 1000000001`),
			"fee_tolerance 1000000001", "want 0 to 1000000000"},
		{"a fixed fee past the bound", channel(ch + `, "fee": {"payment": {"rate": "0.006", "fixed": "9000000000000"}}`),
			`fee.payment: fixed "9000000000000"`, "at most 1000000000 major units"},
		{"a maximum fee past the bound", channel(ch + `, "fee": {"payment": {"max": "1000000000.01"}}`),
			`fee.payment: max "1000000000.01"`, "at most 1000000000 major units"},
		{"lease", `{"lease": "2562047h"}`, "lease 2562047h0m0s", "want 30s to 24h"},
		{"still_open_days", `{"still_open_days": 9223372036854775807}`, "still_open_days 9223372036854775807", "want 1 to 3660, or -1 for never"},
		{"still_open_days below -1", `{"still_open_days": -9223372036854775808}`, "still_open_days -9223372036854775808", "want 1 to 3660, or -1 for never"},
		{"memory_days", `{"memory_days": 100000}`, "memory_days 100000", "want 1 to 366"},
		{"memory_days negative", `{"memory_days": -1}`, "memory_days -1", "want 1 to 366"},
		{"review_max_lines", `{"review_max_lines": 2000000}`, "review_max_lines 2000000", "want 1 to 1048575"},
		{"slack.top", `{"slack": {"top": 1000}}`, "slack.top 1000", "want 1 to 30"},
		{"slack.retry_attempts", `{"slack": {"retry_attempts": 1000}}`, "slack.retry_attempts 1000", "want 1 to 20"},
		{"slack.retry_budget", `{"slack": {"retry_budget": "100000h"}}`, "slack.retry_budget 100000h0m0s", "want at most 1h"},
		{"metrics.stale_after", `{"metrics": {"stale_after": "100000h"}}`, "metrics.stale_after 100000h0m0s", "want 1m to 168h"},
		{"grace", channel(ch + `, "grace": "100000h"`), "grace 100000h0m0s", "want less than 24h"},
		{"deadline", channel(ch + `, "deadline": "100000h"`), "deadline 100000h0m0s", "want at most 2208h"},
		{"fetch.timeout", channel(ch + `, ` + fmt.Sprintf(fetch, `"timeout": "100000h", `, "")), "fetch.timeout 100000h0m0s", "want 1s to 10m"},
		{"fetch.timeout too short", channel(ch + `, ` + fmt.Sprintf(fetch, `"timeout": "1ns", `, "")), "fetch.timeout 1ns", "want 1s to 10m"},
		{"fetch.download_timeout", channel(ch + `, ` + fmt.Sprintf(fetch, `"download_timeout": "100000h", `, "")), "fetch.download_timeout 100000h0m0s", "want 1s to 6h"},
		{"fetch.retry_budget", channel(ch + `, ` + fmt.Sprintf(fetch, `"retry_budget": "100000h", `, "")), "fetch.retry_budget 100000h0m0s", "want at most 1h"},
		{"fetch.stripe.poll_budget", channel(ch + `, ` + fmt.Sprintf(fetch, "", `, "poll_budget": "100000h"`)), "fetch stripe.poll_budget 100000h0m0s", "want at most 1h"},
		{"fetch.adyen.first_batch", channel(fmt.Sprintf(adyen, "9223372036854775807")), "fetch adyen.first_batch 9223372036854775807", "(1 to 1000000000)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(writeFile(t, tc.json))
			var fe *config.FieldError
			if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.setting) || !strings.Contains(err.Error(), tc.want) ||
				strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("Load: %v; want one problem naming %q and saying %q", err, tc.setting, tc.want)
			}
		})
	}

	t.Run("the bounds themselves are taken", func(t *testing.T) {
		cfg, err := config.Load(writeFile(t, `{"lease": "24h", "still_open_days": -1, "memory_days": 366, "review_max_lines": 1048575,
  "slack": {"top": 30, "retry_attempts": 20, "retry_budget": "1h"}, "metrics": {"stale_after": "168h"},
  "channels": [{`+ch+`, "fee": {"payment": {"rate": "1", "fixed": "1000000000", "min": "1000000000"}}, "fee_tolerance": 1000000000,
    "grace": "23h59m", "deadline": "2208h",
    "fetch": {"available_after": "2207h", "timeout": "10m", "download_timeout": "6h", "retry_budget": "1h",
      "stripe": {"api_key": {"env": "K"}, "poll_budget": "1h"}}}]}`))
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		c := cfg.Channels[0].Fees()
		r, _, err := c.Rule(reconcile.KindPayment, "KWD")
		if err != nil || r.ToleranceMilli != 1_000_000_000_000 {
			t.Errorf("Rule: %+v, %v; want a tolerance of 10^12 thousandths", r, err)
		}
		// The largest amount whose fee is computed, at the largest rate and
		// fixed fee: exact, no wrap.
		amount := int64(1<<62) / 1000
		if fee, err := r.Fee(amount); err != nil || fee != amount*1000+1_000_000_000*1_000_000 {
			t.Errorf("Fee(%d) at the largest contract: %d, %v; want %d", amount, fee, err, amount*1000+1_000_000_000*1_000_000)
		}
	})
}

// TestSharedPaths: a path template naming the file another channel
// fetches into is refused on the later channel, whichever fetches;
// channels that only read are left alone.
func TestSharedPaths(t *testing.T) {
	const fetch = `"fetch": {"stripe": {"api_key": {"env": "K"}}}`
	for _, tc := range []struct{ name, a, b, want string }{
		{"the first fetches", fetch, "", `channels[1] "b": path "/in/./{date}.csv" is also the path of channels[0] "a", which fetches its file into it`},
		{"the second fetches", "", fetch, `channels[1] "b": path "/in/./{date}.csv" is also the path of channels[0] "a", which reads the file this channel fetches`},
		{"both fetch", fetch, fetch, `which fetches its file into it`},
		{"neither fetches", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := func(name, path, extra string) string {
				s := `{"name": "` + name + `", "format": "stripe", "path": "` + path + `"`
				if extra != "" {
					s += ", " + extra
				}
				return s + "}"
			}
			_, err := config.Load(writeFile(t, `{"channels": [`+ch("a", "/in/{date}.csv", tc.a)+", "+ch("b", "/in/./{date}.csv", tc.b)+
				", "+ch("c", "/in/c/{date}.csv", "")+`]}`))
			if tc.want == "" {
				if err != nil {
					t.Errorf("Load: %v; want no problem", err)
				}
				return
			}
			var fe *config.FieldError
			if err == nil || !errors.As(err, &fe) || fe.Path != "channels[1].path" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v; want a problem of channels[1].path saying %q", err, tc.want)
			}
		})
	}
}
