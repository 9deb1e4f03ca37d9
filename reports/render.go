package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"reconcile/atomicfile"

	"reconcile"
)

// Rendered is a run's reports, made before its commit so that the same
// file reconciled again gets exactly them back, and written out after it.
type Rendered struct {
	Summary, Workbook []byte
	WorkbookName      string
	// csv is the full export of the review lines when the workbook holds
	// only the first of them, in a temporary directory until written out.
	csv, csvName string
	dir          string
}

// Render makes a run's summary.json and workbook (and, past
// opts.MaxLines review lines, the CSV export the workbook points to).
// Close removes what it left in the temporary directory.
func Render(res *reconcile.Result, workbookName string, opts WorkbookOptions) (*Rendered, error) {
	dir, err := os.MkdirTemp("", "reconcile-reports-")
	if err != nil {
		return nil, err
	}
	r := &Rendered{WorkbookName: workbookName, dir: dir}
	if err := r.render(res, opts); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Rendered) render(res *reconcile.Result, opts WorkbookOptions) error {
	path := filepath.Join(r.dir, r.WorkbookName)
	info, err := WriteWorkbookWith(path, res, opts)
	if err != nil {
		return err
	}
	if r.Workbook, err = os.ReadFile(path); err != nil {
		return err
	}
	if info.CSV != "" {
		r.csv, r.csvName = filepath.Join(r.dir, info.CSV), info.CSV
	}
	s := NewSummary(res, r.WorkbookName)
	s.SetWorkbook(info)
	s.Replay = res.Replay
	r.Summary, err = summaryJSON(s)
	return err
}

// Close removes the reports' temporary files.
func (r *Rendered) Close() { os.RemoveAll(r.dir) }

// Write puts the reports in the out directory dir.
func (r *Rendered) Write(dir string) error {
	if r.csv != "" {
		b, err := os.ReadFile(r.csv)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(dir, r.csvName, b); err != nil {
			return err
		}
	}
	return WriteRun(dir, r.Summary, r.WorkbookName, r.Workbook)
}

// WriteRun puts a run's summary.json and workbook (none when empty) in
// its out directory dir: the reports of a run just made, or of a run read
// back from the database.
func WriteRun(dir string, summary []byte, workbookName string, workbook []byte) error {
	if len(workbook) > 0 {
		if err := atomicfile.WriteFile(dir, workbookName, workbook); err != nil {
			return err
		}
	}
	return atomicfile.WriteFile(dir, "summary.json", summary)
}

// WriteFailure writes the summary.json of a run that failed, saying why,
// with every count at zero.
func WriteFailure(dir string, run reconcile.Run) error {
	res := reconcile.NewResult(run)
	s := NewSummary(res, "")
	s.Error = run.Error
	b, err := summaryJSON(s)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(dir, "summary.json", b)
}

// MarkReplay returns a stored summary.json marked as handed back again
// ("replay": true); a summary it cannot read is returned as it is.
func MarkReplay(summary []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(summary, &doc); err != nil {
		return summary
	}
	doc["replay"] = true
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return summary
	}
	return append(b, '\n')
}

// Aside is a run's reports being made on another goroutine, while the
// database writes the run's findings, journals and memory.
type Aside struct {
	done chan made
	got  *made
}

// Made is what making the reports aside took.
type Made struct {
	Took time.Duration
	Heap uint64 // how far the heap rose while they were made
}

type made struct {
	rep *Rendered
	err error
	Made
}

// RenderAside starts Render on another goroutine.
func RenderAside(res *reconcile.Result, workbookName string, opts WorkbookOptions) *Aside {
	a := &Aside{done: make(chan made, 1)}
	go func() {
		start, heap := time.Now(), watchHeap()
		rep, err := Render(res, workbookName, opts)
		took := time.Since(start)
		a.done <- made{rep, err, Made{took, heap()}}
	}()
	return a
}

// Wait returns the reports once they are made (or why they could not
// be), or ctx's cause if it ends
// first (a signal: the run must stop now, not when a workbook of millions
// of lines is done); every call after the reports came returns them at
// once.
func (a *Aside) Wait(ctx context.Context) (*Rendered, Made, error) {
	if a.got == nil {
		select {
		case m := <-a.done:
			a.got = &m
		case <-ctx.Done():
			return nil, Made{}, context.Cause(ctx)
		}
	}
	if a.got.err != nil {
		return nil, a.got.Made, fmt.Errorf("write reports: %w", a.got.err)
	}
	return a.got.rep, a.got.Made, nil
}

// Close removes the reports' temporary files, whatever became of the run,
// without waiting: reports still being made are removed when they are done.
func (a *Aside) Close() {
	if a.got != nil {
		if a.got.rep != nil {
			a.got.rep.Close()
		}
		return
	}
	go func() {
		if r := <-a.done; r.rep != nil {
			r.rep.Close()
		}
	}()
}
