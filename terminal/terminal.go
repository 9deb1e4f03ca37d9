// Package terminal is what a person watching a run on a terminal sees
// besides the log: one progress line, drawn on stderr between the log's
// lines, and whether a writer is a terminal at all.
package terminal

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// Progress shows a person at a terminal where a run is. A run calls it at
// the start of each stage and, while the file is read, every Every rows.
type Progress interface {
	Stage(name string) // a stage begins
	Rows(n int64)      // rows read so far in this stage
	Done()             // the run is over: take the display away
}

// Every is how many rows a loop lets pass between updates: a mask test
// per row, a call a few times a second at the parsers' speed.
const Every = 1 << 16

// None is the Progress of a run nobody watches.
type None struct{}

func (None) Stage(string) {}
func (None) Rows(int64)   {}
func (None) Done()        {}

// line draws one line on the terminal: a spinner, the stage, the
// rows read and their rate, and the time the stage has taken. A new stage
// gets a new bar, so the rate and the time are the stage's own.
type line struct {
	w     io.Writer
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	stage string
	start time.Time
}

func (p *line) Stage(name string) {
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

func (p *line) Rows(n int64) {
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

func (p *line) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finish()
}

// finish clears the bar and stops its ticker.
func (p *line) finish() {
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

// Is reports whether w is a terminal a person is watching.
func Is(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Share splits the terminal w between a log and a progress line: the log
// writes through logw, and the line is drawn between its lines.
func Share(w io.Writer) (logw io.Writer, p Progress) {
	c := &console{w: w}
	return c.logWriter(), &line{w: c.barWriter()}
}
