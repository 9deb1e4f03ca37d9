package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reconcile/ledger/ledgertest"
	"reconcile/reports"
	"strings"
	"testing"
)

// TestBadInputWritesNothing: each bad input stops the run with one line
// naming what is wrong, exit 1, and nothing in findings or journals.
func TestBadInputWritesNothing(t *testing.T) {
	db, dsn, bill := setup(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bill0 := wechatBill()
	// ORD202611280007's 订单金额 edited from 80.00 to 81.00: rows no longer
	// add up to the bill's own summary.
	edited := bytes.Replace(bill0, []byte("`0.48000,`0.60%,`80.00,"), []byte("`0.48000,`0.60%,`81.00,"), 1)
	if bytes.Equal(edited, bill0) {
		t.Fatal("fixture changed: the edit did not apply")
	}
	lines := bytes.Split(bill0, []byte("\r\n"))
	truncated := bytes.Join(lines[:10], []byte("\r\n"))
	badAmount := bytes.Replace(bill0, []byte("`99.00,`0.00,`0,"), []byte("`99.0x,`0.00,`0,"), 1)
	nulInBill := bytes.Replace(bill0, []byte("ORD202611280007"), []byte("ORD2026112800\x0007"), 1)
	canonical := "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
		"payment,O1,,T1,1.00,CNY,2026-11-28T10:00:00+08:00\n" +
		"payment,O2,,T2,2.00,CNY,2026-11-28T11:00:00+08:00\n"
	crOnly := strings.ReplaceAll(canonical, "\n", "\r")
	nulInCSV := strings.Replace(canonical, "T2", "T\x002", 1)
	hugeValue := strings.Replace(canonical, "2.00", strings.Repeat("9", 500<<10)+"x", 1)
	disputes := "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status,dispute_id\n" +
		"chargeback,O1,,K1,1.00,CNY,2026-11-28T10:00:00+08:00,,,D1\n"
	cbAmount := disputes + "chargeback,O2,,K2,1.0O,CNY,2026-11-28T11:00:00+08:00,,,D2\n"
	cbTooMuch := disputes + "chargeback_reversal,O1,,K3,1.50,CNY,2026-11-28T12:00:00+08:00,,,D1\n"
	cbSigned := disputes + "chargeback,O2,,K2,-1.00,CNY,2026-11-28T11:00:00+08:00,,,D2\n"

	tests := []struct {
		name   string
		file   string
		format string
		want   []string // phrases the one error line must contain
	}{
		{"control total", write("edited.csv", edited), "wechatpay", []string{"edited.csv", "订单总金额", "control total"}},
		{"truncated download", write("truncated.csv", truncated), "wechatpay", []string{"truncated.csv"}},
		{"malformed amount", write("amount.csv", badAmount), "wechatpay", []string{"amount.csv:2", "应结订单金额"}},
		{"missing file", filepath.Join(dir, "nope.csv"), "wechatpay", []string{"nope.csv"}},
		{"directory", dir, "wechatpay", []string{dir}},
		{"empty file", write("empty.csv", nil), "csv", []string{"empty.csv"}},
		{"lines ending in CR alone", write("cr.csv", []byte(crOnly)), "csv", []string{"cr.csv:1", "CR"}},
		{"NUL in a channel id", write("nul.csv", []byte(nulInCSV)), "csv", []string{"nul.csv:3", "channel_txn_id", "NUL"}},
		{"NUL in a WeChat order number", write("nul-bill.csv", nulInBill), "wechatpay", []string{"nul-bill.csv:", "商户订单号", "NUL"}},
		{"a 500 KB bad value", write("huge.csv", []byte(hugeValue)), "csv", []string{"huge.csv:3", "column amount", "(512001 bytes)"}},
		{"a chargeback's amount", write("cb-amount.csv", []byte(cbAmount)), "csv", []string{"cb-amount.csv:3", "column amount", "1.0O"}},
		{"a reversal past its chargeback", write("cb-much.csv", []byte(cbTooMuch)), "csv", []string{"cb-much.csv:3", "column amount", "D1"}},
		{"a sign where amounts are unsigned", write("cb-sign.csv", []byte(cbSigned)), "csv", []string{"cb-sign.csv:3", "column amount", "-1.00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(nil)
			out := t.TempDir()
			args := runArgs(dsn, bill, out)
			args[len(args)-5] = tt.file // --file
			args[6] = tt.format         // --format
			code := c.run(t, args...)
			if code != ExitFailed {
				t.Fatalf("exit: got %d, want %d; stderr:\n%s", code, ExitFailed, c.errb)
			}
			lastLine := lastLine(c.errb.String())
			for _, w := range tt.want {
				if !strings.Contains(lastLine, w) {
					t.Errorf("error line %q does not name %q", lastLine, w)
				}
			}
			s := readSummary(t, out)
			if s.Status != "FAILED" || s.Error == "" {
				t.Errorf("summary.json: got status %q error %q, want FAILED with the error", s.Status, s.Error)
			}
			// A value is quoted short, however long it was.
			if len(c.errb.String()) > 4*reports.MaxErrorText || len(s.Error) > reports.MaxErrorText+64 {
				t.Errorf("stderr has %d bytes, summary.json's error %d: want them short", len(c.errb.String()), len(s.Error))
			}
			if !strings.Contains(c.out.String(), "failed") {
				t.Errorf("no failure alert printed:\n%s", c.out)
			}
		})
	}
	var findings, failed, other, longest int
	if err := db.Pool().QueryRow(context.Background(), `select
		(select count(*) from findings),
		(select count(*) from runs where status = 'FAILED' and error <> ''),
		(select count(*) from runs where status <> 'FAILED'),
		(select coalesce(max(length(error)), 0) from runs)`).Scan(&findings, &failed, &other, &longest); err != nil {
		t.Fatal(err)
	}
	journals, _ := ledgertest.JournalCount(context.Background(), db)
	if findings != 0 || journals != 0 {
		t.Errorf("bad input wrote findings=%d journals=%d, want none", findings, journals)
	}
	if longest > reports.MaxErrorText+64 {
		t.Errorf("runs.error: the longest has %d characters, want at most about %d", longest, reports.MaxErrorText)
	}
	// A missing file and a directory have no content to key a run by:
	// they are alerted and summarised, not recorded as runs.
	if failed != len(tests)-2 || other != 0 {
		t.Errorf("runs: got %d FAILED with an error and %d others, want %d and 0", failed, other, len(tests)-2)
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func TestUnreachableDatabase(t *testing.T) {
	c := newCLI(nil)
	out := t.TempDir()
	dsn := "postgres://reconciler:s3cret-pw@localhost:1/recon?connect_timeout=2&sslmode=disable"
	code := c.run(t, runArgs(dsn, "unused.csv", out)...)
	if code != ExitFailed {
		t.Fatalf("exit: got %d, want %d; stderr:\n%s", code, ExitFailed, c.errb)
	}
	all := c.errb.String() + c.out.String()
	if strings.Contains(all, "s3cret-pw") {
		t.Errorf("the password leaked:\n%s", all)
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if strings.Contains(string(b), "s3cret-pw") {
		t.Errorf("the password leaked into summary.json:\n%s", b)
	}
	if !strings.Contains(lastLine(c.errb.String()), "localhost") {
		t.Errorf("error line does not say which server: %q", lastLine(c.errb.String()))
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no command", nil, ExitUsage, "", "no command"},
		{"help", []string{"help"}, ExitOK, "migrate", ""},
		{"help run", []string{"help", "run"}, ExitOK, "--dry-run", ""},
		{"run -h", []string{"run", "-h"}, ExitOK, "--channel", ""},
		{"demo -h", []string{"demo", "-h"}, ExitOK, `output DIR (default "out")`, ""},
		{"schedule -h", []string{"schedule", "-h"}, ExitOK, "--config", ""},
		{"migrate -h", []string{"migrate", "-h"}, ExitOK, "--dsn", ""},
		{"unknown command", []string{"reconcil"}, ExitUsage, "", "unknown command"},
		{"run without date", []string{"run", "--channel", "x"}, ExitUsage, "", "--date is required"},
		{"bare --date is run", []string{"--date", "2026-11-28"}, ExitUsage, "", "--channel is required"},
		{"bad date", []string{"run", "--date", "28/11/2026", "--channel", "x", "--format", "csv", "--file", "f"}, ExitUsage, "", "YYYY-MM-DD"},
		{"unknown format", []string{"run", "--date", "2026-11-28", "--channel", "x", "--format", "mt950", "--file", "f"}, ExitUsage, "", "mt950"},
		{"statement without its account", []string{"run", "--date", "2026-11-28", "--channel", "x", "--format", "mt940", "--file", "f"}, ExitUsage, "",
			"--account is required for the bank statement of x"},
		{"bad zone", []string{"run", "--date", "2026-11-28", "--channel", "x", "--format", "csv", "--tz", "Mars/Base", "--file", "f"}, ExitUsage, "", "Mars/Base"},
		{"no database", []string{"run", "--date", "2026-11-28", "--channel", "x", "--format", "csv", "--file", "f"}, ExitUsage, "", "RECONCILE_DATABASE_URL"},
		{"unknown flag", []string{"run", "--dat", "2026-11-28"}, ExitUsage, "", "-dat"},
		{"file without channel", []string{"run", "--date", "2026-11-28", "--file", "f"}, ExitUsage, "", "--file needs --channel"},
		{"date twice", []string{"run", "--date", "2026-11-28", "--date", "2026-11-29", "--channel", "x"}, ExitUsage, "", "-date: given more than once"},
		{"bool flag twice", []string{"run", "--dry-run", "--dry-run", "--date", "2026-11-28"}, ExitUsage, "", "given more than once"},
		{"review flag twice", []string{"review", "import", "w.xlsx", "--reviewer", "a", "--reviewer", "b"}, ExitUsage, "", "given more than once"},
		{"huge shard count", []string{"run", "--date", "2026-11-28", "--channel", "x", "--format", "csv", "--file", "f", "--shard", "1/99999999999"}, ExitUsage, "", "0 <= I < N <= 1024"},
		{"report shards 0", []string{"report", "--date", "2026-11-28", "--channel", "x", "--shards", "0"}, ExitUsage, "", "--shards 0: want"},
		{"report shards negative", []string{"report", "--date", "2026-11-28", "--channel", "x", "--shards", "-3"}, ExitUsage, "", "--shards -3: want"},
		{"channel climbing out", []string{"run", "--date", "2026-11-28", "--channel", "../../x", "--format", "csv", "--file", "f"}, ExitUsage, "", `--channel: channel name "../../x" starts with '.'`},
		{"channel with a slash", []string{"run", "--date", "2026-11-28", "--channel", "a/b", "--format", "csv", "--file", "f"}, ExitUsage, "", `holds "/"`},
		{"report channel climbing out", []string{"report", "--date", "2026-11-28", "--channel", ".."}, ExitUsage, "", "starts with '.'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(nil)
			if got := c.run(t, tt.args...); got != tt.code {
				t.Fatalf("exit: got %d, want %d; stderr:\n%s", got, tt.code, c.errb)
			}
			if !strings.Contains(c.out.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", c.out, tt.stdout)
			}
			if !strings.Contains(c.errb.String(), tt.stderr) {
				t.Errorf("stderr %q does not contain %q", c.errb, tt.stderr)
			}
			if strings.Contains(c.out.String()+c.errb.String(), "panic") {
				t.Errorf("the usage shows a panic:\n%s%s", c.out, c.errb)
			}
			if tt.code == ExitUsage && !strings.Contains(c.errb.String(), "Try 'reconcile ") {
				t.Errorf("stderr %q does not say what to try", c.errb)
			}
		})
	}
}
