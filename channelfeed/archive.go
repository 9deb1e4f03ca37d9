package channelfeed

import (
	"archive/zip"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"

	"reconcile"
)

// zipEntry opens the settlement file inside a ZIP archive. Alipay's
// archives name their entries in GBK without the UTF-8 flag, so names are
// decoded before they are compared. The entry ending in 业务明细.csv is
// the detail bill (its (汇总) sibling is a summary); an archive with one
// CSV entry gives that one; anything else is refused, naming what is there.
// The entry's name becomes part of the file name in every error, which a
// run stores as text and a log shows on one line: a name holding a NUL
// byte or another control character is refused.
func zipEntry(r io.ReaderAt, size int64, file string) (io.ReadCloser, string, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, "", fmt.Errorf("settlement file %s: zip: %w", file, err)
	}
	var names []string
	var csvs, details []*zip.File
	for _, f := range zr.File {
		name := entryName(f)
		names = append(names, name)
		if f.FileInfo().IsDir() || !strings.HasSuffix(strings.ToLower(name), ".csv") {
			continue
		}
		csvs = append(csvs, f)
		base := path.Base(name)
		if strings.HasSuffix(base, "业务明细.csv") || strings.HasSuffix(base, "账务明细.csv") {
			details = append(details, f)
		}
	}
	pick := details
	if len(pick) == 0 {
		pick = csvs
	}
	if len(pick) != 1 {
		return nil, "", fmt.Errorf("settlement file %s: zip holds %d candidate entries (%s); want one *_业务明细.csv or a single CSV",
			file, len(pick), listNames(names))
	}
	name := entryName(pick[0])
	if why := reconcile.TextFault(name); why != "" || strings.ContainsFunc(name, unicode.IsControl) {
		if why == "" {
			why = "a control character"
		}
		return nil, "", fmt.Errorf("settlement file %s: zip entry %s: the name is not plain text: %s", file, reconcile.Quote(name), why)
	}
	rc, err := pick[0].Open()
	if err != nil {
		return nil, "", fmt.Errorf("settlement file %s: zip entry %s: %w", file, reconcile.Quote(name), err)
	}
	return rc, name, nil
}

// listNames shows the entry names of an archive in an error: quoted, and
// the first few only, as an archive may hold thousands.
func listNames(names []string) string {
	const show = 10
	quoted := make([]string, 0, show)
	for _, n := range names[:min(len(names), show)] {
		quoted = append(quoted, reconcile.Quote(n))
	}
	s := strings.Join(quoted, ", ")
	if len(names) > show {
		s += fmt.Sprintf(" and %d more", len(names)-show)
	}
	return s
}

// entryName is the entry's name as text: UTF-8 when flagged or valid,
// otherwise decoded from GBK.
func entryName(f *zip.File) string {
	if !f.NonUTF8 && utf8.ValidString(f.Name) {
		return f.Name
	}
	name, err := simplifiedchinese.GBK.NewDecoder().String(f.Name)
	if err != nil {
		return f.Name
	}
	return name
}
