package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/xuri/excelize/v2"

	"reconcile/reports/slacktest"
)

// logLines parses every line of a JSON log, failing the test on a line
// that is not a JSON object.
func logLines(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for l := range strings.Lines(string(b)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%q", err, l)
		}
		lines = append(lines, m)
	}
	return lines
}

// findLine returns the first log line with the message msg.
func findLine(lines []map[string]any, msg string) (map[string]any, bool) {
	for _, l := range lines {
		if l["msg"] == msg {
			return l, true
		}
	}
	return nil, false
}

func forceTerminal(on bool) func(io.Writer) bool {
	return func(io.Writer) bool { return on }
}

func TestLogLevelFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"run", []string{"run", "--log-level", "loud", "--date", "2026-11-28"}, "-log-level"},
		{"bare date", []string{"--date", "2026-11-28", "--log-level", "verbose"}, "-log-level"},
		{"schedule", []string{"schedule", "--log-level", "trace", "--config", "x.json"}, "-log-level"},
		{"demo", []string{"demo", "--log-level", "0"}, "-log-level"},
		{"report", []string{"report", "--log-level", "info+2", "--date", "2026-11-28", "--channel", "x"}, "-log-level"},
		{"review", []string{"review", "import", "x.xlsx", "--log-level", "WARNING"}, "-log-level"},
		{"alert", []string{"alert", "--resend", "r1", "--log-level", ""}, "-log-level"},
		// A good level is taken: the next mistake is what is reported.
		{"good level", []string{"run", "--log-level", "DEBUG", "--channel", "x"}, "--date is required"},
		{"warn", []string{"alert", "--log-level", "warn"}, "--resend RUN_ID is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(nil)
			if got := c.run(t, tt.args...); got != ExitUsage {
				t.Fatalf("exit: got %d, want %d; stderr:\n%s", got, ExitUsage, c.errb)
			}
			if !strings.Contains(c.errb.String(), tt.want) {
				t.Errorf("stderr %q does not contain %q", c.errb, tt.want)
			}
		})
	}
}

// TestRedactHandler: whatever way a secret is handed to the logger, it is
// hidden in both formats.
func TestRedactHandler(t *testing.T) {
	const pw, token = "hunter2-pw", "xoxb-1-2-SeCrEt"
	dsn := "postgres://recon:" + pw + "@db/recon"
	type wrapped struct{ DSN string }
	tests := []struct {
		name string
		log  func(*slog.Logger)
	}{
		{"message", func(l *slog.Logger) { l.Info("connecting to " + dsn) }},
		{"string value", func(l *slog.Logger) { l.Info("x", "dsn", dsn) }},
		{"error value", func(l *slog.Logger) { l.Warn("x", "error", fmt.Errorf("post: token %s refused", token)) }},
		{"joined errors", func(l *slog.Logger) { l.Warn("x", "error", errors.Join(errors.New("a"), errors.New("password="+pw))) }},
		{"group", func(l *slog.Logger) { l.Info("x", slog.Group("db", "url", dsn)) }},
		{"with", func(l *slog.Logger) { l.With("dsn", dsn).Info("x") }},
		{"with group", func(l *slog.Logger) { l.WithGroup("g").With("dsn", dsn).Info("x", "t", token) }},
		{"any value", func(l *slog.Logger) { l.Info("x", "config", wrapped{dsn}) }},
		{"stringer", func(l *slog.Logger) {
			l.Info("x", "url", &url.URL{Scheme: "postgres", User: url.UserPassword("u", pw), Host: "db"})
		}},
		{"key value dsn", func(l *slog.Logger) { l.Info("x", "dsn", "host=db password="+pw+" dbname=recon") }},
		{"webhook", func(l *slog.Logger) { l.Info("x", "url", "https://hooks.slack.com/services/T0/B0/"+pw) }},
		{"stripe key", func(l *slog.Logger) { l.Warn("x", "error", errors.New("stripe: key sk_live_"+pw+"x refused")) }},
		{"private key", func(l *slog.Logger) {
			l.Warn("x", "error", errors.New("parse -----BEGIN PRIVATE KEY-----\n"+pw+"\n-----END PRIVATE KEY-----"))
		}},
		{"basic auth", func(l *slog.Logger) { l.Info("x", "header", "Authorization: Basic "+pw+"AAAA") }},
		{"wechatpay signature", func(l *slog.Logger) {
			l.Info("x", "header", `WECHATPAY2-SHA256-RSA2048 mchid="1900000001",signature="`+pw+`"`)
		}},
	}
	for _, tt := range tests {
		for _, text := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s text=%v", tt.name, text), func(t *testing.T) {
				var b bytes.Buffer
				tt.log((&App{}).loggerTo(&b, text, nil))
				got := b.String()
				if got == "" {
					t.Fatal("nothing logged")
				}
				if strings.Contains(got, pw) || strings.Contains(got, "SeCrEt") {
					t.Errorf("a secret is in the log line:\n%s", got)
				}
			})
		}
	}
}

// TestRunLogLineIsJSON: not on a terminal, every line a run logs is a JSON
// object, and the run's line carries its run id, channel, business date
// and the time of each stage.
func TestRunLogLineIsJSON(t *testing.T) {
	_, dsn, bill := setup(t)
	c := newCLI(nil)
	c.app.IsTerminal = forceTerminal(false)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out, "--log-level", "debug")...); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	s := readSummary(t, out)
	lines := logLines(t, bytes.NewReader(c.errb.Bytes()))
	line, ok := findLine(lines, "run committed")
	if !ok {
		t.Fatalf("no \"run committed\" line:\n%s", c.errb)
	}
	for k, want := range map[string]any{"run_id": s.RunID, "channel": "wechatpay", "business_date": "2026-11-28",
		"level": "INFO", "rows": float64(20), "findings": float64(8)} {
		if line[k] != want {
			t.Errorf("%s: got %v, want %v\n%v", k, line[k], want, line)
		}
	}
	stages, _ := line["stages"].(map[string]any)
	for _, name := range []string{"parse", "local_records", "match", "reports", "commit"} {
		if d, ok := stages[name].(float64); !ok || d <= 0 {
			t.Errorf("stages.%s: got %v, want a duration in nanoseconds", name, stages[name])
		}
	}
	if h, ok := line["reports_heap_bytes"].(float64); !ok || h < 0 {
		t.Errorf("reports_heap_bytes: got %v, want the rise of the heap while the reports were made", line["reports_heap_bytes"])
	}
	// Debug lines of the run carry the same attributes.
	read, ok := findLine(lines, "settlement file read")
	if !ok || read["run_id"] != s.RunID || read["channel"] != "wechatpay" || read["business_date"] != "2026-11-28" {
		t.Errorf("debug line: got %v, want run_id %s, channel and business_date", read, s.RunID)
	}

	// At warn, a run that went well logs nothing; the result is on stdout.
	c.run(t, runArgs(dsn, bill, t.TempDir(), "--force", "--log-level", "warn")...)
	if c.errb.Len() != 0 || !strings.Contains(c.out.String(), "20 rows") {
		t.Errorf("at warn: stderr %q, stdout %q; want nothing and the result line", c.errb, c.out)
	}
}

// withPassword returns dsn with a password, which the test server (trust
// authentication on a socket) accepts and ignores.
func withPassword(dsn, pw string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String()
	}
	return dsn + " password=" + pw
}

// TestSecretsNeverAppear: with a database password and a Slack token
// configured, a failing run and a succeeding one (and one whose database
// is unreachable) leave neither in the log, the error, summary.json, the
// workbook or the Slack message.
func TestSecretsNeverAppear(t *testing.T) {
	_, dsn, bill := setup(t)
	const pw = "pw-Zq81-DoNotLeak"
	const token = "xoxb-1234-5678-TokenDoNotLeak"
	fake := slacktest.NewServer(t)
	env := map[string]string{"RECONCILE_DATABASE_URL": withPassword(dsn, pw), "SLACK_BOT_TOKEN": token, "SLACK_CHANNEL": "#recon"}
	c := newCLI(env)
	c.app.SlackOptions = []slack.Option{fake.Option()}
	c.app.IsTerminal = forceTerminal(false)
	args := func(file, out string) []string {
		return []string{"run", "--date", "2026-11-28", "--channel", "wechatpay", "--format", "wechatpay",
			"--tz", "Asia/Shanghai", "--file", file, "--out", out, "--log-level", "debug"}
	}
	good, _ := os.ReadFile(bill)
	badBill := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(badBill, bytes.Replace(good, []byte("`99.00,`0.00,`0,"), []byte("`99.0x,`0.00,`0,"), 1), 0o644)

	places := map[string]string{} // where a secret must not be: what is there
	// Messages the runs before posted.
	seen := 0
	posted := func(name string) {
		if posts := fake.OK(slacktest.PostMessage); len(posts) > seen {
			places[name+": Slack message"] = lastPost(fake)
			seen = len(posts)
		}
	}
	runs := []struct {
		name, file string
		dsn        string // when set, replaces the environment's
		want       int
	}{
		{"failing", badBill, "", ExitFailed},
		{"unreachable", bill, "host=localhost port=1 user=recon password=" + pw + " dbname=recon connect_timeout=2 sslmode=disable", ExitFailed},
		{"succeeding", bill, "", ExitOK},
	}
	for _, r := range runs {
		out := t.TempDir()
		a := args(r.file, out)
		if r.dsn != "" {
			a = append(a, "--dsn", r.dsn)
		}
		if code := c.run(t, a...); code != r.want {
			t.Fatalf("%s run: exit %d, want %d; stderr:\n%s", r.name, code, r.want, c.errb)
		}
		logLines(t, strings.NewReader(strings.TrimSuffix(c.errb.String(), lastLine(c.errb.String())+"\n")))
		places[r.name+": stderr"] = c.errb.String()
		places[r.name+": stdout"] = c.out.String()
		sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatalf("%s run: %v", r.name, err)
		}
		places[r.name+": summary.json"] = string(sum)
		posted(r.name)
		book := filepath.Join(out, "review-wechatpay-2026-11-28.xlsx")
		if r.want == ExitOK {
			places[r.name+": workbook cells"] = workbookCells(t, book)
			places[r.name+": workbook files"] = zipText(t, book)
		}
	}
	// The test would prove nothing if the runs had not got that far.
	for place, want := range map[string]string{
		"failing: stderr":            `"msg":"run failed"`,
		"failing: Slack message":     "failed",
		"unreachable: stderr":        "xxxxx",
		"succeeding: stderr":         `"msg":"run committed"`,
		"succeeding: workbook cells": "ORD202611280007",
		"succeeding: Slack message":  "ORD202611280007",
	} {
		if !strings.Contains(places[place], want) {
			t.Errorf("%s does not contain %q:\n%s", place, want, places[place])
		}
	}
	if !strings.Contains(places["succeeding: stderr"], `"msg":"opening the database"`) {
		t.Errorf("the DSN was never logged (redacted), so the test shows little:\n%s", places["succeeding: stderr"])
	}
	for place, text := range places {
		for _, secret := range []string{pw, token, "TokenDoNotLeak"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the secret %q:\n%s", place, secret, text)
			}
		}
	}
}

// workbookCells returns the value of every cell of every sheet, one a line.
func workbookCells(t *testing.T, path string) string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for _, cell := range row {
				fmt.Fprintln(&b, cell)
			}
		}
	}
	return b.String()
}

// zipText returns every file inside the xlsx, for what is not a cell:
// comments, properties, validation lists.
func zipText(t *testing.T, path string) string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var b strings.Builder
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&b, r)
		r.Close()
	}
	return b.String()
}

// barLine is the progress line: a spinner and the name of a stage.
var barLine = regexp.MustCompile(`\r\S+ (parse|local records|memory|match|still open|commit|alert)\b`)

func TestProgressOnlyOnATerminal(t *testing.T) {
	_, dsn, bill := setup(t)

	t.Run("not a terminal", func(t *testing.T) {
		c := newCLI(nil)
		c.app.IsTerminal = forceTerminal(false)
		if code := c.run(t, runArgs(dsn, bill, t.TempDir(), "--force")...); code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
		}
		if strings.ContainsAny(c.errb.String(), "\r\x1b") || barLine.MatchString(c.errb.String()) {
			t.Errorf("progress output on a stderr that is no terminal:\n%q", c.errb)
		}
		logLines(t, bytes.NewReader(c.errb.Bytes())) // nothing but JSON lines
	})

	t.Run("terminal", func(t *testing.T) {
		c := newCLI(nil)
		c.app.IsTerminal = forceTerminal(true)
		if code := c.run(t, runArgs(dsn, bill, t.TempDir(), "--force")...); code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
		}
		got := c.errb.String()
		if !barLine.MatchString(got) {
			t.Errorf("no progress line naming a stage:\n%q", got)
		}
		// The log is text there, and each line starts on a line of its own.
		if !regexp.MustCompile(`(^|\n|\x1b\[K)time=\S+ level=INFO msg="run committed"`).MatchString(got) {
			t.Errorf("no text log line of the run:\n%q", got)
		}
	})
}

// TestCronLogger: cron's chatter is debug, a skipped tick a warning, a
// recovered panic an error; all of it reaches the job's log.
func TestCronLogger(t *testing.T) {
	tests := []struct {
		name      string
		log       func(cronLogger)
		wantLevel string
		wantMsg   string
	}{
		{"routine", func(c cronLogger) { c.Info("wake", "now", "x") }, "DEBUG", "cron wake"},
		{"skip", func(c cronLogger) { c.Info("skip") }, "WARN", "tick skipped: the previous one is still running"},
		{"panic", func(c cronLogger) { c.Error(errors.New("boom"), "panic", "stack", "...") }, "ERROR", "cron panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.log(cronLogger{(&App{}).loggerTo(&b, false, &logLevel{slog.LevelDebug})})
			lines := logLines(t, &b)
			if len(lines) != 1 || lines[0]["level"] != tt.wantLevel || lines[0]["msg"] != tt.wantMsg {
				t.Fatalf("got %v, want one %s line %q", lines, tt.wantLevel, tt.wantMsg)
			}
			if tt.name == "panic" && lines[0]["error"] != "boom" {
				t.Errorf("error: got %v, want boom", lines[0]["error"])
			}
		})
	}
}
