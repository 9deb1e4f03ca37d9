// Package stripetest runs a fake Stripe for tests, as net/http/httptest
// runs a server: the part of the Reporting API that fetch/stripe uses,
// over TLS on a local port, behind an API key. A test sets the report file
// of each business date and points the client at it:
//
//	s := stripetest.NewServer(t)
//	s.SetReport("2026-11-01", csv)
//	src, err := stripe.New(stripe.Config{
//		APIKey: stripe.APIKey(s.Key), APIURL: s.URL, FilesURL: s.URL,
//		Client: &fetch.Client{HTTP: s.Client()}, …})
//
// It answers as Stripe does: the report type with its data_available_start
// and _end, report runs created form-encoded and polled until they
// succeed, the result file on the same server acting as the files host,
// and Stripe's error objects for a refused key. Its hooks make it
// misbehave: runs that stay pending or fail, canned answers (a 500, a 429
// with Retry-After, a dropped connection) and answers rewritten into ones
// Stripe would never give.
package stripetest

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The kinds of request the server counts (Calls), takes canned answers
// for (Queue) and rewrites the answers of (SetRewrite).
var kinds = []string{"report_types", "create", "poll", "download"}

// reportTypes are the report types the server knows, those fetch/stripe
// asks for. They are written out rather than taken from fetch/stripe,
// whose own tests import this package; a test there checks they agree.
var reportTypes = []string{"balance_change_from_activity.itemized.3", "payout_reconciliation.itemized.5"}

// Server is a fake Stripe. Its methods may be called while a client is
// talking to it.
type Server struct {
	// URL is the server's base URL (https://127.0.0.1:port), both the API
	// and the files host: set a client's APIURL and FilesURL to it.
	URL string
	// Key is the secret key the server takes, SecretKey.
	Key string

	t   testing.TB
	srv *httptest.Server

	mu sync.Mutex
	// What it answers.
	availableStart, availableEnd int64
	reports                      map[string][]byte // by business date
	pending                      int
	failure                      string
	queue                        map[string][]Answer
	rewrite                      func(kind string, obj map[string]any)
	// What it holds and saw.
	runs  map[string]*run // by id
	files map[string]*run // by file id
	calls map[string]int
	last  url.Values
}

// run is a report run the server created.
type run struct {
	id, fileID string
	reportType string
	start, end int64
	timezone   string
	columns    []string
	date       string // the business date interval_start falls on in timezone
	polls      int
	status     string // pending, then succeeded or failed for good
	err        string
	file       []byte
}

// Answer is a canned answer: the status, headers and body to send
// instead of the normal answer, or, with Hangup, a connection closed
// without any answer.
type Answer struct {
	Status int
	Header http.Header
	Body   string
	Hangup bool
}

// NewServer starts a server, closed when t ends. By default the report
// types' data covers every day (data_available_start at the Unix epoch,
// data_available_end far in the future), runs succeed at their first poll,
// and no date has a report.
func NewServer(t testing.TB) *Server {
	s := &Server{
		Key:          SecretKey,
		t:            t,
		availableEnd: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix(),
		reports:      map[string][]byte{},
		queue:        map[string][]Answer{},
		runs:         map[string]*run{},
		files:        map[string]*run{},
		calls:        map[string]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/reporting/report_types/{id}", s.reportType)
	mux.HandleFunc("POST /v1/reporting/report_runs", s.createRun)
	mux.HandleFunc("GET /v1/reporting/report_runs/{id}", s.pollRun)
	mux.HandleFunc("GET /v1/files/{id}/contents", s.download)
	s.srv = httptest.NewTLSServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Client is an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetReport makes csv the file of a report run for date (YYYY-MM-DD): the
// run whose interval_start falls on date in the run's timezone. A run
// takes the file set when it succeeds. A run for a date without a report
// fails, its error naming the date, so a test that forgot one fails
// loudly; set a file of only the header line for a day without activity.
func (s *Server) SetReport(date string, csv []byte) {
	s.t.Helper()
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		s.t.Errorf("stripetest: SetReport(%q): want a date YYYY-MM-DD", date)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports[date] = bytes.Clone(csv)
}

// SetAvailableStart sets the report types' data_available_start: a day
// beginning before it is one the account has no data of.
func (s *Server) SetAvailableStart(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.availableStart = t.Unix()
}

// SetAvailableEnd sets the report types' data_available_end: a day ending
// after it is not ready yet.
func (s *Server) SetAvailableEnd(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.availableEnd = t.Unix()
}

// SetPending makes each run answer "pending" to its first n polls (0, the
// default, means it is done at the first). A run already done stays so;
// n is read at each poll, so lowering it lets a pending run finish.
func (s *Server) SetPending(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = n
}

// SetFailure makes runs that finish from now on fail with msg as their
// error; "" (the default) lets them succeed.
func (s *Server) SetFailure(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failure = msg
}

// Queue adds canned answers for requests of kind: "report_types",
// "create", "poll" or "download". Each request of that kind whose key the
// server takes gets the next one instead of its normal answer, until they
// are used up.
func (s *Server) Queue(kind string, answers ...Answer) {
	if !s.known("Queue", kind) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue[kind] = append(s.queue[kind], answers...)
}

// SetRewrite makes edit change each JSON object the server answers with
// before it is sent: the report type (kind "report_types") and report runs
// ("create", "poll"), whose objects are map[string]any, numbers int64 and
// nulls nil. It is for answers Stripe would not give: a run of another
// interval, a result file elsewhere or of a size it does not have. nil
// removes it.
func (s *Server) SetRewrite(edit func(kind string, obj map[string]any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rewrite = edit
}

// Calls is the number of requests of kind ("report_types", "create",
// "poll" or "download") the server has had, refused ones included.
func (s *Server) Calls(kind string) int {
	if !s.known("Calls", kind) {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[kind]
}

// LastRun is the form of the last report run created, as posted, or nil
// before the first. Columns reads its list of columns.
func (s *Server) LastRun() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return nil
	}
	return maps.Clone(s.last)
}

// Columns is the parameters[columns] list of a report run's form, in
// order, as Stripe's form encoding gives it: parameters[columns][0], [1], …
func Columns(form url.Values) []string {
	var cols []string
	for i := 0; ; i++ {
		v, ok := form["parameters[columns]["+strconv.Itoa(i)+"]"]
		if !ok || len(v) == 0 {
			return cols
		}
		cols = append(cols, v[0])
	}
}

func (s *Server) known(method, kind string) bool {
	if slices.Contains(kinds, kind) {
		return true
	}
	s.t.Errorf("stripetest: %s(%q): want one of %q", method, kind, kinds)
	return false
}

// begin counts the call, checks the key as Stripe does, and gives a
// queued answer when there is one; false means it has answered.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, kind string) bool {
	s.mu.Lock()
	s.calls[kind]++
	s.mu.Unlock()
	if !s.authorized(w, r) {
		return false
	}
	s.mu.Lock()
	q := s.queue[kind]
	var a *Answer
	if len(q) > 0 {
		a, s.queue[kind] = &q[0], q[1:]
	}
	s.mu.Unlock()
	if a == nil {
		return true
	}
	if a.Hangup {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return false
	}
	maps.Copy(w.Header(), a.Header)
	w.WriteHeader(a.Status)
	fmt.Fprint(w, a.Body)
	return false
}

// answer sends obj, rewritten when a rewrite is set.
func (s *Server) answer(w http.ResponseWriter, kind string, obj map[string]any) {
	s.mu.Lock()
	edit := s.rewrite
	s.mu.Unlock()
	if edit != nil {
		edit(kind, obj)
	}
	writeJSON(w, obj)
}

func (s *Server) reportType(w http.ResponseWriter, r *http.Request) {
	if !s.begin(w, r, "report_types") {
		return
	}
	id := r.PathValue("id")
	if !slices.Contains(reportTypes, id) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such report type: '"+id+"'")
		return
	}
	s.mu.Lock()
	obj := map[string]any{
		"id": id, "object": "reporting.report_type", "name": "Itemized",
		"data_available_start": s.availableStart, "data_available_end": s.availableEnd,
		"default_columns": []string{"balance_transaction_id"}, "livemode": false, "version": int64(5),
	}
	s.mu.Unlock()
	s.answer(w, "report_types", obj)
}

func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	if !s.begin(w, r, "create") {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "content type "+ct)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	form := r.PostForm
	rn := &run{reportType: form.Get("report_type"), timezone: form.Get("parameters[timezone]"), columns: Columns(form)}
	if !slices.Contains(reportTypes, rn.reportType) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such report type: '"+rn.reportType+"'")
		return
	}
	// Stripe defaults the interval to all the data; this server needs it
	// to tell the day.
	var err error
	for _, p := range []struct {
		name string
		v    *int64
	}{{"parameters[interval_start]", &rn.start}, {"parameters[interval_end]", &rn.end}} {
		if *p.v, err = strconv.ParseInt(form.Get(p.name), 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid", "Invalid integer: "+p.name)
			return
		}
	}
	if rn.timezone == "" {
		rn.timezone = "Etc/UTC" // Stripe's default
	}
	loc, err := time.LoadLocation(rn.timezone)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid", "Invalid timezone: "+rn.timezone)
		return
	}
	rn.date = time.Unix(rn.start, 0).In(loc).Format(time.DateOnly)
	rn.status = "pending"

	s.mu.Lock()
	n := len(s.runs) + 1
	rn.id = fmt.Sprintf("frr_1FakeRun%04d", n)
	rn.fileID = fmt.Sprintf("file_1FakeFile%04d", n)
	s.runs[rn.id] = rn
	s.last = form
	obj := s.runObject(rn)
	s.mu.Unlock()
	s.answer(w, "create", obj)
}

// lookup begins a request of kind for the run in byID that the path's id
// names, and returns it with s.mu held; nil means it has answered: a
// canned answer, a refused key, or Stripe's 404 for what (no such id).
func (s *Server) lookup(w http.ResponseWriter, r *http.Request, kind, what string, byID map[string]*run) *run {
	if !s.begin(w, r, kind) {
		return nil
	}
	id := r.PathValue("id")
	s.mu.Lock()
	rn := byID[id]
	if rn == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such "+what+": '"+id+"'")
	}
	return rn
}

func (s *Server) pollRun(w http.ResponseWriter, r *http.Request) {
	rn := s.lookup(w, r, "poll", "report run", s.runs)
	if rn == nil {
		return
	}
	rn.polls++
	if rn.status == "pending" && rn.polls > s.pending {
		s.finish(rn)
	}
	obj := s.runObject(rn)
	s.mu.Unlock()
	s.answer(w, "poll", obj)
}

// finish ends rn as it is set to: failed, or succeeded with the report of
// its date. s.mu is held.
func (s *Server) finish(rn *run) {
	file, ok := s.reports[rn.date]
	switch {
	case s.failure != "":
		rn.status, rn.err = "failed", s.failure
	case !ok:
		rn.status = "failed"
		rn.err = fmt.Sprintf("stripetest: no report set for %s (interval_start %d in %s): call SetReport", rn.date, rn.start, rn.timezone)
	default:
		rn.status, rn.file = "succeeded", file
		s.files[rn.fileID] = rn
	}
}

// runObject is rn as Stripe's API gives it. s.mu is held.
func (s *Server) runObject(rn *run) map[string]any {
	obj := map[string]any{
		"id": rn.id, "object": "reporting.report_run", "created": int64(1), "livemode": false,
		"report_type": rn.reportType, "status": rn.status, "error": nil, "result": nil,
		"parameters": map[string]any{"interval_start": rn.start, "interval_end": rn.end,
			"timezone": rn.timezone, "columns": slices.Clone(rn.columns)},
	}
	switch rn.status {
	case "failed":
		obj["error"] = rn.err
	case "succeeded":
		obj["result"] = map[string]any{
			"id": rn.fileID, "object": "file", "purpose": "finance_report_run", "type": "csv",
			"filename": rn.fileID + ".csv", "size": int64(len(rn.file)),
			"url": s.URL + "/v1/files/" + rn.fileID + "/contents",
		}
	}
	return obj
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	rn := s.lookup(w, r, "download", "file", s.files)
	if rn == nil {
		return
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/csv")
	w.Write(rn.file)
}
