// Package alipay fetches a merchant's Alipay bill of a day through the open
// platform's alipay.data.dataservice.bill.downloadurl.query: a request
// signed with the app's private key (RSA2) asks the gateway for the
// bill's download URL, the gateway's answer is verified with Alipay's
// public key, and the ZIP behind the URL is streamed to fetch.Save.
//
// The URL lives 30 seconds, so an Offer is the query already made: its
// Open must follow at once, as fetch.Save does.
//
// Alipay makes the bill of day D before 09:00 on D+1 (China), and until
// then answers as it does for a day without a bill (isp.bill_not_exist):
// the scheduler asks only after the channel's available_after, and this
// package reports what Alipay says, fetch.ErrNoBill; it never answers
// fetch.ErrNotReady, which Alipay has no word for.
//
// Only the open platform's public-key mode is spoken; certificate mode
// (app_cert_sn, alipay_root_cert_sn) is not.
package alipay

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"reconcile"
	"reconcile/fetch"
)

// DefaultGateway is the open platform's production gateway. The sandbox's
// is https://openapi-sandbox.dl.alipaydev.com/gateway.do.
const DefaultGateway = "https://openapi.alipay.com/gateway.do"

// Bill types this package fetches, as bill_type names them.
const (
	// BillTrade is the 业务账单: the trades and refunds of Alipay's
	// acquiring products (业务明细).
	BillTrade = "trade"
	// BillSignCustomer is the 账务账单: every movement of the Alipay
	// account's balance (账务明细).
	BillSignCustomer = "signcustomer"
)

// Config is an Alipay app's access to its bills, keys already parsed
// (ParsePrivateKey, ParsePublicKey).
type Config struct {
	AppID           string          // the app's APPID, digits
	PrivateKey      *rsa.PrivateKey // the app's private key (应用私钥), RSA 2048
	AlipayPublicKey *rsa.PublicKey  // Alipay's public key (支付宝公钥), not the app's
	BillType        string          // BillTrade (default) or BillSignCustomer
	Gateway         string          // default DefaultGateway; https only
	// Client is the job's HTTP client and retry policy; nil means
	// fetch's defaults.
	Client *fetch.Client
	// Now is the clock of the requests' timestamps; nil means time.Now.
	Now func() time.Time
}

// Source is an Alipay app's bills.
type Source struct {
	appID     string
	key       *rsa.PrivateKey
	alipayKey *rsa.PublicKey
	billType  string
	gateway   string
	client    fetch.Client
	now       func() time.Time
}

var _ fetch.Source = (*Source)(nil)

// minKeyBits is RSA2's key size: Alipay's tool makes 2048-bit keys, and
// signs its answers with one.
const minKeyBits = 2048

// New checks cfg and returns its Source.
func New(cfg Config) (*Source, error) {
	if err := checkAppID(cfg.AppID); err != nil {
		return nil, err
	}
	switch {
	case cfg.PrivateKey == nil:
		return nil, errors.New("alipay: the app's private key is missing")
	case cfg.PrivateKey.N.BitLen() < minKeyBits:
		return nil, fmt.Errorf("alipay: the app's private key has %d bits; RSA2 takes %d", cfg.PrivateKey.N.BitLen(), minKeyBits)
	case cfg.PrivateKey.Validate() != nil:
		return nil, errors.New("alipay: the app's private key is not a valid RSA key")
	case cfg.AlipayPublicKey == nil:
		return nil, errors.New("alipay: Alipay's public key is missing")
	case cfg.AlipayPublicKey.N.BitLen() < minKeyBits:
		return nil, fmt.Errorf("alipay: Alipay's public key has %d bits; RSA2 takes %d", cfg.AlipayPublicKey.N.BitLen(), minKeyBits)
	case cfg.AlipayPublicKey.Equal(&cfg.PrivateKey.PublicKey):
		// The console shows both side by side; the wrong one would make
		// every answer fail to verify, so it is said here instead.
		return nil, errors.New("alipay: the Alipay public key given is the app's own public key (应用公钥); give 支付宝公钥")
	}
	billType := cfg.BillType
	switch billType {
	case "":
		billType = BillTrade
	case BillTrade, BillSignCustomer:
	default:
		return nil, fmt.Errorf("alipay: bill type %s: want %s or %s", reconcile.Quote(billType), BillTrade, BillSignCustomer)
	}
	gateway, err := checkGateway(cmp.Or(cfg.Gateway, DefaultGateway))
	if err != nil {
		return nil, err
	}
	s := &Source{appID: cfg.AppID, key: cfg.PrivateKey, alipayKey: cfg.AlipayPublicKey,
		billType: billType, gateway: gateway, now: cfg.Now}
	if cfg.Client != nil {
		s.client = *cfg.Client
	}
	if s.client.HTTP == nil {
		s.client.HTTP = fetch.NewHTTPClient(nil)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

func checkAppID(id string) error {
	if id == "" {
		return errors.New("alipay: the app id is empty")
	}
	if len(id) > 32 || strings.ContainsFunc(id, func(r rune) bool { return r < '0' || r > '9' }) {
		return fmt.Errorf("alipay: app id %s: an APPID is digits (2021…)", reconcile.Quote(id))
	}
	return nil
}

// checkGateway refuses a gateway the signed request should not go to: not
// https, or with a user, query or fragment.
func checkGateway(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("alipay: the gateway is not a URL")
	}
	switch {
	case u.User != nil:
		return "", errors.New("alipay: the gateway URL carries a user or password: remove it")
	case u.Scheme != "https" || u.Host == "":
		return "", fmt.Errorf("alipay: gateway %s: want an https URL", reconcile.Quote(raw))
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("alipay: gateway %s: want no query or fragment", reconcile.Quote(raw))
	}
	return u.String(), nil
}

// String names the source without its keys.
func (s *Source) String() string { return "alipay app " + s.appID + " " + s.billType + " bill" }

// Offer asks Alipay for the download URL of day's bill. The Offer's Open
// must be called at once: the URL expires 30 seconds after Alipay made
// it. Alipay's day is China's: a day of another zone is refused.
func (s *Source) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	name := "alipay " + s.billType + " bill " + day.String()
	if _, off := day.Date.Zone(); day.Date.IsZero() || off != 8*60*60 {
		return nil, fmt.Errorf("%s: Alipay's bills are days of China (UTC+8); the day given starts at %s",
			name, day.Date.Format(time.RFC3339))
	}
	link, err := s.query(ctx, day.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	offer := &fetch.Offer{Name: name, Size: -1}
	offer.Open = func(ctx context.Context) (io.ReadCloser, error) {
		body, size, err := s.open(ctx, link)
		if err != nil {
			return nil, fmt.Errorf("download %s: %w", name, err)
		}
		// Alipay states no size before the download; its Content-Length
		// is the next best, and lets Save tell a cut download.
		if size >= 0 {
			offer.Size = size
		}
		return body, nil
	}
	return offer, nil
}

// query asks the gateway for the download URL of billDate, trying again
// under the job's one retry policy when the connection fails, the
// gateway answers 5xx or 429, or Alipay answers that it is busy (20000,
// a rate limit) in a 200.
func (s *Source) query(ctx context.Context, billDate string) (string, error) {
	// Each try is one fetch.Client.Get with retries of its own turned
	// off, so the run below is the only loop: one budget, one count of
	// attempts, and Alipay's busy answers counted in them.
	once := s.client
	once.Retry.Attempts = 1
	rt, cancel := s.client.Retry.Start(ctx, transient)
	defer cancel()
	var link string
	err := rt.Do("query the download URL", func(ctx context.Context) error {
		ans, err := once.Get(ctx, "POST gateway", s.newRequest(billDate))
		if err != nil {
			// The single try's wrapper ("gave up after 1 attempt") says
			// nothing this run does not.
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			return err
		}
		a, err := readAnswer(ans.Body, s.alipayKey)
		if err != nil {
			return err
		}
		if a.Code != codeSuccess {
			return judge(a)
		}
		if !a.signed {
			return errors.New("Alipay's success answer carries no signature: refused")
		}
		link, err = checkLink(a.BillDownloadURL)
		return err
	})
	return link, err
}

// newRequest makes the signed POST of the query, again for every try:
// every try has its own timestamp. Every parameter goes in the form body,
// which the gateway reads as the SDKs' query string: the URL carries
// nothing, so nothing of the request is in a proxy's log of URLs.
func (s *Source) newRequest(billDate string) func(ctx context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		form, err := s.form(billDate)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.gateway, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
		req.Header.Set("Accept", "application/json")
		return req, nil
	}
}

// peek is how much of a download is looked at before it is handed on.
const peek = 512

// open GETs the bill. What comes is meant to be a ZIP (the parser checks
// it); an answer that starts as JSON or HTML is Alipay's or a proxy's
// error page, refused here, where what it says can still be shown.
func (s *Source) open(ctx context.Context, link string) (io.ReadCloser, int64, error) {
	resp, err := s.client.Open(ctx, "GET bill", func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	})
	if err != nil {
		return nil, 0, err
	}
	br := bufio.NewReaderSize(resp.Body, peek)
	head, _ := br.Peek(peek) // a short body or a failed read shows in the reads after
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '<') {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("Alipay sent %s (Content-Type %s) instead of the bill's ZIP: refused",
			start(head), reconcile.Quote(resp.Header.Get("Content-Type")))
	}
	return struct {
		io.Reader
		io.Closer
	}{br, resp.Body}, resp.ContentLength, nil
}
