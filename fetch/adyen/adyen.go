// Package adyen downloads Adyen's Settlement details reports,
// settlement_detail_report_batch_<N>.csv, from the Customer Area with a
// report user's credentials:
//
//	GET {BaseURL}/reports/download/MerchantAccount/{merchantAccount}/settlement_detail_report_batch_{N}.csv
//
// Adyen makes one report per settlement batch, numbered in sequence per
// merchant account, not one per date, so Source does not implement
// fetch.Source: the caller keeps the number of the last batch it saved
// and asks Batch for the next ones until it answers fetch.ErrNotReady.
package adyen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"reconcile"
	"reconcile/fetch"
)

// Safe words of the refusals: Adyen's own answers are login pages, not
// reasons.
const (
	msgUnauthorized = "the report user's password is wrong, or the user lacks the report download role " +
		"(or BaseURL is the other environment, live or test, than the user's)"
	msgForbidden = "the report user lacks the report download role for this merchant account, or batch %d is not generated yet: " +
		"Adyen answers 403 for both%s"
)

// Batch asks the Customer Area for the report of settlement batch n
// (n ≥ 1) and offers it once the start of the answer shows a report. It
// returns fetch.ErrNotReady when Adyen has not generated the report yet,
// which is how the caller learns it has every batch there is; a
// *fetch.Refusal when the credentials or their role are wrong, or a login
// page or a JSON error came instead of the report; any other error is a
// failure that survived the retries.
//
// Adyen answers 404 for a batch it has not generated, and also 403 (its
// help pages say so), which it answers too for a user without the role to
// download reports. A 403 is told apart by asking for batch n-1: a user
// who can download that one has the role, so batch n is not ready; when
// n-1 does not download either, or n is 1, it is a refusal, naming both
// causes.
//
// The answer stays open in the Offer, so that not-ready is known before
// fetch.Save and the report is sent once: Offer.Open hands it over, once.
// ctx bounds the whole download, the body's reading included, and an
// Offer never opened holds its connection until ctx ends: give each batch
// a context of its own, ended when done with it, as the download's
// timeout is:
//
//	bctx, cancel := context.WithTimeout(ctx, fetch.DefaultDownloadTimeout)
//	offer, err := src.Batch(bctx, n)
//	if err == nil {
//		_, err = fetch.Save(bctx, offer, path, 0, check)
//	}
//	cancel()
func (s *Source) Batch(ctx context.Context, n int64) (*fetch.Offer, error) {
	if n < 1 {
		return nil, fmt.Errorf("adyen batch %d: Adyen's batch numbers start at 1", n)
	}
	a, err := s.open(ctx, n)
	if err != nil {
		return nil, s.classify(ctx, n, err)
	}
	return a.offer(ctx), nil
}

// answer is a report's answer, its head already read.
type answer struct {
	n    int64
	size int64 // Content-Length, -1 when none
	body io.ReadCloser
	r    io.Reader // the head, then the rest of body
}

// open asks for batch n and reads the start of the answer; it returns
// the answer only when that start looks like a report.
func (s *Source) open(ctx context.Context, n int64) (*answer, error) {
	name := "adyen batch " + strconv.FormatInt(n, 10)
	resp, err := s.client.Open(ctx, name, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url(n), nil)
		if err != nil {
			return nil, err
		}
		s.authorize(req)
		return req, nil
	})
	if err != nil {
		return nil, err
	}
	head, err := readHead(resp.Body)
	if err != nil && err != io.EOF && len(head) == 0 {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: read the start of the report: %w", name, err)
	}
	if serr := sniff(n, resp.StatusCode, resp.Header.Get("Content-Type"), head, err == io.EOF); serr != nil {
		resp.Body.Close()
		return nil, serr
	}
	a := &answer{n: n, size: resp.ContentLength, body: resp.Body}
	switch err {
	case nil:
		a.r = io.MultiReader(bytes.NewReader(head), resp.Body)
	case io.EOF:
		a.r = bytes.NewReader(head)
	default:
		// The failure is kept for the download to meet after the head, so
		// a report cut short is refused by Save, not taken as whole.
		a.r = io.MultiReader(bytes.NewReader(head), failedReader{err})
	}
	return a, nil
}

// url is the address of batch n's report. The merchant account was
// checked to need no escaping; it is escaped all the same.
func (s *Source) url(n int64) string {
	return s.base + "/reports/download/MerchantAccount/" + url.PathEscape(s.merchant) +
		"/settlement_detail_report_batch_" + strconv.FormatInt(n, 10) + ".csv"
}

// classify turns the failure to open batch n into what the caller acts
// on: not ready, refused, or failed.
func (s *Source) classify(ctx context.Context, n int64, err error) error {
	se, ok := errors.AsType[*fetch.StatusError](err)
	if !ok {
		// Refused by sniff, or failed: already named and worded.
		if r, ok := errors.AsType[*fetch.Refusal](err); ok {
			return fmt.Errorf("adyen: %w", r)
		}
		return err
	}
	switch se.Status {
	case http.StatusNotFound:
		return fmt.Errorf("adyen batch %d: not generated yet (HTTP 404): %w", n, fetch.ErrNotReady)
	case http.StatusUnauthorized:
		msg := msgUnauthorized
		if reconcile.EdgeSpace(s.password) {
			// Sent as they are, and the likeliest reason for the 401.
			msg = fmt.Sprintf("%s; %s, sent as part of the password: if they are not meant, remove them from its file or variable",
				msg, reconcile.ErrSecretSpaces)
		}
		return fmt.Errorf("adyen batch %d: %w", n, &fetch.Refusal{Status: se.Status, Message: msg})
	case http.StatusForbidden:
		return s.forbidden(ctx, n)
	}
	return err
}

// forbidden tells a 403 for batch n apart by asking for batch n-1.
func (s *Source) forbidden(ctx context.Context, n int64) error {
	if n == 1 {
		return fmt.Errorf("adyen batch %d: %w", n, &fetch.Refusal{Status: http.StatusForbidden,
			Message: fmt.Sprintf(msgForbidden, n, "")})
	}
	prev, err := s.open(ctx, n-1)
	if err == nil {
		prev.body.Close()
		return fmt.Errorf("adyen batch %d: not generated yet (HTTP 403 while batch %d downloads): %w", n, n-1, fetch.ErrNotReady)
	}
	if transient, _ := fetch.Transient(err); transient || ctx.Err() != nil {
		// Weather, not an answer: the next tick asks again.
		return fmt.Errorf("adyen batch %d: HTTP 403, and batch %d, asked to tell why, failed: %w", n, n-1, err)
	}
	return fmt.Errorf("adyen batch %d: %w", n, &fetch.Refusal{Status: http.StatusForbidden,
		Message: fmt.Sprintf(msgForbidden, n, fmt.Sprintf(", and batch %d does not download either", n-1))})
}

// failedReader is a read that failed, met again after the head.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// offer hands the answer out as an Offer. The body is closed when ctx,
// the one the request was made with, ends: an Offer dropped unopened
// keeps nothing past it.
func (a *answer) offer(ctx context.Context) *fetch.Offer {
	h := &held{a: a, ctx: ctx}
	h.stopRelease = context.AfterFunc(ctx, func() { a.body.Close() })
	return &fetch.Offer{Name: "batch " + strconv.FormatInt(a.n, 10), Size: a.size, Open: h.open}
}

// held is an answer waiting in its Offer.
type held struct {
	a           *answer
	ctx         context.Context // Batch's
	stopRelease func() bool
	mu          sync.Mutex
	opened      bool
}

func (h *held) open(ctx context.Context) (io.ReadCloser, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opened {
		return nil, fmt.Errorf("adyen batch %d: the offer was opened already; ask for the batch again", h.a.n)
	}
	h.opened = true
	if err := h.ctx.Err(); err != nil {
		h.a.body.Close()
		return nil, fmt.Errorf("adyen batch %d: the answer was let go when the context of Batch ended: %w", h.a.n, err)
	}
	if err := ctx.Err(); err != nil {
		h.a.body.Close()
		return nil, fmt.Errorf("adyen batch %d: %w", h.a.n, err)
	}
	// Open's context may end before Batch's: the download stops then too.
	stop := context.AfterFunc(ctx, func() { h.a.body.Close() })
	return &download{a: h.a, stop: func() { stop(); h.stopRelease() }}, nil
}

// download is the report's bytes, the head first.
type download struct {
	a    *answer
	stop func()
	once sync.Once
}

func (d *download) Read(p []byte) (int, error) { return d.a.r.Read(p) }

func (d *download) Close() error {
	var err error
	d.once.Do(func() {
		d.stop()
		err = d.a.body.Close()
	})
	return err
}
