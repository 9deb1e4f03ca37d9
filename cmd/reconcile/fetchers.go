package main

import (
	"reconcile/config"
	"reconcile/fetch"
	"reconcile/fetch/source"
	"reconcile/ledger"
	"reconcile/nightly"
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
		c, err := a.fetchSource(ch)
		if err != nil {
			return nil, err
		}
		if ad := ch.Fetch.Adyen; c.Adyen != nil {
			f.Batches[ch.Name] = nightly.Batches{Account: ad.MerchantAccount, First: ad.FirstBatch, Source: c.Adyen}
		} else {
			f.Sources[ch.Name] = c.Source
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

// fetchSource builds ch's client from its fetch block. Tests point it at
// their servers through App.HTTPClient.
func (a *App) fetchSource(ch config.Channel) (source.Built, error) {
	return source.New(ch, source.Env{Getenv: a.Getenv, Now: a.Now, Sleep: a.Sleep, HTTP: a.HTTPClient})
}
