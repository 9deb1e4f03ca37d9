package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/stripe/stripe-go/v82"

	"reconcile"
	"reconcile/fetch"
	"reconcile/retry"
)

const (
	// errorBody is how much of an error answer is read for Stripe's
	// error object.
	errorBody = 64 << 10
)

// call runs one SDK call under the job's retry policy, with the call
// timeout of fetch.Client on each try. The SDK's errors are made safe
// before the policy sees them, since its error messages end up in ours.
func (s *Source) call(ctx context.Context, name string, do func(ctx context.Context) error) error {
	timeout := s.client.Call
	if timeout <= 0 {
		timeout = fetch.DefaultCallTimeout
	}
	rt, cancel := s.client.Retry.Start(ctx, s.transient)
	defer cancel()
	err := rt.Do(name, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return s.clean(do(ctx))
	})
	if err == nil {
		return nil
	}
	ae, ok := errors.AsType[*apiError](err)
	if !ok {
		return err
	}
	switch {
	case ae.code == "payout_reconciliation_not_ready":
		return fmt.Errorf("%s: %s: %w", name, ae, fetch.ErrNotReady)
	case ae.status == http.StatusUnauthorized, ae.status == http.StatusForbidden,
		ae.status == http.StatusBadRequest, ae.status == http.StatusNotFound:
		// A wrong or expired key, a restricted key without Reporting
		// access, a report type or column the account does not have: a
		// person has to change the key or the config.
		return fmt.Errorf("%s: %w", name, ae.refusal())
	}
	return err
}

// transient is the retry classification of the SDK's calls: 429 (with
// its Retry-After) and 5xx from Stripe, an error page that is not
// Stripe's JSON as fetch.Transient takes it, and the connection's
// failures.
func (s *Source) transient(err error) (bool, time.Duration) {
	if ae, ok := errors.AsType[*apiError](err); ok {
		if ae.status == http.StatusTooManyRequests || ae.status >= 500 {
			return true, ae.retryAfter
		}
		return false, 0
	}
	return fetch.Transient(err)
}

// apiError is an error answer of Stripe's API, made safe to print. The
// SDK's *stripe.Error prints all of Stripe's JSON, whose message quotes
// part of a wrong key.
type apiError struct {
	status     int
	typ, code  string
	message    string
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.status)
	if e.typ != "" {
		s += " " + e.typ
	}
	if e.code != "" {
		s += " (" + e.code + ")"
	}
	if e.message != "" {
		s += ": " + strconv.Quote(e.message)
	}
	return s
}

// refusal is e as the fetch package tells a person: the code Stripe
// gave, else its error type (a wrong key has no code).
func (e *apiError) refusal() *fetch.Refusal {
	return &fetch.Refusal{Status: e.status, Code: cmpOr(e.code, e.typ), Message: e.message}
}

// clean turns what the SDK returned into an error safe to print and
// keeps what the retry classification reads.
func (s *Source) clean(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*sdk.Error](err); ok {
		ae := &apiError{
			status:  se.HTTPStatusCode,
			typ:     safe(string(se.Type), s.key, 64),
			code:    safe(string(se.Code), s.key, 64),
			message: safe(se.Msg, s.key, 300),
		}
		// The SDK keeps the answer's headers on the error.
		if se.LastResponse != nil {
			ae.retryAfter = retry.RetryAfter(se.LastResponse.Header.Get("Retry-After"), s.now(), fetch.MaxRetryAfter)
		}
		return ae
	}
	if fe, ok := errors.AsType[*fetch.StatusError](err); ok {
		return fe // an error page guard took from the SDK
	}
	if e, ok := errors.AsType[*tooLarge](err); ok {
		return e
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		// A redirect's URL is the channel's words.
		shown := "(url not shown)"
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.User, u.Fragment = "", nil, ""
			shown = safe(u.String(), s.key, 200)
		}
		return &url.Error{Op: ue.Op, URL: shown, Err: ue.Err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// The SDK's other errors quote the answer ("Couldn't deserialize
	// JSON (… body sample: '…')").
	return fmt.Errorf("unreadable answer: %s", reconcile.Quote(safe(err.Error(), s.key, 200)))
}

// downloadError makes a refused download a *fetch.Refusal, with Stripe's
// error object read from the answer.
func (s *Source) downloadError(name string, err error) error {
	se, ok := errors.AsType[*fetch.StatusError](err)
	if !ok || se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden {
		return err
	}
	r := &fetch.Refusal{Status: se.Status}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(se.Body, &body) == nil {
		r.Code = safe(cmpOr(body.Error.Code, body.Error.Type), s.key, 64)
		r.Message = safe(body.Error.Message, s.key, 300)
	}
	return fmt.Errorf("%s: %w", name, r)
}

// keyLike is an API key as Stripe's messages quote it, masked or not
// ("Invalid API Key provided: sk_test_****1234").
var keyLike = regexp.MustCompile(`(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9*_]*`)

// safe is text from Stripe as it may go into an error: control
// characters replaced, anything like an API key taken out, cut to n
// runes.
func safe(s, key string, n int) string {
	s = reconcile.Printable(s)
	if key != "" {
		s = strings.ReplaceAll(s, key, "(key not shown)")
	}
	s = keyLike.ReplaceAllString(s, "(key not shown)")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// guarded is hc for the SDK: its redirects follow the job's policy
// (fetch.Guard), the answers it reads whole are bounded, and
// an error answer that is not Stripe's JSON (a proxy's 502 page) comes
// back as a *fetch.StatusError, since the SDK would only say it could not
// decode it and lose the status.
func (s *Source) guarded(hc *http.Client) *http.Client {
	g := fetch.Guard(hc)
	base := g.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	limit := s.client.Answer
	if limit <= 0 {
		limit = fetch.DefaultAnswer
	}
	g.Transport = &guard{base: base, limit: limit}
	return g
}

type guard struct {
	base  http.RoundTripper
	limit int64
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 400 {
		resp.Body = &cappedBody{r: io.LimitReader(resp.Body, g.limit+1), c: resp.Body, limit: g.limit}
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, errorBody))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &obj) != nil || len(obj.Error) == 0 || obj.Error[0] != '{' {
		return nil, &fetch.StatusError{Call: req.Method + " " + req.URL.Path, Status: resp.StatusCode, Header: resp.Header, Body: body}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// cappedBody fails a read past limit.
type cappedBody struct {
	r     io.Reader
	c     io.Closer
	n     int64
	limit int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return 0, &tooLarge{limit: b.limit}
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.c.Close() }

// tooLarge is an API answer past the limit: refused, not retried.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("answer larger than %d bytes: refused", e.limit)
}
