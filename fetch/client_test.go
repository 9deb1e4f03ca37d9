package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reconcile/fetch"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

func TestClientGet(t *testing.T) {
	tests := []struct {
		name    string
		answers []func(w http.ResponseWriter)
		calls   int
		want    string // in the error; "" for success
		minWait time.Duration
	}{
		{"503 then 200", []func(http.ResponseWriter){status(503, ""), status(200, `{"ok":true}`)}, 2, "", 0},
		{"429 with Retry-After", []func(http.ResponseWriter){retryAfter("7"), status(200, `{}`)}, 2, "", 7 * time.Second},
		{"400 is not retried", []func(http.ResponseWriter){status(400, `{"code":"PARAM_ERROR"}`)}, 1, "HTTP 400", 0},
		{"500 until the attempts run out", []func(http.ResponseWriter){status(500, "")}, 3, "gave up after 3 attempts", 0},
		{"an answer past the limit", []func(http.ResponseWriter){status(200, strings.Repeat("x", 2048))}, 1, "larger than 1024 bytes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				tt.answers[min(n, len(tt.answers)-1)](w)
			}))
			defer srv.Close()
			ws := &retrytest.Waits{}
			c := &fetch.Client{HTTP: srv.Client(), Retry: retry.Policy{Attempts: 3, Sleep: ws.Sleep}, Answer: 1024}
			ans, err := c.Get(context.Background(), "tradebill", func(ctx context.Context) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, "GET", srv.URL+"/v3/bill", nil)
			})
			if int(calls.Load()) != tt.calls {
				t.Errorf("calls: got %d, want %d", calls.Load(), tt.calls)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want == "" && ans.Status != 200:
				t.Errorf("status %d, want 200", ans.Status)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
			if tt.minWait > 0 && (len(ws.All()) == 0 || ws.All()[0] < tt.minWait) {
				t.Errorf("waits %v, want the first at least %v", ws.All(), tt.minWait)
			}
		})
	}

	t.Run("a 4xx keeps its body for the channel's error code", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			status(400, `{"code":"STATEMENT_CREATING"}`)(w)
		}))
		defer srv.Close()
		c := &fetch.Client{HTTP: srv.Client()}
		_, err := c.Get(context.Background(), "tradebill", func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		})
		se, ok := errors.AsType[*fetch.StatusError](err)
		if !ok || se.Status != 400 || !strings.Contains(string(se.Body), "STATEMENT_CREATING") {
			t.Errorf("got %v, want a *StatusError 400 with the body", err)
		}
	})

	t.Run("a failing URL's query and user are not repeated", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.NotFoundHandler())
		url := strings.Replace(srv.URL, "https://", "https://report:hunter2@", 1) + "/bill?token=s3cret"
		srv.Close() // nothing listens: the connection is refused
		c := &fetch.Client{HTTP: srv.Client(), Retry: retry.Policy{Attempts: 1}}
		_, err := c.Get(context.Background(), "download", func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", url, nil)
		})
		if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("got %v, want an error without the token or the password", err)
		}
	})
}

func status(code int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.WriteHeader(code)
		w.Write([]byte(body))
	}
}

func retryAfter(secs string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", secs)
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

// TestClientKeepsCredentialsOnTheirHost: a request carrying a credential
// (any header but the few that carry none, or a body such as Alipay's
// signed form) is never sent on to a host other than its own, whatever
// the redirect; one carrying none (a pre-signed download) follows it. A
// host is a name and a port: a second port of the same address is
// another server. Both servers are real, the second addressed by a name
// of its own as well as by its port.
func TestClientKeepsCredentialsOnTheirHost(t *testing.T) {
	var elsewhere atomic.Int32
	var leaked atomic.Value // the last credential the other host received
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		for _, h := range []string{"Authorization", "X-Api-Key", "Cookie"} {
			if v := r.Header.Get(h); v != "" {
				leaked.Store(h + ": " + v)
			}
		}
		w.Write([]byte("report"))
	}))
	defer other.Close()
	var home atomic.Int32
	var mu sync.Mutex
	var target string // where the home server redirects, set per case
	var code int
	redirect := func(to string, status int) {
		mu.Lock()
		defer mu.Unlock()
		target, code = to, status
	}
	own := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		home.Add(1)
		if r.URL.Path == "/moved" {
			w.Write([]byte("report at home"))
			return
		}
		mu.Lock()
		to, status := target, code
		mu.Unlock()
		http.Redirect(w, r, to, status)
	}))
	defer own.Close()
	// Both servers present httptest's certificate, which names example.com
	// and *.example.com: ca.example.com is the home server,
	// files.example.com the other.
	tr := own.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, p, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".example.com") {
			addr = net.JoinHostPort("127.0.0.1", p)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	hc := &http.Client{Transport: tr}
	ownURL := "https://ca.example.com:" + port(own) + "/reports/batch_412.csv"
	otherPort := "https://ca.example.com:" + port(other) + "/batch_412.csv?sig=s3cret"
	otherName := "https://files.example.com:" + port(other) + "/batch_412.csv?sig=s3cret"

	credentials := []struct {
		name  string
		setup func(r *http.Request)
	}{
		{"Adyen X-API-Key", func(r *http.Request) { r.Header.Set("X-API-Key", "AQEkey-s3cret") }},
		{"basic auth", func(r *http.Request) { r.SetBasicAuth("report@Company.Acme", "s3cret") }},
		{"Stripe bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_test_s3cret") }},
		{"WeChat Pay signature", func(r *http.Request) {
			r.Header.Set("Authorization", `WECHATPAY2-SHA256-RSA2048 mchid="1900000001",signature="s3cret"`)
		}},
		{"a header of another channel", func(r *http.Request) { r.Header.Set("X-Channel-Token", "s3cret") }},
	}
	get := func(setup func(*http.Request)) (*fetch.Answer, error) {
		c := &fetch.Client{HTTP: hc, Retry: retry.Policy{Attempts: 1}}
		return c.Get(context.Background(), "batch", func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, "GET", ownURL, nil)
			if err == nil {
				req.Header.Set("Accept", "text/csv")
				req.Header.Set("User-Agent", "reconcile")
				setup(req)
			}
			return req, err
		})
	}
	for _, to := range []struct{ name, url string }{{"another port", otherPort}, {"another name", otherName}} {
		for _, cred := range credentials {
			for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
				t.Run(fmt.Sprintf("%s to %s, %d", cred.name, to.name, status), func(t *testing.T) {
					elsewhere.Store(0)
					leaked.Store("")
					redirect(to.url, status)
					_, err := get(cred.setup)
					if !errors.Is(err, fetch.ErrRedirectElsewhere) {
						t.Errorf("got %v, want the redirect refused", err)
					}
					if n, l := elsewhere.Load(), leaked.Load(); n != 0 || l != "" {
						t.Errorf("the other host got %d requests (credential %q), want none", n, l)
					}
					if err != nil && strings.Contains(err.Error(), "s3cret") {
						t.Errorf("the error shows the query: %v", err)
					}
				})
			}
		}
	}

	t.Run("a signed form posted to another host", func(t *testing.T) {
		elsewhere.Store(0)
		redirect(otherName, http.StatusTemporaryRedirect)
		c := &fetch.Client{HTTP: hc, Retry: retry.Policy{Attempts: 1}}
		_, err := c.Get(context.Background(), "gateway", func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, "POST", ownURL, strings.NewReader("app_id=2021&sign=s3cret"))
			if err == nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			return req, err
		})
		if !errors.Is(err, fetch.ErrRedirectElsewhere) || elsewhere.Load() != 0 {
			t.Errorf("got %v and %d requests elsewhere, want the redirect refused before any", err, elsewhere.Load())
		}
	})

	t.Run("a credential stays on its own host", func(t *testing.T) {
		home.Store(0)
		redirect("https://ca.example.com:"+port(own)+"/moved", http.StatusFound)
		ans, err := get(func(r *http.Request) { r.Header.Set("X-API-Key", "AQEkey-s3cret") })
		if err != nil || string(ans.Body) != "report at home" || home.Load() != 2 {
			t.Errorf("got %v, %d requests at home; want the report after the redirect", err, home.Load())
		}
	})

	t.Run("a download without a credential follows", func(t *testing.T) {
		elsewhere.Store(0)
		leaked.Store("")
		redirect(otherName, http.StatusFound)
		ans, err := get(func(*http.Request) {})
		if err != nil || string(ans.Body) != "report" || elsewhere.Load() != 1 {
			t.Errorf("got %v, %d requests elsewhere; want the report from the other host", err, elsewhere.Load())
		}
	})
}

func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return p
}
