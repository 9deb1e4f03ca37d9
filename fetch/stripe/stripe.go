// Package stripe fetches a Stripe account's itemized balance report of a
// business day through the Reporting API, with Stripe's own Go SDK: it
// checks that Stripe's data covers the whole day, starts a report run with
// the columns the channelfeed parser reads, waits for it, and offers the
// resulting CSV file for download.
//
// Every call goes through the job's one retry policy: the SDK's own
// retries are off, its logger is silenced, and its errors are turned into
// the fetch package's answers before anything prints them, because Stripe
// echoes part of a wrong API key in its error messages.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/stripe/stripe-go/v82"

	"reconcile"
	"reconcile/fetch"
	"reconcile/retry"
)

// The report types the channelfeed parser reads. Both itemize the
// balance transactions of an interval; the payout one keeps to those
// settled in automatic payouts and names the payout of each.
const (
	BalanceChangeFromActivity = "balance_change_from_activity.itemized.3"
	PayoutReconciliation      = "payout_reconciliation.itemized.5"
)

// Defaults of Config.
const (
	DefaultReportType = BalanceChangeFromActivity
	DefaultOrderKey   = "order_id"
	DefaultRefundKey  = "merchant_refund_id"
	DefaultPollEvery  = 5 * time.Second
	DefaultPollBudget = 10 * time.Minute
	// DefaultFilesURL is where Stripe serves a report run's file.
	DefaultFilesURL = sdk.UploadsURL
	// DefaultAPIURL is Stripe's API.
	DefaultAPIURL = sdk.APIURL
)

// Config is one Stripe account's Reporting API access.
type Config struct {
	// APIKey is the account's secret key or, better, a restricted key
	// that may read reports and files; see ParseAPIKey.
	APIKey APIKey
	// ReportType is BalanceChangeFromActivity (the default) or
	// PayoutReconciliation.
	ReportType string
	// OrderKey and RefundKey are the PaymentIntent and Refund metadata
	// keys our services write the order and refund numbers under, the
	// channel's order_metadata_key and refund_metadata_key (defaults
	// order_id and merchant_refund_id).
	OrderKey, RefundKey string
	// Location is the channel's business time zone, an IANA zone (nil
	// means UTC). The report covers day D from midnight to midnight in
	// it, and Stripe writes its local times in it.
	Location *time.Location
	// APIURL and FilesURL default to Stripe's; both must be https. The
	// file of a report run is downloaded only from FilesURL's host, since
	// the API key goes with the download.
	APIURL, FilesURL string
	// Client is the HTTP client and retry policy of every call; nil
	// means a fetch.Client with the defaults.
	Client *fetch.Client
	// PollEvery is the wait between two looks at a pending report run,
	// PollBudget the longest a run is waited for in one Offer (defaults
	// 5s and 10m). Sleep waits (nil: a timer that ends with ctx); Now is
	// the clock (nil: time.Now). Tests pass both.
	PollEvery, PollBudget time.Duration
	Sleep                 func(ctx context.Context, d time.Duration) error
	Now                   func() time.Time
}

// Source is a Stripe account's itemized report of each business day.
type Source struct {
	api        *sdk.Client
	key        string
	client     fetch.Client // downloads, and the retry policy of every call
	reportType string
	columns    []string
	loc        *time.Location
	timezone   string // loc's name as Stripe takes it
	filesHost  string
	pollEvery  time.Duration
	pollBudget time.Duration
	sleep      func(ctx context.Context, d time.Duration) error
	now        func() time.Time

	// pending holds the report run still pending when an Offer gave up
	// waiting, by day: the next Offer of that day waits for it instead of
	// starting another.
	mu      sync.Mutex
	pending map[string]string
}

var _ fetch.Source = (*Source)(nil)

// metadataKey is what a metadata key the report can name may be: Stripe
// takes keys of up to 40 characters, and a bracket would end the
// column's name early.
var metadataKey = regexp.MustCompile(`^[^\[\]\x00-\x1f\x7f]{1,40}$`)

// New checks cfg and returns its Source.
func New(cfg Config) (*Source, error) {
	if err := cfg.APIKey.check(); err != nil {
		return nil, fmt.Errorf("stripe: api key: %w", err)
	}
	s := &Source{
		key:        string(cfg.APIKey),
		reportType: cfg.ReportType,
		loc:        cfg.Location,
		pollEvery:  cfg.PollEvery,
		pollBudget: cfg.PollBudget,
		sleep:      cfg.Sleep,
		now:        cfg.Now,
		pending:    map[string]string{},
	}
	if err := s.setReport(cfg.OrderKey, cfg.RefundKey); err != nil {
		return nil, err
	}
	if err := s.setZone(); err != nil {
		return nil, err
	}
	apiURL, err := httpsURL("api url", cmpOr(cfg.APIURL, DefaultAPIURL))
	if err != nil {
		return nil, err
	}
	files, err := httpsURL("files url", cmpOr(cfg.FilesURL, DefaultFilesURL))
	if err != nil {
		return nil, err
	}
	s.filesHost = files.Host
	if err := s.setPolling(); err != nil {
		return nil, err
	}
	s.connect(cfg.Client, apiURL)
	return s, nil
}

// setReport checks the report type and the metadata keys, and sets the
// columns a run asks for.
func (s *Source) setReport(orderKey, refundKey string) error {
	switch s.reportType {
	case "":
		s.reportType = DefaultReportType
	case BalanceChangeFromActivity, PayoutReconciliation:
	default:
		return fmt.Errorf("stripe: report type %s: want %s or %s, the reports channelfeed reads",
			reconcile.Quote(s.reportType), BalanceChangeFromActivity, PayoutReconciliation)
	}
	orderKey, refundKey = cmpOr(orderKey, DefaultOrderKey), cmpOr(refundKey, DefaultRefundKey)
	for _, k := range []struct{ what, key string }{{"order key", orderKey}, {"refund key", refundKey}} {
		if !metadataKey.MatchString(k.key) {
			return fmt.Errorf("stripe: %s %s: want a metadata key of 1 to 40 characters without brackets", k.what, reconcile.Quote(k.key))
		}
	}
	s.columns = reportColumns(s.reportType, orderKey, refundKey)
	return nil
}

// setZone checks the business time zone and sets the name Stripe is
// given for it.
func (s *Source) setZone() error {
	if s.loc == nil {
		s.loc = time.UTC
	}
	s.timezone = s.loc.String()
	if _, err := time.LoadLocation(s.timezone); err != nil || s.timezone == "Local" {
		return fmt.Errorf("stripe: time zone %s: want an IANA zone name, which Stripe writes the report's times in", reconcile.Quote(s.timezone))
	}
	if s.timezone == "UTC" {
		s.timezone = "Etc/UTC" // the name Stripe's documentation gives its default
	}
	return nil
}

// setPolling checks the poll interval and budget and fills in the
// defaults of how the Source waits.
func (s *Source) setPolling() error {
	switch {
	case s.pollEvery < 0 || s.pollBudget < 0:
		return errors.New("stripe: poll interval and budget must not be negative")
	case s.pollEvery == 0:
		s.pollEvery = DefaultPollEvery
	}
	if s.pollBudget == 0 {
		s.pollBudget = DefaultPollBudget
	}
	if s.sleep == nil {
		s.sleep = retry.Sleep
	}
	if s.now == nil {
		s.now = time.Now
	}
	return nil
}

// connect makes the SDK client that calls Stripe at apiURL through
// client, or a default client when it is nil.
func (s *Source) connect(client *fetch.Client, apiURL *url.URL) {
	if client != nil {
		s.client = *client
	}
	if s.client.HTTP == nil {
		s.client.HTTP = fetch.NewHTTPClient(nil)
	}
	backend := sdk.GetBackendWithConfig(sdk.APIBackend, &sdk.BackendConfig{
		URL:        sdk.String(apiURL.String()),
		HTTPClient: s.guarded(s.client.HTTP),
		// Retries are the job's policy, around each call (see call).
		MaxNetworkRetries: sdk.Int64(0),
		// Its logger would print requests and Stripe's error messages,
		// which quote part of the key, to the job's stderr.
		LeveledLogger:   &sdk.LeveledLogger{Level: sdk.LevelNull},
		EnableTelemetry: sdk.Bool(false),
	})
	s.api = sdk.NewClient(s.key, sdk.WithBackends(&sdk.Backends{API: backend}))
}

// reportColumns are the columns a run asks for: those the channelfeed
// parser reads, named as it looks for them. created_utc rather than
// created, so the rows' times do not depend on the zone being read back
// the same.
func reportColumns(reportType, orderKey, refundKey string) []string {
	var cols []string
	if reportType == PayoutReconciliation {
		// The activity report has no payout columns and refuses them.
		cols = append(cols, "automatic_payout_id")
	}
	return append(cols, "balance_transaction_id", "created_utc", "currency", "gross", "fee", "net",
		"reporting_category", "source_id",
		"payment_metadata["+orderKey+"]", "refund_metadata["+refundKey+"]")
}

func httpsURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("stripe: %s %s: want an https URL without user, query or fragment", what, reconcile.Quote(raw))
	}
	return u, nil
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Offer asks Stripe for the report of day: fetch.ErrNotReady while
// Stripe's data does not cover the whole day yet or the run is still
// pending after the poll budget, fetch.ErrNoBill for a day before the
// account's data begins, a *fetch.Refusal for a key Stripe refuses.
func (s *Source) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	// The interval is the day in the channel's zone, whatever zone the
	// caller's day came in.
	d, err := reconcile.NewBusinessDay(day.String(), s.loc)
	if err != nil {
		return nil, fmt.Errorf("stripe: %w", err)
	}
	start, end := d.Start().Unix(), d.End().Unix()
	what := s.reportType + " " + d.String()

	var rt *sdk.ReportingReportType
	err = s.call(ctx, "stripe GET report type "+s.reportType, func(ctx context.Context) (err error) {
		rt, err = s.api.V1ReportingReportTypes.Retrieve(ctx, s.reportType, &sdk.ReportingReportTypeRetrieveParams{})
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case rt.DataAvailableEnd < end:
		return nil, fmt.Errorf("stripe %s: data available until %s, the day ends %s: %w",
			what, time.Unix(rt.DataAvailableEnd, 0).In(s.loc).Format(time.RFC3339), d.End().Format(time.RFC3339), fetch.ErrNotReady)
	case rt.DataAvailableStart > start:
		return nil, fmt.Errorf("stripe %s: the account's data begins %s, after the day began: %w",
			what, time.Unix(rt.DataAvailableStart, 0).In(s.loc).Format(time.RFC3339), fetch.ErrNoBill)
	}

	run, err := s.startRun(ctx, d, start, end)
	if err != nil {
		return nil, err
	}
	deadline := s.now().Add(s.pollBudget)
	for {
		if err := s.checkRun(run, start, end); err != nil {
			s.forget(d, run.ID)
			return nil, fmt.Errorf("stripe %s: %w", what, err)
		}
		switch run.Status {
		case sdk.ReportingReportRunStatusSucceeded:
			s.forget(d, run.ID)
			return s.offer(d, run)
		case sdk.ReportingReportRunStatusFailed:
			s.forget(d, run.ID)
			return nil, fmt.Errorf("stripe %s: report run %s failed: %s", what, run.ID, strconv.Quote(safe(run.Error, s.key, 300)))
		case sdk.ReportingReportRunStatusPending:
		default:
			s.forget(d, run.ID)
			return nil, fmt.Errorf("stripe %s: report run %s has status %s, not pending, succeeded or failed", what, run.ID, reconcile.Quote(string(run.Status)))
		}
		if s.now().Add(s.pollEvery).After(deadline) {
			return nil, fmt.Errorf("stripe %s: report run %s still pending after %s: %w", what, run.ID, s.pollBudget, fetch.ErrNotReady)
		}
		if err := s.sleep(ctx, s.pollEvery); err != nil {
			return nil, fmt.Errorf("stripe %s: wait for report run %s: %w", what, run.ID, err)
		}
		id := run.ID
		err = s.call(ctx, "stripe GET report run "+id, func(ctx context.Context) (err error) {
			run, err = s.api.V1ReportingReportRuns.Retrieve(ctx, id, &sdk.ReportingReportRunRetrieveParams{})
			return err
		})
		if err != nil {
			s.forget(d, id)
			return nil, err
		}
	}
}

// startRun looks up the run an earlier Offer of d left pending, or starts
// one.
func (s *Source) startRun(ctx context.Context, d reconcile.BusinessDay, start, end int64) (*sdk.ReportingReportRun, error) {
	s.mu.Lock()
	id := s.pending[d.String()]
	s.mu.Unlock()
	var run *sdk.ReportingReportRun
	if id != "" {
		err := s.call(ctx, "stripe GET report run "+id, func(ctx context.Context) (err error) {
			run, err = s.api.V1ReportingReportRuns.Retrieve(ctx, id, &sdk.ReportingReportRunRetrieveParams{})
			return err
		})
		if err != nil {
			s.forget(d, id)
			return nil, err
		}
		return run, nil
	}
	// A retried create makes a new request with a new idempotency key,
	// so a run whose creation seemed to fail may be left behind at Stripe:
	// harmless, it is never fetched.
	err := s.call(ctx, "stripe POST report run "+s.reportType+" "+d.String(), func(ctx context.Context) (err error) {
		run, err = s.api.V1ReportingReportRuns.Create(ctx, &sdk.ReportingReportRunCreateParams{
			ReportType: sdk.String(s.reportType),
			Parameters: &sdk.ReportingReportRunCreateParametersParams{
				IntervalStart: sdk.Int64(start),
				IntervalEnd:   sdk.Int64(end),
				Timezone:      sdk.String(s.timezone),
				Columns:       sdk.StringSlice(s.columns),
			},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if runID.MatchString(run.ID) {
		s.mu.Lock()
		s.pending[d.String()] = run.ID
		s.mu.Unlock()
	}
	return run, nil
}

func (s *Source) forget(d reconcile.BusinessDay, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[d.String()] == id {
		delete(s.pending, d.String())
	}
}

// runID is what a report run's id (frr_…) may be: it goes into a URL
// path and into messages.
var runID = regexp.MustCompile(`^[A-Za-z0-9_]{1,255}$`)

// checkRun refuses an answer that is not the run asked for.
func (s *Source) checkRun(run *sdk.ReportingReportRun, start, end int64) error {
	if !runID.MatchString(run.ID) {
		return fmt.Errorf("report run id %s: not an id", reconcile.Quote(run.ID))
	}
	if run.ReportType != "" && run.ReportType != s.reportType {
		return fmt.Errorf("report run %s is of report type %s, not the one asked for", run.ID, reconcile.Quote(run.ReportType))
	}
	if p := run.Parameters; p != nil && (p.IntervalStart != start || p.IntervalEnd != end) {
		return fmt.Errorf("report run %s covers %d to %d, not the day asked for (%d to %d)", run.ID, p.IntervalStart, p.IntervalEnd, start, end)
	}
	return nil
}

// offer is the file of a succeeded run. The key goes with its download,
// so the file is fetched only over https from Stripe's files host.
func (s *Source) offer(d reconcile.BusinessDay, run *sdk.ReportingReportRun) (*fetch.Offer, error) {
	name := fmt.Sprintf("%s %s (%s)", s.reportType, d, run.ID)
	f := run.Result
	if f == nil || f.URL == "" {
		return nil, fmt.Errorf("stripe %s: the run succeeded without a result file", name)
	}
	u, err := url.Parse(f.URL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("stripe %s: the result file's URL does not parse: refused", name)
	case u.Scheme != "https":
		return nil, fmt.Errorf("stripe %s: the result file's URL is %s, not https: refused", name, reconcile.Quote(u.Scheme))
	case u.User != nil || !strings.EqualFold(u.Host, s.filesHost):
		return nil, fmt.Errorf("stripe %s: the result file is on %s, not %s: refused, the API key would go with it", name, reconcile.Quote(u.Host), s.filesHost)
	}
	size := f.Size
	if size < 0 {
		size = -1
	}
	fileURL := u.String()
	return &fetch.Offer{
		Name: name,
		Size: size,
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			resp, err := s.client.Open(ctx, "stripe download "+name, func(ctx context.Context) (*http.Request, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, fileURL, nil)
				if err != nil {
					return nil, err
				}
				// As the SDK authenticates; Stripe takes the key as
				// Basic user too.
				req.Header.Set("Authorization", "Bearer "+s.key)
				return req, nil
			})
			if err != nil {
				return nil, s.downloadError("stripe download "+name, err)
			}
			return resp.Body, nil
		},
	}, nil
}
