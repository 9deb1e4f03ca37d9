package main

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress shows a person at a terminal where a run is. The Job calls it at
// the start of each stage and, while the file is read, every progressEvery
// rows; a Job without one shows nothing.
type Progress interface {
	Stage(name string) // a stage begins
	Rows(n int64)      // rows read so far in this stage
	Done()             // the run is over: take the display away
}

// progressEvery is how many rows the parse loop lets pass between updates:
// a mask test per row, a call a few times a second at the parsers' speed.
const progressEvery = 1 << 16

// noProgress is the Progress of a Job that has none.
type noProgress struct{}

func (noProgress) Stage(string) {}
func (noProgress) Rows(int64)   {}
func (noProgress) Done()        {}

// termProgress draws one line on the terminal: a spinner, the stage, the
// rows read and their rate, and the time the stage has taken. A new stage
// gets a new bar, so the rate and the time are the stage's own.
type termProgress struct {
	w     io.Writer
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	stage string
	start time.Time
}

func newTermProgress(w io.Writer) *termProgress { return &termProgress{w: w} }

func (p *termProgress) Stage(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finish()
	p.stage, p.start = name, time.Now()
	// Length unknown: a spinner that the bar redraws on its own ticker, so
	// the line stays alive through a long database stage.
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
}

func (p *termProgress) Rows(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	desc := fmt.Sprintf("%s: %d rows", p.stage, n)
	if s := time.Since(p.start).Seconds(); s > 0 {
		desc += fmt.Sprintf(", %.0f rows/s", float64(n)/s)
	}
	p.bar.Describe(desc)
}

func (p *termProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finish()
}

// finish clears the bar and stops its ticker.
func (p *termProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// console is stderr on a terminal, shared by the log and the progress
// line. The bar's line ends without a newline; a log line written after it
// would be glued to it, so the log side first erases the bar, which is
// drawn again on its next tick.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	inBar bool // the last write was the bar's and left the cursor on its line
}

// logWriter is the log's side of the console.
func (c *console) logWriter() io.Writer { return consoleSide{c, false} }

// barWriter is the progress bar's side of the console.
func (c *console) barWriter() io.Writer { return consoleSide{c, true} }

type consoleSide struct {
	c   *console
	bar bool
}

func (s consoleSide) Write(p []byte) (int, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.bar && c.inBar {
		if _, err := io.WriteString(c.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
		c.inBar = false
	}
	n, err := c.w.Write(p)
	if s.bar && len(p) > 0 {
		c.inBar = p[len(p)-1] != '\n'
	}
	return n, err
}

// logAndProgress returns the logger of a manual run and, when stderr is a
// terminal, the progress line sharing stderr with it. Not on a terminal
// there is no progress at all: no bar is made, nothing is drawn.
func (a *App) logAndProgress(level *logLevel) (*slog.Logger, Progress) {
	if !a.terminal(a.Stderr) {
		return a.loggerTo(a.Stderr, false, level), nil
	}
	c := &console{w: a.Stderr}
	return a.loggerTo(c.logWriter(), true, level), newTermProgress(c.barWriter())
}
