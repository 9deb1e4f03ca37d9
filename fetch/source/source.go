// Package source builds the client of a channel's fetch block from the
// config: every secret read by the one rule (config.Secret.Read) and every
// key parsed as it is built, so a bad one stops a command before any
// download, and check-config can say what each block will use without
// calling the channel.
package source

import (
	"cmp"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
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
	"reconcile/retry"
)

// Env is what every client is built with.
type Env struct {
	Getenv func(string) string
	Now    func() time.Time
	// Sleep, when set, replaces the waits between retries and polls.
	Sleep func(context.Context, time.Duration) error
	// HTTP is the client of every call; nil means fetch.NewHTTPClient's.
	HTTP *http.Client
}

// Built is a channel's client: Source for a channel that makes one file
// per date, Adyen for Adyen's numbered batches.
type Built struct {
	Source fetch.Source
	Adyen  *adyen.Source
	// About says in a few words what was built, naming where each secret
	// came from and never what it is.
	About string
}

// New builds the client of ch's fetch block, which must be there. Errors
// name the channel and the setting, never a secret.
func New(ch config.Channel, env Env) (Built, error) {
	f := ch.Fetch
	var c Built
	loc, err := time.LoadLocation(ch.TimeZone)
	if err == nil {
		b := builder{getenv: env.Getenv, now: env.Now, sleep: env.Sleep, client: client(f, env), ch: ch, loc: loc}
		switch {
		case f.WeChatPay != nil:
			c.Source, c.About, err = b.wechatpay(f.WeChatPay)
		case f.Alipay != nil:
			c.Source, c.About, err = b.alipay(f.Alipay)
		case f.Stripe != nil:
			c.Source, c.About, err = b.stripe(f.Stripe)
		case f.Adyen != nil:
			c.Adyen, c.About, err = b.adyen(f.Adyen)
		case f.SFTP != nil:
			c.Source, c.About, err = b.sftp(f.SFTP, f)
		default:
			err = errors.New("no channel block")
		}
	}
	if err != nil {
		return Built{}, fmt.Errorf("channel %s: fetch %s: %w", reconcile.Quote(ch.Name), f.API(), err)
	}
	return c, nil
}

// client is the HTTP client and retry policy of a fetch block.
func client(f *config.Fetch, env Env) *fetch.Client {
	call, _ := f.Timeouts()
	c := &fetch.Client{HTTP: env.HTTP, Call: call,
		Retry: retry.Policy{Attempts: f.RetryAttempts, Budget: time.Duration(f.RetryBudget), Sleep: env.Sleep}}
	if c.HTTP == nil {
		c.HTTP = fetch.NewHTTPClient(nil)
	}
	return c
}

// builder is what every channel's client is built with.
type builder struct {
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
func secret[T any](b builder, field string, s config.Secret, parse func([]byte) (T, error)) (T, error) {
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

func (b builder) wechatpay(w *config.WeChatPayFetch) (fetch.Source, string, error) {
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

func (b builder) alipay(al *config.AlipayFetch) (fetch.Source, string, error) {
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

func (b builder) stripe(st *config.StripeFetch) (fetch.Source, string, error) {
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

func (b builder) adyen(ad *config.AdyenFetch) (*adyen.Source, string, error) {
	password, err := secret(b, "password", ad.Password, func(raw []byte) (string, error) { return string(raw), nil })
	if err != nil {
		return nil, "", err
	}
	s, err := adyen.New(adyen.Config{MerchantAccount: ad.MerchantAccount, Username: ad.Username, Password: password,
		BaseURL: ad.BaseURL, Client: b.client})
	if err != nil {
		return nil, "", err
	}
	return s, fmt.Sprintf("merchant account %s, report user %s, password %s set, batches from %d on", ad.MerchantAccount, ad.Username, ad.Password, ad.FirstBatch), nil
}

func (b builder) sftp(sf *config.SFTPFetch, f *config.Fetch) (fetch.Source, string, error) {
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
