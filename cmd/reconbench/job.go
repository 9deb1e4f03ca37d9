package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"reconcile"
)

// JobResult is one timed `reconcile run`.
type JobResult struct {
	Input       string
	Channel     string
	Run         int // 1 to -runs
	Wall        time.Duration
	MaxRSSKiB   int64
	Stages      []Stage
	ChannelRows int
	Got         Expected
	// ReportsHeapBytes is how far the heap rose while the workbook and
	// summary were made, as the job logged it.
	ReportsHeapBytes int64
}

// Stage is one entry of the "stages" of the job's log line.
type Stage struct {
	Name string
	Took time.Duration
}

// stage returns the time of the named stage, and whether the job reported it.
func (r JobResult) stage(name string) (time.Duration, bool) {
	for _, s := range r.Stages {
		if s.Name == name {
			return s.Took, true
		}
	}
	return 0, false
}

type summaryJSON struct {
	Status       string         `json:"status"`
	ChannelRows  int            `json:"channel_rows"`
	Counts       map[string]int `json:"counts"`
	AutoReversed int            `json:"auto_reversed"`
}

// childEnv is the job's environment: ours without the Slack settings, so
// a benchmark never posts an alert anywhere (it prints it instead).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SLACK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runTimed runs cmd and measures it from the outside: wall time from start
// to exit, and the peak resident set in KiB the kernel reports for the
// child when it is reaped (wait4's rusage).
func runTimed(cmd *exec.Cmd) (time.Duration, int64, error) {
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var rss int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss)
			if runtime.GOOS == "darwin" { // bytes there, KiB on Linux
				rss /= 1024
			}
		}
	}
	return wall, rss, err
}

// RunJob runs the reconcile binary once as a child process, timed by
// runTimed, and reads what it reported.
func RunJob(ctx context.Context, bin, dir string, args []string, outDir string) (JobResult, error) {
	var res JobResult
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	stdout, err := os.Create(filepath.Join(dir, filepath.Base(outDir)+".stdout"))
	if err != nil {
		return res, err
	}
	defer stdout.Close()
	cmd.Stdout, cmd.Stderr = stdout, &stderr

	res.Wall, res.MaxRSSKiB, err = runTimed(cmd)
	if err != nil {
		return res, fmt.Errorf("reconcile %s: %w\n%s", strings.Join(args[:1], " "), err, tail(stderr.String(), 20))
	}
	stages, heap, ok := parseRunLine(stderr.String())
	if !ok {
		return res, fmt.Errorf("reconcile logged no line with \"stages\":\n%s", tail(stderr.String(), 20))
	}
	res.Stages, res.ReportsHeapBytes = stages, heap

	b, err := os.ReadFile(filepath.Join(outDir, "summary.json"))
	if err != nil {
		return res, err
	}
	var sum summaryJSON
	if err := json.Unmarshal(b, &sum); err != nil {
		return res, fmt.Errorf("%s: %w", filepath.Join(outDir, "summary.json"), err)
	}
	if sum.Status != "SUCCEEDED" {
		return res, fmt.Errorf("summary.json says status %q", sum.Status)
	}
	res.ChannelRows = sum.ChannelRows
	res.Got = Expected{Counts: map[reconcile.Category]int{}, AutoReversed: sum.AutoReversed}
	for c, n := range sum.Counts {
		res.Got.Counts[reconcile.Category(c)] = n
	}
	return res, nil
}

// parseStages reads the stages of the last log line that has them. The job
// logs JSON when stderr is not a terminal, its run's line e.g.
// {"msg":"run committed",…,"stages":{"parse":1900000000,"local_records":…}},
// each stage in nanoseconds. Stage names are taken as logged, in their
// order, so a stage added later is reported too.
func parseStages(stderr string) ([]Stage, bool) {
	stages, _, ok := parseRunLine(stderr)
	return stages, ok
}

// parseRunLine reads the last line with stages the job logged: its stages,
// and how far the heap rose while the reports were made (0 when the line
// does not say).
func parseRunLine(stderr string) ([]Stage, int64, bool) {
	var last json.RawMessage
	var heap int64
	for l := range strings.Lines(stderr) {
		var line struct {
			Stages      json.RawMessage `json:"stages"`
			ReportsHeap int64           `json:"reports_heap_bytes"`
		}
		if json.Unmarshal([]byte(l), &line) == nil && len(line.Stages) > 0 {
			last, heap = line.Stages, line.ReportsHeap
		}
	}
	if last == nil {
		return nil, 0, false
	}
	// Decoded token by token: a map would lose the order.
	dec := json.NewDecoder(bytes.NewReader(last))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, false
	}
	var out []Stage
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil, 0, false
		}
		var ns int64
		if err := dec.Decode(&ns); err != nil {
			return nil, 0, false
		}
		out = append(out, Stage{Name: name, Took: time.Duration(ns)})
	}
	return out, heap, len(out) > 0
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
