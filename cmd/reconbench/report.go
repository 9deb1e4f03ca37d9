package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"reconcile"
)

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
	EarlierNights       earlierJSON    `json:"earlier_nights"`
	Runs                []runJSON      `json:"runs"`
	// RunSummary is each input's min and median over its runs.
	RunSummary []runSummaryJSON `json:"run_summary"`
	Baseline   baselineJSON     `json:"sql_baseline"`
	DuckDB     *peerJSON        `json:"duckdb,omitempty"`
	// Payouts are rule 15's nights, when measured.
	Payouts    *payoutsJSON `json:"payouts,omitempty"`
	Mismatches []string     `json:"mismatches"`
	Host       hostInfo     `json:"host"`
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
	Run            int                `json:"run"`
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

type runSummaryJSON struct {
	Input             string  `json:"input"`
	Runs              int     `json:"runs"`
	WallSecondsMin    float64 `json:"wall_seconds_min"`
	WallSecondsMedian float64 `json:"wall_seconds_median"`
	PeakRSSKiBMin     int64   `json:"peak_rss_kib_min"`
	PeakRSSKiBMedian  int64   `json:"peak_rss_kib_median"`
}

type baselineJSON struct {
	CopySeconds     float64        `json:"copy_seconds"`
	ClassifySeconds float64        `json:"classify_seconds"`
	TotalSeconds    float64        `json:"total_seconds"`
	Rows            int64          `json:"rows_copied"`
	Counts          map[string]int `json:"counts"`
	AutoReversed    int            `json:"auto_reversed"`
	PeakRSS         string         `json:"peak_rss"`
	// JobSpeedup is the baseline's total time over the csv job's (median)
	// wall time.
	JobSpeedup float64 `json:"job_speedup"`
}

type peerJSON struct {
	Binary string `json:"binary"`
	// Script is the script given; the one run is a copy with the bench's
	// day window.
	Script            string         `json:"script"`
	Runs              []peerRunJSON  `json:"runs"`
	WallSecondsMin    float64        `json:"wall_seconds_min"`
	WallSecondsMedian float64        `json:"wall_seconds_median"`
	PeakRSSKiBMedian  int64          `json:"peak_rss_kib_median"`
	Counts            map[string]int `json:"counts"` // of the first run
	// JobCSVFaster says whether the csv job's median wall time was below
	// the peer's; JobSpeedup is the peer's over the job's.
	JobCSVFaster bool    `json:"job_csv_faster"`
	JobSpeedup   float64 `json:"job_speedup"`
}

type peerRunJSON struct {
	Run         int            `json:"run"`
	WallSeconds float64        `json:"wall_seconds"`
	PeakRSSKiB  int64          `json:"peak_rss_kib"`
	Counts      map[string]int `json:"counts"`
}

func newReport(o options, files Files, generate, load time.Duration, pgVersion string) *Report {
	return &Report{
		Size: o.size, Payments: o.spec.Payments, Refunds: o.spec.refunds(), Seed: o.spec.Seed,
		BusinessDate: businessDate.Format(time.DateOnly), ChannelRows: files.Rows,
		Planted: countsJSON(files.Want.Counts), PlantedAutoReversed: files.Want.AutoReversed,
		GenerateSeconds: generate.Seconds(), LoadSeconds: load.Seconds(),
		Runs: []runJSON{}, Mismatches: []string{}, Host: hostOf(pgVersion),
	}
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
	r.Runs = append(r.Runs, runOf(res, file))
}

// runOf is a timed run as the report keeps it.
func runOf(res JobResult, file string) runJSON {
	var size int64
	if st, err := os.Stat(file); err == nil {
		size = st.Size()
	}
	stages := map[string]float64{}
	for _, s := range res.Stages {
		stages[s.Name] = s.Took.Seconds()
	}
	return runJSON{
		Input: res.Input, Channel: res.Channel, Run: res.Run, FileBytes: size, ChannelRows: res.ChannelRows,
		WallSeconds: res.Wall.Seconds(), RowsPerSecond: perSecond(res.ChannelRows, res.Wall),
		PeakRSSKiB: res.MaxRSSKiB, ReportsHeapMiB: float64(res.ReportsHeapBytes) / (1 << 20), StageSeconds: stages,
		Counts: countsJSON(res.Got.Counts), AutoReversed: res.Got.AutoReversed,
	}
}

// finish adds what is known once everything is timed: each input's min
// and median, the baseline and the peer against the csv job.
func (r *Report) finish(jobs []JobResult, peer *peerSetup, peers []PeerResult, base BaselineResult) {
	r.RunSummary = []runSummaryJSON{}
	for _, g := range groupByInput(jobs) {
		lo, mid := summarize(g, minOf), summarize(g, medianOf)
		r.RunSummary = append(r.RunSummary, runSummaryJSON{Input: g[0].Input, Runs: len(g),
			WallSecondsMin: lo.Wall.Seconds(), WallSecondsMedian: mid.Wall.Seconds(),
			PeakRSSKiBMin: lo.MaxRSSKiB, PeakRSSKiBMedian: mid.MaxRSSKiB})
	}
	job := csvWall(jobs)
	r.Baseline = baselineJSON{
		CopySeconds: base.Copy.Seconds(), ClassifySeconds: base.Classify.Seconds(), TotalSeconds: base.Total().Seconds(),
		Rows: base.Rows, Counts: countsJSON(base.Got.Counts), AutoReversed: base.Got.AutoReversed,
		PeakRSS:    "not measured: the work runs inside the PostgreSQL server, not in a process of ours",
		JobSpeedup: base.Total().Seconds() / job.Seconds(),
	}
	if peer != nil && len(peers) > 0 {
		r.addPeer(peer, peers, job)
	}
}

func (r *Report) addPeer(peer *peerSetup, peers []PeerResult, job time.Duration) {
	g := peerRuns(peers, r.ChannelRows)
	lo, mid := summarize(g, minOf), summarize(g, medianOf)
	p := &peerJSON{Binary: peer.bin, Script: peer.source, Counts: peers[0].Counts,
		WallSecondsMin: lo.Wall.Seconds(), WallSecondsMedian: mid.Wall.Seconds(), PeakRSSKiBMedian: mid.MaxRSSKiB,
		JobCSVFaster: job < mid.Wall, JobSpeedup: mid.Wall.Seconds() / job.Seconds()}
	for _, x := range peers {
		p.Runs = append(p.Runs, peerRunJSON{Run: x.Run, WallSeconds: x.Wall.Seconds(), PeakRSSKiB: x.MaxRSSKiB, Counts: x.Counts})
	}
	r.DuckDB = p
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

// groupByInput splits the runs by input, in the order the inputs first ran.
func groupByInput(jobs []JobResult) [][]JobResult {
	var groups [][]JobResult
	at := map[string]int{}
	for _, j := range jobs {
		i, ok := at[j.Input]
		if !ok {
			i = len(groups)
			at[j.Input] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], j)
	}
	return groups
}

// peerRuns shows the peer's runs as runs without stages, so the table and
// the summaries treat them alike.
func peerRuns(peers []PeerResult, rows int) []JobResult {
	var out []JobResult
	for _, p := range peers {
		out = append(out, JobResult{Input: "duckdb", Run: p.Run, Wall: p.Wall, MaxRSSKiB: p.MaxRSSKiB, ChannelRows: rows})
	}
	return out
}

// csvWall is the csv job's median wall time: what the others are compared with.
func csvWall(jobs []JobResult) time.Duration {
	for _, g := range groupByInput(jobs) {
		if g[0].Input == "csv" {
			return summarize(g, medianOf).Wall
		}
	}
	return 0
}

// summarize is one made-up run whose every figure is pick of the runs'
// figures, column by column.
func summarize(runs []JobResult, pick func([]int64) int64) JobResult {
	col := func(of func(JobResult) int64) int64 {
		var xs []int64
		for _, j := range runs {
			xs = append(xs, of(j))
		}
		return pick(xs)
	}
	s := JobResult{Input: runs[0].Input, Channel: runs[0].Channel, ChannelRows: runs[0].ChannelRows,
		Wall:             time.Duration(col(func(j JobResult) int64 { return int64(j.Wall) })),
		MaxRSSKiB:        col(func(j JobResult) int64 { return j.MaxRSSKiB }),
		ReportsHeapBytes: col(func(j JobResult) int64 { return j.ReportsHeapBytes })}
	for _, st := range runs[0].Stages {
		var xs []int64
		for _, j := range runs {
			if d, ok := j.stage(st.Name); ok {
				xs = append(xs, int64(d))
			}
		}
		s.Stages = append(s.Stages, Stage{Name: st.Name, Took: time.Duration(pick(xs))})
	}
	return s
}

func minOf(xs []int64) int64 { return slices.Min(xs) }

// medianOf is the middle value, or the mean of the two middle ones.
func medianOf(xs []int64) int64 {
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
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

func printTable(w io.Writer, rep *Report, jobs []JobResult, peers []PeerResult, base BaselineResult) {
	writeAligned(w, tableRows(rep, jobs, peers))
	job := csvWall(jobs)
	fmt.Fprintf(w, "%s  SQL baseline (COPY + joins)  wall %s s = copy %s + classify %s; %s rows/s; peak RSS not measured (runs in PostgreSQL)  (%s)\n",
		rep.Size, secs(base.Total()), secs(base.Copy), secs(base.Classify),
		thousands(perSecond(int(base.Rows), base.Total())), verdict(job, base.Total()))
	if rep.DuckDB != nil {
		printPeer(w, rep, job)
	}
	if n := rep.EarlierNights; n.Nights > 0 {
		fmt.Fprintf(w, "earlier nights: %d (%s to %s), %s channel rows each, run by the job before tonight's runs; set up in %.1f s\n",
			n.Nights, n.Dates[0], n.Dates[len(n.Dates)-1], thousands(int64(n.ChannelRowsPerNight)), n.SetupSeconds)
	}
	var planted []string
	for _, c := range reconcile.Categories {
		if n := rep.Planted[string(c)]; n > 0 {
			planted = append(planted, fmt.Sprintf("%s=%s", c, thousands(int64(n))))
		}
	}
	fmt.Fprintf(w, "planted: %s; auto_reversed=%s\n", strings.Join(planted, " "), thousands(int64(rep.PlantedAutoReversed)))
	if len(rep.Mismatches) == 0 {
		fmt.Fprintln(w, "counts: "+agreement(rep))
	}
}

// agreement says what every check found, when none found a difference.
func agreement(rep *Report) string {
	s := "every job run and the SQL baseline report exactly the planted anomalies"
	if rep.DuckDB != nil {
		s += "; DuckDB the job's (csv) counts"
	}
	if rep.EarlierNights.Nights > 0 {
		s += "; every earlier night's run only matched rows"
	}
	return s
}

func printPeer(w io.Writer, rep *Report, job time.Duration) {
	p := rep.DuckDB
	var counts []string
	for _, c := range peerCategories {
		counts = append(counts, fmt.Sprintf("%s=%s", c, thousands(int64(p.Counts[string(c)]))))
	}
	fmt.Fprintf(w, "%s  DuckDB (%s)  counts: %s (its missing_channel is the job's missing_channel+pending)\n",
		rep.Size, filepath.Base(p.Script), strings.Join(counts, " "))
	wall, answer := "wall", "no"
	if len(p.Runs) > 1 {
		wall = "median wall"
	}
	if p.JobCSVFaster {
		answer = "yes"
	}
	peer := time.Duration(p.WallSecondsMedian * float64(time.Second))
	fmt.Fprintf(w, "job (csv) faster than DuckDB in this run: %s, %s %s s vs %s s (%s)\n",
		answer, wall, secs(job), secs(peer), verdict(job, peer))
}

// verdict says how the csv job's wall time compares with another's.
func verdict(job, other time.Duration) string {
	ratio := other.Seconds() / job.Seconds()
	if ratio < 1 {
		return fmt.Sprintf("job (csv) is %.1f× slower", 1/ratio)
	}
	return fmt.Sprintf("job (csv) is %.1f× faster", ratio)
}

// tableRows are the table's header and a row per run, each input's runs
// together followed by their min and median when there are several.
func tableRows(rep *Report, jobs []JobResult, peers []PeerResult) [][]string {
	head := []string{"size", "input", "rows/side", "wall s", "rows/s", "peak RSS MiB", "reports heap MiB"}
	for _, s := range tableStages {
		head = append(head, s.column)
	}
	table := [][]string{head}
	groups := groupByInput(jobs)
	if len(peers) > 0 {
		groups = append(groups, peerRuns(peers, rep.ChannelRows))
	}
	for _, g := range groups {
		for _, j := range g {
			label := j.Input
			if len(g) > 1 {
				label = fmt.Sprintf("%s #%d", j.Input, j.Run)
			}
			table = append(table, jobCells(rep.Size, label, j))
		}
		if len(g) > 1 {
			table = append(table, jobCells(rep.Size, g[0].Input+" min", summarize(g, minOf)),
				jobCells(rep.Size, g[0].Input+" median", summarize(g, medianOf)))
		}
	}
	return table
}

func jobCells(size, label string, j JobResult) []string {
	heap := "-" // the peer logs no stages, and no heap
	if len(j.Stages) > 0 {
		heap = mib(j.ReportsHeapBytes / 1024)
	}
	cells := []string{size, label, thousands(int64(j.ChannelRows)), secs(j.Wall),
		thousands(perSecond(j.ChannelRows, j.Wall)), mib(j.MaxRSSKiB), heap}
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
	return cells
}

// writeAligned writes the table in columns: text left, numbers right.
func writeAligned(w io.Writer, table [][]string) {
	widths := make([]int, len(table[0]))
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
			if i < 2 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
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
