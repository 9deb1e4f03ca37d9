package config

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"reconcile"
)

// Fetch says how the job downloads a channel's settlement file itself,
// from the channel's API or an SFTP drop. Exactly one of the channel
// blocks is set.
type Fetch struct {
	// AvailableAfter is how long after the end of business day D (in the
	// channel's zone) its file can exist; before, it is not asked for.
	// Defaults: wechatpay and alipay 10h (10:00 on D+1 in Asia/Shanghai),
	// stripe 12h, adyen 2h, sftp 1h.
	AvailableAfter *Duration `json:"available_after,omitempty"`
	// Timeout bounds one API call (default 30s), DownloadTimeout one
	// download (default 10m).
	Timeout         Duration `json:"timeout,omitempty"`
	DownloadTimeout Duration `json:"download_timeout,omitempty"`
	// RetryAttempts and RetryBudget bound the retries of one fetch
	// (defaults 5 and 2m), as slack's do for an alert.
	RetryAttempts int      `json:"retry_attempts,omitempty"`
	RetryBudget   Duration `json:"retry_budget,omitempty"`

	WeChatPay *WeChatPayFetch `json:"wechatpay,omitempty"`
	Alipay    *AlipayFetch    `json:"alipay,omitempty"`
	Stripe    *StripeFetch    `json:"stripe,omitempty"`
	Adyen     *AdyenFetch     `json:"adyen,omitempty"`
	SFTP      *SFTPFetch      `json:"sftp,omitempty"`
}

// WeChatPayFetch is a merchant's WeChat Pay API v3 credentials.
type WeChatPayFetch struct {
	MchID      string `json:"mchid"`
	SerialNo   string `json:"serial_no"`   // of the merchant's API certificate
	PrivateKey Secret `json:"private_key"` // apiclient_key.pem
	// PublicKeyID and PublicKey are the WeChat Pay public key
	// (PUB_KEY_ID_…) its answers are signed with; or, for merchants still
	// on platform certificates, PlatformCertificate.
	PublicKeyID         string  `json:"public_key_id,omitempty"`
	PublicKey           *Secret `json:"public_key,omitempty"`
	PlatformCertificate *Secret `json:"platform_certificate,omitempty"`
	BillType            string  `json:"bill_type,omitempty"` // ALL (default), SUCCESS, REFUND
	BaseURL             string  `json:"base_url,omitempty"`
}

// AlipayFetch is an Alipay app's credentials.
type AlipayFetch struct {
	AppID      string `json:"app_id"`
	PrivateKey Secret `json:"private_key"`       // the app's private key
	PublicKey  Secret `json:"alipay_public_key"` // Alipay's public key
	BillType   string `json:"bill_type,omitempty"`
	Gateway    string `json:"gateway,omitempty"`
}

// StripeFetch is a Stripe account's Reporting API access.
type StripeFetch struct {
	APIKey     Secret `json:"api_key"`
	ReportType string `json:"report_type,omitempty"`
	APIURL     string `json:"api_url,omitempty"`
	FilesURL   string `json:"files_url,omitempty"`
	// PollBudget bounds the wait for a report run (default 10m).
	PollBudget Duration `json:"poll_budget,omitempty"`
}

// AdyenFetch is an Adyen report user's access to a merchant account's
// settlement detail reports.
type AdyenFetch struct {
	MerchantAccount string `json:"merchant_account"`
	Username        string `json:"username"`
	Password        Secret `json:"password"`
	BaseURL         string `json:"base_url,omitempty"`
	// FirstBatch is the batch fetched first, before any has been (the
	// number of the latest settlement detail report in the Customer
	// Area); later ones follow the last one fetched.
	FirstBatch int64 `json:"first_batch,omitempty"`
}

// SFTPFetch is an SFTP drop.
type SFTPFetch struct {
	Addr       string  `json:"addr"` // host or host:port
	User       string  `json:"user"`
	PrivateKey Secret  `json:"private_key"`
	Passphrase *Secret `json:"passphrase,omitempty"`
	KnownHosts string  `json:"known_hosts"` // path of a known_hosts file holding the host's key
	RemotePath string  `json:"remote_path"` // with {date} or {yyyymmdd}
	// DoneMarker, when the bank writes one, is the path of the file it
	// puts beside the day's file once that is complete (with {date} or
	// {yyyymmdd}); the file is not fetched before it is there.
	DoneMarker string `json:"done_marker,omitempty"`
	// Settle is how far apart the two looks at the file are, without a
	// done marker: it is complete when its size and modification time are
	// the same at both (default 30s).
	Settle Duration `json:"settle,omitempty"`
}

// MaxSettle bounds sftp.settle: a bank's upload does not pause for
// minutes, and the looks run inside the download's timeout.
const MaxSettle = 5 * time.Minute

// API names the fetch block that is set, "" when none is.
func (f *Fetch) API() string {
	if f == nil {
		return ""
	}
	var set []string
	for name, on := range map[string]bool{"wechatpay": f.WeChatPay != nil, "alipay": f.Alipay != nil,
		"stripe": f.Stripe != nil, "adyen": f.Adyen != nil, "sftp": f.SFTP != nil} {
		if on {
			set = append(set, name)
		}
	}
	if len(set) != 1 {
		return ""
	}
	return set[0]
}

// AvailableAt is when the file of the day ending at dayEnd can first be
// asked for.
func (f *Fetch) AvailableAt(dayEnd time.Time) time.Time {
	if f.AvailableAfter != nil {
		return dayEnd.Add(time.Duration(*f.AvailableAfter))
	}
	return dayEnd.Add(DefaultAvailableAfter(f.API()))
}

// DefaultAvailableAfter is when after the end of D a channel's file is
// made, as the channels document it: WeChat Pay from 09:00 and Alipay
// from 09:00 on D+1 (China), both advising 10:00; Stripe's balance data of
// a UTC day is usually complete by the next noon; an Adyen batch's report
// follows its payout within the hour; an SFTP drop is given an hour past
// midnight, so a bank still uploading the file is not read half-way.
func DefaultAvailableAfter(api string) time.Duration {
	switch api {
	case "wechatpay", "alipay":
		return 10 * time.Hour
	case "stripe":
		return 12 * time.Hour
	case "adyen":
		return 2 * time.Hour
	}
	return time.Hour
}

// Defaults and bounds of a fetch's durations.
const (
	defaultCallTimeout     = 30 * time.Second
	maxCallTimeout         = 10 * time.Minute
	defaultDownloadTimeout = 10 * time.Minute
	// maxDownloadTimeout is well inside the age at which the atomic
	// writer takes a temporary file for a crash's leftover
	// (atomicfile.StaleAfter, 24h): a download, its check included, never
	// runs that long.
	maxDownloadTimeout = 6 * time.Hour
	maxPollBudget      = time.Hour
	// maxFirstBatch is far past any settlement batch number: Adyen numbers
	// a merchant account's batches one by one, one a day or so.
	maxFirstBatch = 1_000_000_000
)

// Timeouts are the fetch's call and download timeouts with their defaults.
func (f *Fetch) Timeouts() (call, download time.Duration) {
	call, download = defaultCallTimeout, defaultDownloadTimeout
	if f.Timeout > 0 {
		call = time.Duration(f.Timeout)
	}
	if f.DownloadTimeout > 0 {
		download = time.Duration(f.DownloadTimeout)
	}
	return call, download
}

// fetchProblems lists what is wrong with a channel's fetch block.
func (ch Channel) fetchProblems(at, where string) []error {
	f := ch.Fetch
	if f == nil {
		return nil
	}
	at += ".fetch"
	api := f.API()
	if api == "" {
		return []error{fieldErrorf(at, "%s: fetch: give exactly one of wechatpay, alipay, stripe, adyen, sftp", where)}
	}
	c := &fetchCheck{at: at + "." + api, where: where, api: api}
	if msg := TemplateTrouble(ch.Path); msg != "" {
		c.add(fieldErrorf(at, "%s: fetch needs the channel's path, where it puts the file: %s", where, msg))
	}
	// An API hands out its own format's files; an SFTP drop any format.
	if api != "sftp" && ch.Format != "" && ch.Format != api {
		c.add(fieldErrorf(c.at, "%s: fetch %s hands out %s files, but the channel's format is %s", where, api, api, reconcile.Quote(ch.Format)))
	}
	switch api {
	case "wechatpay":
		c.wechatpay(f.WeChatPay)
	case "alipay":
		c.alipay(f.Alipay)
	case "stripe":
		c.secret("api_key", f.Stripe.APIKey)
		c.https("api_url", f.Stripe.APIURL)
		c.https("files_url", f.Stripe.FilesURL)
		if b := time.Duration(f.Stripe.PollBudget); b > maxPollBudget {
			c.problem("poll_budget", "%s: want at most %s (0 for the default, 10m)", b, hours(maxPollBudget))
		}
	case "adyen":
		c.adyen(f.Adyen, ch.Path)
	case "sftp":
		c.sftp(f.SFTP)
		if _, download := f.Timeouts(); time.Duration(f.SFTP.Settle) >= download {
			c.problem("settle", "%s: want less than download_timeout %s, which the looks at the file run inside", time.Duration(f.SFTP.Settle), download)
		}
	}
	if f.RetryAttempts < 0 || f.RetryAttempts > maxRetryAttempts {
		c.add(fieldErrorf(at+".retry_attempts", "%s: fetch.retry_attempts %d: want 1 to %d (0 for the default, 5)", where, f.RetryAttempts, maxRetryAttempts))
	}
	if b := time.Duration(f.RetryBudget); b > maxRetryBudget {
		c.add(fieldErrorf(at+".retry_budget", "%s: fetch.retry_budget %s: want at most %s (0 for the default, 2m)", where, b, hours(maxRetryBudget)))
	}
	for _, d := range []struct {
		name      string
		v         Duration
		max, def  time.Duration
		maxString string
	}{
		{"timeout", f.Timeout, maxCallTimeout, defaultCallTimeout, "10m"},
		{"download_timeout", f.DownloadTimeout, maxDownloadTimeout, defaultDownloadTimeout, hours(maxDownloadTimeout)},
	} {
		if v := time.Duration(d.v); v != 0 && (v < time.Second || v > d.max) {
			c.add(fieldErrorf(at+"."+d.name, "%s: fetch.%s %s: want 1s to %s (0 for the default, %s)", where, d.name, v, d.maxString, d.def))
		}
	}
	if avail, due := f.AvailableAt(time.Time{}), ch.OverdueAt(time.Time{}); !avail.Before(due) {
		c.add(fieldErrorf(at+".available_after", "%s: fetch.available_after %s: want less than the deadline %s, or every file is overdue before it may be fetched",
			where, avail.Sub(time.Time{}), due.Sub(time.Time{})))
	}
	return c.errs
}

// fetchCheck collects the problems of one channel block of a fetch.
type fetchCheck struct {
	at, where, api string // the block's JSON path, the channel for a reader, the block's name
	errs           []error
}

func (c *fetchCheck) add(err error) {
	if err != nil {
		c.errs = append(c.errs, err)
	}
}

func (c *fetchCheck) problem(field, format string, args ...any) {
	c.add(fieldErrorf(c.at+"."+field, "%s: fetch %s.%s "+format, append([]any{c.where, c.api, field}, args...)...))
}

// need checks a plain value that must be given.
func (c *fetchCheck) need(field, v string) {
	if strings.TrimSpace(v) == "" {
		c.problem(field, "is empty")
	} else if strings.ContainsAny(v, "\x00\r\n") || len(v) > 256 {
		c.problem(field, "%s: not a plain value", reconcile.Quote(v))
	}
}

// https checks an optional URL.
func (c *fetchCheck) https(field, v string) {
	if v == "" {
		return
	}
	if u, err := url.Parse(v); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		c.problem(field, "%s: want an https URL without a user", reconcile.Quote(v))
	}
}

func (c *fetchCheck) secret(field string, s Secret) {
	c.add(s.problem(c.at+"."+field, c.where, c.api+"."+field))
}

// oneOf checks an optional value against the ones it may be.
func (c *fetchCheck) oneOf(field, v string, allowed ...string) {
	if v != "" && !slices.Contains(allowed, v) {
		c.problem(field, "%s: want %s", reconcile.Quote(v), strings.Join(allowed, " or "))
	}
}

func (c *fetchCheck) wechatpay(w *WeChatPayFetch) {
	c.need("mchid", w.MchID)
	c.need("serial_no", w.SerialNo)
	c.secret("private_key", w.PrivateKey)
	switch {
	case (w.PublicKey == nil) == (w.PlatformCertificate == nil):
		c.add(fieldErrorf(c.at+".public_key", "%s: fetch wechatpay: give public_key (with public_key_id) or platform_certificate, one of them", c.where))
	case w.PublicKey != nil:
		c.need("public_key_id", w.PublicKeyID)
		c.secret("public_key", *w.PublicKey)
	default:
		c.secret("platform_certificate", *w.PlatformCertificate)
	}
	c.oneOf("bill_type", w.BillType, "ALL", "SUCCESS", "REFUND")
	c.https("base_url", w.BaseURL)
}

func (c *fetchCheck) alipay(a *AlipayFetch) {
	c.need("app_id", a.AppID)
	c.secret("private_key", a.PrivateKey)
	c.secret("alipay_public_key", a.PublicKey)
	c.oneOf("bill_type", a.BillType, "trade", "signcustomer")
	c.https("gateway", a.Gateway)
}

func (c *fetchCheck) adyen(a *AdyenFetch, path string) {
	c.need("merchant_account", a.MerchantAccount)
	c.need("username", a.Username)
	c.secret("password", a.Password)
	c.https("base_url", a.BaseURL)
	if a.FirstBatch < 1 || a.FirstBatch > maxFirstBatch {
		c.problem("first_batch", "%d: want the number of the first batch to fetch (1 to %d), as the Customer Area lists its settlement detail reports",
			a.FirstBatch, maxFirstBatch)
	}
	if strings.Contains(dirOf(path), "{") {
		c.add(fieldErrorf(c.at, "%s: fetch adyen files batches by the date they belong to, which is known after the download: keep {date} out of the path's directory", c.where))
	}
}

func (c *fetchCheck) sftp(s *SFTPFetch) {
	c.need("addr", s.Addr)
	c.need("user", s.User)
	c.secret("private_key", s.PrivateKey)
	if s.Passphrase != nil {
		c.secret("passphrase", *s.Passphrase)
	}
	if s.KnownHosts == "" {
		c.problem("known_hosts", "is empty: the server's host key is always checked, so name the known_hosts file that holds it")
	}
	if msg := TemplateTrouble(s.RemotePath); msg != "" {
		c.add(fieldErrorf(c.at+".remote_path", "%s: fetch sftp.remote_%s", c.where, msg))
	} else if strings.ContainsAny(s.RemotePath, "\x00\r\n") {
		c.problem("remote_path", "%s: not a plain path", reconcile.Quote(s.RemotePath))
	}
	if s.DoneMarker != "" {
		if msg := TemplateTrouble(s.DoneMarker); msg != "" {
			c.add(fieldErrorf(c.at+".done_marker", "%s: fetch sftp.done_marker: %s (a marker of no date would say every day's file is complete)", c.where, msg))
		} else if strings.ContainsAny(s.DoneMarker, "\x00\r\n") {
			c.problem("done_marker", "%s: not a plain path", reconcile.Quote(s.DoneMarker))
		} else if s.DoneMarker == s.RemotePath {
			c.problem("done_marker", "is remote_path: the marker is a file of its own the bank writes once the day's file is complete")
		}
	}
	if d := time.Duration(s.Settle); d != 0 && (d < time.Second || d > MaxSettle) {
		c.problem("settle", "%s: want 1s to %s (SFTP gives modification times to the second), or leave it out for 30s", d, MaxSettle)
	}
}

// dirOf is the directory part of a path template.
func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}
