package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"reconcile/fixtures"
	"reconcile/ledger/ledgertest"
)

// TestEveryFormatEndToEnd runs the CLI on each channel's fixture, as the
// demo and an operator do, against a real PostgreSQL, and checks what it
// found: every category, the batch rows, and the journals posted.
func TestEveryFormatEndToEnd(t *testing.T) {
	tests := []struct {
		channel  string
		counts   map[string]int
		batch    int
		journals int
	}{
		{"wechatpay", wantCounts, 0, 2},
		{"alipay", map[string]int{"matched": 9, "amount_mismatch": 1, "status_mismatch": 1, "missing_local": 0,
			"missing_channel": 1, "duplicate_payment": 0, "duplicate_refund": 1, "unrecognized": 0}, 0, 0},
		{"stripe", map[string]int{"matched": 11, "amount_mismatch": 1, "status_mismatch": 0, "missing_local": 0,
			"missing_channel": 1, "duplicate_payment": 0, "duplicate_refund": 1, "unrecognized": 1,
			"over_refund": 2, "suspected_duplicate_payment": 1, "suspected_duplicate_refund": 0, "fee_mismatch": 0,
			"chargeback": 3, "dispute_mismatch": 1}, 1, 1},
		{"adyen", map[string]int{"matched": 8, "amount_mismatch": 1, "status_mismatch": 0, "missing_local": 1,
			"missing_channel": 1, "duplicate_payment": 0, "duplicate_refund": 1, "unrecognized": 0,
			"chargeback": 3, "over_refund": 1}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.channel, func(t *testing.T) {
			db, dsn, bill := setupChannel(t, tt.channel)
			ch, _ := fixtures.Lookup(tt.channel)
			c := newCLI(nil)
			out := t.TempDir()
			// No --format and no --tz: both come from the config, as at night.
			cfg := writeConfig(t, map[string]any{"channels": []map[string]string{
				{"name": ch.Name, "format": ch.Format, "time_zone": ch.TimeZone, "path": bill}}})
			if code := c.run(t, "run", "--date", fixtures.Date, "--channel", tt.channel, "--config", cfg,
				"--dsn", dsn, "--out", out); code != ExitOK {
				t.Fatalf("exit %d\n%s", code, c.errb)
			}
			s := readSummary(t, out)
			for k, want := range tt.counts {
				if got := s.Counts[k]; got != want {
					t.Errorf("counts[%s]: got %d, want %d", k, got, want)
				}
			}
			var raw map[string]any
			b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
			json.Unmarshal(b, &raw)
			if got, _ := raw["batch_rows"].(float64); int(got) != tt.batch { // a JSON count, not money
				t.Errorf("batch_rows: got %v, want %d", raw["batch_rows"], tt.batch)
			}
			n, err := ledgertest.JournalCount(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.journals || s.AutoReversed != tt.journals {
				t.Errorf("journals: got %d posted, %d auto reversed; want %d", n, s.AutoReversed, tt.journals)
			}
		})
	}
}

// TestMappedFormatEndToEnd: a channel without a parser, read through the
// mapping in its config.
func TestMappedFormatEndToEnd(t *testing.T) {
	db, dsn := dbWith(t, `INSERT INTO orders (order_no, amount_minor, currency, status, channel, paid_at) VALUES
		('M1', 4990, 'EUR', 'PAID', 'acmepay', '2026-11-28 09:15:00+01'),
		('M2', 12000, 'EUR', 'PAID', 'acmepay', '2026-11-28 10:02:00+01'),
		('M3', 700, 'EUR', 'PAID', 'acmepay', '2026-11-28 21:30:00+01');
		INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, refunded_at) VALUES
		('R1', 'M2', 12000, 'EUR', 'SUCCEEDED', 'acmepay', '2026-11-28 12:00:00+01')`)
	file := filepath.Join(t.TempDir(), "acmepay.csv")
	os.WriteFile(file, []byte("Buchungsdatum;Typ;Ref;Erstattung;PSP;Betrag;Waehrung\n"+
		"28.11.2026 09:15;SALE;M1;;P1;4990;EUR\n"+
		"28.11.2026 10:02;SALE;M2;;P2;12000;EUR\n"+
		"28.11.2026 10:02;SALE;M2;;P2b;12000;EUR\n"+
		"28.11.2026 12:00;REFUND;M2;R1;P3;-12000;EUR\n"+
		"28.11.2026 23:59;FEE;;;;-150;EUR\n"), 0o644)
	mapping := map[string]any{
		"columns": map[string]string{"kind": "Typ", "order_no": "Ref", "refund_no": "Erstattung",
			"channel_txn_id": "PSP", "amount": "Betrag", "currency": "Waehrung", "occurred_at": "Buchungsdatum"},
		"kinds":        map[string][]string{"payment": {"SALE"}, "refund": {"REFUND"}, "batch": {"FEE"}},
		"amount_units": "minor", "sign": "signed", "time_format": "02.01.2006 15:04", "delimiter": ";",
	}
	cfg := writeConfig(t, map[string]any{"channels": []map[string]any{
		{"name": "acmepay", "format": "mapped", "time_zone": "Europe/Berlin", "path": file, "mapping": mapping}}})
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, "run", "--date", "2026-11-28", "--channel", "acmepay", "--config", cfg, "--dsn", dsn, "--out", out); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, c.errb)
	}
	s := readSummary(t, out)
	want := map[string]int{"matched": 3, "duplicate_payment": 1, "missing_channel": 1}
	for k, v := range want {
		if s.Counts[k] != v {
			t.Errorf("counts[%s]: got %d, want %d (all %v)", k, s.Counts[k], v, s.Counts)
		}
	}
	if n, _ := ledgertest.JournalCount(context.Background(), db); n != 1 {
		t.Errorf("journals: got %d, want 1 (the unambiguous duplicate)", n)
	}

	// A mapping with a mistake is refused when the config is read.
	bad := writeConfig(t, map[string]any{"channels": []map[string]any{
		{"name": "acmepay", "format": "mapped", "path": file, "mapping": map[string]any{"amount_unit": "minor"}}}})
	if code := c.run(t, "run", "--date", "2026-11-28", "--config", bad, "--dsn", dsn); code != ExitUsage {
		t.Errorf("bad mapping: exit %d, want %d\n%s", code, ExitUsage, c.errb)
	}
}

func writeConfig(t *testing.T, cfg map[string]any) string {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "reconcile.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
