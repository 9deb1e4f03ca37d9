package reports

import (
	"bufio"
	"encoding/csv"
	"os"
	"strconv"
	"time"

	"reconcile/atomicfile"

	"reconcile"
)

// writeReviewCSV writes every review line of res to path as CSV, with the
// Review sheet's header and columns, atomically. Lines go out one at a
// time as they are formatted, so a run with millions of them costs no
// more memory than one with a few.
//
// Text is written by csvText, never cut. Money is the plain decimal string
// of reconcile.FormatAmount, a negative difference included, since a number
// cannot turn into a formula.
func writeReviewCSV(path string, res *reconcile.Result, loc *time.Location) error {
	return atomicfile.Write(path, 0o644, func(w *os.File) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		cw := csv.NewWriter(bw)
		if err := cw.Write(reviewHeader); err != nil {
			return err
		}
		cells := make(lineCells, len(reviewHeader))
		record := make([]string, len(reviewHeader))
		for _, f := range res.Findings {
			if !f.NeedsReview() {
				continue
			}
			reviewLine(f, loc, cells)
			for i, c := range cells {
				switch c.kind {
				case kindText:
					record[i] = csvText(c.text)
				case kindMoney:
					record[i] = reconcile.FormatAmount(c.minor, c.currency)
				case kindInt:
					record[i] = strconv.Itoa(c.n)
				default:
					record[i] = ""
				}
			}
			if err := cw.Write(record); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// csvText is a text cell of the CSV export: its bidi controls shown, as in
// the workbook, and a leading ' before a value that starts like a formula.
// A CSV file has no types: a spreadsheet that opens it reads such a value
// as a formula, so unlike the workbook's string cells the value itself
// must change.
func csvText(s string) string {
	s = reconcile.ShowBidi(s)
	if startsLikeFormula(s) {
		return "'" + s
	}
	return s
}
