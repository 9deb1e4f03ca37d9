package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/xuri/excelize/v2"

	"reconcile/ledger/ledgertest"
	"reconcile/reports/slacktest"
)

// quotePrefixed reports whether a cell's style has the quote prefix, which
// keeps what a person types into it text.
func quotePrefixed(t *testing.T, f *excelize.File, sheet, cell string) bool {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	xf := f.Styles.CellXfs.Xf[id]
	return xf.QuotePrefix != nil && *xf.QuotePrefix
}

// TestHostileFileContent: values in a settlement file come from merchants
// and customers. Whatever they contain lands in the workbook as text and in
// Slack escaped; a long one is cut in the alert but not in the workbook.
func TestHostileFileContent(t *testing.T) {
	_, dsn := ledgertest.DB(t)
	long := "ORD-" + strings.Repeat("x", 300)
	formula := `=HYPERLINK("http://evil.example","click")`
	ping := "<!channel> refund <http://evil.example|here> & more"
	file := filepath.Join(t.TempDir(), "hostile.csv")
	csv := "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
		`payment,"` + strings.ReplaceAll(formula, `"`, `""`) + `",,T1,1.00,USD,2026-11-28T10:00:00Z` + "\n" +
		"payment,@SUM(A1),,T2,2.00,USD,2026-11-28T10:00:00Z\n" +
		"refund,O3," + ping + ",T3,3.00,USD,2026-11-28T10:00:00Z\n" +
		"payment," + long + ",,T4,4.00,USD,2026-11-28T10:00:00Z\n"
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slacktest.NewServer(t)
	c := newCLI(map[string]string{"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_CHANNEL": "#recon"})
	c.app.SlackOptions = []slack.Option{fake.Option()}
	out := t.TempDir()
	if code := c.run(t, "run", "--date", "2026-11-28", "--channel", "shop", "--format", "csv",
		"--file", file, "--dsn", dsn, "--out", out); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, c.errb)
	}

	f, err := excelize.OpenFile(filepath.Join(out, "review-shop-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Review")
	found := map[string]bool{}
	for i, r := range rows[1:] {
		for j, v := range r {
			cell, _ := excelize.CoordinatesToCellName(j+1, i+2)
			if formula, _ := f.GetCellFormula("Review", cell); formula != "" {
				t.Errorf("%s holds a formula %q", cell, formula)
			}
			switch v {
			case formula, "@SUM(A1)": // exact, and kept text when retyped by the quote prefix
				if !quotePrefixed(t, f, "Review", cell) {
					t.Errorf("%s holds %q without the quote prefix", cell, v)
				}
				found[map[string]string{formula: "formula", "@SUM(A1)": "at"}[v]] = true
			case long: // never cut in the workbook
				found["long"] = true
			case ping:
				found["ping"] = true
			}
		}
	}
	for _, k := range []string{"formula", "at", "long", "ping"} {
		if !found[k] {
			t.Errorf("workbook: %s value not found intact as text; rows:\n%v", k, rows)
		}
	}

	posted := strings.ReplaceAll(lastPost(fake), `\u0026`, "&") // JSON's escape of &
	if strings.Contains(posted, "<!channel>") || strings.Contains(posted, "<http://evil") {
		t.Errorf("Slack blocks carry live markup:\n%s", posted)
	}
	if !strings.Contains(posted, "&lt;!channel&gt;") || !strings.Contains(posted, "&amp; more") {
		t.Errorf("Slack blocks do not show the escaped value:\n%s", posted)
	}
	if strings.Contains(posted, long) {
		t.Error("the long value reached Slack uncut")
	}
}
