// Package wechatpay fetches the WeChat Pay trade bill (交易账单) of a
// business day through API v3: GET /v3/bill/tradebill names the bill's
// SHA1 and a short-lived download address, and a second signed GET of that
// address streams the bill, gzipped.
//
// Every request is signed with the merchant's API private key
// (WECHATPAY2-SHA256-RSA2048). Every answer of the API, error answers
// included, is believed only once its signature verifies against a
// WeChat Pay public key (or platform certificate) the config holds: a
// forged "no bill" must not make the job skip a day. The download itself
// is unsigned, as WeChat Pay documents; the SHA1 of the signed answer is
// its check, which fetch.Save makes.
package wechatpay

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
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

var _ fetch.Source = (*Source)(nil)

// DefaultBaseURL is WeChat Pay's API host. api2.mch.weixin.qq.com is its
// documented backup, reached by setting BaseURL.
const DefaultBaseURL = "https://api.mch.weixin.qq.com"

// Bill types the job's parser reads (channelfeed's wechatpay format). The
// API knows more (RECHARGE_REFUND, the *_SPECIAL personalised bills),
// whose columns the parser does not.
const (
	BillAll     = "ALL"
	BillSuccess = "SUCCESS"
	BillRefund  = "REFUND"
)

// userAgent is sent on every request: API v3 asks for one.
const userAgent = "reconcile-fetch-wechatpay/1 (Go)"

// maxDownloadURL is the length the API documents for download_url.
const maxDownloadURL = 2048

// Config is what the trade bill client needs, keys already parsed (see
// ParsePrivateKey, ParsePublicKey, ParseCertificate).
type Config struct {
	// MchID is the merchant number (商户号), digits.
	MchID string
	// SerialNo is the serial number of the merchant API certificate
	// (商户API证书序列号), hex, sent with every signature so WeChat Pay
	// knows which key signed.
	SerialNo string
	// PrivateKey is the merchant API private key (apiclient_key.pem).
	PrivateKey *rsa.PrivateKey
	// PublicKeys are the keys WeChat Pay signs its answers with, by the id
	// its Wechatpay-Serial header names: a WeChat Pay public key under its
	// id (PUB_KEY_ID_…), a platform certificate's key under the
	// certificate's serial (hex). Hold the old and the new key while
	// WeChat Pay rotates them.
	PublicKeys map[string]*rsa.PublicKey
	// BillType is ALL (the default), SUCCESS or REFUND.
	BillType string
	// BaseURL is DefaultBaseURL when empty; it must be https.
	BaseURL string
	// Client sends the requests; nil means a fetch.Client with the
	// job's defaults.
	Client *fetch.Client
	// Now is the clock of the signatures' timestamps; nil is time.Now.
	Now func() time.Time
}

// Source is the WeChat Pay trade bill of one merchant.
type Source struct {
	mchID    string
	serialNo string
	key      *rsa.PrivateKey
	keys     map[string]*rsa.PublicKey // by keyID
	billType string
	base     string // no trailing slash
	client   *fetch.Client
	now      func() time.Time
}

// New checks cfg and returns its Source.
func New(cfg Config) (*Source, error) {
	if cfg.MchID == "" {
		return nil, errors.New("wechatpay: no merchant id (MchID)")
	}
	if len(cfg.MchID) > 32 || !all(cfg.MchID, isDigit) {
		return nil, fmt.Errorf("wechatpay: merchant id %s: want the digits of the 商户号", reconcile.Quote(cfg.MchID))
	}
	if cfg.SerialNo == "" {
		return nil, errors.New("wechatpay: no merchant API certificate serial number (SerialNo)")
	}
	if len(cfg.SerialNo) > 64 || !all(cfg.SerialNo, isHex) {
		return nil, fmt.Errorf("wechatpay: merchant API certificate serial %s: want hex digits", reconcile.Quote(cfg.SerialNo))
	}
	if cfg.PrivateKey == nil {
		return nil, errors.New("wechatpay: no merchant API private key (PrivateKey)")
	}
	if err := checkPrivateKey(cfg.PrivateKey); err != nil {
		return nil, fmt.Errorf("wechatpay: merchant API private key: %w", err)
	}
	if len(cfg.PublicKeys) == 0 {
		return nil, errors.New("wechatpay: no WeChat Pay public key or platform certificate (PublicKeys): its answers could not be verified")
	}
	keys := make(map[string]*rsa.PublicKey, len(cfg.PublicKeys))
	for id, k := range cfg.PublicKeys {
		if err := checkKeyID(id); err != nil {
			return nil, fmt.Errorf("wechatpay: %w", err)
		}
		if k == nil {
			return nil, fmt.Errorf("wechatpay: public key %s is nil", reconcile.Quote(id))
		}
		if err := checkPublicKey(k); err != nil {
			return nil, fmt.Errorf("wechatpay: public key %s: %w", reconcile.Quote(id), err)
		}
		keys[keyID(id)] = k
	}
	billType := cfg.BillType
	switch billType {
	case "":
		billType = BillAll
	case BillAll, BillSuccess, BillRefund:
	default:
		return nil, fmt.Errorf("wechatpay: bill type %s: want ALL, SUCCESS or REFUND", reconcile.Quote(billType))
	}
	base, err := baseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	client := cfg.Client
	if client == nil {
		client = &fetch.Client{HTTP: fetch.NewHTTPClient(nil)}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Source{
		mchID:    cfg.MchID,
		serialNo: strings.ToUpper(cfg.SerialNo),
		key:      cfg.PrivateKey,
		keys:     keys,
		billType: billType,
		base:     base,
		client:   client,
		now:      now,
	}, nil
}

// baseURL checks the API's base URL: https, a host, nothing a signed
// path could not carry.
func baseURL(s string) (string, error) {
	if s == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("wechatpay: base URL %s: %w", reconcile.Quote(s), err)
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Errorf("wechatpay: base URL %s: want https, the requests carry the merchant's signature", reconcile.Quote(s))
	case u.Host == "":
		return "", fmt.Errorf("wechatpay: base URL %s: no host", reconcile.Quote(s))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("wechatpay: base URL %s: want scheme, host and at most a path", reconcile.Quote(s))
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// String names the source without its keys.
func (s *Source) String() string {
	return fmt.Sprintf("wechatpay tradebill %s of merchant %s at %s", s.billType, s.mchID, s.base)
}

// tradeBill is the answer of GET /v3/bill/tradebill.
type tradeBill struct {
	HashType    string `json:"hash_type"`
	HashValue   string `json:"hash_value"`
	DownloadURL string `json:"download_url"`
}

// Offer asks WeChat Pay for the trade bill of day (its date as YYYY-MM-DD,
// the bill's day in Beijing time). It returns fetch.ErrNotReady
// (STATEMENT_CREATING: bills are made from 09:00 the next morning),
// fetch.ErrNoBill (NO_STATEMENT_EXIST: no payment or refund that day) or
// a *fetch.Refusal, each only when WeChat Pay's signature on the answer
// verifies.
func (s *Source) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	date := day.String()
	call := "wechatpay tradebill " + s.billType + " " + date
	q := url.Values{"bill_date": {date}, "bill_type": {s.billType}, "tar_type": {"GZIP"}}
	api := s.base + "/v3/bill/tradebill?" + q.Encode()
	ans, err := s.client.Get(ctx, call, func(ctx context.Context) (*http.Request, error) {
		return s.newRequest(ctx, api)
	})
	if err != nil {
		return nil, s.failed(call, err, false)
	}
	if err := s.verify(ans.Header, ans.Body); err != nil {
		return nil, fmt.Errorf("%s: the answer's signature did not verify, not believed: %w", call, err)
	}
	bill, err := parseTradeBill(ans.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	return &fetch.Offer{
		Name:   call,
		Size:   -1,
		Digest: &fetch.Digest{Name: "SHA1", New: sha1.New, Sum: bill.sum},
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			return s.download(ctx, call, bill.url)
		},
	}, nil
}

// offered is a checked tradebill answer.
type offered struct {
	sum []byte
	url string
}

// parseTradeBill reads the answer, refusing a hash it could not check
// and a download address that is not https: the request to it carries the
// merchant's signature.
func parseTradeBill(body []byte) (offered, error) {
	var tb tradeBill
	if err := json.Unmarshal(body, &tb); err != nil {
		return offered{}, fmt.Errorf("answer is not the tradebill JSON: %w", err)
	}
	if tb.HashType != "SHA1" {
		return offered{}, fmt.Errorf("hash_type %s: only SHA1 is known, the download could not be checked", reconcile.Quote(tb.HashType))
	}
	sum, err := hex.DecodeString(tb.HashValue)
	if err != nil || len(sum) != sha1.Size {
		return offered{}, fmt.Errorf("hash_value %s: want 40 hex digits", reconcile.Quote(tb.HashValue))
	}
	if tb.DownloadURL == "" {
		return offered{}, errors.New("no download_url")
	}
	// The address carries a token: errors name its scheme and host only.
	if len(tb.DownloadURL) > maxDownloadURL {
		return offered{}, fmt.Errorf("download_url of %d bytes, more than the %d documented", len(tb.DownloadURL), maxDownloadURL)
	}
	u, err := url.Parse(tb.DownloadURL)
	if err != nil {
		return offered{}, errors.New("download_url is not a URL")
	}
	switch {
	case u.Scheme != "https":
		return offered{}, fmt.Errorf("download_url scheme %s, not https: refused", reconcile.Quote(u.Scheme))
	case u.Host == "" || u.User != nil:
		return offered{}, errors.New("download_url has no host, or a user: refused")
	}
	// The address is asked for as given: its path and query are what the
	// download's signature covers.
	return offered{sum: sum, url: tb.DownloadURL}, nil
}

// download opens the bill at rawURL with a signed GET. The bytes
// WeChat Pay's SHA1 covers are the bill's, not the gzip file's, so the
// stream given back is the bill itself: what Save checks and keeps.
func (s *Source) download(ctx context.Context, call, rawURL string) (io.ReadCloser, error) {
	resp, err := s.client.Open(ctx, call+" download", func(ctx context.Context) (*http.Request, error) {
		return s.newRequest(ctx, rawURL)
	})
	if err != nil {
		return nil, s.failed(call+" download", err, true)
	}
	br := bufio.NewReader(resp.Body)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if resp.Uncompressed {
			// Served as Content-Encoding: gzip and already unpacked by
			// the transport.
			return readCloser{br, resp.Body}, nil
		}
		resp.Body.Close()
		return nil, fmt.Errorf("%s download: not a gzip stream, though tar_type=GZIP was asked", call)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("%s download: gzip: %w", call, err)
	}
	return &gunzipped{Reader: zr, body: resp.Body}, nil
}

// readCloser reads through a buffer and closes the connection.
type readCloser struct {
	io.Reader
	io.Closer
}

// gunzipped is a gzip stream's contents; Close closes the connection.
type gunzipped struct {
	*gzip.Reader
	body io.Closer
}

func (g *gunzipped) Close() error {
	zerr := g.Reader.Close()
	if err := g.body.Close(); err != nil {
		return err
	}
	return zerr
}

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
