package main

import (
	"cmp"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/ssh"

	"reconcile"
	"reconcile/config"
	"reconcile/fetch"
	"reconcile/fetch/adyen"
	"reconcile/fetch/alipay"
	"reconcile/fetch/sftp"
	"reconcile/fetch/stripe"
	"reconcile/fetch/wechatpay"
	"reconcile/ledger"
	"reconcile/nightly"
	"reconcile/retry"
)

// fetcher builds the clients of channels' fetch blocks, every secret read
// and every key parsed now, so a bad one stops the command before any
// download. db remembers Adyen's batches; it may be nil when no channel
// fetches batches.
func (a *App) fetcher(channels []config.Channel, db *ledger.DB) (*nightly.Fetcher, error) {
	f := &nightly.Fetcher{Sources: map[string]fetch.Source{}, Batches: map[string]nightly.Batches{}, DB: db, Now: a.Now}
	for _, ch := range channels {
		if ch.Fetch == nil {
			continue
		}
		src, batches, _, err := a.fetchSource(ch)
		if err != nil {
			return nil, err
		}
		if batches != nil {
			f.Batches[ch.Name] = *batches
		} else {
			f.Sources[ch.Name] = src
		}
	}
	return f, nil
}

// needsDB reports whether fetching channels needs the database: Adyen's
// batches are remembered there.
func needsDB(channels []config.Channel) bool {
	for _, ch := range channels {
		if ch.Fetch != nil && ch.Fetch.Adyen != nil {
			return true
		}
	}
	return false
}

// fetchSource builds ch's client from its fetch block: a source of one
// file per date, or of batches. about says in a few words what it is, for
// check-config. Errors name the channel and the setting, never a secret.
func (a *App) fetchSource(ch config.Channel) (src fetch.Source, batches *nightly.Batches, about string, err error) {
	f := ch.Fetch
	loc, err := time.LoadLocation(ch.TimeZone)
	if err == nil {
		b := sourceBuilder{getenv: a.Getenv, now: a.Now, sleep: a.Sleep, client: a.fetchClient(f), ch: ch, loc: loc}
		switch {
		case f.WeChatPay != nil:
			src, about, err = b.wechatpay(f.WeChatPay)
		case f.Alipay != nil:
			src, about, err = b.alipay(f.Alipay)
		case f.Stripe != nil:
			src, about, err = b.stripe(f.Stripe)
		case f.Adyen != nil:
			batches, about, err = b.adyen(f.Adyen)
		case f.SFTP != nil:
			src, about, err = b.sftp(f.SFTP, f)
		default:
			err = errors.New("no channel block")
		}
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("channel %s: fetch %s: %w", reconcile.Quote(ch.Name), f.API(), err)
	}
	return src, batches, about, nil
}

// sourceBuilder is what every channel's client is built with.
type sourceBuilder struct {
	getenv func(string) string
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	client *fetch.Client
	ch     config.Channel
	loc    *time.Location
}

// secret reads the secret of field by the one rule (config.Secret.Read)
// and parses it; an error names the field and where the secret was looked
// for, never what was found.
func secret[T any](b sourceBuilder, field string, s config.Secret, parse func([]byte) (T, error)) (T, error) {
	var zero T
	raw, err := s.Read(b.getenv)
	if err != nil {
		return zero, fmt.Errorf("%s (%s): %w", field, s, err)
	}
	v, err := parse(raw)
	if err != nil {
		return zero, fmt.Errorf("%s (%s): %w", field, s, err)
	}
	return v, nil
}

func (b sourceBuilder) wechatpay(w *config.WeChatPayFetch) (fetch.Source, string, error) {
	key, err := secret(b, "private_key", w.PrivateKey, wechatpay.ParsePrivateKey)
	if err != nil {
		return nil, "", err
	}
	keys := map[string]*rsa.PublicKey{}
	var keyAbout string
	if w.PublicKey != nil {
		pub, err := secret(b, "public_key", *w.PublicKey, wechatpay.ParsePublicKey)
		if err != nil {
			return nil, "", err
		}
		keys[w.PublicKeyID] = pub
		keyAbout = "WeChat Pay public key " + w.PublicKeyID
	} else {
		type cert struct {
			serial string
			key    *rsa.PublicKey
		}
		c, err := secret(b, "platform_certificate", *w.PlatformCertificate, func(raw []byte) (cert, error) {
			serial, key, err := wechatpay.ParseCertificate(raw)
			return cert{serial, key}, err
		})
		if err != nil {
			return nil, "", err
		}
		keys[c.serial] = c.key
		keyAbout = "platform certificate " + c.serial
	}
	s, err := wechatpay.New(wechatpay.Config{MchID: w.MchID, SerialNo: w.SerialNo, PrivateKey: key, PublicKeys: keys,
		BillType: w.BillType, BaseURL: w.BaseURL, Client: b.client, Now: b.now})
	if err != nil {
		return nil, "", err
	}
	return s, fmt.Sprintf("merchant %s, private key %s parses, %s parses", w.MchID, w.PrivateKey, keyAbout), nil
}

func (b sourceBuilder) alipay(al *config.AlipayFetch) (fetch.Source, string, error) {
	key, err := secret(b, "private_key", al.PrivateKey, alipay.ParsePrivateKey)
	if err != nil {
		return nil, "", err
	}
	pub, err := secret(b, "alipay_public_key", al.PublicKey, alipay.ParsePublicKey)
	if err != nil {
		return nil, "", err
	}
	s, err := alipay.New(alipay.Config{AppID: al.AppID, PrivateKey: key, AlipayPublicKey: pub, BillType: al.BillType,
		Gateway: al.Gateway, Client: b.client, Now: b.now})
	if err != nil {
		return nil, "", err
	}
	return s, fmt.Sprintf("app %s, private key %s parses, Alipay public key %s parses", al.AppID, al.PrivateKey, al.PublicKey), nil
}

func (b sourceBuilder) stripe(st *config.StripeFetch) (fetch.Source, string, error) {
	key, err := secret(b, "api_key", st.APIKey, stripe.ParseAPIKey)
	if err != nil {
		return nil, "", err
	}
	s, err := stripe.New(stripe.Config{APIKey: key, ReportType: st.ReportType, OrderKey: b.ch.OrderMetadataKey,
		RefundKey: b.ch.RefundMetadataKey, Location: b.loc, APIURL: st.APIURL, FilesURL: st.FilesURL, Client: b.client,
		PollBudget: time.Duration(st.PollBudget), Sleep: b.sleep, Now: b.now})
	if err != nil {
		return nil, "", err
	}
	report := cmp.Or(st.ReportType, stripe.DefaultReportType)
	return s, fmt.Sprintf("report %s, API key %s is well formed", report, st.APIKey), nil
}

func (b sourceBuilder) adyen(ad *config.AdyenFetch) (*nightly.Batches, string, error) {
	password, err := secret(b, "password", ad.Password, func(raw []byte) (string, error) { return string(raw), nil })
	if err != nil {
		return nil, "", err
	}
	s, err := adyen.New(adyen.Config{MerchantAccount: ad.MerchantAccount, Username: ad.Username, Password: password,
		BaseURL: ad.BaseURL, Client: b.client})
	if err != nil {
		return nil, "", err
	}
	return &nightly.Batches{Account: ad.MerchantAccount, First: ad.FirstBatch, Source: s},
		fmt.Sprintf("merchant account %s, report user %s, password %s set, batches from %d on", ad.MerchantAccount, ad.Username, ad.Password, ad.FirstBatch), nil
}

func (b sourceBuilder) sftp(sf *config.SFTPFetch, f *config.Fetch) (fetch.Source, string, error) {
	var pass []byte
	if sf.Passphrase != nil {
		var err error
		if pass, err = secret(b, "passphrase", *sf.Passphrase, func(raw []byte) ([]byte, error) { return raw, nil }); err != nil {
			return nil, "", err
		}
	}
	signer, err := secret(b, "private_key", sf.PrivateKey, func(raw []byte) (ssh.Signer, error) { return sftp.ParsePrivateKey(raw, pass) })
	if err != nil {
		return nil, "", err
	}
	if err := sftp.CheckKnownHosts(sf.KnownHosts, sf.Addr); err != nil {
		return nil, "", fmt.Errorf("known_hosts: %w", err)
	}
	call, _ := f.Timeouts()
	s, err := sftp.New(sftp.Config{Addr: sf.Addr, User: sf.User, Signer: signer, KnownHosts: sf.KnownHosts,
		RemotePath: sf.RemotePath, DoneMarker: sf.DoneMarker, Settle: time.Duration(sf.Settle), Sleep: b.sleep,
		Timeout: call, Retry: b.client.Retry})
	if err != nil {
		return nil, "", err
	}
	complete := fmt.Sprintf("complete when the same at two looks %s apart", cmp.Or(time.Duration(sf.Settle), sftp.DefaultSettle))
	if sf.DoneMarker != "" {
		complete = "complete when " + sf.DoneMarker + " is there"
	}
	return s, fmt.Sprintf("%s@%s, private key %s parses, host key in %s, %s", sf.User, sf.Addr, sf.PrivateKey, sf.KnownHosts, complete), nil
}

// fetchClient is the HTTP client and retry policy of a fetch block.
// Tests point it at their servers through App.HTTPClient.
func (a *App) fetchClient(f *config.Fetch) *fetch.Client {
	call, _ := f.Timeouts()
	c := &fetch.Client{HTTP: a.HTTPClient, Call: call,
		Retry: retry.Policy{Attempts: f.RetryAttempts, Budget: time.Duration(f.RetryBudget), Sleep: a.Sleep}}
	if c.HTTP == nil {
		c.HTTP = fetch.NewHTTPClient(nil)
	}
	return c
}
