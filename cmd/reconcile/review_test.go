package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// reviewLine is a line of a Review sheet: its row and its cells by header.
type reviewLine struct {
	row   int
	cells map[string]string
}

// reviewLines reads the Review sheet of a workbook the job wrote.
func reviewLines(t *testing.T, path string) (header []string, lines []reviewLine) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Review")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("Review sheet of %s has no lines", path)
	}
	for i, r := range rows[1:] {
		l := reviewLine{row: i + 2, cells: map[string]string{}}
		for k, h := range rows[0] {
			if k < len(r) {
				l.cells[h] = r[k]
			}
		}
		lines = append(lines, l)
	}
	return rows[0], lines
}

// lineOf returns the only Review line of a category.
func lineOf(t *testing.T, lines []reviewLine, c reconcile.Category) reviewLine {
	t.Helper()
	var found []reviewLine
	for _, l := range lines {
		if l.cells["Category"] == string(c) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("Review lines of %s: got %d, want 1", c, len(found))
	}
	return found[0]
}

// writeDecisions fills the Decision, Reviewer and Note cells of some lines
// of a copy of src, as a person does in a spreadsheet, and returns the copy.
func writeDecisions(t *testing.T, src string, header []string, set map[int][3]string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	col := map[string]string{}
	for i, h := range header {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			t.Fatal(err)
		}
		col[h] = name
	}
	for row, v := range set {
		for i, h := range []string{"Decision", "Reviewer", "Note"} {
			if v[i] == "" {
				continue
			}
			if err := f.SetCellValue("Review", col[h]+strconv.Itoa(row), v[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func findingState(t *testing.T, db *ledger.DB, ref string) ledger.ReviewedFinding {
	t.Helper()
	f, err := db.FindingByRef(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func journalKeys(t *testing.T, db *ledger.DB) []string {
	t.Helper()
	js, err := ledgertest.Journals(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range js {
		keys = append(keys, j.IdempotencyKey)
	}
	return keys
}

func TestReviewImport(t *testing.T) {
	db, dsn, bill := setup(t)
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitOK {
		t.Fatalf("run: exit %d, stderr:\n%s", code, c.errb)
	}
	book := filepath.Join(out, "review-wechatpay-2026-11-28.xlsx")
	header, lines := reviewLines(t, book)
	dup := lineOf(t, lines, reconcile.DuplicatePayment)
	mismatch := lineOf(t, lines, reconcile.AmountMismatch)
	missing := lineOf(t, lines, reconcile.MissingLocal)
	dupRef, mismatchRef, missingRef := dup.cells["Finding"], mismatch.cells["Finding"], missing.cells["Finding"]
	if dupRef == "" || mismatchRef == "" || missingRef == "" || dup.cells["Version"] != "0" {
		t.Fatalf("Review lines carry no reference or version: %v %v %v", dup.cells, mismatch.cells, missing.cells)
	}
	wantKey := "reversal/wechatpay/" + dup.cells["Channel Txn ID"]
	before := journalKeys(t, db)
	if len(before) != 2 {
		t.Fatalf("journals after the run: %v, want the 2 automatic ones", before)
	}

	alices := writeDecisions(t, book, header, map[int][3]string{
		dup.row:      {"approve", "", "charged twice, refund the second"},
		mismatch.row: {"reject", "", "channel fee, not a loss"},
		missing.row:  {"investigate", "dave", ""}, // the line's reviewer wins over --reviewer
	})

	t.Run("import", func(t *testing.T) {
		if code := c.run(t, "review", "import", alices, "--reviewer", "alice", "--dsn", dsn); code != ExitOK {
			t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, c.out, c.errb)
		}
		got := c.out.String()
		for _, want := range []string{
			dupRef + " recorded: APPROVED by alice; journal " + wantKey + " posted",
			mismatchRef + " recorded: REJECTED by alice",
			missingRef + " recorded: INVESTIGATING by dave",
			"3 decisions: 3 recorded, 0 unchanged, 0 conflicts, 0 not found, 0 not open; 1 journal posted",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output does not say %q:\n%s", want, got)
			}
		}
		for ref, want := range map[string][2]string{
			dupRef:      {string(reconcile.StateApproved), "alice"},
			mismatchRef: {string(reconcile.StateRejected), "alice"},
			missingRef:  {string(reconcile.StateInvestigating), "dave"},
		} {
			f := findingState(t, db, ref)
			if string(f.State) != want[0] || f.DecidedBy != want[1] || f.Version != 1 || f.DecidedAt.IsZero() {
				t.Errorf("finding %s: %s by %q version %d at %v, want %s by %s version 1 with a time",
					ref, f.State, f.DecidedBy, f.Version, f.DecidedAt, want[0], want[1])
			}
		}
		if f := findingState(t, db, mismatchRef); f.Note != "channel fee, not a loss" {
			t.Errorf("note %q, want the workbook's", f.Note)
		}
		if f := findingState(t, db, dupRef); f.JournalKey != wantKey {
			t.Errorf("approved duplicate points at journal %q, want %q", f.JournalKey, wantKey)
		}
		after := journalKeys(t, db)
		if len(after) != 3 || !slices.Contains(after, wantKey) {
			t.Errorf("journals: %v, want the 2 automatic ones and %s", after, wantKey)
		}
	})

	t.Run("import again", func(t *testing.T) {
		if code := c.run(t, "review", "import", alices, "--reviewer", "alice", "--dsn", dsn); code != ExitOK {
			t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, c.out, c.errb)
		}
		got := c.out.String()
		for _, ref := range []string{dupRef, mismatchRef, missingRef} {
			if !strings.Contains(got, ref+" unchanged") {
				t.Errorf("output does not say %s is unchanged:\n%s", ref, got)
			}
		}
		if !strings.Contains(got, "3 decisions: 0 recorded, 3 unchanged, 0 conflicts, 0 not found, 0 not open; 0 journals posted") {
			t.Errorf("closing line:\n%s", got)
		}
		if n := len(journalKeys(t, db)); n != 3 {
			t.Errorf("journals after importing again: %d, want 3", n)
		}
		if f := findingState(t, db, dupRef); f.Version != 1 {
			t.Errorf("duplicate at version %d after importing again, want 1", f.Version)
		}
	})

	t.Run("a second reviewer's copy", func(t *testing.T) {
		bobs := writeDecisions(t, book, header, map[int][3]string{mismatch.row: {"approve", "", "looks right"}})
		c.env = map[string]string{"USER": "bob"}
		defer func() { c.env = nil }()
		code := c.run(t, "review", "import", "--dsn", dsn, bobs)
		if code != ExitFailed {
			t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFailed, c.out, c.errb)
		}
		outLines := strings.Split(strings.TrimSpace(c.out.String()), "\n")
		if len(outLines) != 2 || !strings.HasPrefix(outLines[0], mismatchRef+" conflict: REJECTED by alice at ") {
			t.Errorf("output: want a conflict line naming alice and a closing line:\n%s", c.out)
		}
		if last := outLines[len(outLines)-1]; !strings.Contains(last, "1 conflict,") || !strings.Contains(last, "1 NOT recorded") {
			t.Errorf("closing line %q does not say a decision was not recorded", last)
		}
		if !strings.Contains(c.errb.String(), "1 decision not recorded (1 conflict)") {
			t.Errorf("stderr: %s", c.errb)
		}
		f := findingState(t, db, mismatchRef)
		if f.State != reconcile.StateRejected || f.DecidedBy != "alice" || f.Version != 1 || f.Note != "channel fee, not a loss" {
			t.Errorf("finding %s after the conflict: %+v, want still REJECTED by alice at version 1", mismatchRef, f)
		}
	})

	t.Run("an unknown finding", func(t *testing.T) {
		forged := writeDecisions(t, book, header, map[int][3]string{missing.row: {"reject", "erin", ""}})
		f, err := excelize.OpenFile(forged)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetCellValue("Review", "A"+strconv.Itoa(missing.row), "no-such-run-0001"); err != nil {
			t.Fatal(err)
		}
		if err := f.Save(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if code := c.run(t, "review", "import", forged, "--dsn", dsn); code != ExitFailed {
			t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFailed, c.out, c.errb)
		}
		if !strings.Contains(c.out.String(), "no-such-run-0001 not found") || !strings.Contains(c.errb.String(), "1 not found") {
			t.Errorf("stdout:\n%s\nstderr:\n%s\nwant the finding reported not found", c.out, c.errb)
		}
	})

	t.Run("no reviewer at all", func(t *testing.T) {
		nobody := writeDecisions(t, book, header, map[int][3]string{mismatch.row: {"approve", "", ""}})
		if code := c.run(t, "review", "import", nobody, "--dsn", dsn); code != ExitUsage {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitUsage, c.errb)
		}
		if !strings.Contains(c.errb.String(), "--reviewer") {
			t.Errorf("stderr does not say what to do:\n%s", c.errb)
		}
		if f := findingState(t, db, mismatchRef); f.State != reconcile.StateRejected || f.Version != 1 {
			t.Errorf("finding changed: %+v", f)
		}
	})
}

func TestReviewImportNotAJobWorkbook(t *testing.T) {
	_, dsn := dbWith(t, "")
	dir := t.TempDir()

	other := filepath.Join(dir, "expenses.xlsx")
	f := excelize.NewFile()
	f.SetCellValue("Sheet1", "A1", "Finding")
	if err := f.SaveAs(other); err != nil {
		t.Fatal(err)
	}
	f.Close()
	text := filepath.Join(dir, "bill.xlsx")
	if err := os.WriteFile(text, wechatBill(), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, path, want string
	}{
		{"a workbook without a Review sheet", other, "not a review workbook"},
		{"a file that is no workbook", text, "bill.xlsx is not an xlsx workbook"},
		{"a file that does not exist", filepath.Join(dir, "missing.xlsx"), "missing.xlsx"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(nil)
			if code := c.run(t, "review", "import", tt.path, "--reviewer", "alice", "--dsn", dsn); code != ExitFailed {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailed, c.errb)
			}
			msg := strings.TrimSpace(c.errb.String())
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "nothing was recorded") {
				t.Errorf("stderr %q: want one line saying %q and that nothing was recorded", msg, tt.want)
			}
		})
	}
}

func TestReviewUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string // in stdout for help, stderr otherwise
	}{
		{"help", []string{"review", "-h"}, ExitOK, "reconcile review import FILE.xlsx"},
		{"help after import", []string{"review", "import", "-h"}, ExitOK, "--reviewer"},
		{"help command", []string{"help", "review"}, ExitOK, "Reviewer column"},
		{"no subcommand", []string{"review"}, ExitUsage, "review import FILE.xlsx"},
		{"unknown subcommand", []string{"review", "export"}, ExitUsage, `"export"`},
		{"no file", []string{"review", "import", "--reviewer", "alice"}, ExitUsage, "needs the workbook"},
		{"two files", []string{"review", "import", "a.xlsx", "b.xlsx"}, ExitUsage, `"b.xlsx"`},
		{"unknown flag", []string{"review", "import", "a.xlsx", "--reveiwer", "x"}, ExitUsage, "reveiwer"},
		{"no database", []string{"review", "import", "a.xlsx", "--reviewer", "alice"}, ExitUsage, "--dsn"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(nil)
			code := c.run(t, tt.args...)
			got := c.errb.String()
			if tt.code == ExitOK {
				got = c.out.String()
			}
			if tt.code == ExitOK && strings.Count(got, "Usage:") != 1 {
				t.Errorf("help printed %d times:\n%s", strings.Count(got, "Usage:"), got)
			}
			if code != tt.code || !strings.Contains(got, tt.want) {
				t.Errorf("exit %d, want %d, saying %q; stdout:\n%s\nstderr:\n%s", code, tt.code, tt.want, c.out, c.errb)
			}
		})
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		pos      string
		reviewer string
	}{
		{[]string{"import", "f.xlsx", "--reviewer", "alice"}, "import f.xlsx", "alice"},
		{[]string{"--reviewer", "alice", "import", "f.xlsx"}, "import f.xlsx", "alice"},
		{[]string{"import", "--reviewer=alice", "f.xlsx"}, "import f.xlsx", "alice"},
		{[]string{"import", "--", "--reviewer", "alice"}, "import --reviewer alice", ""},
	} {
		c := newCLI(nil)
		fs := c.app.newFlagSet("review", "")
		reviewer := fs.String("reviewer", "", "")
		pos, err := parseInterspersed(fs, tt.args)
		if err != nil || strings.Join(pos, " ") != tt.pos || *reviewer != tt.reviewer {
			t.Errorf("parse %q: got %q, reviewer %q, %v; want %q, reviewer %q", tt.args, pos, *reviewer, err, tt.pos, tt.reviewer)
		}
	}
}
