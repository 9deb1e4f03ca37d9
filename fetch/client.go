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
	"time"

	"reconcile/retry"
)

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
// transport is a clone of the default one.
func NewHTTPClient(transport *http.Transport) *http.Client {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	transport.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	transport.TLSHandshakeTimeout = 10 * time.Second
	transport.ResponseHeaderTimeout = 30 * time.Second
	transport.ExpectContinueTimeout = time.Second
	// Redirects are followed only to https, so a signed request or a
	// password is never sent in the clear.
	return &http.Client{Transport: transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to %s, not https: refused", req.URL.Scheme)
		}
		return nil
	}}
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

func (c *Client) http() *http.Client {
	if c.HTTP == nil {
		c.HTTP = NewHTTPClient(nil)
	}
	return c.HTTP
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
