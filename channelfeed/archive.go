package channelfeed

import (
	"archive/zip"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// zipEntry opens the settlement file inside a ZIP archive. Alipay's
// archives name their entries in GBK without the UTF-8 flag, so names are
// decoded before they are compared. The entry ending in 业务明细.csv is
// the detail bill (its (汇总) sibling is a summary); an archive with one
// CSV entry gives that one; anything else is refused, naming what is there.
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
			file, len(pick), strings.Join(names, ", "))
	}
	rc, err := pick[0].Open()
	if err != nil {
		return nil, "", fmt.Errorf("settlement file %s: zip entry %s: %w", file, entryName(pick[0]), err)
	}
	return rc, entryName(pick[0]), nil
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
