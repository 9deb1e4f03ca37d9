package reports_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

// reviewPart is the Review sheet's part in the workbook the job writes.
const reviewPart = "xl/worksheets/sheet2.xml"

// entry is a zip entry to put in a copy of a workbook: its data, or raw
// deflated data with the sizes its directory is to declare.
type entry struct {
	data []byte
	raw  *zip.FileHeader // CompressedSize64, UncompressedSize64 and CRC32 as they will be declared
	comp []byte          // the deflated data of raw
}

// rezip copies the zip at src to a new file with the entries of replace
// put in (replacing those of the same name, or added) and returns its path.
func rezip(t *testing.T, src string, replace map[string]entry) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	put := func(name string, e entry) {
		if e.raw != nil {
			h := *e.raw
			h.Name, h.Method = name, zip.Deflate
			w, err := zw.CreateRaw(&h)
			if err == nil {
				_, err = w.Write(e.comp)
			}
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write(e.data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range zr.File {
		if e, ok := replace[f.Name]; ok {
			put(f.Name, e)
			delete(replace, f.Name)
			continue
		}
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(replace)) {
		put(name, replace[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// readPart returns one entry of the zip at path.
func readPart(t *testing.T, path, name string) []byte {
	t.Helper()
	return []byte(sheetXML(t, path, name))
}

// bomb is an entry of before, mib MiB of spaces and after, deflated into
// a few KB per MiB, declaring its true size. The deflate stream is made of
// one flushed MiB of spaces repeated: each flush ends its blocks on a byte,
// and the chunk's back-references only reach spaces, so the copies are one
// valid stream, made in milliseconds rather than by deflating it all.
func bomb(t *testing.T, before []byte, mib int, after []byte) entry {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	chunk := func(data ...[]byte) []byte {
		for _, d := range data {
			if _, err := w.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := bytes.Clone(b.Bytes())
		b.Reset()
		return out
	}
	comp := chunk(before, spaces)
	steady := chunk(spaces)
	crc := crc32.Update(crc32.ChecksumIEEE(before), crc32.IEEETable, spaces)
	for range mib - 1 {
		comp = append(comp, steady...)
		crc = crc32.Update(crc, crc32.IEEETable, spaces)
	}
	if _, err := w.Write(after); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	comp = append(comp, b.Bytes()...)
	return entry{raw: &zip.FileHeader{
		CRC32:              crc32.Update(crc, crc32.IEEETable, after),
		CompressedSize64:   uint64(len(comp)),
		UncompressedSize64: uint64(len(before) + mib<<20 + len(after)),
	}, comp: comp}
}

// deflated returns data deflated, for an entry that declares what it likes.
func deflated(t *testing.T, data io.Reader) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withCells returns a copy of the workbook at path whose Review sheet has
// the raw cells given (by reference) in place of its own, or inserted
// before the row's Version cell, as another program than excelize could
// write them.
func withCells(t *testing.T, path string, cells map[string]string) string {
	t.Helper()
	xml := string(readPart(t, path, reviewPart))
	// In column order, so cells inserted before the same one stay in order.
	for _, ref := range slices.Sorted(maps.Keys(cells)) {
		c := cells[ref]
		re := regexp.MustCompile(`<c r="` + ref + `"[^>]*?(?:/>|>.*?</c>)`)
		if re.MatchString(xml) {
			xml = re.ReplaceAllLiteralString(xml, c)
			continue
		}
		row := strings.TrimLeft(ref, "ABCDEFGHIJKLMNOP")
		version := `<c r="Q` + row + `"`
		if !strings.Contains(xml, version) {
			t.Fatalf("no cell %s to put %s before", version, ref)
		}
		xml = strings.Replace(xml, version, c+version, 1)
	}
	return rezip(t, path, map[string]entry{reviewPart: {data: []byte(xml)}})
}

func inline(ref, text string) string {
	return `<c r="` + ref + `" t="inlineStr"><is><t>` + text + `</t></is></c>`
}

// TestReadDecisionsCellTypes: a decision is a plain value a person typed or
// picked; what a cell computed or holds as another type is refused for its
// line, in every column read back. A formula elsewhere is nobody's concern.
func TestReadDecisionsCellTypes(t *testing.T) {
	book := reviewed(t, func(f *excelize.File) {})
	type where struct {
		line   int
		column string
	}
	tests := []struct {
		name  string
		cells map[string]string
		want  []reports.Decision
		bad   []where
		says  string
	}{
		{
			name:  "formula with a cached approve",
			cells: map[string]string{"N2": `<c r="N2" t="str"><f>HYPERLINK("http://x","approve")</f><v>approve</v></c>`},
			bad:   []where{{2, "Decision"}},
			says:  "formula",
		},
		{
			name:  "formula without a cached value",
			cells: map[string]string{"N3": `<c r="N3"><f>IF(TRUE,"approve")</f></c>`},
			bad:   []where{{3, "Decision"}},
			says:  "formula",
		},
		{
			// Some tools (SheetJS without a table of shared strings) write
			// every string so: text, since no formula is there.
			name:  "string without <f>",
			cells: map[string]string{"N3": `<c r="N3" t="str"><v>approve</v></c>`},
			want:  []reports.Decision{{Sheet: "Review", Row: 3, Ref: "run-1-0002", Decision: "approve"}},
		},
		{
			name:  "a decision emptied",
			cells: map[string]string{"N3": inline("N3", " ")},
		},
		{
			name:  "a NUL in a note",
			cells: map[string]string{"N3": inline("N3", "approve"), "P3": inline("P3", "ok_x0000_")},
			bad:   []where{{3, "Note"}},
			says:  "NUL",
		},
		{
			name:  "shared string with a formula",
			cells: map[string]string{"N3": `<c r="N3" t="s"><f>A1</f><v>0</v></c>`},
			bad:   []where{{3, "Decision"}},
			says:  "formula",
		},
		{
			name:  "number",
			cells: map[string]string{"N4": `<c r="N4"><v>1</v></c>`},
			bad:   []where{{4, "Decision"}},
			says:  "number",
		},
		{
			name:  "boolean",
			cells: map[string]string{"N5": `<c r="N5" t="b"><v>1</v></c>`},
			bad:   []where{{5, "Decision"}},
			says:  "TRUE/FALSE",
		},
		{
			name:  "error value",
			cells: map[string]string{"N6": `<c r="N6" t="e"><v>#N/A</v></c>`},
			bad:   []where{{6, "Decision"}},
			says:  "#N/A",
		},
		{
			name:  "formula in Finding",
			cells: map[string]string{"A2": `<c r="A2" t="str"><f>"run-1-0002"</f><v>run-1-0002</v></c>`, "N2": inline("N2", "approve")},
			bad:   []where{{2, "Finding"}},
			says:  "formula",
		},
		{
			name:  "number in Finding",
			cells: map[string]string{"A2": `<c r="A2"><v>7</v></c>`, "N2": inline("N2", "approve")},
			bad:   []where{{2, "Finding"}},
			says:  "number",
		},
		{
			name:  "formula in Version",
			cells: map[string]string{"Q2": `<c r="Q2"><f>0+0</f><v>0</v></c>`, "N2": inline("N2", "approve")},
			bad:   []where{{2, "Version"}},
			says:  "formula",
		},
		{
			name:  "formula in Reviewer",
			cells: map[string]string{"O2": `<c r="O2" t="str"><f>"boss"</f><v>boss</v></c>`, "N2": inline("N2", "approve")},
			bad:   []where{{2, "Reviewer"}},
			says:  "formula",
		},
		{
			name:  "formula in Note",
			cells: map[string]string{"P2": `<c r="P2" t="str"><f>"ok"</f><v>ok</v></c>`, "N2": inline("N2", "approve")},
			bad:   []where{{2, "Note"}},
			says:  "formula",
		},
		{
			name: "every bad line",
			cells: map[string]string{
				"N2": `<c r="N2" t="str"><f>"approve"</f><v>approve</v></c>`,
				"N3": `<c r="N3"><v>3</v></c>`,
				"A4": `<c r="A4" t="str"><f>"run-1-0001"</f><v>run-1-0001</v></c>`, "N4": inline("N4", "reject"),
				"N5": inline("N5", "investigate"),
			},
			bad:  []where{{2, "Decision"}, {3, "Decision"}, {4, "Finding"}},
			says: "formula",
		},
		{
			name:  "formula in a column not read back",
			cells: map[string]string{"M2": `<c r="M2" t="str"><f>"x"</f><v>x</v></c>`, "N2": inline("N2", "approve")},
			want:  []reports.Decision{{Sheet: "Review", Row: 2, Ref: "run-1-0001", Decision: "approve"}},
		},
		{
			name: "inline and rich text",
			cells: map[string]string{
				"N2": inline("N2", " Reject "),
				"N3": `<c r="N3" t="inlineStr"><is><r><t>inves</t></r><r><rPr><b/></rPr><t>tigate</t></r><rPh sb="0" eb="1"><t>x</t></rPh></is></c>`,
				"O3": `<c r="O3"><v>4711</v></c>`, "P3": `<c r="P3"><v>0.5</v></c>`, "Q3": `<c r="Q3" t="inlineStr"><is><t>2</t></is></c>`,
			},
			want: []reports.Decision{
				{Sheet: "Review", Row: 2, Ref: "run-1-0001", Decision: "reject"},
				{Sheet: "Review", Row: 3, Ref: "run-1-0002", Decision: "investigate", Reviewer: "4711", Note: "0.5", Version: 2},
			},
		},
		{
			// Cells need not say where they are: each is the next column,
			// after a blank one too (M3 here).
			name: "cells without a reference",
			cells: map[string]string{
				"M3": `<c r="M3" s="0"/><c t="inlineStr"><is><t>approve</t></is></c><c/><c t="inlineStr"><is><t>a note</t></is></c>`,
			},
			want: []reports.Decision{{Sheet: "Review", Row: 3, Ref: "run-1-0002", Decision: "approve", Note: "a note"}},
		},
		{
			// A reference and a decision never start with ', so one there
			// is a text marker; a name or a note may ('t Hooft).
			name: "apostrophes",
			cells: map[string]string{
				"A2": inline("A2", "'run-1-0001"), "N2": inline("N2", "'approve"),
				"O2": inline("O2", "'t Hooft"), "P2": inline("P2", "'as agreed'"),
			},
			want: []reports.Decision{{Sheet: "Review", Row: 2, Ref: "run-1-0001", Decision: "approve", Reviewer: "'t Hooft", Note: "'as agreed'"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withCells(t, book, tt.cells)
			got, err := reports.ReadDecisions(path)
			if tt.bad == nil {
				if err != nil {
					t.Fatalf("ReadDecisions: %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("got  %+v\nwant %+v", got, tt.want)
				}
				return
			}
			if err == nil || got != nil {
				t.Fatalf("got %+v, %v; want no decisions and an error", got, err)
			}
			var at []where
			for _, e := range unjoin(err) {
				var pe *reconcile.ParseError
				if !errors.As(e, &pe) {
					t.Fatalf("got %T %v, want a *reconcile.ParseError", e, e)
				}
				if pe.File != path {
					t.Errorf("file: got %q, want %q", pe.File, path)
				}
				at = append(at, where{pe.Line, pe.Column})
			}
			if !slices.Equal(at, tt.bad) {
				t.Errorf("errors at %+v, want %+v (%v)", at, tt.bad, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("got %q, want it to say %q", err, tt.says)
			}
		})
	}
}

// TestReadDecisionsLimits: a workbook past the limits is refused before
// anything is read from it, quickly, with one error naming the file and
// the limit.
func TestReadDecisionsLimits(t *testing.T) {
	book := reviewed(t, func(f *excelize.File) {
		set(t, f, map[string]any{"N2": "approve"})
	})
	sheet := readPart(t, book, reviewPart)
	// The Review sheet's XML around the end of its sheetData, where
	// whitespace may pad it.
	before, after, ok := bytes.Cut(sheet, []byte("</sheetData>"))
	if !ok {
		t.Fatal("no </sheetData> in the Review sheet")
	}
	after = append([]byte("</sheetData>"), after...)
	honest := func(data []byte) entry {
		comp := deflated(t, bytes.NewReader(data))
		return entry{raw: &zip.FileHeader{
			CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(comp)), UncompressedSize64: uint64(len(data)),
		}, comp: comp}
	}
	huge := filepath.Join(t.TempDir(), "huge.xlsx")
	if err := os.WriteFile(huge, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 32<<20+1); err != nil {
		t.Fatal(err)
	}
	// Entries that declare 100 MiB each: together past the limit, each
	// within it. Their content is never read.
	claims := map[string]entry{}
	for _, name := range []string{"xl/media/a.bin", "xl/media/b.bin", "xl/media/c.bin"} {
		e := honest([]byte("small"))
		e.raw.UncompressedSize64 = 100 << 20
		claims[name] = e
	}
	lying := bomb(t, before, 10, after) // 10 MiB that say they are 4 KB
	lying.raw.UncompressedSize64 = 4096
	manyRows := func(rows string) string {
		return rezip(t, book, map[string]entry{reviewPart: honest(slices.Concat(before, []byte(rows), after))})
	}

	for _, tt := range []struct {
		name string
		path func() string
		says []string
	}{
		{"the file", func() string { return huge }, []string{"33554433 bytes", "32 MiB"}},
		{"one entry", func() string {
			// 200 MiB of XML in a file of a few hundred KB.
			return rezip(t, book, map[string]entry{reviewPart: bomb(t, before, 200, after)})
		}, []string{`"` + reviewPart + `"`, "128 MiB"}},
		{"entries together", func() string { return rezip(t, book, claims) }, []string{"256 MiB"}},
		{"an entry that holds more than it declares", func() string {
			return rezip(t, book, map[string]entry{reviewPart: lying})
		}, []string{`"` + reviewPart + `"`, "the 4096 bytes it declares"}},
		{"the workbook's index", func() string {
			wb := readPart(t, book, "xl/workbook.xml")
			return rezip(t, book, map[string]entry{"xl/workbook.xml": bomb(t, wb[:len(wb)-len("</workbook>")], 2, []byte("</workbook>"))})
		}, []string{`"xl/workbook.xml"`, "1 MiB"}},
		{"a row number", func() string { return manyRows(`<row r="1048577"/>`) }, []string{"1048576 rows"}},
		// Rows need not say their number: the one after 1,048,576 is past.
		{"rows", func() string { return manyRows(`<row r="1048576"/><row/>`) }, []string{"1048576 rows"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := reports.ReadDecisions(path)
			runtime.ReadMemStats(&after)
			if err == nil || got != nil {
				t.Fatalf("got %d decisions, %v; want none and an error", len(got), err)
			}
			if !errors.Is(err, reports.ErrWorkbookTooLarge) {
				t.Errorf("got %v, want reports.ErrWorkbookTooLarge", err)
			}
			if len(unjoin(err)) != 1 {
				t.Errorf("got %d errors, want one", len(unjoin(err)))
			}
			for _, s := range append(tt.says, path) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("got %q, want it to say %q", err, s)
				}
			}
			// Refused as it streams, holding little: never the 128 MiB an
			// entry may hold, let alone the 200 MiB of the bomb. (Bytes
			// allocated, not seconds: the machine may be busy.)
			if made := after.TotalAlloc - before.TotalAlloc; made > 16<<20 {
				t.Errorf("allocated %d MiB to refuse, want at most 16", made>>20)
			}
		})
	}

	t.Run("within the limits", func(t *testing.T) {
		// The same workbook padded by the same means reads as before: the
		// padding is sound XML, and only its size is refused above.
		got, err := reports.ReadDecisions(rezip(t, book, map[string]entry{reviewPart: bomb(t, before, 2, after)}))
		if err != nil || len(got) != 1 || got[0].Ref != "run-1-0001" {
			t.Errorf("got %+v, %v; want the one decision", got, err)
		}
	})
}

// TestReadDecisionsAmbiguous: a workbook that leaves open what a
// spreadsheet would show is refused rather than read one way of several.
func TestReadDecisionsAmbiguous(t *testing.T) {
	book := reviewed(t, func(f *excelize.File) {
		set(t, f, map[string]any{"N2": "approve"})
	})
	sheet := string(readPart(t, book, reviewPart))
	twice := func() string {
		// A second Review sheet part of the same name, with another decision.
		zr, err := zip.OpenReader(book)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		dst := filepath.Join(t.TempDir(), "twice.xlsx")
		out, err := os.Create(dst)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		zw := zip.NewWriter(out)
		for _, f := range zr.File {
			if err := zw.Copy(f); err != nil {
				t.Fatal(err)
			}
		}
		w, err := zw.Create(strings.ToUpper(reviewPart))
		if err == nil {
			_, err = w.Write([]byte(strings.Replace(sheet, "approve", "reject", 1)))
		}
		if err == nil {
			err = zw.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		return dst
	}
	for _, tt := range []struct {
		name string
		path func() string
		says string
	}{
		{"a zip entry twice", twice, "is there twice"},
		{"two sheets of one name", func() string {
			wb := string(readPart(t, book, "xl/workbook.xml"))
			wb = strings.Replace(wb, `name="Pending"`, `name="review"`, 1)
			return rezip(t, book, map[string]entry{"xl/workbook.xml": {data: []byte(wb)}})
		}, `two sheets are named "review"`},
		{"rows out of order", func() string {
			return rezip(t, book, map[string]entry{reviewPart: {data: []byte(strings.Replace(sheet, "</sheetData>", `<row r="3"/></sheetData>`, 1))}})
		}, "rows out of order"},
		{"cells out of order", func() string {
			return withCells(t, book, map[string]string{"P2": inline("P2", "note"), "N2": `<c r="B2" t="inlineStr"><is><t>approve</t></is></c>`})
		}, "cells out of order"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reports.ReadDecisions(tt.path())
			if err == nil || got != nil {
				t.Fatalf("got %+v, %v; want no decisions and an error", got, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("got %q, want it to say %q", err, tt.says)
			}
		})
	}
}
