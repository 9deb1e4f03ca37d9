package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reconcile/config"
	"reconcile/fetch/stripe/stripetest"
	"reconcile/fetch/wechatpay/wechatpaytest"
	"reconcile/fixtures"
	"reconcile/ledger"
	"reconcile/nightly"
)

// TestScheduleFetchesAndReconciles: a scheduler tick fetches two
// channels' files from servers that speak their APIs (WeChat Pay's signed
// v3 trade bill, Stripe's Reporting API), reconciles them and alerts; the
// next tick downloads nothing and reconciles nothing again; a bill the
// channel corrected is fetched on the tick after and its run supersedes
// the first.
func TestScheduleFetchesAndReconciles(t *testing.T) {
	wx := wechatpaytest.NewServer(t)
	st := stripetest.NewServer(t)
	wechat, _ := fixtures.Lookup("wechatpay")
	stripe, _ := fixtures.Lookup("stripe")
	db, dsn := dbWith(t, wechat.LocalSQL()+"\n"+stripe.LocalSQL())
	wx.SetBill("2026-11-28", wechat.Bill())
	st.SetReport("2026-11-28", stripe.Bill())

	// 13:00 UTC on the 29th: past 10:00 in Shanghai (WeChat Pay's bill of
	// the 28th) and past noon UTC (Stripe's).
	now := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	e := newFetchSchedule(t, wx, st, st.Key, dsn, 1, &now)
	s, c, inbox := e.sched, e.cli, e.inbox
	runs := func() (succeeded, superseded int) {
		t.Helper()
		err := db.Pool().QueryRow(context.Background(), `
SELECT count(*) FILTER (WHERE status = 'SUCCEEDED' AND superseded_by IS NULL),
       count(*) FILTER (WHERE superseded_by IS NOT NULL) FROM runs`).Scan(&succeeded, &superseded)
		if err != nil {
			t.Fatal(err)
		}
		return succeeded, superseded
	}
	wxBill := filepath.Join(inbox, "20261128_ALL.csv")
	stBill := filepath.Join(inbox, "balance_2026-11-28.csv")

	// First tick: both fetched, both reconciled, both alerted.
	s.Tick(context.Background())
	for path, want := range map[string][]byte{wxBill: wechat.Bill(), stBill: stripe.Bill()} {
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (%v), want the channel's %d", path, len(got), err, len(want))
		}
	}
	if ok, sup := runs(); ok != 2 || sup != 0 {
		t.Fatalf("first tick: %d current runs, %d superseded; want 2, 0\n%s", ok, sup, e.log.String())
	}
	alerts := c.out.String()
	for _, want := range []string{"Reconciliation wechatpay 2026-11-28", "Reconciliation stripe 2026-11-28"} {
		if !strings.Contains(alerts, want) {
			t.Errorf("first tick: no alert %q in\n%s", want, alerts)
		}
	}
	if wx.Calls("tradebill") != 1 || wx.Calls("download") != 1 || st.Calls("create") != 1 || st.Calls("download") != 1 {
		t.Errorf("first tick calls: wechatpay %d tradebill %d download, stripe %d create %d download; want 1 each",
			wx.Calls("tradebill"), wx.Calls("download"), st.Calls("create"), st.Calls("download"))
	}

	// Second tick, an hour on: WeChat Pay is asked for the bill's hash, which
	// has not changed, so nothing is downloaded; Stripe's file is there, so
	// Stripe is not asked; nothing is reconciled or alerted again.
	now = now.Add(time.Hour)
	c.out.Reset()
	s.Tick(context.Background())
	if ok, sup := runs(); ok != 2 || sup != 0 {
		t.Errorf("second tick: %d current runs, %d superseded; want 2, 0", ok, sup)
	}
	if strings.Contains(c.out.String(), "Reconciliation") {
		t.Errorf("second tick alerted again:\n%s", c.out.String())
	}
	if wx.Calls("tradebill") != 2 || wx.Calls("download") != 1 || st.Calls("create") != 1 {
		t.Errorf("second tick calls: wechatpay %d tradebill %d download, stripe %d create; want 2, 1, 1",
			wx.Calls("tradebill"), wx.Calls("download"), st.Calls("create"))
	}

	// WeChat Pay corrects its bill: the next tick downloads it, puts it in
	// place, and its run supersedes the first.
	corrected := bytes.Replace(wechat.Bill(), []byte("oFAKEopenid00000000000000013"), []byte("oFAKEopenid00000000000000099"), 1)
	if bytes.Equal(corrected, wechat.Bill()) {
		t.Fatal("the correction changed nothing")
	}
	wx.SetBill("2026-11-28", corrected)
	now = now.Add(time.Hour)
	c.out.Reset()
	s.Tick(context.Background())
	if got, _ := os.ReadFile(wxBill); !bytes.Equal(got, corrected) {
		t.Error("third tick: the corrected bill is not in place")
	}
	if ok, sup := runs(); ok != 2 || sup != 1 {
		t.Errorf("third tick: %d current runs, %d superseded; want 2, 1\n%s", ok, sup, e.log.String())
	}
	if !strings.Contains(c.out.String(), "Reconciliation wechatpay 2026-11-28") || strings.Contains(c.out.String(), "Reconciliation stripe") {
		t.Errorf("third tick: want the corrected bill's alert alone, got\n%s", c.out.String())
	}
	if wx.Calls("download") != 2 {
		t.Errorf("third tick: %d downloads of the bill in all, want 2", wx.Calls("download"))
	}
	for _, line := range logLines(t, &e.log) {
		for _, v := range line {
			if s, ok := v.(string); ok && (strings.Contains(s, st.Key) || strings.Contains(s, "PRIVATE KEY")) {
				t.Errorf("a secret reached the log: %v", line)
			}
		}
	}
	t.Logf("figures: 2 channels fetched and reconciled in one tick; next tick 1 hash asked, 0 downloads, 0 runs; a corrected bill fetched and superseding on the tick after")
}

// TestScheduleFetchAnswers: what a channel answers besides a file. A date
// WeChat Pay has no bill for is alerted once and never overdue; a bill not
// generated yet is asked for again and, past the deadline, overdue once;
// a Stripe key the channel refuses is alerted once, not every tick.
func TestScheduleFetchAnswers(t *testing.T) {
	wx := wechatpaytest.NewServer(t)
	st := stripetest.NewServer(t)
	_, dsn := dbWith(t, "")
	wx.SetAnswer("2026-11-27", "NO_STATEMENT_EXIST")
	wx.SetAnswer("2026-11-28", "STATEMENT_CREATING")
	now := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC) // past the 28th's WeChat deadline (14:00 in Shanghai)
	e := newFetchSchedule(t, wx, st, stripetest.ExpiredKey, dsn, 2, &now)
	s, c, inbox := e.sched, e.cli, e.inbox
	var all string
	for range 2 {
		c.out.Reset()
		s.Tick(context.Background())
		all += c.out.String()
		now = now.Add(time.Hour)
	}
	count := func(s string) int { return strings.Count(all, s) }
	if n := count("No bill from wechatpay for 2026-11-27"); n != 1 {
		t.Errorf("no-bill alerts: %d, want 1\n%s", n, all)
	}
	if n := count("Fetch of stripe 2026-11-27 refused"); n != 1 {
		t.Errorf("refused alerts of stripe: %d, want 1\n%s", n, all)
	}
	if n := st.Calls("report_types"); strings.Contains(all, "Fetch of stripe 2026-11-28") || n != 2 {
		t.Errorf("a refusal ends the channel's tick: Stripe asked %d times (want 2: once a tick), alerts:\n%s", n, all)
	}
	if n := count("Settlement file wechatpay 2026-11-28 overdue"); n != 1 {
		t.Errorf("overdue alerts of the bill not generated: %d, want 1\n%s", n, all)
	}
	if strings.Contains(all, "wechatpay 2026-11-27 overdue") {
		t.Errorf("a date without a bill was alerted overdue:\n%s", all)
	}
	if strings.Contains(all, stripetest.ExpiredKey) {
		t.Errorf("the refused key is in an alert:\n%s", all)
	}
	if ents, _ := os.ReadDir(inbox); len(ents) != 0 {
		t.Errorf("the inbox holds %d files, want none", len(ents))
	}
	if n := wx.Calls("tradebill"); n != 4 {
		t.Errorf("WeChat Pay asked %d times, want 4 (two dates, two ticks)", n)
	}
}

// fetchSchedule is a scheduler fetching from a fake WeChat Pay and a fake
// Stripe, as `reconcile schedule` builds it from its config, at the time
// *now says.
type fetchSchedule struct {
	sched *nightly.Scheduler
	cli   *cli
	log   bytes.Buffer
	inbox string
	cfg   string // the config file's path
}

func newFetchSchedule(t *testing.T, wx *wechatpaytest.Server, st *stripetest.Server, stripeKey, dsn string, lookback int, now *time.Time) *fetchSchedule {
	t.Helper()
	dir := t.TempDir()
	e := &fetchSchedule{inbox: filepath.Join(dir, "inbox")}
	keyFile := writeFile(t, filepath.Join(dir, "apiclient_key.pem"), wx.MerchantKeyPEM())
	pubFile := writeFile(t, filepath.Join(dir, "pub_key.pem"), wx.PublicKeyPEM())
	e.cfg = writeConfig(t, map[string]any{
		"out_dir":  filepath.Join(dir, "out"),
		"schedule": map[string]any{"spec": "0 * * * *", "lookback_days": lookback},
		"channels": []map[string]any{
			{"name": "wechatpay", "format": "wechatpay", "path": filepath.Join(e.inbox, "{yyyymmdd}_ALL.csv"),
				"fetch": map[string]any{"wechatpay": map[string]any{
					"mchid": wx.MchID, "serial_no": wx.SerialNo, "base_url": wx.URL,
					"private_key":   map[string]any{"file": keyFile},
					"public_key_id": wx.PublicKeyID, "public_key": map[string]any{"file": pubFile}}}},
			{"name": "stripe", "format": "stripe", "time_zone": "UTC", "path": filepath.Join(e.inbox, "balance_{date}.csv"),
				"fetch": map[string]any{"stripe": map[string]any{
					"api_key": map[string]any{"env": "STRIPE_API_KEY"}, "api_url": st.URL, "files_url": st.URL}}},
		},
	})
	e.cli = newCLI(map[string]string{"STRIPE_API_KEY": stripeKey})
	e.cli.app.Now = func() time.Time { return *now }
	wx.Set(func(s *wechatpaytest.State) { s.Now = e.cli.app.Now }) // its signatures are of the test's time
	e.cli.app.HTTPClient = wx.Client()                             // both servers present httptest's certificate
	e.cli.app.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	cfg, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ldb, err := ledger.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ldb.Close)
	if e.sched, err = e.cli.app.newScheduler(cfg, ldb, e.cli.app.loggerTo(&e.log, false, nil)); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFetchCommand: `reconcile fetch` says where it put the file, leaves a
// file there alone, and with --force asks again without downloading an
// unchanged bill; a channel that is not ready is no failure, a refused
// one is (exit 1), and so is a file the job refuses (bad_file: the parser
// does not read what the channel handed out), and the output never shows
// the key.
func TestFetchCommand(t *testing.T) {
	wx := wechatpaytest.NewServer(t)
	st := stripetest.NewServer(t)
	wechat, _ := fixtures.Lookup("wechatpay")
	wx.SetBill("2026-11-28", wechat.Bill())
	wx.SetBill("2026-11-26", []byte("<html>Service unavailable</html>\n"))
	_, dsn := dbWith(t, "")
	now := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	e := newFetchSchedule(t, wx, st, stripetest.ExpiredKey, dsn, 1, &now)
	bill := filepath.Join(e.inbox, "20261128_ALL.csv")
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--channel", "wechatpay"}, ExitOK, "wechatpay 2026-11-28: fetched into " + bill + " (" + strconv.Itoa(len(wechat.Bill())) + " bytes)"},
		{[]string{"--channel", "wechatpay"}, ExitOK, "wechatpay 2026-11-28: already there, unchanged: " + bill},
		{[]string{"--channel", "wechatpay", "--force"}, ExitOK, "wechatpay 2026-11-28: already there, unchanged: " + bill},
		{[]string{"--channel", "wechatpay", "--date", "2026-11-27"}, ExitOK, "wechatpay 2026-11-27: the channel has no bill for this date"},
		{[]string{"--channel", "stripe"}, ExitFailed, "stripe 2026-11-28: not fetched: "},
		{[]string{"--channel", "wechatpay", "--date", "2026-11-26"}, ExitFailed, "wechatpay 2026-11-26: not fetched: "},
	}
	for _, step := range steps {
		args := append([]string{"fetch", "--config", e.cfg}, step.args...)
		if !slices.Contains(args, "--date") {
			args = append(args, "--date", "2026-11-28")
		}
		code := e.cli.run(t, args...)
		out := e.cli.out.String() + e.cli.errb.String()
		if code != step.code || !strings.Contains(out, step.want) {
			t.Errorf("%v: exit %d, output:\n%s\nwant exit %d and %q", step.args, code, out, step.code, step.want)
		}
		if strings.Contains(out, stripetest.ExpiredKey) {
			t.Errorf("%v: the key is in the output:\n%s", step.args, out)
		}
	}
	if got, want := wx.Calls("download"), 2; got != want {
		t.Errorf("downloads: %d, want %d (--force asks for the hash, and the bill had not changed; then the refused one)", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.inbox, "20261126_ALL.csv")); !os.IsNotExist(err) {
		t.Errorf("the refused file: got %v, want nothing written", err)
	}
}
