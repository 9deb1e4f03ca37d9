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
// RECONCILE_BENCH_DATABASE_URL points it at an existing server instead of a
// throwaway one; it then works in the schemas reconbench_shop and
// reconbench_wechat, which it drops and recreates, and drops at the end.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/tempdb"
)

// EnvURL names the variable with the DSN of a server to use instead of a
// throwaway one.
const EnvURL = "RECONCILE_BENCH_DATABASE_URL"

const defaultSeed = 20261128

func main() {
	size := flag.String("size", "1M", "payments per side: 100k, 1M, 10M or a plain number; refunds are a tenth of it")
	seed := flag.Uint64("seed", defaultSeed, "generator seed; the same seed gives the same data")
	out := flag.String("out", "out/bench", "`DIR` for <size>.json, relative to the module root")
	prebuilt := flag.String("reconcile", "", "time this reconcile `binary` instead of building ./cmd/reconcile")
	keep := flag.String("keep", "", "write the generated files to `DIR` and keep them, and with "+EnvURL+" keep the loaded schemas, for profiling the job by hand")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, *size, Spec{Payments: n, Seed: *seed}, *out, *prebuilt, *keep)
	stop()
	os.Exit(code)
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

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "reconbench: "+format+"\n", args...)
}

// channels are the two runs: the canonical CSV as channel shop, the
// WeChat bill as channel wechat, each in a schema of its own holding the
// same local records under its channel's name, so each run is the first
// of its date on a fresh database and neither needs --force.
var channels = []struct{ name, format string }{
	{"shop", "csv"},
	{"wechat", "wechatpay"},
}

func schemaOf(channel string) string { return "reconbench_" + channel }

// writeBenchConfig writes the config the job runs with: each channel with
// the generator's fee contract (0.6 %, kept to five decimals, a refund
// returning its share), so every row's fee is checked, and the default
// duplicate windows, so every order and refund is looked at by customer
// and by order.
func writeBenchConfig(dir string) (string, error) {
	var chs []map[string]any
	for _, ch := range channels {
		chs = append(chs, map[string]any{"name": ch.name, "format": ch.format, "time_zone": "UTC",
			"fee": map[string]any{
				"payment": map[string]any{"rate": "0.006", "rounding": "half-up", "places": 5},
				"refund":  map[string]any{"returns_share": true},
			}})
	}
	b, err := json.Marshal(map[string]any{"channels": chs})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "reconcile.json")
	return path, os.WriteFile(path, b, 0o644)
}

func run(ctx context.Context, size string, spec Spec, outDir, prebuilt, keep string) int {
	rep, err := bench(ctx, size, spec, outDir, prebuilt, keep)
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

func bench(ctx context.Context, size string, spec Spec, outDir, prebuilt, keep string) (_ *Report, err error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	tmp := keep
	if keep == "" {
		if tmp, err = os.MkdirTemp("", "reconbench-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
	} else if tmp, err = filepath.Abs(keep); err != nil {
		return nil, err
	} else if err = os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}

	bin := filepath.Join(tmp, "reconcile")
	if prebuilt != "" {
		if bin, err = filepath.Abs(prebuilt); err != nil {
			return nil, err
		}
	} else {
		logf("building %s", bin)
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/reconcile")
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/reconcile: %w", err)
		}
	}

	start := time.Now()
	logf("generating %d payments and %d refunds per side (seed %d)", spec.Payments, spec.refunds(), spec.Seed)
	files, err := WriteFiles(spec, tmp)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	genTook := time.Since(start)

	dsn := os.Getenv(EnvURL)
	if dsn == "" {
		logf("starting a throwaway PostgreSQL")
		srv, err := tempdb.Start(ctx, tempdb.Options{})
		if err != nil {
			return nil, fmt.Errorf("start PostgreSQL (or set %s): %w", EnvURL, err)
		}
		defer func() {
			if e := srv.Stop(); e != nil && err == nil {
				err = fmt.Errorf("stop PostgreSQL: %w", e)
			}
		}()
		dsn = srv.DSN("postgres")
	} else if keep == "" {
		defer dropSchemas(dsn)
	}

	start = time.Now()
	var pgVersion string
	for _, ch := range channels {
		logf("loading the local records of channel %s (COPY, ANALYZE)", ch.name)
		if pgVersion, err = prepareSchema(ctx, dsn, spec, ch.name); err != nil {
			return nil, err
		}
	}
	loadTook := time.Since(start)

	rep := &Report{
		Size: size, Payments: spec.Payments, Refunds: spec.refunds(), Seed: spec.Seed,
		BusinessDate: businessDate.Format(time.DateOnly), ChannelRows: files.Rows,
		Planted: countsJSON(files.Want.Counts), PlantedAutoReversed: files.Want.AutoReversed,
		GenerateSeconds: genTook.Seconds(), LoadSeconds: loadTook.Seconds(),
		Mismatches: []string{},
		Host:       hostInfo{Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), PostgreSQL: pgVersion},
	}

	cfg, err := writeBenchConfig(tmp)
	if err != nil {
		return nil, err
	}
	var jobs []JobResult
	for _, ch := range channels {
		file := files.CSV
		if ch.format == "wechatpay" {
			file = files.WeChat
		}
		out := filepath.Join(tmp, "out-"+ch.format)
		logf("timing reconcile run --format %s (channel %s)", ch.format, ch.name)
		args := []string{"run", "--date", businessDate.Format(time.DateOnly), "--channel", ch.name,
			"--format", ch.format, "--tz", "UTC", "--file", file, "--config", cfg,
			"--dsn", withSearchPath(dsn, schemaOf(ch.name)), "--out", out}
		if keep != "" {
			logf("to run it again: %s %s", bin, strings.Join(args, " "))
		}
		res, err := RunJob(ctx, bin, tmp, args, out)
		if err != nil {
			return nil, err
		}
		res.Input, res.Channel = ch.format, ch.name
		jobs = append(jobs, res)
		rep.addRun(res, file)
		rep.check("job "+ch.format, files.Want, res.Got)
	}

	logf("timing the SQL baseline (COPY into a staging table, then joins)")
	conn, err := pgx.Connect(ctx, withSearchPath(dsn, schemaOf("shop")))
	if err != nil {
		return nil, err
	}
	base, err := RunBaseline(ctx, conn, files.CSV, "shop")
	conn.Close(context.Background())
	if err != nil {
		return nil, err
	}
	rep.check("SQL baseline", files.Want, base.Got)
	rep.checkAgainst("SQL baseline", "job csv", jobs[0].Got, base.Got)
	rep.addBaseline(base, jobs[0].Wall)

	printTable(os.Stdout, rep, jobs, base)
	path := outDir
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Join(path, size+".json")
	if err := writeJSON(path, rep); err != nil {
		return rep, err
	}
	logf("wrote %s", path)
	return rep, nil
}

// prepareSchema makes a fresh schema for channel, migrates it, loads the
// local records and returns the server's version.
func prepareSchema(ctx context.Context, dsn string, spec Spec, channel string) (string, error) {
	schema := schemaOf(channel)
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

	sdsn := withSearchPath(dsn, schema)
	db, err := ledger.Open(ctx, sdsn)
	if err != nil {
		return "", err
	}
	_, err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("migrate %s: %w", schema, err)
	}
	conn, err := pgx.Connect(ctx, sdsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	if _, _, _, err := LoadLocal(ctx, conn, spec, channel); err != nil {
		return "", fmt.Errorf("load %s: %w", schema, err)
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
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schemaOf(ch.name)}.Sanitize()+" CASCADE"); err != nil {
			logf("warning: drop schema %s: %v", schemaOf(ch.name), err)
		}
	}
}

// Report is what out/bench/<size>.json holds.
type Report struct {
	Size                string         `json:"size"`
	Payments            int            `json:"payments_per_side"`
	Refunds             int            `json:"refunds_per_side"`
	Seed                uint64         `json:"seed"`
	BusinessDate        string         `json:"business_date"`
	ChannelRows         int            `json:"channel_rows"`
	Planted             map[string]int `json:"planted"`
	PlantedAutoReversed int            `json:"planted_auto_reversed"`
	GenerateSeconds     float64        `json:"generate_seconds"`
	LoadSeconds         float64        `json:"load_seconds"`
	Runs                []runJSON      `json:"runs"`
	Baseline            baselineJSON   `json:"sql_baseline"`
	Mismatches          []string       `json:"mismatches"`
	Host                hostInfo       `json:"host"`
}

type hostInfo struct {
	Go         string `json:"go"`
	OS         string `json:"os"`
	CPUs       int    `json:"cpus"`
	PostgreSQL string `json:"postgresql"`
}

type runJSON struct {
	Input          string             `json:"input"`
	Channel        string             `json:"channel"`
	FileBytes      int64              `json:"file_bytes"`
	ChannelRows    int                `json:"channel_rows"`
	WallSeconds    float64            `json:"wall_seconds"`
	RowsPerSecond  int64              `json:"rows_per_second"`
	PeakRSSKiB     int64              `json:"peak_rss_kib"`
	ReportsHeapMiB float64            `json:"reports_heap_mib"` // the workbook step's rise of the heap
	StageSeconds   map[string]float64 `json:"stage_seconds"`
	Counts         map[string]int     `json:"counts"`
	AutoReversed   int                `json:"auto_reversed"`
}

type baselineJSON struct {
	CopySeconds     float64        `json:"copy_seconds"`
	ClassifySeconds float64        `json:"classify_seconds"`
	TotalSeconds    float64        `json:"total_seconds"`
	Rows            int64          `json:"rows_copied"`
	Counts          map[string]int `json:"counts"`
	AutoReversed    int            `json:"auto_reversed"`
	PeakRSS         string         `json:"peak_rss"`
	// JobSpeedup is the baseline's total time over the csv job's wall time.
	JobSpeedup float64 `json:"job_speedup"`
}

func countsJSON(m map[reconcile.Category]int) map[string]int {
	out := map[string]int{}
	for _, c := range reconcile.Categories {
		out[string(c)] = m[c]
	}
	for c, n := range m {
		out[string(c)] = n
	}
	return out
}

func (r *Report) addRun(res JobResult, file string) {
	var size int64
	if st, err := os.Stat(file); err == nil {
		size = st.Size()
	}
	stages := map[string]float64{}
	for _, s := range res.Stages {
		stages[s.Name] = s.Took.Seconds()
	}
	r.Runs = append(r.Runs, runJSON{
		Input: res.Input, Channel: res.Channel, FileBytes: size, ChannelRows: res.ChannelRows,
		WallSeconds: res.Wall.Seconds(), RowsPerSecond: perSecond(res.ChannelRows, res.Wall),
		PeakRSSKiB: res.MaxRSSKiB, ReportsHeapMiB: float64(res.ReportsHeapBytes) / (1 << 20), StageSeconds: stages,
		Counts: countsJSON(res.Got.Counts), AutoReversed: res.Got.AutoReversed,
	})
}

func (r *Report) addBaseline(b BaselineResult, job time.Duration) {
	r.Baseline = baselineJSON{
		CopySeconds: b.Copy.Seconds(), ClassifySeconds: b.Classify.Seconds(), TotalSeconds: b.Total().Seconds(),
		Rows: b.Rows, Counts: countsJSON(b.Got.Counts), AutoReversed: b.Got.AutoReversed,
		PeakRSS:    "not measured: the work runs inside the PostgreSQL server, not in a process of ours",
		JobSpeedup: b.Total().Seconds() / job.Seconds(),
	}
}

// check compares what a run reported with what was planted, every category
// (zeros included) and the number reversed automatically.
func (r *Report) check(who string, want, got Expected) {
	r.checkAgainst(who, "planted", want, got)
}

func (r *Report) checkAgainst(who, whom string, want, got Expected) {
	cats := map[reconcile.Category]bool{}
	for _, c := range reconcile.Categories {
		cats[c] = true
	}
	for c := range want.Counts {
		cats[c] = true
	}
	for c := range got.Counts {
		cats[c] = true
	}
	for _, c := range slices.Sorted(maps.Keys(cats)) {
		if want.Counts[c] != got.Counts[c] {
			r.mismatch("MISMATCH %s: %s = %d, %s %d", who, c, got.Counts[c], whom, want.Counts[c])
		}
	}
	if want.AutoReversed != got.AutoReversed {
		r.mismatch("MISMATCH %s: auto_reversed = %d, %s %d", who, got.AutoReversed, whom, want.AutoReversed)
	}
}

func (r *Report) mismatch(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.Mismatches = append(r.Mismatches, line)
	fmt.Println(line)
}

// perSecond is rows per second of wall time, in integers.
func perSecond(rows int, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(rows) * int64(time.Second) / int64(d)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

// mib writes KiB as MiB with one decimal, in integers.
func mib(kib int64) string {
	tenths := (kib*10 + 512) / 1024
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// tableStages are the stage columns of the table, each under the names
// the job has printed it by; the JSON has every stage as printed.
var tableStages = []struct {
	column string
	names  []string
}{
	{"parse", []string{"parse"}},
	{"earlier", []string{"earlier_rows", "memory"}},
	{"local", []string{"local_records"}},
	{"related", []string{"related"}},
	{"match", []string{"match"}},
	{"reports", []string{"reports"}},
	{"commit", []string{"commit"}},
}

func printTable(w io.Writer, rep *Report, jobs []JobResult, base BaselineResult) {
	head := []string{"size", "input", "rows/side", "wall s", "rows/s", "peak RSS MiB", "reports heap MiB"}
	for _, s := range tableStages {
		head = append(head, s.column)
	}
	table := [][]string{head}
	for _, j := range jobs {
		cells := []string{rep.Size, j.Input, thousands(int64(j.ChannelRows)), secs(j.Wall),
			thousands(perSecond(j.ChannelRows, j.Wall)), mib(j.MaxRSSKiB), mib(j.ReportsHeapBytes / 1024)}
		for _, s := range tableStages {
			cell := "-"
			for _, name := range s.names {
				if d, ok := j.stage(name); ok {
					cell = secs(d)
					break
				}
			}
			cells = append(cells, cell)
		}
		table = append(table, cells)
	}
	widths := make([]int, len(head))
	for _, row := range table {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < 2 { // text left, numbers right
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
	}

	verdict := "job (csv) is %.1f× faster"
	ratio := base.Total().Seconds() / jobs[0].Wall.Seconds()
	if ratio < 1 {
		verdict, ratio = "job (csv) is %.1f× slower", 1/ratio
	}
	fmt.Fprintf(w, "%s  SQL baseline (COPY + joins)  wall %s s = copy %s + classify %s; %s rows/s; peak RSS not measured (runs in PostgreSQL)  ("+verdict+")\n",
		rep.Size, secs(base.Total()), secs(base.Copy), secs(base.Classify),
		thousands(perSecond(int(base.Rows), base.Total())), ratio)

	var planted []string
	for _, c := range reconcile.Categories {
		if n := rep.Planted[string(c)]; n > 0 {
			planted = append(planted, fmt.Sprintf("%s=%s", c, thousands(int64(n))))
		}
	}
	fmt.Fprintf(w, "planted: %s; auto_reversed=%s\n", strings.Join(planted, " "), thousands(int64(rep.PlantedAutoReversed)))
	if len(rep.Mismatches) == 0 {
		fmt.Fprintln(w, "counts: both job runs and the SQL baseline report exactly the planted anomalies")
	}
}

func writeJSON(path string, rep *Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
