package nightly

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/config"
	"reconcile/fetch"
	"reconcile/ledger"
	"reconcile/metrics"
)

// BatchSource is a channel that hands out one file per numbered batch
// rather than per date: Adyen's settlement detail reports.
type BatchSource interface {
	Batch(ctx context.Context, n int64) (*fetch.Offer, error)
}

// Batches is a channel's batch source with the merchant account its
// numbers count in and the batch to start from when none was fetched.
type Batches struct {
	Account string
	First   int64
	Source  BatchSource
}

// Fetcher downloads the channels' settlement files into the paths their
// templates name, where a run finds them.
type Fetcher struct {
	// Sources and Batches hold the channels' clients by channel name; a
	// channel is in one of them.
	Sources map[string]fetch.Source
	Batches map[string]Batches
	DB      *ledger.DB // remembers the batches; needed for Batches only
	Log     *slog.Logger
	Metrics *metrics.Observer
}

// Fetched is what one fetch of a channel's file of a day did.
type Fetched struct {
	Channel string
	Day     reconcile.BusinessDay
	Path    string
	// Result is one of metrics.FetchResults.
	Result string
	Bytes  int64
	// Batches lists the batches filed by this fetch, with their dates.
	Batches []FiledBatch
	Err     error
}

// FiledBatch is a batch put in place, and the date it was filed under.
type FiledBatch struct {
	Number int64
	Day    reconcile.BusinessDay
	Path   string
}

// maxBatchesPerFetch bounds how many batches one fetch takes: a month of
// daily batches, so a long outage is caught up over a few ticks rather
// than in one that never ends.
const maxBatchesPerFetch = 31

// Has reports whether the channel's file is fetched by the job.
func (f *Fetcher) Has(channel string) bool {
	if f == nil {
		return false
	}
	_, one := f.Sources[channel]
	_, batches := f.Batches[channel]
	return one || batches
}

// Fetch downloads ch's file of day into ch.FilePath(day). A file already
// there is left alone unless force is given; then the channel is asked
// again and a file with other bytes replaces it (the lifecycle supersedes
// the run of the old one). A channel of batches takes every batch after
// the last one fetched and files each under the date it belongs to.
func (f *Fetcher) Fetch(ctx context.Context, ch config.Channel, day reconcile.BusinessDay, force bool) Fetched {
	out := Fetched{Channel: ch.Name, Day: day, Path: ch.FilePath(day.Date)}
	if b, ok := f.Batches[ch.Name]; ok {
		f.batches(ctx, ch, b, day, force, &out)
	} else if src, ok := f.Sources[ch.Name]; ok {
		f.one(ctx, ch, src, day, force, &out)
	} else {
		out.Result, out.Err = "failed", fmt.Errorf("channel %s has no fetch block", reconcile.Quote(ch.Name))
	}
	f.Metrics.Fetched(ch.Name, out.Result, out.Bytes)
	f.log(out)
	return out
}

// one fetches a channel that hands out a file per date. The offer and
// the download have a timeout each: a Stripe report waited for must not
// eat the time of its download.
func (f *Fetcher) one(ctx context.Context, ch config.Channel, src fetch.Source, day reconcile.BusinessDay, force bool, out *Fetched) {
	if !force && present(out.Path) {
		out.Result = "unchanged"
		return
	}
	_, download := ch.Fetch.Timeouts()
	octx, cancel := context.WithTimeout(ctx, download)
	defer cancel()
	offer, err := src.Offer(octx, day)
	if err != nil {
		out.Result, out.Err = outcome(err), fmt.Errorf("fetch %s %s: %w", ch.Name, day, err)
		return
	}
	dctx, cancel := context.WithTimeout(ctx, download)
	defer cancel()
	saved, err := fetch.Save(dctx, offer, out.Path, 0, parserLook(dctx, ch, day, out.Path))
	if err != nil {
		out.Result, out.Err = outcome(err), fmt.Errorf("fetch %s %s: %w", ch.Name, day, err)
		return
	}
	out.Result = "unchanged"
	if saved.Changed {
		out.Result, out.Bytes = "saved", saved.Bytes
	}
}

// present reports whether a run would find a file at path: a link that
// leads nowhere is no file, and is fetched over.
func present(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// batches takes the batches after the last one fetched and files each
// under its date; with force, the batches filed under day are fetched
// again. The result is of day: "saved" when a batch was filed under it.
func (f *Fetcher) batches(ctx context.Context, ch config.Channel, b Batches, day reconcile.BusinessDay, force bool, out *Fetched) {
	if f.DB == nil {
		out.Result, out.Err = "failed", fmt.Errorf("fetch %s: the batches fetched are remembered in the database: give --dsn", ch.Name)
		return
	}
	var numbers []int64
	if force {
		filed, err := f.DB.BatchesOn(ctx, ch.Name, b.Account, day)
		if err != nil {
			out.Result, out.Err = "failed", err
			return
		}
		for _, fb := range filed {
			numbers = append(numbers, fb.Number)
		}
	}
	last, err := f.DB.LastBatch(ctx, ch.Name, b.Account)
	if err != nil {
		out.Result, out.Err = "failed", err
		return
	}
	next := last + 1
	if last == 0 {
		next = max(b.First, 1)
	}
	for i := range maxBatchesPerFetch {
		numbers = append(numbers, next+int64(i))
	}
	var held error
	for i, n := range numbers {
		fb, bytes, err := f.batch(ctx, ch, b, n)
		switch {
		case errors.Is(err, fetch.ErrNotReady) && i >= len(numbers)-maxBatchesPerFetch:
			// No batch after the last one closed yet.
		case errors.Is(err, errBatchConflict):
			held = errors.Join(held, fmt.Errorf("fetch %s batch %d: %w", ch.Name, n, err))
			continue // kept aside and remembered: the next batches go on
		case err != nil:
			out.Result, out.Err = outcome(err), errors.Join(held, fmt.Errorf("fetch %s batch %d: %w", ch.Name, n, err))
			return
		default:
			out.Bytes += bytes
			if fb != nil {
				out.Batches = append(out.Batches, *fb)
			}
			continue
		}
		break
	}
	out.Result = "not_ready"
	for _, fb := range out.Batches {
		if fb.Day.String() == day.String() {
			out.Result = "saved"
		}
	}
	if out.Result == "not_ready" && present(out.Path) {
		out.Result = "unchanged"
	}
	if held != nil {
		out.Result, out.Err = "refused", held
	}
}

// batch downloads batch n beside the channel's files under a name no
// run reads (and no other replica or earlier crash shares), finds the
// date it belongs to, and renames it under that date's name. A batch
// whose date already holds another batch is kept beside that file as
// NAME.batch-N, remembered as held, and returned as errBatchConflict.
func (f *Fetcher) batch(ctx context.Context, ch config.Channel, b Batches, n int64) (*FiledBatch, int64, error) {
	_, download := ch.Fetch.Timeouts()
	ctx, cancel := context.WithTimeout(ctx, download)
	defer cancel()
	offer, err := b.Source.Batch(ctx, n)
	if err != nil {
		return nil, 0, err
	}
	loc, err := time.LoadLocation(ch.TimeZone)
	if err != nil {
		return nil, 0, err
	}
	dir := filepath.Dir(ch.FilePath(time.Time{}))
	staging := filepath.Join(dir, fmt.Sprintf(".%s-batch-%d-%s.csv", ch.Name, n, rand.Text()[:10]))
	defer os.Remove(staging)
	var date time.Time
	saved, err := fetch.Save(ctx, offer, staging, 0, func(tmp string) error {
		date, err = batchDate(ctx, tmp, ch.Format, loc)
		return err
	})
	switch {
	case err != nil:
		return nil, 0, err
	case date.IsZero():
		return nil, 0, fmt.Errorf("batch %d: its business date is unknown", n)
	}
	day := reconcile.BusinessDay{Date: date, Location: loc}
	filed, err := f.DB.BatchesOn(ctx, ch.Name, b.Account, day)
	if err != nil {
		return nil, 0, err
	}
	final := ch.FilePath(date)
	for _, other := range filed {
		if other.Number == n || other.Held {
			continue
		}
		aside := final + ".batch-" + strconv.FormatInt(n, 10)
		if err := os.Rename(staging, aside); err != nil {
			return nil, 0, fmt.Errorf("keep batch %d as %s: %w", n, aside, err)
		}
		if err := f.DB.RecordBatch(ctx, ch.Name, b.Account, n, day, saved.SHA256, true); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("batch %d belongs to %s, which already holds batch %d: kept as %s, not reconciled; "+
			"reconcile it by hand (--file), and ask Adyen for one payout a day on this merchant account: %w",
			n, day, other.Number, aside, errBatchConflict)
	}
	if same, _ := sameFile(final, saved.SHA256); !same {
		if err := os.Rename(staging, final); err != nil {
			return nil, 0, fmt.Errorf("file batch %d as %s: %w", n, final, err)
		}
	}
	if err := f.DB.RecordBatch(ctx, ch.Name, b.Account, n, day, saved.SHA256, false); err != nil {
		return nil, 0, err
	}
	return &FiledBatch{Number: n, Day: day, Path: final}, saved.Bytes, nil
}

// sameFile reports whether the file at path has the hex SHA-256 sha.
func sameFile(path, sha string) (bool, error) {
	info, err := channelfeed.Fingerprint(path)
	if err != nil {
		return false, err
	}
	return info.SHA256 == sha, nil
}

// batchDate is the business date a batch's report belongs to: the date,
// in the channel's zone, of its latest payment or refund. A batch's own
// bookings (its fees, its payout) are made when it closes, which can be
// after midnight, so they date it only when it has nothing else.
func batchDate(ctx context.Context, path, format string, loc *time.Location) (time.Time, error) {
	var latest, latestAny time.Time
	_, err := channelfeed.ParseFile(ctx, path, format, channelfeed.Options{Location: loc}, func(t reconcile.Transaction) error {
		if t.OccurredAt.After(latestAny) {
			latestAny = t.OccurredAt
		}
		if (t.Kind == reconcile.KindPayment || t.Kind == reconcile.KindRefund) && t.OccurredAt.After(latest) {
			latest = t.OccurredAt
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if latest.IsZero() {
		latest = latestAny
	}
	if latest.IsZero() {
		return time.Time{}, errors.New("the report has no dated row: its business date is unknown")
	}
	l := latest.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc), nil
}

// parserLook is the check a download passes before it is put in place:
// the channel's parser reads it whole, as the run will, so an error page
// saved as a bill, a truncated archive or rows of another day are refused
// at the fetch, naming the line.
func parserLook(ctx context.Context, ch config.Channel, day reconcile.BusinessDay, final string) func(string) error {
	return func(tmp string) error {
		opts := NewSpec(config.Config{}, ch, day).Parse()
		opts.Name = final
		_, err := channelfeed.ParseFile(ctx, tmp, ch.Format, opts, nil)
		return err
	}
}

// errBatchConflict is a batch whose date holds another batch's file: no
// tick can settle it, a person must.
var errBatchConflict = errors.New("two batches for one date")

// outcome names the result of a fetch that ended with err: "refused" is
// what no retry will change, whether the channel refused or the job did.
func outcome(err error) string {
	switch {
	case errors.Is(err, fetch.ErrNotReady):
		return "not_ready"
	case errors.Is(err, fetch.ErrNoBill):
		return "no_bill"
	}
	if _, ok := errors.AsType[*fetch.Refusal](err); ok || errors.Is(err, errBatchConflict) {
		return "refused"
	}
	if errors.Is(err, fetch.ErrBadFile) {
		return "bad_file"
	}
	return "failed"
}

func (f *Fetcher) log(out Fetched) {
	log := f.Log
	if log == nil {
		return
	}
	log = log.With("channel", out.Channel, "business_date", out.Day.String())
	switch out.Result {
	case "saved":
		log.Info("settlement file fetched", "file", out.Path, "bytes", out.Bytes)
	case "unchanged":
		log.Debug("settlement file unchanged at the channel", "file", out.Path)
	case "not_ready", "no_bill":
		log.Info("settlement file not fetched", "result", out.Result, "reason", out.Err)
	default:
		log.Warn("settlement file not fetched", "result", out.Result, "error", out.Err)
	}
	for _, b := range out.Batches {
		log.Info("batch filed", "batch", b.Number, "filed_under", b.Day.String(), "file", b.Path)
	}
}
