package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reconcile/config"
	"reconcile/ledger/ledgertest"
)

// planOf reads check-config's "Next tick" section: per channel, one
// "date state [overdue]" entry per date listed.
func planOf(out string) map[string][]string {
	plan := map[string][]string{}
	channel := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "    "):
			f := strings.Fields(line)
			entry := f[0] + " " + f[1]
			if strings.Contains(line, "overdue since") {
				entry += " overdue"
			}
			plan[channel] = append(plan[channel], entry)
		case strings.HasPrefix(line, "  "):
			channel = strings.Fields(line)[0]
			plan[channel] = []string{}
		}
	}
	return plan
}

// problemLines returns the lines check-config printed as problems.
func problemLines(out string) []string {
	var ps []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "problem: ") {
			ps = append(ps, line)
		}
	}
	return ps
}

// TestCheckConfigGood: a sound config against the real test database
// passes, and the next tick's plan lists per channel the dates not yet
// reconciled, found or missing (overdue past the deadline); without the
// database every date of the window is listed, and a database never
// migrated is a problem.
func TestCheckConfigGood(t *testing.T) {
	_, dsn, bill := setup(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	for _, sub := range []string{"wechatpay", "stripe"} {
		if err := os.MkdirAll(filepath.Join(inbox, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(bill)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"wechatpay/20261128_ALL.csv":    b, // reconciled below
		"wechatpay/20261127_ALL.csv":    append(b, '\n'),
		"stripe/payouts_2026-11-28.csv": []byte("balance_transaction_id\n"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(inbox, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{
		"out_dir":  filepath.Join(dir, "out"),
		"schedule": map[string]any{"spec": "0 3 * * *", "time_zone": "Asia/Shanghai", "lookback_days": 3},
		"slack":    map[string]any{"channel": "#payments-recon"},
		"disputes": map[string]any{"relation": "disputes", "window": "240h"},
		"channels": []map[string]any{
			{"name": "wechatpay", "format": "wechatpay", "time_zone": "Asia/Shanghai",
				"path": filepath.Join(inbox, "wechatpay", "{yyyymmdd}_ALL.csv")},
			{"name": "stripe", "format": "stripe", "time_zone": "UTC", "order_metadata_key": "order_id",
				"path":             filepath.Join(inbox, "stripe", "payouts_{date}.csv"),
				"duplicate_window": map[string]any{"refund": "0s", "payment": "5m"},
				"fee": map[string]any{"payment": map[string]any{"rate": "0.029", "fixed": "0.30", "rounding": "half-even"},
					"refund": map[string]any{"returns_share": true}},
				"fee_tolerance": 1,
				"payouts":       map[string]any{"counterparties": []string{"STRIPE"}, "window_days": 4}},
			{"name": "bank-usd", "format": "camt053", "account": "US64SVBKUS6S3300958879", "time_zone": "UTC",
				"path": filepath.Join(inbox, "bank", "camt053_{date}.xml")},
		},
	}
	raw, _ := json.MarshalIndent(cfg, "", "  ")
	cfgPath := filepath.Join(dir, "reconcile.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	// 2026-11-28 of wechatpay is reconciled (alerts printed: no Slack here).
	runner := newCLI(map[string]string{"RECONCILE_DATABASE_URL": dsn})
	if code := runner.run(t, "run", "--date", "2026-11-28", "--channel", "wechatpay", "--config", cfgPath); code != ExitOK {
		t.Fatalf("run: exit %d, stderr:\n%s", code, runner.errb)
	}

	// 09:00 in Shanghai on the 29th: the next tick is 03:00 on the 30th,
	// 19:00 UTC on the 29th.
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		env       map[string]string
		wantCode  int
		wantLines []string // each must be in stdout
		wantProbs []string // each problem line must contain one, in order
		wantPlan  map[string][]string
	}{
		{
			name:     "database",
			env:      map[string]string{"RECONCILE_DATABASE_URL": dsn, "SLACK_BOT_TOKEN": "xoxb-test-token"},
			wantCode: ExitOK,
			wantLines: []string{
				"ok: database ($RECONCILE_DATABASE_URL): reachable, schema current (12 migrations)",
				`ok: checks of "wechatpay": over_refund on; suspected_duplicate_refund within 24h0m0s; suspected_duplicate_payment within 10m0s; fee_mismatch off (no fee contract)`,
				`ok: checks of "stripe": over_refund on; suspected_duplicate_refund off (its duplicate_window is 0); suspected_duplicate_payment within 5m0s; fee_mismatch against payment rate 0.029 half-even fixed 0.30, refund returns its share, dispute_fee not checked, tolerance 1`,
				"ok: slack: alerts posted by the bot ($SLACK_BOT_TOKEN) to #payments-recon (from slack.channel), workbook attached",
				`ok: disputes: chargebacks checked against "disputes"; a recorded dispute waits 240h0m0s for its chargeback`,
				`ok: bank-usd: bank account "US64SVBKUS6S3300958879", camt053 statements from ` + filepath.Join(inbox, "bank", "camt053_{date}.xml"),
				"ok: stripe: payouts looked for on bank-usd by reference, else by amount from STRIPE, 4 days allowed after the expected date (2 after the business date when the file gives none)",
				"Next tick: 2026-11-30T03:00:00+08:00",
				"no problems",
			},
			wantPlan: map[string][]string{
				// The 28th is reconciled: not due.
				"wechatpay": {"2026-11-27 found", "2026-11-29 missing"},
				"stripe":    {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 found"},
				"bank-usd":  {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 missing overdue"},
			},
		},
		{
			name:     "no database",
			env:      map[string]string{},
			wantCode: ExitFailed,
			wantLines: []string{
				"Without a usable database the dates cannot be checked against past runs",
				"note: slack: neither $SLACK_BOT_TOKEN nor $SLACK_WEBHOOK_URL is set: alerts are printed on stdout",
				`note: disputes: "disputes" not looked at without the database`,
			},
			wantProbs: []string{"database: $RECONCILE_DATABASE_URL is not set"},
			wantPlan: map[string][]string{
				"wechatpay": {"2026-11-27 found", "2026-11-28 found", "2026-11-29 missing"},
				"stripe":    {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 found"},
				"bank-usd":  {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 missing overdue"},
			},
		},
		{
			name:      "database never migrated",
			env:       map[string]string{"RECONCILE_DATABASE_URL": ledgertest.EmptyDB(t)},
			wantCode:  ExitFailed,
			wantProbs: []string{"database ($RECONCILE_DATABASE_URL): schema not current: 12 of 12 migrations not applied (0001_reference_schema, "},
			wantPlan: map[string][]string{
				"wechatpay": {"2026-11-27 found", "2026-11-28 found", "2026-11-29 missing"},
				"stripe":    {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 found"},
				"bank-usd":  {"2026-11-26 missing overdue", "2026-11-27 missing overdue", "2026-11-28 missing overdue"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(tc.env)
			c.app.Now = func() time.Time { return now }
			code := c.run(t, "check-config", "--config", cfgPath)
			out := c.out.String()
			if code != tc.wantCode {
				t.Errorf("exit: got %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, c.errb)
			}
			for _, want := range tc.wantLines {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			probs := problemLines(out)
			if len(probs) != len(tc.wantProbs) {
				t.Errorf("problems: got %d, want %d:\n%s", len(probs), len(tc.wantProbs), strings.Join(probs, "\n"))
			}
			for i := range min(len(probs), len(tc.wantProbs)) {
				if !strings.Contains(probs[i], tc.wantProbs[i]) {
					t.Errorf("problem %d: got %q, want it to contain %q", i, probs[i], tc.wantProbs[i])
				}
			}
			if len(tc.wantProbs) > 0 {
				want := fmt.Sprintf("config %s: %d problem", cfgPath, len(tc.wantProbs))
				if !strings.Contains(c.errb.String(), want) {
					t.Errorf("stderr: got %q, want it to contain %q", c.errb, want)
				}
			}
			if got := planOf(out); !reflect.DeepEqual(got, tc.wantPlan) {
				t.Errorf("plan:\n got %v\nwant %v\nstdout:\n%s", got, tc.wantPlan, out)
			}
			for _, secret := range []string{tc.env["RECONCILE_DATABASE_URL"], "xoxb-test-token"} {
				if secret != "" && strings.Contains(out+c.errb.String(), secret) {
					t.Errorf("output shows the secret %q", secret)
				}
			}
		})
	}
}

// brokenConfig has one mistake on each line the test names.
const brokenConfig = `{
  "out_dir": "OUT",
  "slak": {"channel": "#x"},
  "schedule": {"spec": "61 * * * *", "time_zone": "Asia/Shanghai"},
  "channels": [
    {"name": "wechatpay", "format": "wechatpay", "path": "INBOX/wechatpay/{yyyymmdd}_ALL.csv"},
    {"name": "adyen", "format": "adyen", "path": "INBOX/adyen/{date}.csv", "time_zone": "Europe/Pariss"},
    {"name": "acme", "format": "xml", "path": "INBOX/acme/{date}.csv"},
    {"name": "acmepay", "format": "mapped", "path": "INBOX/acmepay/{date}.csv",
     "mapping": {"columns": {"kind": "Typ", "order_no": "Ref", "channel_txn_id": "PSP", "amount": "Betrag",
                             "currency": "CCY", "occurred_at": "Datum"}, "kinds": {"payment": ["SALE"]}, "sign": "maybe"}},
    {"name": "stripe", "format": "stripe", "path": "INBOX/stripe/payouts.csv"},
    {"name": "wechatpay", "format": "wechatpay", "path": "INBOX/wc2/{yyyymmdd}.csv"},
    {"name": "alipay", "format": "alipay", "path": "INBOX/alipay/{yyyy}{mm}{dd}.csv", "grace": "30 minutes"},
    {"name": "adyen2", "format": "adyen", "path": "INBOX/adyen2/{date}.csv", "payouts": {"counterparties": ["ADYEN"]}}
  ],
  "disputes": {"relation": "disputes; DROP TABLE runs", "window": "9999h"}
}
`

// TestCheckConfigProblems: a config with many mistakes exits 1 with
// exactly one line per mistake, each naming the file's line and the
// setting, and never a secret.
func TestCheckConfigProblems(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "reconcile.json")
	text := strings.NewReplacer("OUT", filepath.Join(dir, "out"), "INBOX", filepath.Join(dir, "inbox")).Replace(brokenConfig)
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"RECONCILE_DATABASE_URL": "postgres://recon:s3cretpw@127.0.0.1:1/recon?connect_timeout=3",
		"SLACK_BOT_TOKEN":        "xoxb-secret-token",
		"SLACK_WEBHOOK_URL":      "http://hooks.example/secret-hook",
	}
	c := newCLI(env)
	c.app.Now = func() time.Time { return time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC) }
	code := c.run(t, "check-config", "--config", cfgPath)
	out := c.out.String()
	if code != ExitFailed {
		t.Errorf("exit: got %d, want %d", code, ExitFailed)
	}

	wants := []struct {
		line int // 0: not a setting of the file
		text string
	}{
		{3, `unknown key "slak"`},
		{4, `schedule.spec "61 * * * *": end of range (61) above maximum (59)`},
		{7, `channels[1] "adyen": time_zone "Europe/Pariss": unknown time zone`},
		{8, `channels[2] "acme": unknown settlement format "xml" (known formats: adyen, alipay, csv, mapped, stripe, wechatpay)`},
		{10, `channels[3] "acmepay": mapping: sign "maybe": want "unsigned", "signed" or "any"`},
		{12, `channels[4] "stripe": path "` + filepath.Join(dir, "inbox", "stripe", "payouts.csv") + `" has no {date} or {yyyymmdd}`},
		{13, `channels[5] "wechatpay": channel "wechatpay" listed twice (also channels[0])`},
		{14, `channels[6] "alipay": grace: time: unknown unit " minutes" in duration "30 minutes"`},
		{14, `channels[6] "alipay": path "` + filepath.Join(dir, "inbox", "alipay", "{yyyy}{mm}{dd}.csv") + `": unknown placeholder {yyyy}, {mm}, {dd}`},
		{15, `adyen2: payouts are set, but no bank account (format bai2, camt053, mt940) is configured to find them on`},
		{17, `disputes.relation "disputes; DROP TABLE runs": want a table or view name`},
		{17, `disputes.window 9999h0m0s: want up to 4320h (0 for the default, 168h)`},
		{0, `slack: $SLACK_WEBHOOK_URL is set but is not an https URL`},
		{0, `slack: $SLACK_BOT_TOKEN is set but no channel is: set slack.channel in the config or $SLACK_CHANNEL`},
		{0, `database ($RECONCILE_DATABASE_URL): unreachable: connection refused`},
	}
	got := problemLines(out)
	if len(got) != len(wants) {
		t.Errorf("problem lines: got %d, want %d:\n%s", len(got), len(wants), strings.Join(got, "\n"))
	}
	for _, w := range wants {
		want := "problem: " + w.text
		if w.line > 0 {
			want = fmt.Sprintf("problem: %s:%d: %s", cfgPath, w.line, w.text)
		}
		n := 0
		for _, line := range got {
			if strings.HasPrefix(line, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("lines starting %q: got %d, want 1", want, n)
		}
	}
	if want := fmt.Sprintf("reconcile: config %s: %d problems", cfgPath, len(wants)); !strings.Contains(c.errb.String(), want) {
		t.Errorf("stderr: got %q, want %q", c.errb, want)
	}
	if !strings.Contains(out, "Next tick: unknown until schedule.spec and schedule.time_zone are mended.") {
		t.Errorf("stdout does not say the next tick is unknown:\n%s", out)
	}
	for _, secret := range []string{"s3cretpw", "127.0.0.1:1", "secret-token", "secret-hook"} {
		if strings.Contains(out+c.errb.String(), secret) {
			t.Errorf("output shows %q:\n%s\n%s", secret, out, c.errb)
		}
	}
}

// TestCheckConfigUnreadable: a file that is not JSON, or not there, is one
// problem, named with its line.
func TestCheckConfigUnreadable(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content string // content "": no file
		want          string
	}{
		{"syntax", "{\n  \"out_dir\": \"out\",\n  \"channels\": [}\n", "bad.json:3: not valid JSON: invalid character '}'"},
		{"missing", "", "missing.json: no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if tc.name == "syntax" {
				path = filepath.Join(dir, "bad.json")
			}
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := newCLI(nil)
			if code := c.run(t, "check-config", "--config", path); code != ExitFailed {
				t.Errorf("exit: got %d, want %d", code, ExitFailed)
			}
			got := problemLines(c.out.String())
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("problems: got %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// TestCheckConfigSecretSpaces: secrets are read by one rule, their file's
// line ending taken off and nothing else. A password keeps its spaces; a
// key or a token that begins or ends with one is a problem saying so,
// never showing it.
func TestCheckConfigSecretSpaces(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "adyen-password")
	if err := os.WriteFile(pwFile, []byte(" pass word \t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"out_dir": filepath.Join(dir, "out"),
		"channels": []map[string]any{
			{"name": "adyen", "format": "adyen", "path": filepath.Join(dir, "inbox", "adyen", "{date}.csv"),
				"fetch": map[string]any{"adyen": map[string]any{"merchant_account": "AcmeShopECOM", "username": "report@Company.Acme",
					"password": map[string]string{"file": pwFile}, "first_batch": 412}}},
			{"name": "stripe", "format": "stripe", "path": filepath.Join(dir, "inbox", "stripe", "{date}.csv"),
				"fetch": map[string]any{"stripe": map[string]any{"api_key": map[string]string{"env": "STRIPE_API_KEY"}}}},
		},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "reconcile.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(map[string]string{
		"STRIPE_API_KEY":  "  sk_test_51s3cretKEYs3cretKEY\n",
		"SLACK_BOT_TOKEN": "xoxb-1-2-s3cretTOKEN ",
		"SLACK_CHANNEL":   "#payments-recon",
	})
	if code := c.run(t, "check-config", "--config", cfgPath); code != ExitFailed {
		t.Errorf("exit: got %d, want %d", code, ExitFailed)
	}
	out := c.out.String()
	wants := []string{
		`channel "stripe": fetch stripe: api_key ($STRIPE_API_KEY): the secret has leading or trailing spaces`,
		"slack: $SLACK_BOT_TOKEN: the secret has leading or trailing spaces",
		"database: $RECONCILE_DATABASE_URL is not set",
	}
	got := problemLines(out)
	if len(got) != len(wants) {
		t.Errorf("problem lines: got %d, want %d:\n%s", len(got), len(wants), strings.Join(got, "\n"))
	}
	for _, w := range wants {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("no problem line with %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, `ok: fetch of "adyen": adyen merchant account AcmeShopECOM`) {
		t.Errorf("the Adyen password with spaces at its ends is not taken:\n%s", out)
	}
	for _, secret := range []string{"s3cret", "pass word"} {
		if strings.Contains(out+c.errb.String(), secret) {
			t.Errorf("output shows %q:\n%s\n%s", secret, out, c.errb)
		}
	}
}

// TestCheckConfigSharedPath: a channel that fetches its file into a path
// another channel reads is a problem line, not two ok lines: the other
// channel would reconcile the file fetched for the first.
func TestCheckConfigSharedPath(t *testing.T) {
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	stripe := map[string]any{"stripe": map[string]any{"api_key": map[string]string{"env": "STRIPE_API_KEY"}}}
	cfg := map[string]any{
		"out_dir": filepath.Join(dir, "out"),
		"channels": []map[string]any{
			{"name": "stripe-eu", "format": "stripe", "path": inbox + "/stripe/{date}.csv", "fetch": stripe},
			{"name": "stripe-us", "format": "stripe", "path": inbox + "/./stripe/{date}.csv"},
			{"name": "stripe-uk", "format": "stripe", "path": inbox + "/stripe-uk/{date}.csv", "fetch": stripe},
		},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "reconcile.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(map[string]string{"STRIPE_API_KEY": "sk_test_51abcdefghijklmnop"})
	if code := c.run(t, "check-config", "--config", cfgPath); code != ExitFailed {
		t.Errorf("exit: got %d, want %d", code, ExitFailed)
	}
	want := `is also the path of channels[0] "stripe-eu", which fetches its file into it`
	got := problemLines(c.out.String())
	n := 0
	for _, line := range got {
		if strings.Contains(line, `channels[1] "stripe-us": path "`) && strings.Contains(line, want) {
			n++
		}
	}
	if n != 1 || len(got) != 2 { // and the database, not set
		t.Errorf("problem lines:\n%s\nwant one with %q, and the database's", strings.Join(got, "\n"), want)
	}
	if _, err := config.Load(cfgPath); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: %v; want the shared path refused", err)
	}
}
