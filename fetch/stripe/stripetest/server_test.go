package stripetest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/fetch"
	"reconcile/fetch/stripe"
	"reconcile/fetch/stripe/stripetest"
)

// source is a fetch/stripe Source of the day in Tokyo, wired to s as
// another package's test wires one.
func source(t *testing.T, s *stripetest.Server) *stripe.Source {
	t.Helper()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	src, err := stripe.New(stripe.Config{APIKey: stripe.APIKey(s.Key), Location: tokyo, APIURL: s.URL, FilesURL: s.URL,
		Client: &fetch.Client{HTTP: s.Client()},
		Sleep:  func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatalf("stripe.New: %v", err)
	}
	return src
}

func day(t *testing.T, date string) reconcile.BusinessDay {
	t.Helper()
	d, err := reconcile.NewBusinessDay(date, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReportOfTheRunsDate(t *testing.T) {
	s := stripetest.NewServer(t)
	// Tokyo's 2026-11-28 begins on the 27th in UTC: the date is the one
	// in the run's timezone.
	want := []byte("balance_transaction_id,gross\ntxn_1,10.00\n")
	s.SetReport("2026-11-28", want)
	s.SetReport("2026-11-27", []byte("balance_transaction_id,gross\ntxn_other,1.00\n"))

	offer, err := source(t, s).Offer(context.Background(), day(t, "2026-11-28"))
	if err != nil {
		t.Fatalf("Offer: %v", err)
	}
	body, err := offer.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || offer.Size != int64(len(want)) {
		t.Errorf("file: got %q (stated size %d), want %q", got, offer.Size, want)
	}

	run := s.LastRun()
	wantStart := strconv.FormatInt(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC).Unix(), 10)
	if got := run.Get("parameters[interval_start]"); got != wantStart {
		t.Errorf("interval_start: got %s, want %s", got, wantStart)
	}
	if got := run.Get("parameters[timezone]"); got != "Asia/Tokyo" {
		t.Errorf("timezone: got %q, want Asia/Tokyo", got)
	}
	if cols := stripetest.Columns(run); len(cols) < 2 || cols[0] != "balance_transaction_id" {
		t.Errorf("columns: got %q, want the list posted", cols)
	}
	for kind, want := range map[string]int{"report_types": 1, "create": 1, "poll": 1, "download": 1} {
		if got := s.Calls(kind); got != want {
			t.Errorf("%s calls: got %d, want %d", kind, got, want)
		}
	}
}

func TestDateWithoutReportFails(t *testing.T) {
	s := stripetest.NewServer(t)
	s.SetReport("2026-11-27", []byte("balance_transaction_id\n"))
	_, err := source(t, s).Offer(context.Background(), day(t, "2026-11-28"))
	if err == nil || !strings.Contains(err.Error(), "no report set for 2026-11-28") {
		t.Fatalf("Offer: got %v, want the run failed for want of a report", err)
	}
	if errors.Is(err, fetch.ErrNotReady) || errors.Is(err, fetch.ErrNoBill) {
		t.Errorf("got %v, want a plain failure", err)
	}
	if got := s.Calls("download"); got != 0 {
		t.Errorf("download calls: got %d, want 0", got)
	}
}

func TestNotReadyBeforeAvailableEnd(t *testing.T) {
	s := stripetest.NewServer(t)
	s.SetReport("2026-11-28", []byte("balance_transaction_id\n"))
	// The Tokyo day ends at 15:00Z on the 28th.
	s.SetAvailableEnd(time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC))
	_, err := source(t, s).Offer(context.Background(), day(t, "2026-11-28"))
	if !errors.Is(err, fetch.ErrNotReady) {
		t.Fatalf("Offer: got %v, want fetch.ErrNotReady", err)
	}
	if got := s.Calls("create"); got != 0 {
		t.Errorf("create calls: got %d, want 0", got)
	}
}

func TestKeys(t *testing.T) {
	s := stripetest.NewServer(t)
	basic := func(key string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":")) }
	for _, tc := range []struct {
		name string
		auth string
		want int
	}{
		// Stripe takes the key as the Basic user as well as Bearer; the
		// fake must too, or it would refuse a client Stripe accepts.
		{"bearer", "Bearer " + s.Key, http.StatusOK},
		{"basic user", basic(s.Key), http.StatusOK},
		{"none", "", http.StatusUnauthorized},
		{"wrong", "Bearer sk_test_51Wrong0000000000000wrZ2", http.StatusUnauthorized},
		{"expired", "Bearer " + stripetest.ExpiredKey, http.StatusUnauthorized},
		{"restricted", "Bearer " + stripetest.RestrictedKey, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/v1/reporting/report_types/"+stripe.DefaultReportType, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("got HTTP %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want != http.StatusOK && !bytes.Contains(body, []byte(`"error":{`)) {
				t.Errorf("body %q is not Stripe's error object", body)
			}
		})
	}
}
