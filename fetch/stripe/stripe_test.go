package stripe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/fetch"
	"reconcile/fetch/stripe/stripetest"
	"reconcile/retry"
)

var newYork = mustZone("America/New_York")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// dstDay is the day New York leaves daylight saving time: 25 hours,
// from 04:00Z to 05:00Z the next day.
var (
	dstDay   = reconcile.BusinessDay{Date: time.Date(2026, 11, 1, 0, 0, 0, 0, newYork), Location: newYork}
	dstStart = time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC).Unix()
	dstEnd   = time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC).Unix()
)

// rig is a Source wired to a fake Stripe that has the report of dstDay,
// with a clock that only the waits move, and the waits recorded.
type rig struct {
	s    *stripetest.Server
	src  *Source
	file []byte // the report of dstDay, with the columns src asks for

	mu         sync.Mutex
	now        time.Time
	polls      []time.Duration // the waits between looks at a run
	retryWaits []time.Duration // the retry policy's waits
}

func newRig(t *testing.T, change func(cfg *Config)) *rig {
	t.Helper()
	s := stripetest.NewServer(t)
	s.SetAvailableEnd(time.Unix(dstEnd+3600, 0))
	r := &rig{s: s, now: time.Date(2026, 11, 2, 17, 0, 0, 0, time.UTC)}
	cfg := Config{
		APIKey:   goodKey,
		Location: newYork,
		APIURL:   s.URL,
		FilesURL: s.URL,
		Client: &fetch.Client{HTTP: s.Client(), Retry: retry.Policy{Sleep: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.retryWaits = append(r.retryWaits, d)
			return nil
		}}},
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.polls = append(r.polls, d)
			r.now = r.now.Add(d)
			return nil
		},
		Now: func() time.Time {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.now
		},
	}
	if change != nil {
		change(&cfg)
	}
	src, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.src = src
	r.file = reportCSV(src.columns)
	s.SetReport(dstDay.String(), r.file)
	return r
}

func (r *rig) waits() (polls, retries []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.polls), slices.Clone(r.retryWaits)
}

func TestOfferDownloadsTheDaysReport(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       func(*Config)
		day       reconcile.BusinessDay
		loc       *time.Location
		orderKey  string
		refundKey string
		start     int64
		end       int64
		timezone  string
		columns   []string
	}{
		{
			name: "activity report in New York, day given in UTC",
			cfg:  func(*Config) {},
			// The channel's zone decides the interval, not the day's.
			day: reconcile.BusinessDay{Date: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Location: time.UTC},
			loc: newYork, start: dstStart, end: dstEnd, timezone: "America/New_York",
			columns: []string{"balance_transaction_id", "created_utc", "currency", "gross", "fee", "net",
				"reporting_category", "source_id", "payment_metadata[order_id]", "refund_metadata[merchant_refund_id]"},
		},
		{
			name: "payout report in UTC with the channel's own metadata keys",
			cfg: func(c *Config) {
				c.ReportType, c.Location, c.OrderKey, c.RefundKey = PayoutReconciliation, nil, "OrderNo", "refund_no"
			},
			day: dstDay, loc: time.UTC, orderKey: "OrderNo", refundKey: "refund_no",
			start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix(), end: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).Unix(),
			timezone: "Etc/UTC",
			columns: []string{"automatic_payout_id", "balance_transaction_id", "created_utc", "currency", "gross", "fee", "net",
				"reporting_category", "source_id", "payment_metadata[OrderNo]", "refund_metadata[refund_no]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			r.s.SetPending(2)
			offer, err := r.src.Offer(context.Background(), tc.day)
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}

			if got := r.s.Calls("create"); got != 1 {
				t.Fatalf("report runs created: got %d, want 1", got)
			}
			form := r.s.LastRun()
			wantType := cmpOr(r.src.reportType, DefaultReportType)
			for field, want := range map[string]string{
				"report_type":                wantType,
				"parameters[interval_start]": strconv.FormatInt(tc.start, 10),
				"parameters[interval_end]":   strconv.FormatInt(tc.end, 10),
				"parameters[timezone]":       tc.timezone,
			} {
				if got := form.Get(field); got != want {
					t.Errorf("%s: got %q, want %q", field, got, want)
				}
			}
			if got := stripetest.Columns(form); !slices.Equal(got, tc.columns) {
				t.Errorf("columns:\n got %q\nwant %q", got, tc.columns)
			}
			if got, want := r.s.Calls("poll"), 3; got != want {
				t.Errorf("polls of the run: got %d, want %d (pending twice, then succeeded)", got, want)
			}
			polls, retries := r.waits()
			// One wait after the run is created, one after each pending look.
			if want := []time.Duration{DefaultPollEvery, DefaultPollEvery, DefaultPollEvery}; !slices.Equal(polls, want) {
				t.Errorf("waits between polls: got %v, want %v", polls, want)
			}
			if len(retries) != 0 {
				t.Errorf("retry waits: got %v, want none", retries)
			}
			wantName := wantType + " 2026-11-01 (frr_1FakeRun0001)"
			if offer.Name != wantName {
				t.Errorf("Name: got %q, want %q", offer.Name, wantName)
			}
			if offer.Digest != nil {
				t.Errorf("Digest: got %+v, want nil (Stripe states none)", offer.Digest)
			}

			path := filepath.Join(t.TempDir(), "stripe-2026-11-01.csv")
			saved, err := fetch.Save(context.Background(), offer, path, 0, nil)
			if err != nil {
				t.Fatalf("Save: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, r.file) {
				t.Errorf("saved file:\n got %q\nwant %q", got, r.file)
			}
			if offer.Size != int64(len(r.file)) || saved.Bytes != offer.Size {
				t.Errorf("sizes: offer %d, saved %d, file %d", offer.Size, saved.Bytes, len(r.file))
			}

			// The columns asked for are the ones the parser reads.
			var rows []reconcile.Transaction
			_, err = channelfeed.ParseFile(context.Background(), path, "stripe",
				channelfeed.Options{Location: tc.loc, OrderKey: tc.orderKey, RefundKey: tc.refundKey},
				func(t reconcile.Transaction) error { rows = append(rows, t); return nil })
			if err != nil {
				t.Fatalf("channelfeed cannot read the report asked for: %v", err)
			}
			if len(rows) != 2 || rows[0].OrderNo != "ORD20261101001" || rows[1].Kind != reconcile.KindRefund || rows[1].RefundNo != "RF20261101001" {
				t.Errorf("parsed rows: got %+v, want the charge of ORD20261101001 and its refund RF20261101001", rows)
			}
		})
	}
}

func TestOfferWaitsForStripesData(t *testing.T) {
	for _, tc := range []struct {
		name           string
		start, end     int64 // the report type's data_available_*
		create         []stripetest.Answer
		want           error
		wantRunCreated bool
	}{
		{name: "data ends before the day does", end: dstEnd - 1, want: fetch.ErrNotReady},
		{name: "data ends as the day does", end: dstEnd, wantRunCreated: true},
		{name: "data begins after the day began", start: dstStart + 1, end: dstEnd + 3600, want: fetch.ErrNoBill},
		{name: "Stripe says the payouts are not reconciled yet", end: dstEnd, wantRunCreated: true, want: fetch.ErrNotReady,
			create: []stripetest.Answer{{Status: 400, Body: stripetest.ErrorBody("invalid_request_error", "payout_reconciliation_not_ready", "Not reconciled yet.")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.s.SetAvailableStart(time.Unix(tc.start, 0))
			r.s.SetAvailableEnd(time.Unix(tc.end, 0))
			r.s.Queue("create", tc.create...)
			_, err := r.src.Offer(context.Background(), dstDay)
			if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
				t.Errorf("Offer: got %v, want %v", err, tc.want)
			}
			if got := r.s.Calls("create") > 0; got != tc.wantRunCreated {
				t.Errorf("report run created: got %v, want %v", got, tc.wantRunCreated)
			}
		})
	}
}

func TestOfferPendingPastTheBudget(t *testing.T) {
	r := newRig(t, func(c *Config) { c.PollEvery, c.PollBudget = 10*time.Second, 30*time.Second })
	r.s.SetPending(100)
	_, err := r.src.Offer(context.Background(), dstDay)
	if !errors.Is(err, fetch.ErrNotReady) {
		t.Fatalf("Offer: got %v, want fetch.ErrNotReady", err)
	}
	if want := "report run frr_1FakeRun0001 still pending"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if got, want := r.s.Calls("poll"), 3; got != want {
		t.Errorf("polls within 30s at 10s: got %d, want %d", got, want)
	}

	// The next Offer of the day waits for the same run.
	r.s.SetPending(0)
	if _, err := r.src.Offer(context.Background(), dstDay); err != nil {
		t.Fatalf("second Offer: %v", err)
	}
	if got := r.s.Calls("create"); got != 1 {
		t.Errorf("report runs created: got %d, want 1 (the pending one is picked up again)", got)
	}
}

func TestOfferRunFailed(t *testing.T) {
	r := newRig(t, nil)
	r.s.SetFailure("We could not run the report.\n\x1b[31m<!here>" + strings.Repeat(" and more", 1000))
	_, err := r.src.Offer(context.Background(), dstDay)
	if err == nil {
		t.Fatal("Offer: got no error for a failed run")
	}
	if errors.Is(err, fetch.ErrNotReady) || errors.Is(err, fetch.ErrNoBill) {
		t.Errorf("a failed run is a failure, got %v", err)
	}
	if _, ok := errors.AsType[*fetch.Refusal](err); ok {
		t.Errorf("a failed run is no refusal, got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "report run frr_1FakeRun0001 failed") || !strings.Contains(msg, "We could not run the report.") {
		t.Errorf("error %q does not name the run and Stripe's words", msg)
	}
	if strings.ContainsAny(msg, "\n\x1b") || len(msg) > 600 {
		t.Errorf("error is not made safe (%d bytes): %q", len(msg), msg)
	}
}

// leaks says which part of key, if any, shows in s.
func leaks(s, key string) string {
	for _, part := range []string{key, key[len(key)-4:], key[:8]} {
		if strings.Contains(s, part) {
			return part
		}
	}
	return ""
}

func TestOfferRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		key      APIKey
		endpoint string
		queue    stripetest.Answer
		status   int
		code     string
		says     string
	}{
		{name: "wrong key", key: wrongKey, endpoint: "report_types", status: 401, code: "invalid_request_error", says: "Invalid API Key provided"},
		{name: "expired key", key: expiredKey, endpoint: "report_types", status: 401, code: "api_key_expired", says: "Expired API Key"},
		{name: "restricted key without Reporting", key: restrictedKey, endpoint: "report_types", status: 403, code: "invalid_request_error", says: "rak_report_run_read"},
		{name: "report type the account lacks", key: goodKey, endpoint: "report_types", status: 404, code: "resource_missing",
			queue: stripetest.Answer{Status: 404, Body: stripetest.ErrorBody("invalid_request_error", "resource_missing", "No such report type")}},
		{name: "column the report refuses", key: goodKey, endpoint: "create", status: 400, code: "parameter_invalid",
			queue: stripetest.Answer{Status: 400, Body: stripetest.ErrorBody("invalid_request_error", "parameter_invalid", "Invalid column: automatic_payout_id")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, func(c *Config) { c.APIKey = tc.key })
			if tc.queue.Status != 0 {
				r.s.Queue(tc.endpoint, tc.queue)
			}
			_, err := r.src.Offer(context.Background(), dstDay)
			ref, ok := errors.AsType[*fetch.Refusal](err)
			if !ok {
				t.Fatalf("Offer: got %v, want a *fetch.Refusal", err)
			}
			if ref.Status != tc.status || ref.Code != tc.code {
				t.Errorf("refusal: got HTTP %d %q, want HTTP %d %q", ref.Status, ref.Code, tc.status, tc.code)
			}
			if !strings.Contains(ref.Message, tc.says) {
				t.Errorf("refusal message %q does not say %q", ref.Message, tc.says)
			}
			if part := leaks(err.Error(), string(tc.key)); part != "" {
				t.Errorf("error %q shows %q of the key", err, part)
			}
			if got := r.s.Calls(tc.endpoint); got != 1 {
				t.Errorf("%s calls: got %d, want 1 (a refusal is not retried)", tc.endpoint, got)
			}
		})
	}
}

func TestOfferRetries(t *testing.T) {
	rateLimited := stripetest.Answer{Status: 429, Header: http.Header{"Retry-After": {"7"}},
		Body: stripetest.ErrorBody("invalid_request_error", "rate_limit", "Too many requests hit the API too quickly.")}
	serverError := stripetest.Answer{Status: 500, Body: stripetest.ErrorBody("api_error", "", "Something went wrong on Stripe's end.")}
	for _, tc := range []struct {
		name      string
		endpoint  string
		queue     []stripetest.Answer
		wantCalls int
		wantErr   bool
		// wantWait is the one retry wait wanted; 0 means any backoff.
		wantWait time.Duration
	}{
		{name: "500 on create, then success", endpoint: "create", queue: []stripetest.Answer{serverError}, wantCalls: 2},
		{name: "proxy's 502 page on the report type", endpoint: "report_types", wantCalls: 2,
			queue: []stripetest.Answer{{Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>Bad Gateway</html>"}}},
		{name: "429 with Retry-After on the run", endpoint: "poll", queue: []stripetest.Answer{rateLimited}, wantCalls: 2, wantWait: 7 * time.Second},
		{name: "connection dropped on the report type", endpoint: "report_types", queue: []stripetest.Answer{{Hangup: true}}, wantCalls: 2},
		{name: "503 with Retry-After on the download", endpoint: "download", wantCalls: 2, wantWait: 3 * time.Second,
			queue: []stripetest.Answer{{Status: 503, Header: http.Header{"Retry-After": {"3"}}, Body: "busy"}}},
		{name: "500 on every try", endpoint: "create", wantCalls: 5, wantErr: true,
			queue: []stripetest.Answer{serverError, serverError, serverError, serverError, serverError, serverError}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.s.Queue(tc.endpoint, tc.queue...)
			offer, err := r.src.Offer(context.Background(), dstDay)
			if err == nil {
				_, err = fetch.Save(context.Background(), offer, filepath.Join(t.TempDir(), "r.csv"), 0, nil)
			}
			switch {
			case tc.wantErr && err == nil:
				t.Fatal("got no error")
			case !tc.wantErr && err != nil:
				t.Fatalf("got %v", err)
			}
			if tc.wantErr {
				_, refused := errors.AsType[*fetch.Refusal](err)
				if refused || errors.Is(err, fetch.ErrNotReady) {
					t.Errorf("a failure that survived the retries: got %v", err)
				}
			}
			if got := r.s.Calls(tc.endpoint); got != tc.wantCalls {
				t.Errorf("%s calls: got %d, want %d", tc.endpoint, got, tc.wantCalls)
			}
			_, waits := r.waits()
			if len(waits) != tc.wantCalls-1 {
				t.Errorf("retry waits: got %v, want %d", waits, tc.wantCalls-1)
			}
			if tc.wantWait != 0 && !slices.Equal(waits, []time.Duration{tc.wantWait}) {
				t.Errorf("retry waits: got %v, want [%v] as Retry-After asked", waits, tc.wantWait)
			}
		})
	}
}

func TestOfferRefusesHostileAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rewrite  func(kind string, obj map[string]any)
		client   func(c *fetch.Client)
		says     string
		endpoint string // counted
		calls    int
	}{
		{name: "http file url", says: "not https",
			rewrite: rewriteResult(func(file map[string]any) {
				file["url"] = "http" + strings.TrimPrefix(file["url"].(string), "https")
			}),
			endpoint: "download", calls: 0},
		{name: "file on another host", says: "the API key would go with it",
			rewrite:  rewriteResult(func(file map[string]any) { file["url"] = "https://files.example.net/v1/files/file_1Fake/contents" }),
			endpoint: "download", calls: 0},
		{name: "succeeded without a file", says: "without a result file",
			rewrite: rewrite("poll", func(run map[string]any) { run["result"] = nil }), endpoint: "download", calls: 0},
		{name: "run of another interval", says: "not the day asked for",
			rewrite: rewrite("create", func(run map[string]any) {
				run["parameters"].(map[string]any)["interval_start"] = dstStart - 86400
			}),
			endpoint: "poll", calls: 0},
		{name: "run id that is no id", says: "not an id",
			rewrite: rewrite("create", func(run map[string]any) { run["id"] = "frr_1/../../v1/charges" }), endpoint: "poll", calls: 0},
		{name: "oversized answer", says: "larger than 4096 bytes",
			rewrite: rewrite("report_types", func(typ map[string]any) {
				typ["name"] = typ["name"].(string) + strings.Repeat(" ", 8<<10)
			}),
			client:   func(c *fetch.Client) { c.Answer = 4096 },
			endpoint: "report_types", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, func(c *Config) {
				if tc.client != nil {
					tc.client(c.Client)
				}
			})
			r.s.SetRewrite(tc.rewrite)
			_, err := r.src.Offer(context.Background(), dstDay)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Offer: got %v, want an error saying %q", err, tc.says)
			}
			if errors.Is(err, fetch.ErrNotReady) || errors.Is(err, fetch.ErrNoBill) {
				t.Errorf("got %v, want a plain failure", err)
			}
			if got := r.s.Calls(tc.endpoint); got != tc.calls {
				t.Errorf("%s calls: got %d, want %d", tc.endpoint, got, tc.calls)
			}
		})
	}
}

func TestSaveRefusesAFileOfAnotherSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delta int64
	}{
		{name: "stated larger (cut short)", delta: 10},
		{name: "stated smaller (padded)", delta: -10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			real := int64(len(r.file))
			r.s.SetRewrite(rewriteResult(func(file map[string]any) { file["size"] = real + tc.delta }))
			offer, err := r.src.Offer(context.Background(), dstDay)
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			if offer.Size != real+tc.delta {
				t.Errorf("Size: got %d, want the stated %d", offer.Size, real+tc.delta)
			}
			// Open still streams: the check is Save's.
			body, err := offer.Open(context.Background())
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			n, _ := io.Copy(io.Discard, body)
			body.Close()
			if n != real {
				t.Errorf("streamed %d bytes, want %d", n, real)
			}

			dir := t.TempDir()
			_, err = fetch.Save(context.Background(), offer, filepath.Join(dir, "r.csv"), 0, nil)
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("Save: got %v, want a refusal of the size", err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("Save left %d files behind: %v", len(left), left)
			}
		})
	}
}

func TestDownloadRefusedKey(t *testing.T) {
	r := newRig(t, nil)
	offer, err := r.src.Offer(context.Background(), dstDay)
	if err != nil {
		t.Fatalf("Offer: %v", err)
	}
	// The key is revoked between the run and the download.
	r.s.Queue("download", stripetest.Answer{Status: 401,
		Body: stripetest.ErrorBody("invalid_request_error", "", "Invalid API Key provided: "+stripetest.Mask(goodKey))})
	_, err = offer.Open(context.Background())
	ref, ok := errors.AsType[*fetch.Refusal](err)
	if !ok || ref.Status != 401 || ref.Code != "invalid_request_error" {
		t.Fatalf("Open: got %v, want a 401 *fetch.Refusal", err)
	}
	if part := leaks(err.Error(), goodKey); part != "" {
		t.Errorf("error %q shows %q of the key", err, part)
	}
}

// TestSDKLogsNothing runs a refused and a retried call with the process's
// stdout and stderr captured: the SDK's default logger would print
// Stripe's error, with part of the key, to stderr.
func TestSDKLogsNothing(t *testing.T) {
	r := newRig(t, func(c *Config) { c.APIKey = wrongKey })
	good := newRig(t, nil)
	good.s.Queue("create", stripetest.Answer{Status: 500, Body: stripetest.ErrorBody("api_error", "", "boom")})

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = pw, pw
	_, err1 := r.src.Offer(context.Background(), dstDay)
	_, err2 := good.src.Offer(context.Background(), dstDay)
	os.Stdout, os.Stderr = stdout, stderr
	pw.Close()
	printed, _ := io.ReadAll(pr)

	if _, ok := errors.AsType[*fetch.Refusal](err1); !ok {
		t.Errorf("wrong key: got %v, want a refusal", err1)
	}
	if err2 != nil {
		t.Errorf("retried create: %v", err2)
	}
	if len(printed) != 0 {
		t.Errorf("the SDK printed %q", printed)
	}
}

func TestNew(t *testing.T) {
	fixed := time.FixedZone("CST", 8*3600)
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		says   string // "" means accepted
	}{
		{name: "defaults", change: func(c *Config) {}},
		{name: "payout report", change: func(c *Config) { c.ReportType = PayoutReconciliation }},
		{name: "no key", change: func(c *Config) { c.APIKey = "" }, says: "empty"},
		{name: "publishable key", change: func(c *Config) { c.APIKey = "pk_live_51Abc" }, says: "publishable"},
		{name: "key with a line break", change: func(c *Config) { c.APIKey = goodKey + "\r\nX-Evil: 1" }, says: "character"},
		{name: "other report type", change: func(c *Config) { c.ReportType = "payouts.itemized.3" }, says: "report type"},
		{name: "older report version", change: func(c *Config) { c.ReportType = "payout_reconciliation.itemized.4" }, says: "report type"},
		{name: "http api url", change: func(c *Config) { c.APIURL = "http://api.stripe.com" }, says: "https"},
		{name: "files url with a user", change: func(c *Config) { c.FilesURL = "https://u:p@files.stripe.com" }, says: "https"},
		{name: "order key with a bracket", change: func(c *Config) { c.OrderKey = "order]x" }, says: "metadata key"},
		{name: "refund key too long", change: func(c *Config) { c.RefundKey = strings.Repeat("k", 41) }, says: "metadata key"},
		{name: "local zone", change: func(c *Config) { c.Location = time.Local }, says: "IANA"},
		{name: "fixed zone", change: func(c *Config) { c.Location = fixed }, says: "IANA"},
		{name: "negative poll", change: func(c *Config) { c.PollEvery = -time.Second }, says: "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{APIKey: goodKey}
			tc.change(&cfg)
			_, err := New(cfg)
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("New: %v", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
				t.Errorf("New: got %v, want an error saying %q", err, tc.says)
			}
			if err != nil && leaks(err.Error(), goodKey) != "" {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
}

func TestParseAPIKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want APIKey
		says string
	}{
		{name: "secret key", in: goodKey, want: goodKey},
		{name: "restricted key", in: restrictedKey, want: restrictedKey},
		{name: "spaces before", in: "  " + restrictedKey, says: "the secret has leading or trailing spaces"},
		{name: "a space after", in: goodKey + " ", says: "the secret has leading or trailing spaces"},
		{name: "a second line ending", in: goodKey + "\n", says: "the secret has leading or trailing spaces"},
		{name: "empty", in: "", says: "empty"},
		{name: "publishable", in: "pk_test_51Abcdefgh", says: "publishable"},
		{name: "webhook secret", in: "whsec_abcdefgh", says: "webhook"},
		{name: "quoted", in: `"` + goodKey + `"`, says: "not a Stripe API key"},
		{name: "two keys", in: goodKey + " " + restrictedKey, says: "character"},
		{name: "prefix only", in: "sk_live_", says: "cut short"},
		{name: "huge", in: "sk_live_" + strings.Repeat("a", 1000), says: "longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAPIKey([]byte(tc.in))
			if tc.says == "" {
				if err != nil || got != tc.want {
					t.Errorf("got %q, %v; want %q", string(got), err, string(tc.want))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want an error saying %q", err, tc.says)
			}
			if err != nil && len(tc.in) > 12 && strings.Contains(err.Error(), strings.TrimSpace(tc.in)[4:12]) {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}

	cfg := Config{APIKey: goodKey}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, cfg); leaks(s, goodKey) != "" {
			t.Errorf("Config printed with %s shows the key: %s", verb, s)
		}
	}
}

func TestFakeKnowsTheReportTypes(t *testing.T) {
	// stripetest cannot import this package, whose tests import it, so it
	// names the report types itself.
	s := stripetest.NewServer(t)
	for _, typ := range []string{BalanceChangeFromActivity, PayoutReconciliation} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/v1/reporting/report_types/"+typ, nil)
		req.Header.Set("Authorization", "Bearer "+s.Key)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("report type %s: got HTTP %d, want 200", typ, resp.StatusCode)
		}
	}
}
