package main

// Earlier nights: the job remembers each night's keys (settled_keys,
// settled_filters) and reads the last memory_days nights of it on every
// run, so a bench of one night alone would measure a first night. Before
// tonight is timed, the job is run on -nights earlier nights, as months
// of use would have done.

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// userStride keeps each earlier night's customers apart from tonight's (1
// to Payments) and from one another's: no customer has a second order, so
// rule 10 (the same customer paying the same amount again soon) plants
// nothing.
const userStride = 100_000_000 // the most payments -size allows

// nightBlock makes block b of the night back days before tonight: as many
// orders and refunds as tonight's block, every one settled on that date
// and in that night's file, with no anomaly. Its keys carry the date's
// digits, so they never collide with tonight's or another night's.
func (s Spec) nightBlock(back, b int) block {
	day := businessDate.AddDate(0, 0, -back)
	keys := keysOf(day)
	rng := rand.New(rand.NewPCG(s.Seed, uint64(back)<<32|uint64(b)))
	first := b*blockOrders + 1
	n := min(blockOrders, s.Payments-first+1)
	blk := block{want: Expected{Counts: map[reconcile.Category]int{}}}
	daySeconds := int64(23 * 3600) // clear of the cut-off window, as tonight
	for k := range n {
		i := first + k
		amount := payAmount(rng)
		at := day.Add(time.Duration(int64(i-1)*daySeconds/int64(s.Payments)+rng.Int64N(60)) * time.Second)
		o := localOrder{no: keys.order(i), userID: int64(back)*userStride + int64(i), amount: amount,
			status: reconcile.OrderPaid, txnID: keys.txn(i),
			createdAt: at.Add(-time.Duration(5+rng.IntN(300)) * time.Second), paidAt: at}
		blk.orders = append(blk.orders, o)
		blk.idem = append(blk.idem, idemRecord{scope: "payment", key: o.no, status: "DONE",
			hash: requestHash("payment", back*userStride+i), createdAt: o.createdAt})
		blk.rows = append(blk.rows, chanRow{orderNo: o.no, txnID: o.txnID, amount: amount, at: at, userID: o.userID, n: i})
	}
	firstRefund := b*blockRefunds + 1
	for j := firstRefund; j < firstRefund+blockRefunds && j <= s.refunds(); j++ {
		o := blk.orders[10*j-first] // refund j is for order 10j, as tonight
		amount := o.amount
		if j%3 != 0 && o.amount > 1 {
			amount = 1 + rng.Int64N(o.amount-1)
		}
		at := o.paidAt.Add(time.Duration(30+rng.IntN(570)) * time.Second)
		r := localRefund{no: keys.refund(j), orderNo: o.no, amount: amount, status: reconcile.RefundSucceeded,
			refundID: keys.refundID(j), createdAt: at.Add(-time.Duration(1+rng.IntN(20)) * time.Second), refundedAt: at}
		blk.refunds = append(blk.refunds, r)
		blk.idem = append(blk.idem, idemRecord{scope: "refund", key: r.no, status: "DONE",
			hash: requestHash("refund", back*userStride+j), createdAt: r.createdAt})
		blk.rows = append(blk.rows, chanRow{refund: true, orderNo: o.no, refundNo: r.no, txnID: o.txnID,
			refundID: r.refundID, amount: amount, at: at, userID: o.userID, n: j})
	}
	blk.want.Counts[reconcile.Matched] = len(blk.rows)
	return blk
}

// earlierNight is one earlier night's settlement file.
type earlierNight struct {
	day  time.Time
	file string
	rows int
}

// writeNightCSV writes the canonical CSV of the night back days before
// tonight into dir, a block at a time.
func writeNightCSV(s Spec, dir string, back int) (earlierNight, error) {
	night := earlierNight{day: businessDate.AddDate(0, 0, -back)}
	night.file = filepath.Join(dir, "shop-"+night.day.Format(time.DateOnly)+".csv")
	f, err := os.Create(night.file)
	if err != nil {
		return night, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n")
	for b := range s.blocks() {
		blk := s.nightBlock(back, b)
		for _, r := range blk.rows {
			writeCSVRow(w, r)
		}
		night.rows += len(blk.rows)
	}
	if err := w.Flush(); err != nil {
		return night, fmt.Errorf("write %s: %w", night.file, err)
	}
	return night, f.Close()
}

// makeEarlierNights gives every bench channel n earlier nights: their
// records loaded, the job run on each night's file, oldest first, each
// run checked to have succeeded with every row matched, and then every
// table analyzed again, so tonight's runs are planned on what is there.
func (e *benchEnv) makeEarlierNights(ctx context.Context, n int) error {
	e.rep.EarlierNights = earlierJSON{Nights: n, Dates: []string{}, Runs: []earlierRunJSON{}}
	if n == 0 {
		return nil
	}
	start := time.Now()
	logf("making %d earlier nights (%s to %s), %d payments and %d refunds each", n,
		businessDate.AddDate(0, 0, -n).Format(time.DateOnly), businessDate.AddDate(0, 0, -1).Format(time.DateOnly),
		e.spec.Payments, e.spec.refunds())
	var nights []earlierNight
	for back := n; back >= 1; back-- {
		night, err := writeNightCSV(e.spec, e.tmp, back)
		if err != nil {
			return fmt.Errorf("earlier night %s: %w", night.day.Format(time.DateOnly), err)
		}
		nights = append(nights, night)
		e.rep.EarlierNights.Dates = append(e.rep.EarlierNights.Dates, night.day.Format(time.DateOnly))
	}
	e.rep.EarlierNights.ChannelRowsPerNight = nights[0].rows
	e.rep.EarlierNights.Pruned = e.prune
	loading := time.Now()
	if !e.prune {
		for _, ch := range e.chans {
			if err := loadEarlier(ctx, ch, e.spec, n); err != nil {
				return err
			}
		}
	}
	e.rep.EarlierNights.LoadSeconds = time.Since(loading).Seconds()
	for i, night := range nights {
		for _, ch := range e.chans {
			if e.prune {
				if err := e.loadNight(ctx, ch, n-i); err != nil {
					return err
				}
			}
			if err := e.runEarlier(ctx, ch, night); err != nil {
				return err
			}
			if e.prune {
				if err := pruneNight(ctx, ch, night.day); err != nil {
					return err
				}
			}
		}
	}
	for _, ch := range e.chans {
		if err := analyzeSchema(ctx, ch.dsn); err != nil {
			return fmt.Errorf("analyze the tables of channel %s: %w", ch.name, err)
		}
	}
	e.rep.EarlierNights.SetupSeconds = time.Since(start).Seconds()
	logf("earlier nights made in %s s", secs(time.Since(start)))
	return nil
}

func loadEarlier(ctx context.Context, ch benchChannel, s Spec, n int) error {
	start := time.Now()
	conn, err := pgx.Connect(ctx, ch.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, _, _, err := LoadEarlier(ctx, conn, s, ch.name, n); err != nil {
		return fmt.Errorf("load the earlier nights of channel %s: %w", ch.name, err)
	}
	logf("loaded the earlier nights' local records of channel %s (COPY) in %s s", ch.name, secs(time.Since(start)))
	return nil
}

// loadNight loads the local records of the one earlier night back days
// before tonight, for -prune.
func (e *benchEnv) loadNight(ctx context.Context, ch benchChannel, back int) error {
	start := time.Now()
	conn, err := pgx.Connect(ctx, ch.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	s := e.spec
	if _, _, _, err := copyLocal(ctx, conn, s.blocks(), func(b int) block { return s.nightBlock(back, b) }, ch.name); err != nil {
		return fmt.Errorf("load earlier night %d of channel %s: %w", back, ch.name, err)
	}
	e.rep.EarlierNights.LoadSeconds += time.Since(start).Seconds()
	return nil
}

// pruneNight deletes the local records of an earlier night once its runs
// are done, for -prune, and vacuums, so the next night's records take
// their room. Tonight reads nothing of them: no key, customer or order
// of the bench's data spans two nights (nightBlock), so what the night
// leaves that matters is the job's memory of it, which stays.
func pruneNight(ctx context.Context, ch benchChannel, day time.Time) error {
	conn, err := pgx.Connect(ctx, ch.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// The night's keys are its numbers' prefix and eight digits.
	keys := keysOf(day)
	orders := strings.TrimSuffix(keys.order(0), "00000000") + "%"
	refunds := strings.TrimSuffix(keys.refund(0), "00000000") + "%"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DELETE FROM refunds WHERE refund_no LIKE $1", []any{refunds}},
		{"DELETE FROM idempotency_records WHERE idem_key LIKE $1 OR idem_key LIKE $2", []any{orders, refunds}},
		{"DELETE FROM orders WHERE order_no LIKE $1", []any{orders}},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("prune earlier night %s of channel %s: %w", day.Format(time.DateOnly), ch.name, err)
		}
	}
	if _, err := conn.Exec(ctx, "VACUUM refunds, idempotency_records, orders"); err != nil {
		return fmt.Errorf("prune earlier night %s of channel %s: %w", day.Format(time.DateOnly), ch.name, err)
	}
	return nil
}

// runEarlier runs the job on one earlier night of one channel; every row
// of the night must match.
func (e *benchEnv) runEarlier(ctx context.Context, ch benchChannel, night earlierNight) error {
	date := night.day.Format(time.DateOnly)
	out := filepath.Join(e.tmp, "out-"+date+"-"+ch.name)
	res, err := RunJob(ctx, e.bin, e.tmp, e.jobArgs(ch, "csv", night.day, night.file, out), out)
	if err != nil {
		return fmt.Errorf("earlier night %s, channel %s: %w", date, ch.name, err)
	}
	logf("earlier night %s, channel %s: reconcile run took %s s", date, ch.name, secs(res.Wall))
	want := Expected{Counts: map[reconcile.Category]int{reconcile.Matched: night.rows}}
	e.rep.checkAgainst("earlier night "+date+" "+ch.name, "generated", want, res.Got)
	e.rep.EarlierNights.Runs = append(e.rep.EarlierNights.Runs, earlierRunJSON{
		Date: date, Channel: ch.name, WallSeconds: res.Wall.Seconds(), PeakRSSKiB: res.MaxRSSKiB,
		Counts: countsJSON(res.Got.Counts),
	})
	return nil
}

// analyzeSchema analyzes every table of the schema dsn's search path
// names: the earlier nights' runs have filled the job's own tables (runs,
// findings, memory) since the records were analyzed.
func analyzeSchema(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var idents []string
	for _, t := range tables {
		idents = append(idents, pgx.Identifier{t}.Sanitize())
	}
	if len(idents) == 0 {
		return nil
	}
	_, err = conn.Exec(ctx, "ANALYZE "+strings.Join(idents, ", "))
	return err
}

// earlierJSON is what the report says of the earlier nights.
type earlierJSON struct {
	Nights              int      `json:"nights"`
	Dates               []string `json:"dates"`
	ChannelRowsPerNight int      `json:"channel_rows_per_night"`
	// SetupSeconds covers writing their files, loading their records
	// (LoadSeconds), the job's runs on them and analyzing the tables
	// afterwards.
	SetupSeconds float64 `json:"setup_seconds"`
	LoadSeconds  float64 `json:"load_seconds"`
	// Pruned: each night's records were loaded before its runs and
	// deleted after them (-prune).
	Pruned bool             `json:"pruned,omitempty"`
	Runs   []earlierRunJSON `json:"runs"`
}

type earlierRunJSON struct {
	Date        string         `json:"date"`
	Channel     string         `json:"channel"`
	WallSeconds float64        `json:"wall_seconds"`
	PeakRSSKiB  int64          `json:"peak_rss_kib"`
	Counts      map[string]int `json:"counts"`
}
