package adyen_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reconcile/channelfeed"
	"reconcile/fetch"
	"reconcile/fetch/adyen"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

// The report user of the fake Customer Area.
const (
	merchant = "AcmeShopECOM"
	user     = "report@Company.AcmeCompanyFAKE"
	password = "s3cret-Pa55!word"
	apiKey   = "AQEfakeAPIkeyOfTheReportUser0123456789-FAKE"
)

// sample is the synthetic batch 412 of /work/shared/formats.
func sample(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "settlement_detail_report_batch_412.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// batch413 is the sample as the next batch, with the BOM an export may
// carry.
func batch413(t *testing.T) []byte {
	return append([]byte("\xef\xbb\xbf"), bytes.ReplaceAll(sample(t), []byte("412"), []byte("413"))...)
}

// bigReport is a report far longer than the head read before it is
// offered, so its bytes cross from the head to the rest of the body.
func bigReport(t *testing.T) []byte {
	s := sample(t)
	header, rows, _ := bytes.Cut(s, []byte("\n"))
	b := append(append([]byte{}, header...), '\n')
	for len(b) < 200<<10 {
		b = append(b, rows...)
	}
	return b
}

// fakeCA is Adyen's Customer Area as far as reports go: basic
// authentication or X-API-Key of one report user, 401 with its realm for
// anything else, the reports of one merchant account, 404 (or 403, as
// Adyen's help pages say it also answers) for a batch not generated yet.
type fakeCA struct {
	srv *httptest.Server

	mu        sync.Mutex
	reports   map[int64][]byte
	script    map[int64][]http.HandlerFunc // answers before the report, in turn
	missing   int                          // status of a batch without a report
	forbidAll bool                         // a user without the report role
	password  string                       // the report user's, default password
	calls     map[int64]int                // requests per batch, once authorised
	requests  int                          // every request
}

func newCA(t *testing.T) *fakeCA {
	ca := &fakeCA{
		reports: map[int64][]byte{412: sample(t), 413: batch413(t), 415: bigReport(t)},
		script:  map[int64][]http.HandlerFunc{},
		missing: http.StatusNotFound,
		calls:   map[int64]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /reports/download/MerchantAccount/{merchant}/{file}", ca.report)
	ca.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ca.mu.Lock()
		ca.requests++
		ca.mu.Unlock()
		if !ca.authorised(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="Adyen Customer Area"`)
			page(w, http.StatusUnauthorized, "<html><body><h1>HTTP Status 401 - Unauthorized</h1></body></html>")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ca.srv.Close)
	return ca
}

func (ca *fakeCA) authorised(r *http.Request) bool {
	if key := r.Header.Get("X-API-Key"); key != "" {
		return key == apiKey
	}
	want := password
	ca.mu.Lock()
	if ca.password != "" {
		want = ca.password
	}
	ca.mu.Unlock()
	u, p, ok := r.BasicAuth()
	return ok && u == user && p == want
}

func page(w http.ResponseWriter, status int, html string) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	w.WriteHeader(status)
	io.WriteString(w, html)
}

func (ca *fakeCA) report(w http.ResponseWriter, r *http.Request) {
	num, ok := strings.CutPrefix(r.PathValue("file"), "settlement_detail_report_batch_")
	num, csv := strings.CutSuffix(num, ".csv")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || !csv || err != nil {
		http.NotFound(w, r)
		return
	}
	ca.mu.Lock()
	ca.calls[n]++
	var next http.HandlerFunc
	if q := ca.script[n]; len(q) > 0 {
		next, ca.script[n] = q[0], q[1:]
	}
	body, have := ca.reports[n]
	missing, forbidAll := ca.missing, ca.forbidAll
	ca.mu.Unlock()

	switch {
	case forbidAll || r.PathValue("merchant") != merchant:
		page(w, http.StatusForbidden, "<html><body>HTTP Status 403 - Access is denied</body></html>")
	case next != nil:
		next(w, r)
	case have:
		serveCSV(w, body)
	default:
		page(w, missing, "<html><body>report not found</body></html>")
	}
}

func serveCSV(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/csv")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func (ca *fakeCA) queue(n int64, answers ...http.HandlerFunc) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	ca.script[n] = append(ca.script[n], answers...)
}

func (ca *fakeCA) counts() (map[int64]int, int) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return maps.Clone(ca.calls), ca.requests
}

func status(code int, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		http.Error(w, http.StatusText(code), code)
	}
}

func answer(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func config(ca *fakeCA, ws *retrytest.Waits) adyen.Config {
	return adyen.Config{
		MerchantAccount: merchant,
		Username:        user,
		Password:        password,
		BaseURL:         ca.srv.URL,
		Client:          &fetch.Client{HTTP: ca.srv.Client(), Retry: retry.Policy{Attempts: 3, Sleep: ws.Sleep}},
	}
}

func source(t *testing.T, ca *fakeCA, edit func(*adyen.Config)) (*adyen.Source, *retrytest.Waits) {
	t.Helper()
	ws := &retrytest.Waits{}
	cfg := config(ca, ws)
	if edit != nil {
		edit(&cfg)
	}
	src, err := adyen.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src, ws
}

// noSecret fails when err shows a credential in any form.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	for _, s := range []string{password, apiKey, basic} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q shows a secret", err)
		}
	}
}

// parses is Save's check: the file is a report channelfeed reads whole.
func parses(ctx context.Context) func(string) error {
	return func(tmp string) error {
		_, err := channelfeed.ParseFile(ctx, tmp, "adyen", channelfeed.Options{}, nil)
		return err
	}
}

func TestBatchSaves(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		n     int64
		edit  func(*adyen.Config)
		check bool // the saved file is also parsed
	}{
		{"batch 412, the sample", 412, nil, true},
		{"batch 413, with a BOM", 413, nil, true},
		{"batch 412 with an API key", 412, func(c *adyen.Config) { c.Username, c.Password, c.APIKey = "", "", apiKey }, true},
		{"a report longer than the head", 415, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newCA(t)
			src, _ := source(t, ca, tt.edit)
			want := ca.reports[tt.n]
			offer, err := src.Batch(ctx, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if got, wantName := offer.Name, fmt.Sprintf("batch %d", tt.n); got != wantName {
				t.Errorf("Name: got %q, want %q", got, wantName)
			}
			if offer.Size != int64(len(want)) || offer.Digest != nil {
				t.Errorf("Size %d, Digest %v: want %d from Content-Length, no digest", offer.Size, offer.Digest, len(want))
			}
			path := filepath.Join(t.TempDir(), fmt.Sprintf("settlement_detail_report_batch_%d.csv", tt.n))
			var check func(string) error
			if tt.check {
				check = parses(ctx)
			}
			saved, err := fetch.Save(ctx, offer, path, 0, check)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if !bytes.Equal(got, want) || !saved.Changed || saved.Bytes != int64(len(want)) {
				t.Errorf("saved %d bytes (changed %v), equal %v: want the %d bytes served", saved.Bytes, saved.Changed, bytes.Equal(got, want), len(want))
			}
			// One request: the answer Batch read the head of is the download.
			if calls, _ := ca.counts(); !maps.Equal(calls, map[int64]int{tt.n: 1}) {
				t.Errorf("calls %v, want one for batch %d", calls, tt.n)
			}
		})
	}
}

func TestBatchNotReady(t *testing.T) {
	tests := []struct {
		name    string
		missing int
		calls   map[int64]int
	}{
		{"404", http.StatusNotFound, map[int64]int{414: 1}},
		// Adyen's help: 403 is also "the report hasn't been generated yet".
		{"403 while the batch before downloads", http.StatusForbidden, map[int64]int{414: 1, 413: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newCA(t)
			ca.missing = tt.missing
			src, ws := source(t, ca, nil)
			offer, err := src.Batch(context.Background(), 414)
			if !errors.Is(err, fetch.ErrNotReady) || offer != nil {
				t.Fatalf("got %v, %v; want fetch.ErrNotReady", offer, err)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok {
				t.Errorf("got a refusal %v, want only not ready", err)
			}
			if calls, _ := ca.counts(); !maps.Equal(calls, tt.calls) {
				t.Errorf("calls %v, want %v", calls, tt.calls)
			}
			if len(ws.All()) != 0 {
				t.Errorf("waited %v: not ready is not retried", ws.All())
			}
		})
	}
}

func TestBatchRefused(t *testing.T) {
	login := `<!DOCTYPE html><html><head><title>Adyen | Customer Area</title></head><body><form action="/ca/ca/login.shtml">Account <input name="j_account">Username <input name="j_username"></form></body></html>`
	tests := []struct {
		name    string
		n       int64
		edit    func(*adyen.Config)
		setup   func(*fakeCA)
		status  int
		code    string
		message string // in the refusal's message
		calls   map[int64]int
	}{
		{"wrong password", 412, func(c *adyen.Config) { c.Password = "not-the-password" }, nil,
			401, "", "password is wrong, or the user lacks the report download role", map[int64]int{}},
		{"a password with spaces at its ends", 412, func(c *adyen.Config) { c.Password = " " + password + "\t" }, nil,
			401, "", "the secret has leading or trailing spaces", map[int64]int{}},
		{"wrong API key", 412, func(c *adyen.Config) { c.Username, c.Password, c.APIKey = "", "", "AQEwrongkey" }, nil,
			401, "", "password is wrong", map[int64]int{}},
		{"a user without the report role", 413, nil, func(ca *fakeCA) { ca.forbidAll = true },
			403, "", "batch 412 does not download either", map[int64]int{413: 1, 412: 1}},
		{"another merchant account", 412, func(c *adyen.Config) { c.MerchantAccount = "OtherShopECOM" }, nil,
			403, "", "lacks the report download role", map[int64]int{412: 1, 411: 1}},
		{"403 for batch 1: nothing to ask", 1, nil, func(ca *fakeCA) { ca.missing = 403 },
			403, "", "batch 1 is not generated yet", map[int64]int{1: 1}},
		{"the login page with 200", 412, nil, func(ca *fakeCA) { ca.queue(412, answer(200, "text/html;charset=UTF-8", login)) },
			200, "", "batch 412 came back as an HTML page (the Customer Area's login page?), not a report: is the report user's role right?", map[int64]int{412: 1}},
		{"HTML labelled a download, after a BOM", 412, nil, func(ca *fakeCA) {
			ca.queue(412, answer(200, "application/octet-stream", "\xef\xbb\xbf\r\n  "+login))
		}, 200, "", "came back as an HTML page", map[int64]int{412: 1}},
		{"a JSON error with 200", 412, nil, func(ca *fakeCA) {
			ca.queue(412, answer(200, "application/json", `{"status":401,"errorCode":"000","message":"HTTP Status Response - Unauthorized","errorType":"security"}`))
		}, 200, `"000"`, `batch 412 came back as JSON, not a report: "HTTP Status Response - Unauthorized"`, map[int64]int{412: 1}},
		{"JSON with hostile text", 412, nil, func(ca *fakeCA) {
			ca.queue(412, answer(200, "", `{"errorCode":"9\u0000","message":"`+strings.Repeat("<!here> ", 500)+`"}`))
		}, 200, `"9 "`, "came back as JSON", map[int64]int{412: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newCA(t)
			if tt.setup != nil {
				tt.setup(ca)
			}
			src, ws := source(t, ca, tt.edit)
			offer, err := src.Batch(context.Background(), tt.n)
			noSecret(t, err)
			r, ok := errors.AsType[*fetch.Refusal](err)
			if !ok || offer != nil {
				t.Fatalf("got %v, %v; want a *fetch.Refusal", offer, err)
			}
			if r.Status != tt.status || r.Code != tt.code || !strings.Contains(r.Message, tt.message) {
				t.Errorf("got status %d code %q message %q; want %d, %q, a message with %q", r.Status, r.Code, r.Message, tt.status, tt.code, tt.message)
			}
			if len(r.Message) > 400 {
				t.Errorf("message of %d bytes: the channel's text must be cut short", len(r.Message))
			}
			if errors.Is(err, fetch.ErrNotReady) {
				t.Errorf("%v is also not ready", err)
			}
			if calls, _ := ca.counts(); !maps.Equal(calls, tt.calls) {
				t.Errorf("calls %v, want %v", calls, tt.calls)
			}
			if len(ws.All()) != 0 {
				t.Errorf("waited %v: a refusal is not retried", ws.All())
			}
		})
	}
}

func TestBatchNotAReport(t *testing.T) {
	tests := []struct {
		name   string
		answer http.HandlerFunc
		want   string
	}{
		{"an empty answer", answer(200, "text/csv", ""), "came back empty"},
		{"CSV without the report's header", answer(200, "text/csv", "foo,bar\n1,2\n"), "no row of its first 12 bytes has a Company Account field"},
		{"the header cut by the head", answer(200, "text/csv", strings.Repeat("x", 9000)+",Company Account\n"), "not a Settlement details report"},
		{"an xlsx", answer(200, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "PK\x03\x04\x14\x00\x06\x00"), "ZIP or xlsx"},
		{"400", status(400), "HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newCA(t)
			ca.queue(412, tt.answer)
			src, _ := source(t, ca, nil)
			offer, err := src.Batch(context.Background(), 412)
			if err == nil || offer != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error with %q", offer, err, tt.want)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok || errors.Is(err, fetch.ErrNotReady) {
				t.Errorf("got %v: want a plain failure, neither refused nor not ready", err)
			}
			if calls, _ := ca.counts(); calls[412] != 1 {
				t.Errorf("calls %v, want one", calls)
			}
		})
	}
}

func TestBatchRetries(t *testing.T) {
	tests := []struct {
		name    string
		answers []http.HandlerFunc
		calls   int
		want    string // in the error; "" for the report
		minWait time.Duration
	}{
		{"500 then the report", []http.HandlerFunc{status(500)}, 2, "", 0},
		{"429 with Retry-After", []http.HandlerFunc{status(429, "Retry-After", "7")}, 2, "", 7 * time.Second},
		{"503 until the attempts run out", []http.HandlerFunc{status(503), status(503), status(503)}, 3, "gave up after 3 attempts", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ca := newCA(t)
			ca.queue(412, tt.answers...)
			src, ws := source(t, ca, nil)
			offer, err := src.Batch(ctx, 412)
			if calls, _ := ca.counts(); calls[412] != tt.calls {
				t.Errorf("calls %d, want %d", calls[412], tt.calls)
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %v, want an error with %q", err, tt.want)
				}
				if _, ok := errors.AsType[*fetch.Refusal](err); ok || errors.Is(err, fetch.ErrNotReady) {
					t.Errorf("got %v: want a failure, neither refused nor not ready", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "settlement_detail_report_batch_412.csv")
			if _, err := fetch.Save(ctx, offer, path, 0, parses(ctx)); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, ca.reports[412]) {
				t.Errorf("saved %d bytes, want the %d of the report", len(got), len(ca.reports[412]))
			}
			if tt.minWait > 0 && (len(ws.All()) == 0 || ws.All()[0] < tt.minWait) {
				t.Errorf("waits %v, want the first at least %v", ws.All(), tt.minWait)
			}
		})
	}
}

func TestSaveRefusesACutReport(t *testing.T) {
	tests := []struct {
		name string
		n    int64 // whose report is cut
	}{
		{"cut within the head", 412},
		{"cut after the head", 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ca := newCA(t)
			body := ca.reports[tt.n]
			ca.queue(tt.n, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/csv")
				w.Header().Set("Content-Length", strconv.Itoa(len(body)+1000))
				w.Write(body)
			})
			src, _ := source(t, ca, nil)
			offer, err := src.Batch(ctx, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if offer.Size != int64(len(body)+1000) {
				t.Errorf("Size %d, want the stated %d", offer.Size, len(body)+1000)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "report.csv")
			if _, err := fetch.Save(ctx, offer, path, 0, nil); err == nil {
				t.Fatal("Save took a report shorter than its Content-Length")
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stat %s: %v, want no file", path, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left in the directory: %v", ents)
			}
		})
	}
}

func TestOffer(t *testing.T) {
	t.Run("one not opened lets its answer go when its context ends", func(t *testing.T) {
		ca := newCA(t)
		gone := make(chan struct{})
		ca.queue(412, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/csv")
			w.Write(bigReport(t)[:64<<10])
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the client hung up
			close(gone)
		})
		src, _ := source(t, ca, nil)
		ctx, cancel := context.WithCancel(context.Background())
		offer, err := src.Batch(ctx, 412)
		if err != nil {
			t.Fatal(err)
		}
		if offer.Size != -1 {
			t.Errorf("Size %d, want -1 for an answer without Content-Length", offer.Size)
		}
		cancel()
		select {
		case <-gone:
		case <-time.After(10 * time.Second):
			t.Fatal("the connection is still held after the context ended")
		}
		if _, err := offer.Open(context.Background()); err == nil {
			t.Error("Open after the context ended: got a body, want an error")
		}
	})

	t.Run("opened twice", func(t *testing.T) {
		ctx := context.Background()
		ca := newCA(t)
		src, _ := source(t, ca, nil)
		offer, err := src.Batch(ctx, 412)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fetch.Save(ctx, offer, filepath.Join(t.TempDir(), "a.csv"), 0, nil); err != nil {
			t.Fatal(err)
		}
		if body, err := offer.Open(ctx); err == nil || !strings.Contains(err.Error(), "opened already") {
			t.Errorf("second Open: got %v, %v; want an error", body, err)
		}
	})

	t.Run("a download stops when Open's context ends", func(t *testing.T) {
		ca := newCA(t)
		ca.queue(412, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/csv")
			w.Write(bigReport(t)[:64<<10])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			// The rest never comes, nor the end of a whole answer.
			panic(http.ErrAbortHandler)
		})
		src, _ := source(t, ca, nil)
		offer, err := src.Batch(context.Background(), 412)
		if err != nil {
			t.Fatal(err)
		}
		octx, cancel := context.WithCancel(context.Background())
		body, err := offer.Open(octx)
		if err != nil {
			t.Fatal(err)
		}
		defer body.Close()
		copied := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, body)
			copied <- err
		}()
		cancel()
		select {
		case err := <-copied:
			if err == nil {
				t.Error("the download ended cleanly after Open's context ended; want an error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the download still waits after Open's context ended")
		}
	})
}

func TestBatchRedirectedToHTTP(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveCSV(w, sample(t))
	}))
	defer plain.Close()
	ca := newCA(t)
	ca.queue(412, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/settlement_detail_report_batch_412.csv", http.StatusFound)
	})
	src, _ := source(t, ca, nil)
	offer, err := src.Batch(context.Background(), 412)
	if err == nil || offer != nil || !strings.Contains(err.Error(), "not https: refused") {
		t.Errorf("got %v, %v; want the http answer refused", offer, err)
	}
	noSecret(t, err)
}

// TestBatchKeepsTheKeyOnItsHost: a Customer Area redirecting a report
// elsewhere never has the report user's API key or password sent there.
func TestBatchKeepsTheKeyOnItsHost(t *testing.T) {
	for _, cred := range []struct {
		name string
		edit func(*adyen.Config)
	}{
		{"API key", func(c *adyen.Config) { c.Username, c.Password, c.APIKey = "", "", apiKey }},
		{"basic auth", nil},
	} {
		t.Run(cred.name, func(t *testing.T) {
			var got atomic.Int32
			var seen atomic.Value
			seen.Store("")
			other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				seen.Store(r.Header.Get("X-API-Key") + r.Header.Get("Authorization"))
				serveCSV(w, sample(t))
			}))
			defer other.Close()
			ca := newCA(t)
			ca.queue(412, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/settlement_detail_report_batch_412.csv", http.StatusFound)
			})
			src, _ := source(t, ca, cred.edit)
			offer, err := src.Batch(context.Background(), 412)
			if err == nil || offer != nil || !errors.Is(err, fetch.ErrRedirectElsewhere) {
				t.Errorf("got %v, %v; want the redirect refused", offer, err)
			}
			if got.Load() != 0 || seen.Load() != "" {
				t.Errorf("the other host got %d requests, credentials %q; want none", got.Load(), seen.Load())
			}
			noSecret(t, err)
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*adyen.Config)
		want string
	}{
		{"a merchant account climbing the path", func(c *adyen.Config) { c.MerchantAccount = "../Company/AcmeCompanyFAKE" }, "dot segment"},
		{"a merchant account of two dots", func(c *adyen.Config) { c.MerchantAccount = ".." }, "dot segment"},
		{"a merchant account of one dot", func(c *adyen.Config) { c.MerchantAccount = "." }, "dot segment"},
		{"a slash", func(c *adyen.Config) { c.MerchantAccount = "Acme/ECOM" }, `has "/"`},
		{"an escaped slash", func(c *adyen.Config) { c.MerchantAccount = "Acme%2FECOM" }, `has "%"`},
		{"a query", func(c *adyen.Config) { c.MerchantAccount = "Acme?x=1" }, `has "?"`},
		{"a space", func(c *adyen.Config) { c.MerchantAccount = "Acme ECOM" }, `has " "`},
		{"a NUL", func(c *adyen.Config) { c.MerchantAccount = "Acme\x00" }, `has "\x00"`},
		{"a letter outside ASCII", func(c *adyen.Config) { c.MerchantAccount = "AcméECOM" }, "letters, digits"},
		{"an empty merchant account", func(c *adyen.Config) { c.MerchantAccount = "" }, "MerchantAccount is empty"},
		{"a merchant account too long", func(c *adyen.Config) { c.MerchantAccount = strings.Repeat("A", 81) }, "at most 80"},
		{"http", func(c *adyen.Config) { c.BaseURL = "http://ca-live.adyen.com" }, "must be https"},
		{"a base URL with a user", func(c *adyen.Config) { c.BaseURL = "https://report:" + password + "@ca-live.adyen.com" }, "carries a user"},
		{"a base URL with a query", func(c *adyen.Config) { c.BaseURL = "https://ca-live.adyen.com/?a=b" }, "query"},
		{"a base URL without a host", func(c *adyen.Config) { c.BaseURL = "https:///reports" }, "no host"},
		{"no credentials", func(c *adyen.Config) { c.Username, c.Password = "", "" }, "no credentials"},
		{"no password", func(c *adyen.Config) { c.Password = "" }, "Password is empty"},
		{"no username", func(c *adyen.Config) { c.Username = "" }, "Username is empty"},
		{"a password with its file's newline", func(c *adyen.Config) { c.Password = password + "\n" }, "control character"},
		{"a colon in the username", func(c *adyen.Config) { c.Username = "report:x@Company.A" }, "colon"},
		{"an API key and a password", func(c *adyen.Config) { c.APIKey = apiKey }, "not both"},
		{"an API key with a space", func(c *adyen.Config) { c.Username, c.Password, c.APIKey = "", "", "AQE key" }, "APIKey has a space"},
		{"an API key with spaces at its ends", func(c *adyen.Config) { c.Username, c.Password, c.APIKey = "", "", apiKey+" " },
			"APIKey: the secret has leading or trailing spaces"},
		{"a password with a byte order mark", func(c *adyen.Config) { c.Password = "\ufeff" + password }, "invisible character"},
		{"a password of two lines", func(c *adyen.Config) { c.Password = password + "\nsecond" }, "control character"},
		{"a password not UTF-8", func(c *adyen.Config) { c.Password = password + "\xff" }, "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newCA(t)
			ws := &retrytest.Waits{}
			cfg := config(ca, ws)
			tt.edit(&cfg)
			src, err := adyen.New(cfg)
			if err == nil || src != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error with %q", src, err, tt.want)
			}
			noSecret(t, err)
			if _, requests := ca.counts(); requests != 0 {
				t.Errorf("%d requests sent by a refused configuration", requests)
			}
		})
	}

	t.Run("batch numbers below 1", func(t *testing.T) {
		ca := newCA(t)
		src, _ := source(t, ca, nil)
		for _, n := range []int64{0, -1} {
			if offer, err := src.Batch(context.Background(), n); err == nil || offer != nil {
				t.Errorf("Batch(%d): got %v, %v; want an error", n, offer, err)
			}
		}
		if _, requests := ca.counts(); requests != 0 {
			t.Errorf("%d requests sent for no batch", requests)
		}
	})

	t.Run("the defaults", func(t *testing.T) {
		src, err := adyen.New(adyen.Config{MerchantAccount: "Acme_Shop-ECOM.2", Username: user, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		if got := src.String(); !strings.Contains(got, "Acme_Shop-ECOM.2") {
			t.Errorf("String: got %q", got)
		}
	})
}

func TestSecretsStayHidden(t *testing.T) {
	ca := newCA(t)
	cfg := config(ca, &retrytest.Waits{})
	src, err := adyen.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keyed := cfg
	keyed.Username, keyed.Password, keyed.APIKey = "", "", apiKey
	for _, s := range []string{
		fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(&cfg),
		fmt.Sprintf("%v", keyed), fmt.Sprintf("%+v", src), fmt.Sprintf("%#v", src), fmt.Sprint(src),
	} {
		if strings.Contains(s, password) || strings.Contains(s, apiKey) {
			t.Errorf("%q shows a secret", s)
		}
	}
	if got := fmt.Sprint(cfg); !strings.Contains(got, "Password: (set)") || !strings.Contains(got, user) {
		t.Errorf("got %q, want the user shown and the password said to be set", got)
	}
}

// TestBatchSendsThePasswordAsItIs: a password beginning or ending with a
// space or a tab is the report user's password, sent as it is; a wrong
// password without such spaces gets no word about them.
func TestBatchSendsThePasswordAsItIs(t *testing.T) {
	const spaced = " pass word \t"
	ca := newCA(t)
	ca.password = spaced
	src, _ := source(t, ca, func(c *adyen.Config) { c.Password = spaced })
	offer, err := src.Batch(context.Background(), 412)
	if err != nil || offer == nil {
		t.Fatalf("got %v, %v; want batch 412 with the password as it is", offer, err)
	}
	if _, err := offer.Open(context.Background()); err != nil {
		t.Fatal(err)
	}

	src, _ = source(t, ca, func(c *adyen.Config) { c.Password = "pass word" })
	_, err = src.Batch(context.Background(), 412)
	if r, ok := errors.AsType[*fetch.Refusal](err); !ok || r.Status != 401 || strings.Contains(r.Message, "spaces") {
		t.Errorf("got %v; want a 401 refusal that says nothing of spaces", err)
	}
}
