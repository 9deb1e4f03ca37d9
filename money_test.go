package reconcile_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"reconcile"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in, cur string
		want    int64
		err     error
	}{
		{"99.80", "CNY", 9980, nil},
		{"99.8", "CNY", 9980, nil},
		{"0.01", "USD", 1, nil},
		{"1000", "JPY", 1000, nil},
		{"1.000", "JPY", 1, nil},
		{"1.234", "KWD", 1234, nil},
		{"-5.00", "CNY", -500, nil},
		{"+5", "CNY", 500, nil},
		{"92233720368547758.07", "CNY", 9223372036854775807, nil},
		{"92233720368547758.08", "CNY", 0, reconcile.ErrAmountRange},
		{"1,000.00", "CNY", 0, reconcile.ErrBadAmount},
		{"12.345", "CNY", 0, reconcile.ErrAmountPrecision},
		{"1.5", "JPY", 0, reconcile.ErrAmountPrecision},
		{"1e3", "CNY", 0, reconcile.ErrBadAmount},
		{"-", "CNY", 0, reconcile.ErrBadAmount},
		{"", "CNY", 0, reconcile.ErrBadAmount},
		{".5", "CNY", 0, reconcile.ErrBadAmount},
		{"5.", "CNY", 0, reconcile.ErrBadAmount},
		{" 5", "CNY", 0, reconcile.ErrBadAmount},
		{"5", "XXX", 0, reconcile.ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(tt.in+"_"+tt.cur, func(t *testing.T) {
			got, err := reconcile.ParseAmount(tt.in, tt.cur)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error: got %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		in   int64
		cur  string
		want string
	}{
		{9980, "CNY", "99.80"}, {5, "CNY", "0.05"}, {-5, "USD", "-0.05"}, {0, "CNY", "0.00"},
		{1000, "JPY", "1000"}, {1234, "KWD", "1.234"}, {-9223372036854775808, "CNY", "-92233720368547758.08"},
	}
	for _, tt := range tests {
		if got := reconcile.FormatAmount(tt.in, tt.cur); got != tt.want {
			t.Errorf("FormatAmount(%d, %s): got %q, want %q", tt.in, tt.cur, got, tt.want)
		}
		if tt.in > -9223372036854775808 {
			back, err := reconcile.ParseAmount(tt.want, tt.cur)
			if err != nil || back != tt.in {
				t.Errorf("round trip %q: got %d, %v, want %d", tt.want, back, err, tt.in)
			}
		}
	}
}

func TestBusinessDayContains(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", mustLoc(t, "Asia/Shanghai"))
	if err != nil {
		t.Fatal(err)
	}
	utc := mustLoc(t, "UTC")
	tests := []struct {
		at   string
		want bool
	}{
		{"2026-11-27T16:00:00Z", true},  // 00:00 in Shanghai
		{"2026-11-28T15:59:59Z", true},  // 23:59:59
		{"2026-11-28T16:00:00Z", false}, // next day
		{"2026-11-27T15:59:59Z", false},
	}
	for _, tt := range tests {
		at := mustTime(t, tt.at)
		if got := day.Contains(at); got != tt.want {
			t.Errorf("Contains(%s): got %v, want %v", tt.at, got, tt.want)
		}
	}
	if _, err := reconcile.NewBusinessDay("28/11/2026", utc); err == nil {
		t.Error("NewBusinessDay(28/11/2026): got no error, want one")
	}
}

func TestPostingsReverse(t *testing.T) {
	p := reconcile.Postings{{Account: "a", Amount: 100, Currency: "CNY"}, {Account: "b", Amount: -100, Currency: "CNY"}}
	r := p.Reverse()
	if r[0].Account != "b" || r[0].Amount != 100 || r[1].Account != "a" || r[1].Amount != -100 {
		t.Errorf("Reverse: got %+v", r)
	}
	if !r.Balanced() {
		t.Error("reversed postings not balanced")
	}
	if (reconcile.Postings{{Account: "a", Amount: 1, Currency: "CNY"}, {Account: "b", Amount: -1, Currency: "USD"}}).Balanced() {
		t.Error("postings across currencies reported balanced")
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	tests := []struct{ in, want string }{
		{"", `""`},
		{"T1", `"T1"`},
		{"a\x00b", `"a\x00b"`},
		{strings.Repeat("长", reconcile.QuoteRunes), strconv.Quote(strings.Repeat("长", reconcile.QuoteRunes))},
		{strings.Repeat("长", reconcile.QuoteRunes+1), strconv.Quote(strings.Repeat("长", reconcile.QuoteRunes)+"…") + " (195 bytes)"},
		{long, strconv.Quote(strings.Repeat("x", reconcile.QuoteRunes)+"…") + " (10485760 bytes)"},
	}
	for _, tt := range tests {
		if got := reconcile.Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.20q…): got %.100s, want %.100s", tt.in, got, tt.want)
		}
	}
	if _, err := reconcile.ParseAmount(long, "CNY"); err == nil || len(err.Error()) > 200 {
		t.Errorf("ParseAmount of a 10 MB value: error of %d bytes, want a short one", len(err.Error()))
	}
}
