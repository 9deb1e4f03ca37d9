// Command reconbench measures `reconcile run` on generated data of a
// chosen size, and the SQL a team would write instead on the same data.
//
//	go run ./cmd/reconbench -size 1M      (or: make bench SIZE=1M)
//
// It generates a night of a busy channel (SIZE payments and SIZE/10
// refunds per side, about 1 % anomalies of every category, a fixed seed),
// loads the local side with COPY into a throwaway PostgreSQL, writes the
// channel side as a canonical CSV and as a WeChat Pay ALL bill, then times
// the job on each file as a child process (wall time, peak RSS, its stage
// times) and the SQL baseline (COPY into a staging table, then joins). The
// counts each reports must equal the anomalies planted; any difference is
// printed as a MISMATCH line and the exit status is 1. The table goes to
// stdout and, as JSON, to out/bench/<size>.json.
//
// Before tonight is timed, the job runs on -nights earlier nights (default
// 7, all matching), so tonight reads a full memory of earlier nights as it
// does in steady use. -runs N times each file N times; -duckdb and
// -duckdb-script race a DuckDB counts script on the same data between the
// job's runs, its counts checked against the job's.
//
// Then rule 15 (-payouts N, default 100k; 0 skips it): a channel's file
// of N payouts in the canonical CSV and the next day's camt.053 of about
// N entries, with payouts arriving by reference, by amount, split, in
// batches, short, missing, and unexpected credits and debits beside them.
// The job runs on -nights earlier nights of them first, then the
// channel's night and the statement's night are timed; the statement
// night's counts must equal what was planted.
//
// RECONCILE_BENCH_DATABASE_URL points it at an existing server instead of a
// throwaway one; it then works in the schemas reconbench_shop,
// reconbench_wechat and reconbench_payouts, which it drops and recreates,
// and drops at the end.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile/ledger"
	"reconcile/ledger/tempdb"
)

// EnvURL names the variable with the DSN of a server to use instead of a
// throwaway one.
const EnvURL = "RECONCILE_BENCH_DATABASE_URL"

const defaultSeed = 20261128

// options are the command line's settings.
type options struct {
	size                 string
	spec                 Spec
	outDir, prebuilt     string
	keep                 string
	duckdb, duckdbScript string // the peer: both or neither
	runs, nights         int
	prune                bool
	payouts              PayoutSpec // Payouts 0: not measured
	payoutSize           string
}

func main() {
	var o options
	size := flag.String("size", "1M", "payments per side: 100k, 1M, 10M or a plain number; refunds are a tenth of it")
	seed := flag.Uint64("seed", defaultSeed, "generator seed; the same seed gives the same data")
	flag.StringVar(&o.outDir, "out", "out/bench", "`DIR` for <size>.json, relative to the module root")
	flag.StringVar(&o.prebuilt, "reconcile", "", "time this reconcile `binary` instead of building ./cmd/reconcile")
	flag.StringVar(&o.keep, "keep", "", "write the generated files to `DIR` and keep them, and with "+EnvURL+
		" keep the loaded schemas (the earlier nights' runs included), for profiling the job by hand")
	flag.StringVar(&o.duckdb, "duckdb", "", "race this duckbench `binary` on the same data (needs -duckdb-script)")
	flag.StringVar(&o.duckdbScript, "duckdb-script", "", "the DuckDB counts `script` for -duckdb; its day window is moved to the bench's date")
	flag.IntVar(&o.runs, "runs", 1, "time each file's job `N` times, alternated with the DuckDB peer; the table shows each run, the min and the median")
	flag.IntVar(&o.nights, "nights", 7, "before timing, run the job on `N` earlier nights (2026-11-21 to 2026-11-27 for 7), "+
		"so tonight reads a full memory as in steady use; 0: tonight is a first night")
	payouts := flag.String("payouts", "100k", "payouts a night for rule 15 (a channel's file and a camt.053 of about as many entries): "+
		"100k, 1M or a plain number; 0 skips them")
	flag.BoolVar(&o.prune, "prune", false, "load each earlier night's local records just before its runs and delete them after, "+
		"for a disk that cannot hold them all (10M: about 5 GB a night per channel); the job's memory of the nights stays")
	flag.Parse()
	n, err := parseSize(*size)
	if err == nil {
		o.payouts.Payouts, err = parsePayouts(*payouts)
	}
	if err == nil {
		err = checkOptions(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconbench:", err)
		os.Exit(2)
	}
	o.size, o.spec = *size, Spec{Payments: n, Seed: *seed}
	o.payoutSize, o.payouts.Seed = *payouts, *seed
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, o)
	stop()
	os.Exit(code)
}

func checkOptions(o options) error {
	switch {
	case (o.duckdb == "") != (o.duckdbScript == ""):
		return errors.New("-duckdb and -duckdb-script go together: give both or neither")
	case o.runs < 1:
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	case o.nights < 0:
		return fmt.Errorf("-nights %d: want 0 or more", o.nights)
	}
	return nil
}

// parseSize reads 100k, 1M, 10M or a plain count.
func parseSize(s string) (int, error) {
	mult := 1
	num := s
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, num = 1_000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, num = 1_000_000, s[:len(s)-1]
	}
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 || v > 100_000_000/mult {
		return 0, fmt.Errorf("-size %q: want 100k, 1M, 10M or a count up to 100M", s)
	}
	if v*mult < 10 {
		return 0, fmt.Errorf("-size %q: want at least 10 payments", s)
	}
	return v * mult, nil
}

// parsePayouts reads -payouts: as -size, or 0.
func parsePayouts(s string) (int, error) {
	if s == "0" {
		return 0, nil
	}
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("-payouts %q: want 100k, 1M, a count up to 100M, or 0 to skip them", s)
	}
	return n, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "reconbench: "+format+"\n", args...)
}

// channels are the two runs: the canonical CSV as channel shop, the
// WeChat bill as channel wechat, each in a schema of its own holding the
// same local records under its channel's name, so each channel's first
// run of tonight is the first of its date and needs no --force.
var channels = []struct{ name, format string }{
	{"shop", "csv"},
	{"wechat", "wechatpay"},
}

func schemaOf(channel string) string { return "reconbench_" + channel }

// benchChannel is a bench channel with the DSN of its schema.
type benchChannel struct{ name, format, dsn string }

// writeBenchConfig writes the config the job runs with: each channel with
// the generator's fee contract (0.6 %, kept to five decimals, a refund
// returning its share), so every row's fee is checked, and the default
// duplicate windows, so every order and refund is looked at by customer
// and by order; and the payouts' two channels, psp paying out to the
// bank's account.
func writeBenchConfig(dir string) (string, error) {
	var chs []map[string]any
	for _, ch := range channels {
		chs = append(chs, map[string]any{"name": ch.name, "format": ch.format, "time_zone": "UTC",
			"fee": map[string]any{
				"payment": map[string]any{"rate": "0.006", "rounding": "half-up", "places": 5},
				"refund":  map[string]any{"returns_share": true},
			}})
	}
	chs = append(chs,
		map[string]any{"name": pspChannel, "format": "csv", "time_zone": "UTC",
			"payouts": map[string]any{"counterparties": []string{pspName}, "window_days": payoutWindow}},
		map[string]any{"name": bankChannel, "format": payoutsFormat, "time_zone": "UTC", "account": payoutIBAN})
	b, err := json.Marshal(map[string]any{"channels": chs})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "reconcile.json")
	return path, os.WriteFile(path, b, 0o644)
}

func run(ctx context.Context, o options) int {
	rep, err := bench(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconbench:", err)
		return 1
	}
	if len(rep.Mismatches) > 0 {
		return 1
	}
	return 0
}

func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run inside the reconcile module (go run ./cmd/reconbench)")
	}
	return filepath.Dir(mod), nil
}

func bench(ctx context.Context, o options) (_ *Report, err error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	tmp, cleanup, err := workDir(o.keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var peer *peerSetup
	if o.duckdb != "" { // first, so a script it cannot use is refused before any work
		if peer, err = preparePeer(o.duckdb, o.duckdbScript, filepath.Join(tmp, "duckdb")); err != nil {
			return nil, err
		}
	}
	bin, err := reconcileBinary(ctx, root, tmp, o.prebuilt)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	files, err := generate(o.spec, tmp, peer)
	if err != nil {
		return nil, err
	}
	genTook := time.Since(start)

	dsn, stopDB, err := database(ctx, o.keep != "")
	if err != nil {
		return nil, err
	}
	defer func() {
		if e := stopDB(); e != nil && err == nil {
			err = e
		}
	}()
	start = time.Now()
	chans, pgVersion, err := prepareSchemas(ctx, dsn, o.spec)
	if err != nil {
		return nil, err
	}
	rep := newReport(o, files, genTook, time.Since(start), pgVersion)
	cfg, err := writeBenchConfig(tmp)
	if err != nil {
		return nil, err
	}
	e := &benchEnv{spec: o.spec, tmp: tmp, bin: bin, cfg: cfg, chans: chans, files: files, runs: o.runs, keep: o.keep != "", prune: o.prune, rep: rep}
	if err := e.makeEarlierNights(ctx, o.nights); err != nil {
		return nil, err
	}
	jobs, peers, err := e.timeRounds(ctx, peer)
	if err != nil {
		return nil, err
	}
	base, err := runBaseline(ctx, chans[0], files)
	if err != nil {
		return nil, err
	}
	rep.check("SQL baseline", files.Want, base.Got)
	rep.checkAgainst("SQL baseline", "job csv", jobs[0].Got, base.Got)
	var payouts []JobResult
	if o.payouts.Payouts > 0 {
		if payouts, err = e.benchPayouts(ctx, dsn, o.payouts, o.nights); err != nil {
			return nil, err
		}
	}
	rep.finish(jobs, peer, peers, base)
	printTable(os.Stdout, rep, jobs, peers, base)
	printPayouts(os.Stdout, o.payoutSize, rep, payouts)
	return rep, writeReport(root, o, rep)
}

// generate writes tonight's files into dir, and the peer's data when it
// is raced.
func generate(spec Spec, dir string, peer *peerSetup) (Files, error) {
	logf("generating %d payments and %d refunds per side (seed %d)", spec.Payments, spec.refunds(), spec.Seed)
	peerDir := ""
	if peer != nil {
		peerDir = peer.data
	}
	files, err := WriteFiles(spec, dir, peerDir)
	if err != nil {
		return files, fmt.Errorf("generate: %w", err)
	}
	return files, nil
}

// workDir is the directory for the generated files and the job's outputs:
// -keep's, or a temporary one removed by cleanup.
func workDir(keep string) (dir string, cleanup func(), err error) {
	if keep == "" {
		dir, err = os.MkdirTemp("", "reconbench-")
		return dir, func() { os.RemoveAll(dir) }, err
	}
	if dir, err = filepath.Abs(keep); err != nil {
		return "", nil, err
	}
	return dir, func() {}, os.MkdirAll(dir, 0o755)
}

// reconcileBinary builds ./cmd/reconcile into dir, unless a binary is given.
func reconcileBinary(ctx context.Context, root, dir, prebuilt string) (string, error) {
	if prebuilt != "" {
		return filepath.Abs(prebuilt)
	}
	bin := filepath.Join(dir, "reconcile")
	logf("building %s", bin)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/reconcile")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/reconcile: %w", err)
	}
	return bin, nil
}

// database returns the DSN of the server to work on, and what to do when
// done: stop the throwaway server, or drop the schemas on a shared one
// unless they are kept.
func database(ctx context.Context, keep bool) (string, func() error, error) {
	if dsn := os.Getenv(EnvURL); dsn != "" {
		if keep {
			logf("keeping the schemas %s, %s and %s, the earlier nights' runs included",
				schemaOf(channels[0].name), schemaOf(channels[1].name), payoutSchema)
			return dsn, func() error { return nil }, nil
		}
		return dsn, func() error { dropSchemas(dsn); return nil }, nil
	}
	logf("starting a throwaway PostgreSQL")
	srv, err := tempdb.Start(ctx, tempdb.Options{})
	if err != nil {
		return "", nil, fmt.Errorf("start PostgreSQL (or set %s): %w", EnvURL, err)
	}
	stop := func() error {
		if err := srv.Stop(); err != nil {
			return fmt.Errorf("stop PostgreSQL: %w", err)
		}
		return nil
	}
	return srv.DSN("postgres"), stop, nil
}

// prepareSchemas makes each bench channel's schema with tonight's local
// records, and returns the channels and the server's version.
func prepareSchemas(ctx context.Context, dsn string, spec Spec) ([]benchChannel, string, error) {
	var chans []benchChannel
	var version string
	for _, ch := range channels {
		logf("loading the local records of channel %s (COPY, ANALYZE)", ch.name)
		v, err := prepareSchema(ctx, dsn, spec, ch.name)
		if err != nil {
			return nil, "", err
		}
		version = v
		chans = append(chans, benchChannel{name: ch.name, format: ch.format, dsn: withSearchPath(dsn, schemaOf(ch.name))})
	}
	return chans, version, nil
}

// prepareSchema makes a fresh schema for channel, migrates it, loads the
// local records and returns the server's version.
func prepareSchema(ctx context.Context, dsn string, spec Spec, channel string) (string, error) {
	schema := schemaOf(channel)
	version, err := newSchema(ctx, dsn, schema)
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, withSearchPath(dsn, schema))
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	if _, _, _, err := LoadLocal(ctx, conn, spec, channel); err != nil {
		return "", fmt.Errorf("load %s: %w", schema, err)
	}
	return version, nil
}

// newSchema drops and makes schema, migrates it and returns the server's
// version.
func newSchema(ctx context.Context, dsn, schema string) (string, error) {
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer admin.Close(context.Background())
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		return "", err
	}
	var version string
	if err := admin.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&version); err != nil {
		return "", err
	}
	db, err := ledger.Open(ctx, withSearchPath(dsn, schema))
	if err != nil {
		return "", err
	}
	_, err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("migrate %s: %w", schema, err)
	}
	return version, nil
}

// dropSchemas leaves a shared server as it was found.
func dropSchemas(dsn string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		logf("warning: could not drop the bench schemas: %v", err)
		return
	}
	defer conn.Close(ctx)
	for _, schema := range []string{schemaOf(channels[0].name), schemaOf(channels[1].name), payoutSchema} {
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			logf("warning: drop schema %s: %v", schema, err)
		}
	}
}

// runBaseline times the SQL baseline on the first channel's schema.
func runBaseline(ctx context.Context, ch benchChannel, files Files) (BaselineResult, error) {
	logf("timing the SQL baseline (COPY into a staging table, then joins)")
	conn, err := pgx.Connect(ctx, ch.dsn)
	if err != nil {
		return BaselineResult{}, err
	}
	defer conn.Close(context.Background())
	return RunBaseline(ctx, conn, files.CSV, ch.name)
}

func writeReport(root string, o options, rep *Report) error {
	path := o.outDir
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Join(path, o.size+".json")
	if err := writeJSON(path, rep); err != nil {
		return err
	}
	logf("wrote %s", path)
	return nil
}

// benchEnv is what the job's runs share, timed or not.
type benchEnv struct {
	spec  Spec
	tmp   string // the generated files, the config, the job's outputs
	bin   string // the reconcile binary
	cfg   string // its config file
	chans []benchChannel
	files Files
	runs  int
	prune bool // earlier nights' records are loaded and deleted one night at a time
	keep  bool
	rep   *Report
}

func (e *benchEnv) jobArgs(ch benchChannel, format string, day time.Time, file, out string) []string {
	return []string{"run", "--date", day.Format(time.DateOnly), "--channel", ch.name,
		"--format", format, "--tz", "UTC", "--file", file, "--config", e.cfg, "--dsn", ch.dsn, "--out", out}
}

// label names a timed run in MISMATCH lines: by its number when there
// are several.
func (e *benchEnv) label(who string, round int) string {
	if e.runs == 1 {
		return who
	}
	return fmt.Sprintf("%s run %d", who, round)
}

// timeRounds times each channel's job e.runs times, and the peer (when
// given) right after each csv run: job csv, peer, job wechat, and again.
// Alternating spreads a slow spell of the machine over all of them.
func (e *benchEnv) timeRounds(ctx context.Context, peer *peerSetup) ([]JobResult, []PeerResult, error) {
	var jobs []JobResult
	var peers []PeerResult
	for round := 1; round <= e.runs; round++ {
		for i, ch := range e.chans {
			res, err := e.timeJob(ctx, ch, round)
			if err != nil {
				return nil, nil, err
			}
			jobs = append(jobs, res)
			if i > 0 || peer == nil {
				continue
			}
			logf("timing DuckDB (%s)", filepath.Base(peer.script))
			p, err := RunPeer(ctx, peer, e.tmp)
			if err != nil {
				return nil, nil, err
			}
			p.Run = round
			peers = append(peers, p)
			e.rep.checkPeer(e.label("duckdb", round), res.Got, p.Counts)
		}
	}
	return jobs, peers, nil
}

// timeJob times one run of tonight's file of ch. A run after the first is
// forced: the date has a successful run, whose result the job would
// otherwise return again without reconciling.
func (e *benchEnv) timeJob(ctx context.Context, ch benchChannel, round int) (JobResult, error) {
	file := e.files.CSV
	if ch.format == "wechatpay" {
		file = e.files.WeChat
	}
	out := filepath.Join(e.tmp, "out-"+ch.format)
	if e.runs > 1 {
		out += "-" + strconv.Itoa(round)
	}
	args := e.jobArgs(ch, ch.format, businessDate, file, out)
	if round > 1 {
		args = append(args, "--force")
	}
	what := fmt.Sprintf("reconcile run --format %s (channel %s)", ch.format, ch.name)
	if e.runs > 1 {
		what += fmt.Sprintf(", run %d of %d", round, e.runs)
	}
	logf("timing %s", what)
	if e.keep && round == e.runs {
		logf("to run it again: %s %s --force", e.bin, strings.Join(e.jobArgs(ch, ch.format, businessDate, file, out), " "))
	}
	res, err := RunJob(ctx, e.bin, e.tmp, args, out)
	if err != nil {
		return res, err
	}
	res.Input, res.Channel, res.Run = ch.format, ch.name, round
	e.rep.addRun(res, file)
	e.rep.check(e.label("job "+ch.format, round), e.files.WantOf(ch.format), res.Got)
	return res, nil
}

// hostOf describes the machine the bench ran on.
func hostOf(pgVersion string) hostInfo {
	return hostInfo{Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), PostgreSQL: pgVersion}
}
