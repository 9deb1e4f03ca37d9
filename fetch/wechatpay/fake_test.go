package wechatpay_test

import (
	"crypto/rsa"
	"os"
	"testing"
	"time"

	"reconcile"
	"reconcile/fetch"
	"reconcile/fetch/wechatpay"
	"reconcile/fetch/wechatpay/wechatpaytest"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

// The tests' fake WeChat Pay is wechatpaytest's, serving the bill of
// testdata for every date, its clock stopped at clock.

const (
	mchID          = wechatpaytest.MchID
	merchantSerial = wechatpaytest.SerialNo
	platformKeyID  = wechatpaytest.PublicKeyID
)

type (
	fakeWeChat = wechatpaytest.Server
	answer     = wechatpaytest.Answer
)

const (
	unsigned      = wechatpaytest.Unsigned
	wrongKey      = wechatpaytest.WrongKey
	unknownSerial = wechatpaytest.UnknownSerial
	stale         = wechatpaytest.Stale
	future        = wechatpaytest.Future
	badBase64     = wechatpaytest.BadBase64
)

type testKeys struct {
	merchant *rsa.PrivateKey // the merchant's API key: signs requests
	platform *rsa.PrivateKey // WeChat Pay's: signs answers
	stranger *rsa.PrivateKey // anyone else's
}

func keys() testKeys {
	k := wechatpaytest.TestKeys()
	return testKeys{merchant: k.Merchant, platform: k.Platform, stranger: k.Stranger}
}

// cst is Beijing time, the bill's.
var cst = time.FixedZone("CST", 8*3600)

// clock is the test's now: 10:30 the morning after the bill's day.
var clock = time.Date(2026, 11, 29, 10, 30, 0, 0, cst)

func billDay(t *testing.T) reconcile.BusinessDay {
	t.Helper()
	day, err := reconcile.NewBusinessDay("2026-11-28", cst)
	if err != nil {
		t.Fatal(err)
	}
	return day
}

// newFake starts the fake with testdata's bill for every date; answers,
// when given, are its tradebill answers in turn.
func newFake(t *testing.T, answers ...answer) *fakeWeChat {
	t.Helper()
	bill, err := os.ReadFile("testdata/tradebill_ALL.csv")
	if err != nil {
		t.Fatal(err)
	}
	f := wechatpaytest.NewServer(t)
	f.SetBill("", bill)
	f.Set(func(st *wechatpaytest.State) {
		st.Now = func() time.Time { return clock }
		st.Answers = answers
	})
	return f
}

// config is the merchant's configuration against f, with the retries'
// waits recorded in rec.
func config(f *fakeWeChat, rec *retrytest.Waits) wechatpay.Config {
	return wechatpay.Config{
		MchID:      mchID,
		SerialNo:   merchantSerial,
		PrivateKey: keys().merchant,
		PublicKeys: map[string]*rsa.PublicKey{platformKeyID: &keys().platform.PublicKey},
		BaseURL:    f.URL,
		Client:     &fetch.Client{HTTP: f.Client(), Retry: retry.Policy{Sleep: rec.Sleep}},
		Now:        func() time.Time { return clock },
	}
}

func source(t *testing.T, f *fakeWeChat, edit func(*wechatpay.Config)) (*wechatpay.Source, *retrytest.Waits) {
	t.Helper()
	rec := &retrytest.Waits{}
	cfg := config(f, rec)
	if edit != nil {
		edit(&cfg)
	}
	src, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return src, rec
}
