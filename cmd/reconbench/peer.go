package main

// The peer is DuckDB running a counts script (-duckdb, -duckdb-script) on
// the same night: the canonical CSV and the local records as CSV files. It
// runs outside the module, as a child process, so the project gains no
// dependency on it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"reconcile"
)

// peerData writes the local records as the script reads them: orders.csv
// (order_no, amount_minor, currency, status, channel, paid_at) and
// refunds.csv (refund_no, order_no, amount_minor, currency, status,
// channel, refunded_at), no header, an empty field for NULL. They hold
// exactly the rows LoadLocal copies. Beside them, channel.csv is the
// canonical CSV less its chargebacks: the script knows payments and
// refunds only.
type peerData struct {
	dir, channel        string
	orders, refund, chf *os.File
	ow, rw, cw          *bufio.Writer
}

func createPeerData(dir, channel string) (*peerData, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("duckdb data: %w", err)
	}
	p := &peerData{dir: dir, channel: channel}
	var err error
	if p.orders, err = os.Create(filepath.Join(dir, "orders.csv")); err != nil {
		return nil, fmt.Errorf("duckdb data: %w", err)
	}
	if p.refund, err = os.Create(filepath.Join(dir, "refunds.csv")); err != nil {
		p.orders.Close()
		return nil, fmt.Errorf("duckdb data: %w", err)
	}
	if p.chf, err = os.Create(filepath.Join(dir, "channel.csv")); err != nil {
		p.orders.Close()
		p.refund.Close()
		return nil, fmt.Errorf("duckdb data: %w", err)
	}
	p.ow, p.rw, p.cw = bufio.NewWriterSize(p.orders, 1<<20), bufio.NewWriterSize(p.refund, 1<<20), bufio.NewWriterSize(p.chf, 1<<20)
	p.cw.WriteString(csvHeader)
	return p, nil
}

// peerTime writes a timestamp as the canonical CSV does, NULL as empty.
func peerTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func (p *peerData) add(blk *block) {
	// Every field is plain text without commas or quotes, so no quoting.
	for _, o := range blk.orders {
		fmt.Fprintf(p.ow, "%s,%d,%s,%s,%s,%s\n", o.no, o.amount, currency, o.status, p.channel, peerTime(o.paidAt))
	}
	for _, r := range blk.refunds {
		fmt.Fprintf(p.rw, "%s,%s,%d,%s,%s,%s,%s\n", r.no, r.orderNo, r.amount, currency, r.status, p.channel, peerTime(r.refundedAt))
	}
	for _, r := range blk.rows {
		if !r.chargeback {
			writeCSVRow(p.cw, r)
		}
	}
}

// finish flushes the local records and the channel's rows.
func (p *peerData) finish() error {
	for _, w := range []struct {
		b *bufio.Writer
		f *os.File
	}{{p.ow, p.orders}, {p.rw, p.refund}, {p.cw, p.chf}} {
		if err := w.b.Flush(); err != nil {
			return fmt.Errorf("duckdb data: %w", err)
		}
		if err := w.f.Close(); err != nil {
			return fmt.Errorf("duckdb data: %w", err)
		}
	}
	return nil
}

// abort closes what finish did not (a second Close is harmless).
func (p *peerData) abort() {
	p.orders.Close()
	p.refund.Close()
	p.chf.Close()
}

// windowLiteral is a timestamp literal with a time zone offset; the
// script's day window is the only place it may have them.
var windowLiteral = regexp.MustCompile(`TIMESTAMPTZ\s*'(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}(?::?\d{2})?))'`)

// rewriteWindow returns the script with its day window moved to [start,
// end): the script was written for another generator's date. It refuses
// a script without exactly two such literals, or whose first is not the
// earlier: it could not tell which bound is which.
func rewriteWindow(script []byte, name string, start, end time.Time) ([]byte, error) {
	found := windowLiteral.FindAllSubmatchIndex(script, -1)
	if len(found) != 2 {
		return nil, fmt.Errorf("duckdb script %s: want exactly two TIMESTAMPTZ '<date> <time><offset>' literals "+
			"(the day window's start and end), found %d", name, len(found))
	}
	var bounds [2]time.Time
	for i, m := range found {
		t, err := parseLiteral(string(script[m[2]:m[3]]))
		if err != nil {
			return nil, fmt.Errorf("duckdb script %s: %w", name, err)
		}
		bounds[i] = t
	}
	if !bounds[0].Before(bounds[1]) {
		return nil, fmt.Errorf("duckdb script %s: the day window's first literal (%s) is not before its second (%s)",
			name, script[found[0][0]:found[0][1]], script[found[1][0]:found[1][1]])
	}
	var out bytes.Buffer
	prev := 0
	for i, m := range found {
		out.Write(script[prev:m[0]])
		fmt.Fprintf(&out, "TIMESTAMPTZ '%s'", []time.Time{start, end}[i].UTC().Format("2006-01-02 15:04:05+00"))
		prev = m[1]
	}
	out.Write(script[prev:])
	return out.Bytes(), nil
}

// parseLiteral reads a window literal's text: offsets as +08, +08:00,
// +0800 or Z, fractions of a second allowed.
func parseLiteral(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05Z07", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read the timestamp %q", s)
}

// peerSetup is what running the peer needs: its binary, the rewritten
// script, and the directory holding its data.
type peerSetup struct {
	bin, script, source, data string
}

// preparePeer writes the script with tonight's window into dir, where the
// peer's data will be written too.
func preparePeer(bin, script, dir string) (*peerSetup, error) {
	p := &peerSetup{data: dir}
	var err error
	if p.bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	if p.source, err = filepath.Abs(script); err != nil {
		return nil, err
	}
	src, err := os.ReadFile(p.source)
	if err != nil {
		return nil, fmt.Errorf("duckdb script: %w", err)
	}
	out, err := rewriteWindow(src, p.source, businessDate, businessDate.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p.script = filepath.Join(dir, filepath.Base(p.source))
	return p, os.WriteFile(p.script, out, 0o644)
}

// PeerResult is one timed run of the peer.
type PeerResult struct {
	Run       int
	Wall      time.Duration
	MaxRSSKiB int64
	Counts    map[string]int
}

// RunPeer runs the peer once, timed as RunJob times the job, and reads its
// counts. Its statement times (stderr) are kept in dir.
func RunPeer(ctx context.Context, p *peerSetup, dir string) (PeerResult, error) {
	var res PeerResult
	cmd := exec.CommandContext(ctx, p.bin, "-D", "DATA="+p.data, p.script)
	cmd.Dir, cmd.Env = dir, childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	wall, rss, err := runTimed(cmd)
	res.Wall, res.MaxRSSKiB = wall, rss
	if err != nil {
		return res, fmt.Errorf("duckdb %s: %w\n%s", p.script, err, tail(stderr.String(), 20))
	}
	if err := os.WriteFile(filepath.Join(dir, "duckdb.stderr"), stderr.Bytes(), 0o644); err != nil {
		return res, err
	}
	if res.Counts, err = parsePeerCounts(stdout.String()); err != nil {
		return res, fmt.Errorf("duckdb %s: %w", p.script, err)
	}
	return res, nil
}

// parsePeerCounts reads the script's result: a header line "cat<TAB>n",
// then one line per category with its count. A script with several
// results is read by its last one.
func parsePeerCounts(out string) (map[string]int, error) {
	var counts map[string]int
	for l := range strings.Lines(out) {
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			continue
		}
		cat, num, ok := strings.Cut(l, "\t")
		if cat == "cat" && num == "n" {
			counts = map[string]int{}
			continue
		}
		n, err := strconv.Atoi(num)
		if counts == nil || !ok || err != nil || n < 0 || cat == "" {
			return nil, fmt.Errorf("output line %q: want a header cat<TAB>n, then category<TAB>count lines", l)
		}
		if _, dup := counts[cat]; dup {
			return nil, fmt.Errorf("output names %s twice", cat)
		}
		counts[cat] = n
	}
	if counts == nil {
		return nil, errors.New("output has no cat<TAB>n result")
	}
	return counts, nil
}

// peerCategories are what the script counts. The job's other categories
// (suspected duplicates, over-refunds, fees, unrecognised rows …) it does
// not compute, so they are left out of the comparison.
var peerCategories = []reconcile.Category{
	reconcile.DuplicatePayment, reconcile.DuplicateRefund, reconcile.MissingLocal, reconcile.AmountMismatch,
	reconcile.StatusMismatch, reconcile.Matched, reconcile.MissingChannel,
}

// checkPeer compares the peer's counts with the job's: every category the
// script counts, and any other it printed. The script has no cut-off
// window, so its missing_channel is the job's missing_channel and pending
// together.
func (r *Report) checkPeer(who string, job Expected, peer map[string]int) {
	cats := map[string]bool{}
	for _, c := range peerCategories {
		cats[string(c)] = true
	}
	for c := range peer {
		cats[c] = true
	}
	for _, c := range slices.Sorted(maps.Keys(cats)) {
		want, as := job.Counts[reconcile.Category(c)], c
		if c == string(reconcile.MissingChannel) {
			want += job.Counts[reconcile.Pending]
			as = "missing_channel+pending"
		}
		if peer[c] != want {
			r.mismatch("MISMATCH %s: %s = %d, job csv %s %d", who, c, peer[c], as, want)
		}
	}
}
