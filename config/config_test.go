package config_test

import (
	"errors"
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
          "refund": {"returns_share": true}},
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
		c.Payment.Fixed != "0.30" || c.Payment.Places != -1 || c.Refund == nil || !c.Refund.ReturnsShare {
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
		{"fee", `"fee": {}`, "give terms for payment, refund or both"},
		{"fee_tolerance", `"fee": {"payment": {"rate": "0.006"}}, "fee_tolerance": -1`, "want 0 or more"},
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
