package main

import (
	"crypto/rsa"
	"fmt"
	"time"

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
	f := &nightly.Fetcher{Sources: map[string]fetch.Source{}, Batches: map[string]nightly.Batches{}, DB: db}
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
	where := fmt.Sprintf("channel %s: fetch %s", reconcile.Quote(ch.Name), f.API())
	fail := func(err error) (fetch.Source, *nightly.Batches, string, error) {
		return nil, nil, "", fmt.Errorf("%s: %w", where, err)
	}
	read := func(field string, s config.Secret) ([]byte, error) {
		b, err := s.Read(a.Getenv)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", field, s, err)
		}
		return b, nil
	}
	client := a.fetchClient(f)
	loc, err := time.LoadLocation(ch.TimeZone)
	if err != nil {
		return fail(err)
	}
	switch {
	case f.WeChatPay != nil:
		w := f.WeChatPay
		b, err := read("private_key", w.PrivateKey)
		if err != nil {
			return fail(err)
		}
		key, err := wechatpay.ParsePrivateKey(b)
		if err != nil {
			return fail(fmt.Errorf("private_key (%s): %w", w.PrivateKey, err))
		}
		keys := map[string]*rsa.PublicKey{}
		var keyAbout string
		if w.PublicKey != nil {
			b, err := read("public_key", *w.PublicKey)
			if err != nil {
				return fail(err)
			}
			pub, err := wechatpay.ParsePublicKey(b)
			if err != nil {
				return fail(fmt.Errorf("public_key (%s): %w", *w.PublicKey, err))
			}
			keys[w.PublicKeyID] = pub
			keyAbout = "WeChat Pay public key " + w.PublicKeyID
		} else {
			b, err := read("platform_certificate", *w.PlatformCertificate)
			if err != nil {
				return fail(err)
			}
			serial, pub, err := wechatpay.ParseCertificate(b)
			if err != nil {
				return fail(fmt.Errorf("platform_certificate (%s): %w", *w.PlatformCertificate, err))
			}
			keys[serial] = pub
			keyAbout = "platform certificate " + serial
		}
		s, err := wechatpay.New(wechatpay.Config{MchID: w.MchID, SerialNo: w.SerialNo, PrivateKey: key, PublicKeys: keys,
			BillType: w.BillType, BaseURL: w.BaseURL, Client: client, Now: a.Now})
		if err != nil {
			return fail(err)
		}
		return s, nil, fmt.Sprintf("merchant %s, private key %s parses, %s parses", w.MchID, w.PrivateKey, keyAbout), nil
	case f.Alipay != nil:
		al := f.Alipay
		b, err := read("private_key", al.PrivateKey)
		if err != nil {
			return fail(err)
		}
		key, err := alipay.ParsePrivateKey(b)
		if err != nil {
			return fail(fmt.Errorf("private_key (%s): %w", al.PrivateKey, err))
		}
		b, err = read("alipay_public_key", al.PublicKey)
		if err != nil {
			return fail(err)
		}
		pub, err := alipay.ParsePublicKey(b)
		if err != nil {
			return fail(fmt.Errorf("alipay_public_key (%s): %w", al.PublicKey, err))
		}
		s, err := alipay.New(alipay.Config{AppID: al.AppID, PrivateKey: key, AlipayPublicKey: pub, BillType: al.BillType,
			Gateway: al.Gateway, Client: client, Now: a.Now})
		if err != nil {
			return fail(err)
		}
		return s, nil, fmt.Sprintf("app %s, private key %s parses, Alipay public key %s parses", al.AppID, al.PrivateKey, al.PublicKey), nil
	case f.Stripe != nil:
		st := f.Stripe
		b, err := read("api_key", st.APIKey)
		if err != nil {
			return fail(err)
		}
		key, err := stripe.ParseAPIKey(b)
		if err != nil {
			return fail(fmt.Errorf("api_key (%s): %w", st.APIKey, err))
		}
		s, err := stripe.New(stripe.Config{APIKey: key, ReportType: st.ReportType, OrderKey: ch.OrderMetadataKey,
			RefundKey: ch.RefundMetadataKey, Location: loc, APIURL: st.APIURL, FilesURL: st.FilesURL, Client: client,
			PollBudget: time.Duration(st.PollBudget), Sleep: a.Sleep, Now: a.Now})
		if err != nil {
			return fail(err)
		}
		report := st.ReportType
		if report == "" {
			report = stripe.DefaultReportType
		}
		return s, nil, fmt.Sprintf("report %s, API key %s is well formed", report, st.APIKey), nil
	case f.Adyen != nil:
		ad := f.Adyen
		b, err := read("password", ad.Password)
		if err != nil {
			return fail(err)
		}
		password, err := adyen.ParseSecret(b, "password")
		if err != nil {
			return fail(fmt.Errorf("password (%s): %w", ad.Password, err))
		}
		s, err := adyen.New(adyen.Config{MerchantAccount: ad.MerchantAccount, Username: ad.Username, Password: password,
			BaseURL: ad.BaseURL, Client: client})
		if err != nil {
			return fail(err)
		}
		return nil, &nightly.Batches{Account: ad.MerchantAccount, First: ad.FirstBatch, Source: s},
			fmt.Sprintf("merchant account %s, report user %s, password %s set, batches from %d on", ad.MerchantAccount, ad.Username, ad.Password, ad.FirstBatch), nil
	case f.SFTP != nil:
		sf := f.SFTP
		b, err := read("private_key", sf.PrivateKey)
		if err != nil {
			return fail(err)
		}
		var pass []byte
		if sf.Passphrase != nil {
			if pass, err = read("passphrase", *sf.Passphrase); err != nil {
				return fail(err)
			}
		}
		signer, err := sftp.ParsePrivateKey(b, pass)
		if err != nil {
			return fail(fmt.Errorf("private_key (%s): %w", sf.PrivateKey, err))
		}
		if err := sftp.CheckKnownHosts(sf.KnownHosts, sf.Addr); err != nil {
			return fail(fmt.Errorf("known_hosts: %w", err))
		}
		call, _ := f.Timeouts()
		s, err := sftp.New(sftp.Config{Addr: sf.Addr, User: sf.User, Signer: signer, KnownHosts: sf.KnownHosts,
			RemotePath: sf.RemotePath, Timeout: call, Retry: client.Retry})
		if err != nil {
			return fail(err)
		}
		return s, nil, fmt.Sprintf("%s@%s, private key %s parses, host key in %s", sf.User, sf.Addr, sf.PrivateKey, sf.KnownHosts), nil
	}
	return fail(fmt.Errorf("no channel block"))
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
