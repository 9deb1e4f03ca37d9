package channelfeed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Every format is read a line at a time, and every format holds its lines
// to the same two rules, checked here: a line is at most maxLine bytes,
// and it ends in LF or CRLF. encoding/csv and bufio.ScanLines end a line
// at LF alone, so a file with old Mac line endings (a CR alone) read as
// one line: a header and no rows, or an error about something else. A
// file either is read whole or is refused, so such a file is refused,
// naming the line.

// maxLine bounds one line, so a corrupt file (a 10 MB field, a quote never
// closed, no line break at all) is refused with its line number instead
// of being read into memory. In a CSV a quoted field counts with the line
// it starts on.
const maxLine = 1 << 20

// lineTooLong is the error for a line longer than maxLine.
func (o Options) lineTooLong(line int) error {
	return o.errorf(line, "", "line longer than %d bytes", maxLine)
}

// bareCR is the error for a CR at byte col (1-based) of line that has no
// LF after it: the last line of a file alone may end so.
func (o Options) bareCR(line, col int) error {
	return o.errorf(line, "", "line ends in a CR without LF (byte %d of the line): lines must end in LF or CRLF", col)
}

// lineScanner reads a line-oriented bill (WeChat Pay, Alipay) a line at a
// time, holding each to the rules above. A byte order mark is part of the
// first line as the rules count it, for its length and for the place of
// a CR in it.
type lineScanner struct {
	sc   *bufio.Scanner
	opts Options
	// quotes makes a CR between two double quotes of a line text (Alipay
	// may quote free text); WeChat Pay never quotes.
	quotes bool
	line   int   // the line last read, 1-based
	err    error // why scan stopped before the end of the file
}

func newLineScanner(r io.Reader, opts Options, quotes bool) *lineScanner {
	sc := bufio.NewScanner(r)
	// Room for a line of maxLine bytes and its CRLF.
	sc.Buffer(make([]byte, 0, 64<<10), maxLine+2)
	return &lineScanner{sc: sc, opts: opts, quotes: quotes}
}

// scan reads the next line, which bytes then returns without its line
// ending. It returns false at the end of the file, and at a fault, which
// err then holds.
func (l *lineScanner) scan() bool {
	if l.err != nil {
		return false
	}
	if !l.sc.Scan() {
		switch err := l.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			l.err = l.opts.lineTooLong(l.line + 1)
		case err != nil:
			l.err = l.opts.wrap(l.line+1, "", fmt.Errorf("read: %w", err))
		}
		return false
	}
	l.line++
	// ScanLines has dropped the CR of a CRLF, so any CR left is bare.
	b := l.sc.Bytes()
	if len(b) > maxLine {
		l.err = l.opts.lineTooLong(l.line)
	} else if i := indexBareCR(b, l.quotes); i >= 0 {
		l.err = l.opts.bareCR(l.line, i+1)
	}
	return l.err == nil
}

// bytes is the line scan read, valid until the next scan.
func (l *lineScanner) bytes() []byte { return l.sc.Bytes() }

// bom reports whether the line scan read is the first and starts with a
// UTF-8 byte order mark: WeChat Pay's bill may, and text drops it; in
// Alipay's, which is GBK, it says the bill was re-saved.
func (l *lineScanner) bom() bool {
	return l.line == 1 && bytes.HasPrefix(l.sc.Bytes(), utf8BOM)
}

// text is the line scan read as a string, without a byte order mark.
func (l *lineScanner) text() string {
	if l.bom() {
		return string(l.sc.Bytes()[len(utf8BOM):])
	}
	return string(l.sc.Bytes())
}

// next is scan and text: the next line of a UTF-8 bill, and false at the
// end of the file or at a fault, which err then holds.
func (l *lineScanner) next() (string, bool) {
	if !l.scan() {
		return "", false
	}
	return l.text(), true
}

// nextIn is next with the line's text kept in slabs (see textSlabs): for
// the rows of a bill, whose text is lent to the caller of ParseFileAside.
func (l *lineScanner) nextIn(slabs *textSlabs) (string, bool) {
	if !l.scan() {
		return "", false
	}
	if l.bom() {
		return l.text(), true
	}
	return slabs.str(l.sc.Bytes()), true
}

// indexBareCR is the index of the first CR of line b, or with quotes of
// the first one outside double quotes; -1 when there is none.
func indexBareCR(b []byte, quotes bool) int {
	if !quotes {
		return bytes.IndexByte(b, '\r')
	}
	for i, quoted := 0, false; i < len(b); quoted = !quoted {
		next := bytes.IndexByte(b[i:], '"')
		if next < 0 {
			next = len(b) - i
		}
		if r := bytes.IndexByte(b[i:i+next], '\r'); r >= 0 && !quoted {
			return i + r
		}
		i += next + 1
	}
	return -1
}

// lineGuard is the reader under encoding/csv. It passes the file on as it
// is and stops it at the first line that breaks the rules above, knowing
// CSV's quotes: a CR or a line break inside a quoted field is text, and
// the field counts with the line it starts on. It hands on the bytes
// before a fault and then fails with a *reconcile.ParseError, so the
// records before the fault read as they would without it, and the error
// comes when the CSV reader reaches the fault.
type lineGuard struct {
	br   *bufio.Reader
	opts Options
	err  error // the fault, returned once the bytes before it are read

	line int // the line of the next byte, 1-based
	col  int // the bytes of that line before it
	// quoteFrom is the first line in which double quotes quote fields:
	// the lines a mapping skips before its header are not CSV.
	quoteFrom int
	quoted    bool // inside a quoted field
	recLine   int  // the line the current record starts on
	recLen    int  // the bytes of the current record so far
}

// newLineGuard guards br, whose next byte starts line, quoting from line
// quoteFrom on.
func newLineGuard(br *bufio.Reader, opts Options, line, quoteFrom int) *lineGuard {
	return &lineGuard{br: br, opts: opts, line: line, recLine: line, quoteFrom: quoteFrom}
}

func (g *lineGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.br.Read(p)
	if k := g.scan(p[:n]); k < n {
		if k == 0 {
			return 0, g.err
		}
		return k, nil
	}
	return n, err
}

// scan follows the lines and quotes of c and returns len(c), or the
// offset of a fault with g.err set.
func (g *lineGuard) scan(c []byte) int {
	if g.plain(c) {
		return len(c)
	}
	for i := 0; i < len(c); {
		seg := c[i:]
		if g.quoted {
			// Only a quote ends a quoted field (a doubled one reopens it).
			q := bytes.IndexByte(seg, '"')
			if q >= 0 {
				seg = seg[:q+1]
			}
			if k := g.take(seg); k < len(seg) {
				return i + k
			}
			g.quoted = q < 0
			i += len(seg)
			continue
		}
		// Outside quotes, up to the end of the line or the next quote.
		if lf := bytes.IndexByte(seg, '\n'); lf >= 0 {
			seg = seg[:lf+1]
		}
		quote := false
		if g.line >= g.quoteFrom {
			if q := bytes.IndexByte(seg, '"'); q >= 0 {
				seg, quote = seg[:q+1], true
			}
		}
		if r := bytes.IndexByte(seg, '\r'); r >= 0 && !g.endsLine(seg, r) {
			g.err = g.opts.bareCR(g.line, g.col+r+1)
			return i + r
		}
		if k := g.take(seg); k < len(seg) {
			return i + k
		}
		g.quoted = quote
		i += len(seg)
	}
	return len(c)
}

// plain takes the usual c, without quotes and without a CR but the CRs
// of CRLFs, in a few passes of the bytes package's vector code where scan
// makes a few per line; it reports false, taking nothing, for any other.
func (g *lineGuard) plain(c []byte) bool {
	if g.quoted || len(c) == 0 || len(c) > maxLine || bytes.IndexByte(c, '"') >= 0 {
		return false
	}
	if n := bytes.Count(c, []byte{'\r'}); n > 0 && (c[len(c)-1] == '\r' || bytes.Count(c, []byte("\r\n")) != n) {
		return false
	}
	if g.recLen+len(c) > maxLine {
		lf := bytes.IndexByte(c, '\n')
		if lf < 0 || g.recLen+lf > maxLine {
			return false
		}
	}
	// Any later line is shorter than c, so shorter than maxLine.
	if n := bytes.Count(c, []byte{'\n'}); n > 0 {
		g.line += n
		g.col = len(c) - bytes.LastIndexByte(c, '\n') - 1
		g.recLine, g.recLen = g.line, g.col
	} else {
		g.col += len(c)
		g.recLen += len(c)
	}
	return true
}

// endsLine reports whether the CR at seg[r] ends its line: an LF follows
// it, or nothing does. A read error is left to the next Read.
func (g *lineGuard) endsLine(seg []byte, r int) bool {
	if r+1 < len(seg) {
		return seg[r+1] == '\n'
	}
	next, _ := g.br.Peek(1)
	return len(next) == 0 || next[0] == '\n'
}

// take counts seg into the current line and record. It returns len(seg),
// or the offset of the first byte past maxLine with g.err set.
func (g *lineGuard) take(seg []byte) int {
	n := len(seg)
	ends := !g.quoted && seg[n-1] == '\n' // the record ends with seg
	if ends {
		n-- // its LF is no part of it
	}
	if g.recLen+n > maxLine {
		k := maxLine - g.recLen
		if last := g.line + bytes.Count(seg[:k], []byte{'\n'}); last > g.recLine {
			g.err = g.opts.errorf(g.recLine, "", "line longer than %d bytes (a quoted field runs from it past line %d: is a quote not closed?)", maxLine, last)
		} else {
			g.err = g.opts.lineTooLong(g.recLine)
		}
		return k
	}
	g.recLen += n
	if lf := bytes.LastIndexByte(seg, '\n'); lf >= 0 {
		g.line += bytes.Count(seg, []byte{'\n'})
		g.col = len(seg) - lf - 1
	} else {
		g.col += len(seg)
	}
	if ends {
		g.recLine, g.recLen = g.line, 0
	}
	return len(seg)
}
