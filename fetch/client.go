package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"reconcile/retry"
)

// ErrRedirectElsewhere is a redirect of a request carrying a credential
// to a host other than the request's own: refused (see checkRedirect).
var ErrRedirectElsewhere = errors.New("redirect to another host")

// Client is the HTTP client every channel's API is called through: every
// call has a timeout, and failures of the connection, 5xx and 429 are tried
// again under the job's retry policy, honouring a Retry-After.
type Client struct {
	HTTP   *http.Client
	Retry  retry.Policy
	Call   time.Duration // timeout of one API call, default 30s
	Answer int64         // largest API answer read, default 1 MiB
}

// Defaults of Client.
const (
	DefaultCallTimeout     = 30 * time.Second
	DefaultDownloadTimeout = 10 * time.Minute
	// DefaultAnswer is the largest API answer read when Client.Answer
	// is 0.
	DefaultAnswer = 1 << 20
	// MaxRetryAfter caps the wait a Retry-After may ask.
	MaxRetryAfter = 5 * time.Minute
	// errorBody is how much of an answer that is not 2xx is kept to read
	// the channel's error code from.
	errorBody = 64 << 10
)

// NewHTTPClient is an http.Client with timeouts on the connection's
// every step; the time of a whole call is bounded by its context. A nil
// transport is a clone of the default one. Its redirects are checked by
// Guard, which Client puts in front of every client it is given.
func NewHTTPClient(transport *http.Transport) *http.Client {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	transport.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	transport.TLSHandshakeTimeout = 10 * time.Second
	transport.ResponseHeaderTimeout = 30 * time.Second
	transport.ExpectContinueTimeout = time.Second
	return &http.Client{Transport: transport}
}

// Guard returns a copy of hc that follows a redirect only as the job's
// credentials allow (checkRedirect), then as hc's own CheckRedirect does.
// Every call to a channel goes through a guarded client: Client's, and
// the Stripe SDK's.
func Guard(hc *http.Client) *http.Client {
	g := *hc
	own := hc.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkRedirect(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &g
}

// checkRedirect is the redirect policy of every channel's calls. A
// redirect is followed only to https, so nothing is sent in the clear,
// and a request carrying a credential only to its own host: a channel's
// key, password or signature never leaves the host it was configured
// for. Go's own rule is narrower: it drops only Authorization and Cookie,
// and only for another host name, not another port, so Adyen's
// X-API-Key, or a basic password sent to a second port of the same
// name, would follow. A download carrying no credential (a pre-signed
// URL, Alipay's bill) goes wherever it is sent.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("more than 5 redirects")
	}
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s, not https: refused", req.URL.Scheme)
	}
	first := via[0]
	if hostOf(req.URL) == hostOf(first.URL) || !carriesCredential(first) {
		return nil
	}
	return fmt.Errorf("%w (%s, from %s) while the request carries a credential: refused",
		ErrRedirectElsewhere, hostOf(req.URL), hostOf(first.URL))
}

// hostOf is the host a request goes to: its name, in lower case, and
// its port, the scheme's when the URL names none. A second port of the
// same name is another server, so another host.
func hostOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// plainHeaders are the request headers that carry no credential. Any
// other header a channel's client sets is taken for one (Authorization
// of WeChat Pay's signature, Stripe's key, Adyen's basic auth; Adyen's
// X-API-Key; whatever a client adds later), so a new header is safe
// until it is listed here.
var plainHeaders = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Accept-Language": true, "User-Agent": true,
	"Content-Type": true, "Range": true, "If-None-Match": true, "If-Modified-Since": true,
}

// carriesCredential says whether r carries anything that vouches for
// the job: a header not known to be plain, a user in its URL, or a body
// (Alipay's form is signed, and a 307 or 308 sends it again).
func carriesCredential(r *http.Request) bool {
	if r.URL.User != nil || r.Body != nil && r.Body != http.NoBody {
		return true
	}
	for name := range r.Header {
		if !plainHeaders[http.CanonicalHeaderKey(name)] {
			return true
		}
	}
	return false
}

// StatusError is an answer that is not 2xx, with the start of its body for
// the channel's client to read its error code from.
type StatusError struct {
	Call   string
	Status int
	Header http.Header
	Body   []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.Call, e.Status, http.StatusText(e.Status))
}

// Transient is the retry classification of the channels' HTTP calls:
// the connection's failures, 5xx, and 429 with its Retry-After.
func Transient(err error) (bool, time.Duration) {
	if se, ok := errors.AsType[*StatusError](err); ok {
		switch {
		case se.Status == http.StatusTooManyRequests:
			return true, retry.RetryAfter(se.Header.Get("Retry-After"), time.Now(), MaxRetryAfter)
		case se.Status >= 500:
			return true, retry.RetryAfter(se.Header.Get("Retry-After"), time.Now(), MaxRetryAfter)
		}
		return false, 0
	}
	return retry.Network(err), 0
}

func (c *Client) callTimeout() time.Duration {
	if c.Call > 0 {
		return c.Call
	}
	return DefaultCallTimeout
}

// http is the client of one call, its redirects guarded.
func (c *Client) http() *http.Client {
	if c.HTTP == nil {
		c.HTTP = NewHTTPClient(nil)
	}
	return Guard(c.HTTP)
}

// Answer is a 2xx answer read whole.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Get sends the request that newReq makes (again on every try), reads the
// whole answer, and returns it when 2xx. Any other status is a
// *StatusError after the retries; a body past the limit is refused.
// newReq is called again for every try, so a signed request is signed
// afresh (a new nonce and timestamp).
func (c *Client) Get(ctx context.Context, name string, newReq func(ctx context.Context) (*http.Request, error)) (*Answer, error) {
	limit := c.Answer
	if limit <= 0 {
		limit = DefaultAnswer
	}
	rt, cancel := c.Retry.Start(ctx, Transient)
	defer cancel()
	var ans *Answer
	err := rt.Do(name, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.callTimeout())
		defer cancel()
		resp, err := c.send(ctx, newReq)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
		if err != nil {
			return cleanURL(err)
		}
		if int64(len(body)) > limit {
			return fmt.Errorf("answer larger than %d bytes: refused", limit)
		}
		ans = &Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ans, nil
}

// Open sends the request and returns the body of a 2xx answer to stream,
// retrying until the answer's headers arrive. The download's time is
// bounded by ctx: the caller gives it the download timeout.
func (c *Client) Open(ctx context.Context, name string, newReq func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	rt, cancel := c.Retry.Start(ctx, Transient)
	defer cancel()
	var out *http.Response
	err := rt.Do(name, func(rctx context.Context) error {
		// The retries' budget bounds the tries, not the body read after.
		resp, err := c.send(ctx, newReq)
		if err != nil {
			return err
		}
		out = resp
		return nil
	})
	return out, err
}

// send makes and sends one request; a status that is not 2xx comes back
// as a *StatusError with the start of its body.
func (c *Client) send(ctx context.Context, newReq func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	req, err := newReq(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, cleanURL(err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBody))
	return nil, &StatusError{Call: req.Method + " " + req.URL.Path, Status: resp.StatusCode, Header: resp.Header, Body: bytes.Clone(body)}
}

// cleanURL drops the query and user of the URL net/http quotes in its
// errors: a download URL's query can carry a token, a URL's user a
// password.
func cleanURL(err error) error {
	ue, ok := errors.AsType[*url.Error](err)
	if !ok {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return &url.Error{Op: ue.Op, URL: "(url not shown)", Err: ue.Err}
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
}
