package nightly

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"reconcile"
	"reconcile/atomicfile"
	"reconcile/bankfeed"
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
	// Now is the fetch's clock, time.Now when nil: a batch dated past
	// today, beyond the days its channel's row window allows after a
	// date, is held aside.
	Now func() time.Time
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
	// Held lists the batches this fetch kept aside instead of filing.
	Held []HeldBatch
	Err  error
}

// FiledBatch is a batch put in place, and the date it was filed under.
type FiledBatch struct {
	Number int64
	Day    reconcile.BusinessDay
	Path   string
}

// HeldBatch is a batch kept aside, not filed, and why.
type HeldBatch struct {
	Number int64
	Path   string // where it is kept
	Err    error  // why, in words for the alert
	// Alert is true when this fetch was the first to hold it: it is
	// alerted once, by that fetch, however often it is fetched again.
	Alert bool
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
	// A file already there is no write, and a date's directory may see
	// none again: its crash leftovers are swept all the same.
	atomicfile.RemoveStale(filepath.Dir(out.Path))
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
// again. The result is of day: "saved" when a batch was filed under it;
// "refused" when a batch was held aside, each named in Held.
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
	forced := len(numbers)
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
		var again *reconcile.BusinessDay
		if i < forced {
			again = &day
		}
		fb, hb, bytes, err := f.batch(ctx, ch, b, n, again)
		switch {
		case errors.Is(err, fetch.ErrNotReady) && i >= forced:
			// No batch after the last one closed yet.
		case err != nil:
			out.Result, out.Err = outcome(err), errors.Join(held, fmt.Errorf("fetch %s batch %d: %w", ch.Name, n, err))
			return
		default:
			out.Bytes += bytes
			if fb != nil {
				out.Batches = append(out.Batches, *fb)
			}
			if hb != nil {
				// Kept aside and remembered: the next batches go on.
				out.Held = append(out.Held, *hb)
				held = errors.Join(held, hb.Err)
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

// batch downloads batch n into a hidden temporary file beside the
// channel's files, finds the date it belongs to, and files it under that
// date's name, keeping a file it replaces. It is held aside instead,
// remembered as held and returned as a HeldBatch, when its rows are dated
// outside the channel's row window (kept apart from every date's file,
// under a name no path template makes), when its date
// already holds another batch, or when the date's path holds a file no
// batch was filed as (kept beside it as NAME.batch-N). again is the date
// --force fetches again, whose file the batch replaces whoever put it
// there.
func (f *Fetcher) batch(ctx context.Context, ch config.Channel, b Batches, n int64, again *reconcile.BusinessDay) (*FiledBatch, *HeldBatch, int64, error) {
	_, download := ch.Fetch.Timeouts()
	ctx, cancel := context.WithTimeout(ctx, download)
	defer cancel()
	offer, err := b.Source.Batch(ctx, n)
	if err != nil {
		return nil, nil, 0, err
	}
	loc, err := time.LoadLocation(ch.TimeZone)
	if err != nil {
		return nil, nil, 0, err
	}
	dir := filepath.Dir(ch.FilePath(time.Time{}))
	var dated dating
	staged, err := fetch.Stage(ctx, offer, dir, ch.Name+"-batch-"+strconv.FormatInt(n, 10), 0, func(tmp string) error {
		dated, err = batchDate(ctx, tmp, ch, offer.Name, loc)
		return err
	})
	if err != nil {
		return nil, nil, 0, err
	}
	defer staged.Discard()
	day := reconcile.BusinessDay{Date: dated.date, Location: loc}
	if err := f.inWindow(ctx, staged.Path(), ch, offer.Name, dated); err != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, err
		}
		aside := filepath.Join(dir, fmt.Sprintf("%s.batch-%d.outside-row-window.csv", ch.Name, n))
		return f.hold(ctx, ch, b, n, day, staged, aside, fmt.Errorf(
			"%w; kept as %s, filed under no date and not reconciled: ask Adyen about the report", err, aside))
	}
	filed, err := f.DB.BatchesOn(ctx, ch.Name, b.Account, day)
	if err != nil {
		return nil, nil, 0, err
	}
	final := ch.FilePath(day.Date)
	aside := final + ".batch-" + strconv.FormatInt(n, 10)
	for _, other := range filed {
		if other.Number == n || other.Held {
			continue
		}
		return f.hold(ctx, ch, b, n, day, staged, aside, fmt.Errorf(
			"batch %d belongs to %s, which already holds batch %d: kept as %s, not reconciled; "+
				"reconcile it by hand (--file), and ask Adyen for one payout a day on this merchant account", n, day, other.Number, aside))
	}
	if again == nil || again.String() != day.String() {
		stranger, err := otherFile(final, staged.SHA256)
		if err != nil {
			return nil, nil, 0, err
		}
		if stranger {
			return f.hold(ctx, ch, b, n, day, staged, aside, fmt.Errorf(
				"batch %d belongs to %s, whose file %s is not a batch the job filed (put there by hand, or before the job fetched this channel): "+
					"kept as %s, not reconciled; compare the two, then `reconcile fetch --force --channel %s --date %s` files the batch "+
					"and keeps that file beside it", n, day, final, aside, ch.Name, day))
		}
	}
	saved, err := staged.Place(final)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("file batch %d as %s: %w", n, final, err)
	}
	if err := f.DB.RecordBatch(ctx, ch.Name, b.Account, n, day, saved.SHA256); err != nil {
		return nil, nil, 0, err
	}
	return &FiledBatch{Number: n, Day: day, Path: final}, nil, saved.Bytes, nil
}

// hold keeps the staged batch n as aside, remembers it as held under the
// day its rows gave it, and returns it with why.
func (f *Fetcher) hold(ctx context.Context, ch config.Channel, b Batches, n int64, day reconcile.BusinessDay, staged *fetch.Staged, aside string, why error) (*FiledBatch, *HeldBatch, int64, error) {
	if _, err := staged.Place(aside); err != nil {
		return nil, nil, 0, fmt.Errorf("keep batch %d as %s: %w", n, aside, err)
	}
	first, err := f.DB.HoldBatch(ctx, ch.Name, b.Account, n, day, staged.SHA256)
	if err != nil {
		return nil, nil, 0, err
	}
	return nil, &HeldBatch{Number: n, Path: aside, Err: fmt.Errorf("fetch %s batch %d: %w: %w", ch.Name, n, errBatchHeld, why), Alert: first}, 0, nil
}

// otherFile reports whether path holds a file with other bytes than the
// hex SHA-256 sha: nothing there is no other file.
func otherFile(path, sha string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	same, err := sameFile(path, sha)
	return !same, err
}

// inWindow checks the batch at path against the channel's row window,
// as a run would: the date it belongs to is no further past today than
// the window allows after a date, and the run of that date reads every
// row of it (the channel's parser reads it with the run's options).
func (f *Fetcher) inWindow(ctx context.Context, path string, ch config.Channel, name string, d dating) error {
	day := reconcile.BusinessDay{Date: d.date, Location: d.date.Location()}
	today := f.today(day.Location)
	if after := ch.Window().DaysAfter; day.Date.After(today.Date.AddDate(0, 0, after)) {
		return fmt.Errorf("%s is dated %s by its latest payment or refund (%s:%d), more than %d days after today, %s, "+
			"which the channel's row_window allows (days_after)", name, day, name, d.line, after, today)
	}
	opts := NewSpec(config.Config{}, ch, day).Parse()
	opts.Name = name
	if _, err := channelfeed.ParseFile(ctx, path, ch.Format, opts, nil); err != nil {
		return fmt.Errorf("%s is dated %s by its latest payment or refund (%s:%d), and the run of that date would refuse it "+
			"for the channel's row_window: %w", name, day, name, d.line, err)
	}
	return nil
}

// today is the fetch's business date in loc.
func (f *Fetcher) today(loc *time.Location) reconcile.BusinessDay {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	t := now().In(loc)
	return reconcile.BusinessDay{Date: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc), Location: loc}
}

// sameFile reports whether the file at path has the hex SHA-256 sha.
func sameFile(path, sha string) (bool, error) {
	info, err := channelfeed.Fingerprint(path)
	if err != nil {
		return false, err
	}
	return info.SHA256 == sha, nil
}

// dating is the business date a batch belongs to and the line of the row
// that dates it.
type dating struct {
	date time.Time // midnight in the channel's zone
	line int
}

// batchDate is the business date a batch's report belongs to: the date,
// in the channel's zone, of its latest payment or refund. A batch's own
// bookings (its fees, its payout) are made when it closes, which can be
// after midnight, so they date it only when it has nothing else. The
// report is read with the run's options but no row window: the window
// depends on the date, which this finds.
func batchDate(ctx context.Context, path string, ch config.Channel, name string, loc *time.Location) (dating, error) {
	var latest, latestAny reconcile.Transaction
	opts := NewSpec(config.Config{}, ch, reconcile.BusinessDay{Location: loc}).Parse()
	opts.Name, opts.Earliest, opts.Latest = name, time.Time{}, time.Time{}
	_, err := channelfeed.ParseFile(ctx, path, ch.Format, opts, func(t reconcile.Transaction) error {
		if t.OccurredAt.After(latestAny.OccurredAt) {
			latestAny = t
		}
		if (t.Kind == reconcile.KindPayment || t.Kind == reconcile.KindRefund) && t.OccurredAt.After(latest.OccurredAt) {
			latest = t
		}
		return nil
	})
	if err != nil {
		return dating{}, err
	}
	if latest.OccurredAt.IsZero() {
		latest = latestAny
	}
	if latest.OccurredAt.IsZero() {
		return dating{}, errors.New("the report has no dated row: its business date is unknown")
	}
	l := latest.OccurredAt.In(loc)
	return dating{date: time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc), line: latest.Line}, nil
}

// parserLook is the check a download passes before it is put in place:
// the channel's parser reads it whole, as the run will, so an error page
// saved as a bill, a truncated archive or rows of another day are refused
// at the fetch, naming the line.
func parserLook(ctx context.Context, ch config.Channel, day reconcile.BusinessDay, final string) func(string) error {
	return func(tmp string) error {
		if ch.Statement() { // a bank's statement, dropped on SFTP
			_, _, err := bankfeed.ReadFile(tmp, ch.Format, bankfeed.Options{Name: final}, nil)
			return err
		}
		opts := NewSpec(config.Config{}, ch, day).Parse()
		opts.Name = final
		_, err := channelfeed.ParseFile(ctx, tmp, ch.Format, opts, nil)
		return err
	}
}

// errBatchHeld is a batch kept aside rather than filed: no tick can
// settle it, a person must.
var errBatchHeld = errors.New("held aside")

// outcome names the result of a fetch that ended with err: "refused" is
// what no retry will change, the channel's refusal (a batch held aside is
// "refused" too, and listed in Fetched.Held).
func outcome(err error) string {
	switch {
	case errors.Is(err, fetch.ErrNotReady):
		return "not_ready"
	case errors.Is(err, fetch.ErrNoBill):
		return "no_bill"
	}
	if _, ok := errors.AsType[*fetch.Refusal](err); ok {
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
