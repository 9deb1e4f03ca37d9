package nightly_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/config"
	"reconcile/fetch"
	"reconcile/fixtures"
	"reconcile/ledger/ledgertest"
	"reconcile/nightly"
	"reconcile/reports"
)

// canned is a channel that answers from a map: a file per date, or an
// error.
type canned struct {
	files  map[string][]byte
	errs   map[string]error
	offers int
}

func (c *canned) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	c.offers++
	if err := c.errs[day.String()]; err != nil {
		return nil, err
	}
	b, ok := c.files[day.String()]
	if !ok {
		return nil, fetch.ErrNotReady
	}
	return &fetch.Offer{Name: "bill " + day.String(), Size: int64(len(b)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}, nil
}

func (c *canned) Batch(ctx context.Context, n int64) (*fetch.Offer, error) {
	b, ok := c.files[itoa(n)]
	if !ok {
		return nil, fetch.ErrNotReady
	}
	return &fetch.Offer{Name: "batch " + itoa(n), Size: -1,
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

const canonicalBill = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
	"payment,T1,,C1,10.00,CNY,2026-11-28T10:00:00+08:00\n"

func day(t *testing.T, date string, loc *time.Location) reconcile.BusinessDay {
	t.Helper()
	d, err := reconcile.NewBusinessDay(date, loc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFetchOne: a file per date lands under the path template, is left
// alone when there, replaced when the channel corrected it, and every
// other answer writes nothing and is named.
func TestFetchOne(t *testing.T) {
	ctx := context.Background()
	loc, _ := time.LoadLocation("Asia/Shanghai")
	dir := t.TempDir()
	ch := config.Channel{Name: "shop", Format: "csv", TimeZone: "Asia/Shanghai",
		Path: filepath.Join(dir, "shop_{yyyymmdd}.csv"), Fetch: &config.Fetch{}}
	src := &canned{files: map[string][]byte{"2026-11-28": []byte(canonicalBill)}, errs: map[string]error{
		"2026-11-25": fetch.ErrNoBill,
		"2026-11-26": &fetch.Refusal{Status: 401, Code: "SIGN_ERROR"},
		"2026-11-23": errors.New("tradebill: gave up after 5 attempts; last error: HTTP 503"),
	}}
	f := &nightly.Fetcher{Sources: map[string]fetch.Source{"shop": src}}
	d28 := day(t, "2026-11-28", loc)
	got := f.Fetch(ctx, ch, d28, false)
	if got.Result != "saved" || got.Bytes != int64(len(canonicalBill)) || got.Err != nil {
		t.Fatalf("first fetch: got %+v, want saved", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "shop_20261128.csv")); string(b) != canonicalBill {
		t.Errorf("file in place: %q", b)
	}
	if got := f.Fetch(ctx, ch, d28, false); got.Result != "unchanged" || src.offers != 1 {
		t.Errorf("file there, no force: got %s after %d offers; want unchanged, the channel not asked", got.Result, src.offers)
	}
	if got := f.Fetch(ctx, ch, d28, true); got.Result != "unchanged" || src.offers != 2 {
		t.Errorf("force, same bytes: got %s after %d offers; want unchanged after 2", got.Result, src.offers)
	}
	corrected := canonicalBill + "payment,T2,,C2,5.00,CNY,2026-11-28T11:00:00+08:00\n"
	src.files["2026-11-28"] = []byte(corrected)
	if got := f.Fetch(ctx, ch, d28, true); got.Result != "saved" {
		t.Errorf("force, corrected: got %+v, want saved", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "shop_20261128.csv")); string(b) != corrected {
		t.Errorf("corrected file not in place: %q", b)
	}

	src.files["2026-11-24"] = []byte(`{"code":"SYSTEM_ERROR","message":"try later"}`)
	for date, want := range map[string]string{"2026-11-27": "not_ready", "2026-11-25": "no_bill", "2026-11-26": "refused",
		"2026-11-24": "bad_file", "2026-11-23": "failed"} {
		got := f.Fetch(ctx, ch, day(t, date, loc), false)
		if got.Result != want {
			t.Errorf("%s: got %s (%v), want %s", date, got.Result, got.Err, want)
		}
		if _, err := os.Stat(got.Path); err == nil {
			t.Errorf("%s: %s written", date, got.Path)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("inbox holds %d files, want the bill and the one it replaced: %v", len(ents), ents)
	}

	// A download killed a day ago left its temporary: the next fetch of a
	// file already there, which writes nothing, removes it.
	stale := filepath.Join(dir, ".shop_20261128.csv.tmp-42")
	if err := os.WriteFile(stale, []byte("half"), 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-25 * time.Hour)
	os.Chtimes(stale, old, old)
	if got := f.Fetch(ctx, ch, d28, false); got.Result != "unchanged" {
		t.Errorf("file there: got %+v, want unchanged", got)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a crash's stale temporary: %v, want it removed", err)
	}
}

// adyenBatch is the demo's batch 412 moved by days and renumbered.
func adyenBatch(t *testing.T, n int64, days int) []byte {
	t.Helper()
	ch, _ := fixtures.Lookup("adyen")
	s := string(ch.Bill())
	for _, d := range []string{"2026-11-29", "2026-11-28", "2026-11-27"} {
		moved, _ := time.Parse(time.DateOnly, d)
		s = strings.ReplaceAll(s, d+" ", moved.AddDate(0, 0, days).Format(time.DateOnly)+"\x00")
	}
	s = strings.ReplaceAll(s, "\x00", " ")
	return []byte(strings.ReplaceAll(s, "412", itoa(n)))
}

// TestFetchBatches: Adyen's batches are fetched after the last one, each
// filed under the date of its latest payment or refund (not its payout,
// booked after midnight); the next fetch asks only for newer ones; a
// second batch of a date already holding one is refused, not merged.
func TestFetchBatches(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	dir := t.TempDir()
	ch := config.Channel{Name: "adyen", Format: "adyen", TimeZone: "Europe/Amsterdam",
		Path: filepath.Join(dir, "settlement_detail_report_{date}.csv"), Fetch: &config.Fetch{}}
	src := &canned{files: map[string][]byte{"412": adyenBatch(t, 412, 0), "413": adyenBatch(t, 413, 1)}}
	f := &nightly.Fetcher{Batches: map[string]nightly.Batches{"adyen": {Account: "AcmeShopECOM", First: 412, Source: src}}, DB: db, Now: fetchNow}

	got := f.Fetch(ctx, ch, day(t, "2026-11-28", loc), false)
	if got.Result != "saved" || len(got.Batches) != 2 {
		t.Fatalf("got %+v, want two batches filed, one of them 2026-11-28's", got)
	}
	for i, want := range []string{"2026-11-28", "2026-11-29"} {
		if b := got.Batches[i]; b.Day.String() != want || b.Path != filepath.Join(dir, "settlement_detail_report_"+want+".csv") {
			t.Errorf("batch %d filed under %s as %s, want %s", b.Number, b.Day, b.Path, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "settlement_detail_report_2026-11-29.csv")); !bytes.Equal(b, src.files["413"]) {
		t.Error("batch 413 is not the file of 2026-11-29")
	}
	if last, _ := db.LastBatch(ctx, "adyen", "AcmeShopECOM"); last != 413 {
		t.Errorf("last batch remembered: %d, want 413", last)
	}

	again := f.Fetch(ctx, ch, day(t, "2026-11-29", loc), false)
	if again.Result != "unchanged" || len(again.Batches) != 0 {
		t.Errorf("next fetch: got %+v, want nothing new", again)
	}

	src.files["414"] = adyenBatch(t, 414, 1) // closes on 2026-11-29 too
	src.files["415"] = adyenBatch(t, 415, 2)
	conflict := f.Fetch(ctx, ch, day(t, "2026-11-30", loc), false)
	if conflict.Result != "refused" || conflict.Err == nil || !strings.Contains(conflict.Err.Error(), "already holds batch 413") {
		t.Errorf("a second batch of a date: got %+v, want refused naming batch 413", conflict)
	}
	if len(conflict.Batches) != 1 || conflict.Batches[0].Number != 415 {
		t.Errorf("after the held batch: filed %+v, want 415 (the queue goes on)", conflict.Batches)
	}
	if last, _ := db.LastBatch(ctx, "adyen", "AcmeShopECOM"); last != 415 {
		t.Errorf("last batch remembered: %d, want 415", last)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "settlement_detail_report_2026-11-29.csv")); !bytes.Equal(b, src.files["413"]) {
		t.Error("batch 414 overwrote batch 413's file")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "settlement_detail_report_2026-11-29.csv.batch-414")); !bytes.Equal(b, src.files["414"]) {
		t.Error("batch 414 is not kept aside")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("inbox holds %d files, want the three reports and the one kept aside, no staging file: %v", len(ents), ents)
	}

	// A stale staging file of a crashed fetch changes nothing: 416 is
	// filed under its own date, not under a date the staging file implies.
	stale := filepath.Join(dir, ".adyen-batch-416.tmp-1234567")
	src.files["416"] = adyenBatch(t, 416, 3)
	if err := os.WriteFile(stale, src.files["416"], 0o640); err != nil {
		t.Fatal(err)
	}
	next := f.Fetch(ctx, ch, day(t, "2026-12-01", loc), false)
	if next.Result != "saved" || len(next.Batches) != 1 || next.Batches[0].Day.String() != "2026-12-01" {
		t.Errorf("after a crash's leftover: got %+v, want batch 416 filed under 2026-12-01", next)
	}
}

// adyenSetup is an Adyen channel filing into a directory of its own, the
// batches of src, and a fresh database remembering them.
func adyenSetup(t *testing.T, src *canned) (config.Channel, *nightly.Fetcher, string, *time.Location) {
	t.Helper()
	db, _ := ledgertest.DB(t)
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	dir := t.TempDir()
	ch := config.Channel{Name: "adyen", Format: "adyen", TimeZone: "Europe/Amsterdam",
		Path: filepath.Join(dir, "settlement_detail_report_{date}.csv"), Fetch: &config.Fetch{}}
	f := &nightly.Fetcher{Batches: map[string]nightly.Batches{"adyen": {Account: "AcmeShopECOM", First: 412, Source: src}}, DB: db, Now: fetchNow}
	return ch, f, dir, loc
}

// fetchNow is the fetches' clock: the tick after the batches of the
// tests have closed.
func fetchNow() time.Time { return time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC) }

// TestFetchBatchForceKeepsReplaced: --force on a date whose batch Adyen
// changed replaces the date's file and keeps the old one beside it as
// NAME.superseded-<sha12>, as every replaced file is kept.
func TestFetchBatchForceKeepsReplaced(t *testing.T) {
	ctx := context.Background()
	src := &canned{files: map[string][]byte{"412": adyenBatch(t, 412, 0)}}
	ch, f, dir, loc := adyenSetup(t, src)
	d28 := day(t, "2026-11-28", loc)
	if got := f.Fetch(ctx, ch, d28, false); got.Result != "saved" {
		t.Fatalf("first fetch: got %+v, want saved", got)
	}
	path := filepath.Join(dir, "settlement_detail_report_2026-11-28.csv")
	first := src.files["412"]
	changed := bytes.Replace(first, []byte("Transaction Fees November  28 2026"), []byte("Transaction Fees November 28 2026"), 1)
	if bytes.Equal(changed, first) {
		t.Fatal("the change changed nothing")
	}
	src.files["412"] = changed
	if got := f.Fetch(ctx, ch, d28, true); got.Result != "saved" || got.Err != nil {
		t.Fatalf("--force, batch changed: got %+v, want saved", got)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, changed) {
		t.Error("the changed batch is not the date's file")
	}
	sum := sha256.Sum256(first)
	kept := path + ".superseded-" + hex.EncodeToString(sum[:])[:12]
	if b, err := os.ReadFile(kept); err != nil || !bytes.Equal(b, first) {
		t.Errorf("%s: %v; want the replaced batch kept there", kept, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("inbox holds %v, want the date's file and the one it replaced", ents)
	}
}

// TestFetchBatchOverUnknownFile: a file at a date's path that no fetched
// batch was filed as (put there by hand, or before the fetch block) is
// not overwritten by a batch of that date: the batch is held aside beside
// it and the fetch is refused naming both; --force then replaces the file,
// keeping it beside the batch as NAME.superseded-<sha12>.
func TestFetchBatchOverUnknownFile(t *testing.T) {
	ctx := context.Background()
	src := &canned{files: map[string][]byte{"412": adyenBatch(t, 412, 0)}}
	ch, f, dir, loc := adyenSetup(t, src)
	path := filepath.Join(dir, "settlement_detail_report_2026-11-28.csv")
	byHand := []byte("Company Account,Merchant Account\nput here by hand\n")
	if err := os.WriteFile(path, byHand, 0o640); err != nil {
		t.Fatal(err)
	}
	d28 := day(t, "2026-11-28", loc)
	got := f.Fetch(ctx, ch, d28, false)
	if b, _ := os.ReadFile(path); !bytes.Equal(b, byHand) {
		t.Fatalf("the file put there by hand was overwritten (fetch: %+v)", got)
	}
	aside := path + ".batch-412"
	if b, _ := os.ReadFile(aside); !bytes.Equal(b, src.files["412"]) {
		t.Errorf("batch 412 is not kept aside as %s", aside)
	}
	if got.Result != "refused" || got.Err == nil || !strings.Contains(got.Err.Error(), path) || len(got.Batches) != 0 {
		t.Errorf("fetch: got %+v, want refused naming %s, nothing filed", got, path)
	}
	if last, _ := f.DB.LastBatch(ctx, "adyen", "AcmeShopECOM"); last != 412 {
		t.Errorf("last batch remembered: %d, want 412 (held)", last)
	}

	forced := f.Fetch(ctx, ch, d28, true)
	if forced.Result != "saved" {
		t.Fatalf("--force: got %+v, want the batch filed", forced)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, src.files["412"]) {
		t.Error("--force: batch 412 is not the date's file")
	}
	sum := sha256.Sum256(byHand)
	if b, _ := os.ReadFile(path + ".superseded-" + hex.EncodeToString(sum[:])[:12]); !bytes.Equal(b, byHand) {
		t.Error("--force: the file put there by hand is not kept")
	}
}

// TestFetchBatchOutsideRowWindow: a batch whose latest refund is dated
// 2099 is not filed under 2099-11-10: its date is outside the channel's
// row window from today, so it is held aside apart from every date's file,
// remembered as held (the next batches go on) and the fetch refused naming
// its line; no date's file appears for it.
func TestFetchBatchOutsideRowWindow(t *testing.T) {
	ctx := context.Background()
	bad := bytes.Replace(adyenBatch(t, 412, 0), []byte("2026-11-28 10:06:30"), []byte("2099-11-10 10:06:30"), 1)
	src := &canned{files: map[string][]byte{"412": bad, "413": adyenBatch(t, 413, 1)}}
	ch, f, dir, loc := adyenSetup(t, src)
	got := f.Fetch(ctx, ch, day(t, "2026-11-29", loc), false)
	if got.Result != "refused" || got.Err == nil || !strings.Contains(got.Err.Error(), "2099-11-10") || !strings.Contains(got.Err.Error(), "row_window") {
		t.Errorf("fetch: got %+v, want refused naming the 2099 row and the row window", got)
	}
	if len(got.Batches) != 1 || got.Batches[0].Number != 413 || got.Batches[0].Day.String() != "2026-11-29" {
		t.Errorf("filed: %+v, want batch 413 alone, under 2026-11-29", got.Batches)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*2099*"))
	if len(matches) != 0 {
		t.Errorf("files of 2099: %v, want none", matches)
	}
	held := filepath.Join(dir, "adyen.batch-412.outside-row-window.csv")
	if b, _ := os.ReadFile(held); !bytes.Equal(b, bad) {
		t.Errorf("batch 412 is not held aside as %s", held)
	}
	if filed, _ := f.DB.BatchesOn(ctx, "adyen", "AcmeShopECOM", day(t, "2099-11-10", loc)); len(filed) != 1 || !filed[0].Held {
		t.Errorf("remembered under 2099-11-10: %+v, want batch 412 held, not filed", filed)
	}
	if last, _ := f.DB.LastBatch(ctx, "adyen", "AcmeShopECOM"); last != 413 {
		t.Errorf("last batch remembered: %d, want 413", last)
	}
	if len(got.Held) != 1 || got.Held[0].Number != 412 || got.Held[0].Path != held || !got.Held[0].Alert {
		t.Errorf("held: %+v, want batch 412 kept as %s, to alert", got.Held, held)
	}
	if again := f.Fetch(ctx, ch, day(t, "2026-11-29", loc), false); again.Result != "unchanged" || again.Err != nil {
		t.Errorf("next fetch: got %+v, want nothing new and no second refusal", again)
	}

	// A batch of today with a row of 1999 would stop the run of its date:
	// held aside too, naming the row.
	src.files["414"] = bytes.Replace(adyenBatch(t, 414, 2), []byte("2026-11-29 09:14:22"), []byte("1999-11-29 09:14:22"), 1)
	old := f.Fetch(ctx, ch, day(t, "2026-11-30", loc), false)
	if old.Result != "refused" || len(old.Held) != 1 || old.Held[0].Number != 414 || !strings.Contains(old.Err.Error(), "batch 414:2: row time 1999-11-29") {
		t.Errorf("a row of 1999: got %+v, want batch 414 held, naming its line 2", old)
	}
	if _, err := os.Stat(filepath.Join(dir, "settlement_detail_report_2026-11-30.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a row of 1999: the date's file: %v, want none", err)
	}
}

// TestScheduleAlertsEachHeldBatch: each batch held aside is alerted once,
// on its own: two held by one tick are two alerts, one held by a later
// tick of the same day is alerted too, and a tick that holds nothing new
// alerts nothing.
func TestScheduleAlertsEachHeldBatch(t *testing.T) {
	ctx := context.Background()
	future := bytes.Replace(adyenBatch(t, 413, 0), []byte("2026-11-28 10:06:30"), []byte("2099-11-10 10:06:30"), 1)
	src := &canned{files: map[string][]byte{"412": adyenBatch(t, 412, 0), "413": future, "414": adyenBatch(t, 414, 0)}}
	ch, f, _, _ := adyenSetup(t, src)
	ch.Fetch = &config.Fetch{Adyen: &config.AdyenFetch{MerchantAccount: "AcmeShopECOM", FirstBatch: 412}}
	cfg := config.Default()
	cfg.OutDir = t.TempDir()
	cfg.Schedule.LookbackDays = 1
	cfg.Channels = []config.Channel{ch}
	now := fetchNow()
	f.Now = func() time.Time { return now }
	var out bytes.Buffer
	s := &nightly.Scheduler{Config: cfg, Now: f.Now, Fetcher: f,
		Job: &nightly.Job{DB: f.DB, Notifier: reports.NewPrintNotifier(&out), Config: cfg, Now: f.Now}}
	alerts := func() (n int, text string) {
		text = out.String()
		out.Reset()
		return strings.Count(text, " of adyen held aside"), text
	}

	s.Tick(ctx)
	if n, text := alerts(); n != 2 || !strings.Contains(text, "Batch 413 of adyen held aside") || !strings.Contains(text, "Batch 414 of adyen held aside") {
		t.Errorf("first tick: %d alerts, want 2, one for batch 413 (dated 2099) and one for 414 (a second batch of 2026-11-28):\n%s", n, text)
	}
	src.files["415"] = adyenBatch(t, 415, 0)
	now = now.Add(time.Hour)
	s.Tick(ctx)
	if n, text := alerts(); n != 1 || !strings.Contains(text, "Batch 415 of adyen held aside") {
		t.Errorf("second tick, the same day: %d alerts, want 1 for batch 415:\n%s", n, text)
	}
	now = now.Add(time.Hour)
	s.Tick(ctx)
	if n, text := alerts(); n != 0 {
		t.Errorf("third tick, nothing new: %d alerts, want none:\n%s", n, text)
	}
}

// TestScheduleRemovesStaleTemporaries: with {date} in the directory of a
// channel's path, a download killed in a date's directory leaves its
// temporary where no later write goes once the file is there; a tick
// removes it from every date of the window it looks at, once stale.
func TestScheduleRemovesStaleTemporaries(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	dir := t.TempDir()
	ch := config.Channel{Name: "shop", Format: "csv", TimeZone: "Asia/Shanghai",
		Path: filepath.Join(dir, "{date}", "shop.csv"), Fetch: &config.Fetch{Stripe: &config.StripeFetch{}}}
	day27 := filepath.Join(dir, "2026-11-27")
	if err := os.MkdirAll(day27, 0o750); err != nil {
		t.Fatal(err)
	}
	bill := strings.ReplaceAll(canonicalBill, "2026-11-28", "2026-11-27")
	if err := os.WriteFile(filepath.Join(day27, "shop.csv"), []byte(bill), 0o640); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(day27, ".shop.csv.tmp-3879461201"), filepath.Join(day27, ".shop.csv.tmp-17")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("half a download"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-25 * time.Hour)
	os.Chtimes(stale, old, old)
	cfg := config.Default()
	cfg.OutDir = t.TempDir()
	cfg.Schedule.LookbackDays = 2
	cfg.Channels = []config.Channel{ch}
	now := func() time.Time { return time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC) }
	src := &canned{files: map[string][]byte{}}
	var out bytes.Buffer
	s := &nightly.Scheduler{Config: cfg, Now: now, Fetcher: &nightly.Fetcher{Sources: map[string]fetch.Source{"shop": src}, Now: now},
		Job: &nightly.Job{DB: db, Notifier: reports.NewPrintNotifier(&out), Config: cfg, Now: now}}
	s.Tick(ctx)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale temporary in %s: %v, want it removed", day27, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary being written now: %v, want it left", err)
	}
}
