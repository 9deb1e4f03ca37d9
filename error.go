package reconcile

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors callers may test with errors.Is.
var (
	// ErrUnknownFormat is returned for a settlement format the job cannot read.
	ErrUnknownFormat = errors.New("unknown settlement format")
	// ErrControlTotal is wrapped by a parse error when the file's own totals
	// do not match its rows (a truncated download, an edited file).
	ErrControlTotal = errors.New("control total does not add up")
	// ErrConflict is returned when a unique key is already taken.
	ErrConflict = errors.New("conflict")
	// ErrNotFound is returned when a record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable is returned when the database cannot be reached or
	// went away in the middle of a run.
	ErrUnavailable = errors.New("database unreachable")
	// ErrSecretSpaces is a secret that begins or ends with white space
	// where the secret cannot (an API key, a token, a URL), or where that
	// is the likely reason the channel refused it (a password). The
	// spaces are kept, never trimmed: see config.Secret.
	ErrSecretSpaces = errors.New("the secret has leading or trailing spaces")
)

// ParseError is a failure to read a settlement file, with where it happened.
type ParseError struct {
	File   string
	Line   int    // 1-based; 0 when the error concerns the whole file
	Column string // header name of the field, when there is one
	Err    error
}

func (e *ParseError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Column != "" {
		s += fmt.Sprintf(": column %s", e.Column)
	}
	return s + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// QuoteRunes is how much of a value an error message quotes: enough to
// recognise it, never a whole 10 MB field copied into a log line, the
// runs table, summary.json and the alert.
const QuoteRunes = 64

// Quote is %q for a value that came from outside (a settlement file, a
// workbook, a flag): the value quoted with Go's escapes, cut to
// QuoteRunes runes with its full length in bytes said after it.
//
//	Quote("T1")                         → "T1"
//	Quote(strings.Repeat("x", 10000000)) → "xxx…x…" (10000000 bytes), 64 x's before the …
func Quote(s string) string {
	n := 0
	for i := range s {
		if n == QuoteRunes {
			return strconv.Quote(s[:i]+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
		}
		n++
	}
	return strconv.Quote(s)
}
