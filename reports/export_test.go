package reports

import (
	"os"

	"reconcile"
	"reconcile/atomicfile"
)

// WriteWorkbook writes the review workbook of res to path, atomically,
// with the default WorkbookOptions: what most tests want, and what the
// job never does, since it always passes the run's options.
func WriteWorkbook(path string, res *reconcile.Result) error {
	_, err := WriteWorkbookWith(path, res, WorkbookOptions{})
	return err
}

// WriteSummary writes s as indented JSON to path, atomically: the job
// writes summary.json through Rendered and WriteFailure instead.
func WriteSummary(path string, s Summary) error {
	b, err := summaryJSON(s)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(w *os.File) error {
		_, err := w.Write(b)
		return err
	})
}
