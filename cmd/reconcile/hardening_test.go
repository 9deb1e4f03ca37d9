package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/ledger"
	"reconcile/reports"
)

// TestUnwritableReportsEndTheRun: when the reports cannot be made (here the
// temporary directory is a file), the run fails within seconds: FAILED in
// the database, its lock let go so the next run of the date goes ahead,
// exit 1. It used to wait forever on the goroutine making the reports.
func TestUnwritableReportsEndTheRun(t *testing.T) {
	db, dsn, bill := setup(t)
	out := t.TempDir()
	notDir := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", notDir)

	c := newCLI(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- c.app.Main(ctx, runArgs(dsn, bill, out)) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end within 20s of failing to write its reports")
	}
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, ExitFailed, c.errb)
	}
	t.Logf("failed in %s: %s", time.Since(start).Round(time.Millisecond), lastLine(c.errb.String()))

	var status string
	var lease *time.Time
	if err := db.Pool().QueryRow(ctx, `SELECT status, lease_until FROM runs`).Scan(&status, &lease); err != nil {
		t.Fatal(err)
	}
	if status != "FAILED" || lease != nil {
		t.Errorf("run: got %s, lease until %v; want FAILED, holding no lease", status, lease)
	}
	if readSummary(t, out).Status != "FAILED" {
		t.Errorf("summary.json: status %q, want FAILED", readSummary(t, out).Status)
	}

	// The next run of the same date, with a temporary directory again, goes
	// ahead at once: nothing holds the date.
	t.Setenv("TMPDIR", t.TempDir())
	next, cancelNext := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelNext()
	if code := c.app.Main(next, runArgs(dsn, bill, out)); code != ExitOK {
		t.Fatalf("next run: exit %d\n%s", code, c.errb)
	}
}

// TestStillOpenDaysNegativeMeansNever: a negative still_open_days turns the
// still-open list off, for `report` as for `run`. report used to take it
// as it was, a cut-off in the future, and listed every open finding.
func TestStillOpenDaysNegativeMeansNever(t *testing.T) {
	for _, tt := range []struct {
		days int
		want bool
	}{{-1, false}, {3, true}} {
		t.Run(fmt.Sprint(tt.days), func(t *testing.T) {
			_, dsn, bill := setup(t)
			c := newCLI(nil)
			if code := c.run(t, runArgs(dsn, bill, t.TempDir())...); code != ExitOK {
				t.Fatalf("run: exit %d\n%s", code, c.errb)
			}
			later := time.Now().AddDate(0, 0, 10)
			c.app.Now = func() time.Time { return later }
			cfg := writeConfig(t, map[string]any{"still_open_days": tt.days})
			if code := c.run(t, "report", "--date", "2026-11-28", "--channel", "wechatpay", "--tz", "Asia/Shanghai",
				"--dsn", dsn, "--config", cfg, "--out", t.TempDir()); code != ExitOK {
				t.Fatalf("report: exit %d\n%s", code, c.errb)
			}
			if got := strings.Contains(c.out.String(), "Still open after"); got != tt.want {
				t.Errorf("still_open_days %d: the report's alert lists findings still open: %v, want %v\n%s", tt.days, got, tt.want, c.out)
			}
		})
	}
}

// TestChannelNamesFromTheConfig: a channel name of the config outside the
// safe set is refused where it enters: the config does not load (exit 2),
// and check-config names the line. A '/' in a name used to hang the run.
func TestChannelNamesFromTheConfig(t *testing.T) {
	for _, name := range []string{"a/b", "../../x", ".hidden", "x\u202eyz"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "reconcile.json")
			text := "{\n  \"channels\": [\n    {\"name\": " + strconv.Quote(name) + ", \"format\": \"csv\", \"path\": \"" +
				filepath.Join(dir, "{date}.csv") + "\"}\n  ]\n}\n"
			if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCLI(nil)
			if code := c.run(t, "run", "--date", "2026-11-28", "--config", cfgPath, "--dsn", "postgres://127.0.0.1:1/x"); code != ExitUsage ||
				!strings.Contains(c.errb.String(), "channel name") {
				t.Errorf("run: exit %d, want %d naming the channel name\n%s", code, ExitUsage, c.errb)
			}
			if code := c.run(t, "check-config", "--config", cfgPath); code != ExitFailed {
				t.Errorf("check-config: exit %d, want %d", code, ExitFailed)
			}
			want := fmt.Sprintf("problem: %s:3: channels[0] %s: channel name %s", cfgPath, reconcile.Quote(name), reconcile.Quote(name))
			n := 0
			for _, p := range problemLines(c.out.String()) {
				if strings.HasPrefix(p, want) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("check-config problems: got %q, want one starting %q", problemLines(c.out.String()), want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%s holds %d entries, want the config alone", dir, len(entries))
			}
		})
	}
}

// TestReportsAreReadableByAll: the workbook and summary.json of a run, and
// of its replay, are 0644 (operators and their tools read them as another
// user). The job's own writer used to leave them 0600.
func TestReportsAreReadableByAll(t *testing.T) {
	_, dsn, bill := setup(t)
	c := newCLI(nil)
	for _, what := range []string{"run", "replay"} {
		out := t.TempDir()
		if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s", what, code, c.errb)
		}
		for _, name := range []string{"summary.json", "review-wechatpay-2026-11-28.xlsx"} {
			st, err := os.Stat(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o644 {
				t.Errorf("%s: %s is %v, want -rw-r--r--", what, name, st.Mode().Perm())
			}
		}
		if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) > 0 {
			t.Errorf("%s: temporary files left behind: %v", what, left)
		}
	}
}

// TestApprovingDuplicatesWithoutChannelIDs: two duplicates the file gives
// no channel id, both approved, get a journal each, under keys that a
// re-run of the same file, its lines in another order, keeps. Their
// journal key used to be reversal/shop/ for both: the second approval
// found it "already posted" and its money was never reversed.
func TestApprovingDuplicatesWithoutChannelIDs(t *testing.T) {
	db, dsn := dbWith(t, `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, paid_at) VALUES
  ('O1', 100, 'USD', 'PAID', 'shop', '2026-11-28T10:00:00Z');`)
	c := newCLI(nil)
	lines := []string{
		"payment,O1,,,1.00,USD,2026-11-28T10:00:00Z\n",
		"payment,O1,,,1.00,USD,2026-11-28T10:05:00Z\n",
		"payment,O1,,,1.00,USD,2026-11-28T10:06:00Z\n",
	}
	approveAll := func(out string) string {
		book := filepath.Join(out, "review-shop-2026-11-28.xlsx")
		header, review := reviewLines(t, book)
		set := map[int][3]string{}
		for _, l := range review {
			if l.cells["Category"] == string(reconcile.DuplicatePayment) {
				set[l.row] = [3]string{"approve", "alice", ""}
			}
		}
		if len(set) != 2 {
			t.Fatalf("duplicate_payment lines: got %d, want 2", len(set))
		}
		if code := c.run(t, "review", "import", writeDecisions(t, book, header, set), "--dsn", dsn); code != ExitOK {
			t.Fatalf("import: exit %d\n%s\n%s", code, c.out, c.errb)
		}
		return c.out.String()
	}

	out := shopDay(t, c, dsn, "2026-11-28", strings.Join(lines, ""))
	if printed := approveAll(out); !strings.Contains(printed, "2 journals posted") {
		t.Errorf("first import: want 2 journals posted:\n%s", printed)
	}
	keys := journalKeys(t, db)
	if len(keys) != 2 || keys[0] == keys[1] {
		t.Fatalf("journals: %q, want two with different keys", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "reversal-row/shop/") {
			t.Errorf("journal key %q: want reversal-row/shop/<fingerprint>", k)
		}
	}

	// The same rows in another order, run again: the new run's duplicates
	// are the same rows, and approving them posts nothing more.
	out = shopDay(t, c, dsn, "2026-11-28", lines[2]+lines[0]+lines[1], "--force")
	if printed := approveAll(out); !strings.Contains(printed, "0 journals posted") || strings.Count(printed, "already posted") != 2 {
		t.Errorf("import after the re-run: want both already posted:\n%s", printed)
	}
	if again := journalKeys(t, db); fmt.Sprint(again) != fmt.Sprint(keys) {
		t.Errorf("journals after the re-run: %q, want still %q", again, keys)
	}
}

// TestMisreadDSNPasswordNeverShows: a DSN whose password holds a raw '@'
// is refused before the driver reads its tail as a host name; neither
// stderr, the printed alert nor summary.json shows any of it.
func TestMisreadDSNPasswordNeverShows(t *testing.T) {
	bill := filepath.Join(t.TempDir(), "bill.csv")
	if err := os.WriteFile(bill, wechatBill(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": "postgres://recon:Qz7r@Kv9w@db.invalid:5432/recon"})
	args := []string{"run", "--date", "2026-11-28", "--channel", "wechatpay", "--format", "wechatpay", "--file", bill, "--out", out}
	if code := c.run(t, args...); code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, ExitFailed, c.errb)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	for where, text := range map[string]string{"stderr": c.errb.String(), "stdout": c.out.String(), "summary.json": string(summary)} {
		for _, piece := range []string{"Qz7r", "Kv9w"} {
			if strings.Contains(text, piece) {
				t.Errorf("%s shows %q of the password:\n%s", where, piece, text)
			}
		}
	}
	if !strings.Contains(lastLine(c.errb.String()), "more than one '@'") {
		t.Errorf("stderr does not say what is wrong with the DSN: %q", lastLine(c.errb.String()))
	}
}

// TestErrorText: an error as the job records and shows it is one line of
// at most 2 KiB however long the error, with its secrets hidden and a line
// the driver repeats said once.
func TestErrorText(t *testing.T) {
	long := errors.New("bill.csv:2: column amount: " + strings.Repeat("9", 10<<20))
	if got := reports.ErrorText(long); len(got) > reports.MaxErrorText+40 || !strings.HasSuffix(got, "(10485787 bytes in all)") {
		t.Errorf("a 10 MB error: got %d bytes ending %q", len(got), got[max(0, len(got)-40):])
	}
	multi := errors.New("failed to connect to `user=recon database=recon`:\n\tdial error: connection refused\n\tdial error: connection refused")
	if got, want := reports.ErrorText(multi), "failed to connect to `user=recon database=recon`: dial error: connection refused"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	secret := errors.New(strings.Repeat("x", reports.MaxErrorText-20) + " postgres://recon:Qz7rKv9w@db/recon")
	if got := reports.ErrorText(secret); strings.Contains(got, "Qz7r") {
		t.Errorf("a password at the cut shows: %q", got[len(got)-80:])
	}
}

// TestDecisionLinesShowBidiControls: a reviewer's name or a note from a
// workbook cannot reorder the line review import prints: the controls are
// shown, not obeyed.
func TestDecisionLinesShowBidiControls(t *testing.T) {
	d := ledger.Decision{Ref: "run-0001", State: reconcile.StateApproved, Reviewer: "alice\u202e\u2066evil"}
	got := d.Line(ledger.DecisionResult{Outcome: ledger.OutcomeRecorded})
	if strings.ContainsFunc(got, reconcile.IsBidiControl) || !strings.Contains(got, "alice[U+202E][U+2066]evil") {
		t.Errorf("got %q, want the controls shown as [U+202E][U+2066]", got)
	}
}

// TestRowsFarFromTheDateStopTheFile: a row dated years away from the
// business date (year 0, 1999, 9999 in a 2026 file) stops the run naming
// its line, with nothing written; the window is the channel's row_window.
func TestRowsFarFromTheDateStopTheFile(t *testing.T) {
	for _, tt := range []struct {
		name, when string
		window     map[string]any
		ok         bool
	}{
		{"year 1999", "1999-11-28T10:00:00Z", nil, false},
		{"year 9999", "9999-11-28T10:00:00Z", nil, false},
		{"year 0", "0000-11-28T10:00:00Z", nil, false},
		{"a refund requested last month", "2026-10-20T10:00:00Z", nil, true},
		{"outside a narrower window", "2026-10-20T10:00:00Z", map[string]any{"days_before": 7}, false},
		{"the next morning", "2026-11-29T08:00:00Z", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, dsn := dbWith(t, `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, paid_at) VALUES
  ('O1', 100, 'USD', 'PAID', 'shop', '2026-11-28T10:00:00Z'), ('O2', 100, 'USD', 'PAID', 'shop', '2026-11-28T10:00:00Z');`)
			dir := t.TempDir()
			file := filepath.Join(dir, "shop-2026-11-28.csv")
			body := shopHeader + "payment,O1,,T1,1.00,USD,2026-11-28T10:00:00Z\npayment,O2,,T2,1.00,USD," + tt.when + "\n"
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			ch := map[string]any{"name": "shop", "format": "csv", "time_zone": "UTC", "path": file}
			if tt.window != nil {
				ch["row_window"] = tt.window
			}
			cfg := writeConfig(t, map[string]any{"channels": []any{ch}})
			c := newCLI(nil)
			code := c.run(t, "run", "--date", "2026-11-28", "--channel", "shop", "--config", cfg, "--dsn", dsn, "--out", filepath.Join(dir, "out"))
			if tt.ok {
				if code != ExitOK {
					t.Fatalf("exit %d\n%s", code, c.errb)
				}
				return
			}
			if code != ExitFailed || !strings.Contains(lastLine(c.errb.String()), file+":3") || !strings.Contains(lastLine(c.errb.String()), "outside") {
				t.Errorf("exit %d, want %d naming line 3 as outside the window:\n%s", code, ExitFailed, lastLine(c.errb.String()))
			}
			var findings int
			if err := db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM findings`).Scan(&findings); err != nil || findings != 0 {
				t.Errorf("findings written: %d (%v), want none", findings, err)
			}
		})
	}
}

// TestDecisionFormulasAreRefused: a Decision cell holding a formula is
// refused for its line, named, exit 1, and nothing is recorded: neither
// through its cached value (=HYPERLINK(…,"approve") used to approve and
// post a journal) nor without one (it used to be skipped, exit 0).
func TestDecisionFormulasAreRefused(t *testing.T) {
	db, dsn, bill := setup(t)
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, c.errb)
	}
	book := filepath.Join(out, "review-wechatpay-2026-11-28.xlsx")
	header, lines := reviewLines(t, book)
	dup := lineOf(t, lines, reconcile.DuplicatePayment)
	journals := len(journalKeys(t, db))
	for _, tt := range []struct {
		name    string
		formula string
		cached  string
	}{
		{"cached approve", `HYPERLINK("http://evil.example","approve")`, "approve"},
		{"no cached value", `IF(1,"approve","reject")`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := writeDecisions(t, book, header, map[int][3]string{dup.row: {"", "alice", ""}})
			f, err := excelize.OpenFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			col, _ := excelize.ColumnNumberToName(slices.Index(header, "Decision") + 1)
			cell := col + strconv.Itoa(dup.row)
			if err := f.SetCellFormula("Review", cell, tt.formula); err != nil {
				t.Fatal(err)
			}
			if err := f.Save(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			// A spreadsheet saves a formula's last result with it, as a
			// string result (t="str") in <v>; excelize writes none.
			rewriteZipEntry(t, dst, "xl/worksheets/sheet2.xml", func(b []byte) []byte {
				re := regexp.MustCompile(`(<c r="` + cell + `"[^>]*>)(<f>[^<]*</f>)(<v>[^<]*</v>)?`)
				if !re.Match(b) {
					t.Fatalf("no formula cell %s in the Review sheet", cell)
				}
				v := ""
				if tt.cached != "" {
					v = "<v>" + tt.cached + "</v>"
				}
				return re.ReplaceAll(b, []byte("${1}${2}"+v))
			})
			if code := c.run(t, "review", "import", dst, "--dsn", dsn); code != ExitFailed {
				t.Fatalf("import: exit %d, want %d\n%s\n%s", code, ExitFailed, c.out, c.errb)
			}
			if want := fmt.Sprintf("%s:%d: column Decision: ", dst, dup.row); !strings.Contains(c.errb.String(), want) ||
				!strings.Contains(c.errb.String(), "formula") {
				t.Errorf("stderr does not name %s as a formula:\n%s", want, c.errb)
			}
			if st := findingState(t, db, dup.cells["Finding"]); st.State != reconcile.StateOpen {
				t.Errorf("finding: %s, want still OPEN", st.State)
			}
			if n := len(journalKeys(t, db)); n != journals {
				t.Errorf("journals: %d, want still %d", n, journals)
			}
		})
	}
}

// rewriteZipEntry rewrites one entry of the zip file at path with edit.
func rewriteZipEntry(t *testing.T, path, name string, edit func([]byte) []byte) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	found := false
	for _, e := range zr.File {
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if e.Name == name {
			b, found = edit(b), true
		}
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	zr.Close()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("no entry %s in %s", name, path)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRowReversedUnderTheOldSharedKey: before rows had fingerprints, the
// approved duplicate without a channel id of a channel was reversed under
// reversal/<channel>/. A later run of that date finds the same row again;
// approving it posts nothing more: the row is reversed already.
func TestRowReversedUnderTheOldSharedKey(t *testing.T) {
	db, dsn := dbWith(t, `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, paid_at) VALUES
  ('O1', 100, 'USD', 'PAID', 'shop', '2026-11-28T10:00:00Z');`)
	c := newCLI(nil)
	body := "payment,O1,,,1.00,USD,2026-11-28T10:00:00Z\npayment,O1,,,1.00,USD,2026-11-28T10:05:00Z\n"
	shopDay(t, c, dsn, "2026-11-28", body)
	// The approval as it was recorded then.
	if err := db.Exec(context.Background(), `
INSERT INTO journals (idempotency_key, kind, channel, order_no, channel_txn_id, currency, amount)
     VALUES ('reversal/shop/', 'reversal', 'shop', 'O1', '', 'USD', 100);
INSERT INTO journal_lines (journal_id, line_no, account, amount, currency)
     SELECT id, n, a, v, 'USD' FROM journals, (VALUES (1, 'channel:shop:clearing', -100), (2, 'customers:payments', 100)) AS l(n, a, v);
UPDATE findings SET state = 'APPROVED', decided_by = 'alice', decided_at = now(), journal_key = 'reversal/shop/',
       row_fingerprint = NULL
 WHERE category = 'duplicate_payment';`); err != nil {
		t.Fatal(err)
	}
	out := shopDay(t, c, dsn, "2026-11-28", body, "--force")
	book := filepath.Join(out, "review-shop-2026-11-28.xlsx")
	header, lines := reviewLines(t, book)
	dup := lineOf(t, lines, reconcile.DuplicatePayment)
	if code := c.run(t, "review", "import", writeDecisions(t, book, header, map[int][3]string{dup.row: {"approve", "bob", ""}}),
		"--dsn", dsn); code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, c.out, c.errb)
	}
	if !strings.Contains(c.out.String(), "journal reversal/shop/ (already posted)") {
		t.Errorf("import: want the row found reversed under the old key:\n%s", c.out)
	}
	if keys := journalKeys(t, db); len(keys) != 1 {
		t.Errorf("journals: %q, want the one posted before", keys)
	}
}
