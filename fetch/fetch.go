// Package fetch downloads settlement files from the channels that hand
// them out. It holds what every channel's client shares: the answers a
// channel gives (a file, "not ready yet", "no bill", a refusal), the HTTP
// client with its timeouts and the job's retry policy, and Save, which puts
// a verified file in place or nothing at all (Stage and Place, for a file
// whose place is known from its content only). Each channel's client is a
// package of its own below this one: fetch/wechatpay, fetch/alipay,
// fetch/stripe, fetch/adyen, fetch/sftp.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"

	"reconcile"
)

var (
	// ErrNotReady is a channel saying the file of that date is not made
	// yet: not a failure, the file is asked for again on a later tick.
	ErrNotReady = errors.New("not ready yet at the channel")
	// ErrNoBill is a channel saying there is no file for that date, as
	// WeChat Pay and Alipay do for a day without transactions.
	ErrNoBill = errors.New("the channel has no bill for that date")
)

// Refusal is a channel refusing the request itself: credentials that do
// not sign, a key without permission, a merchant the channel does not
// know. Asking again will not help; a person has to change something.
type Refusal struct {
	Status  int    // the HTTP status, 0 when there was none (SFTP)
	Code    string // the channel's error code, when it gave one
	Message string // the channel's words, already made safe to show
}

func (e *Refusal) Error() string {
	s := "refused by the channel"
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Source is one channel's way of handing out its settlement file of a
// business date.
type Source interface {
	// Offer asks the channel for the file of day. It returns ErrNotReady,
	// ErrNoBill or a *Refusal when the channel answers so; any other error
	// is a failure that survived the retries.
	Offer(ctx context.Context, day reconcile.BusinessDay) (*Offer, error)
}

// Offer is a file a channel is ready to hand out.
type Offer struct {
	// Name says what the channel calls the file, for messages ("tradebill
	// 2026-11-28", "batch 412"); never a URL, which may carry a token.
	Name string
	// Size is the size the channel states, -1 when it states none.
	Size int64
	// Digest is the hash the channel states for the bytes, nil when it
	// states none.
	Digest *Digest
	// Open starts the download. Save calls it at most once.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Digest is a hash a channel states for a file.
type Digest struct {
	Name string // "SHA1", as the channel names it
	New  func() hash.Hash
	Sum  []byte
}
