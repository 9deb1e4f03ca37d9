package adyen

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strings"

	"reconcile"
	"reconcile/fetch"
)

// headSize is how much of an answer is read before it is offered: enough
// for the header row of a report (about 400 bytes) after a title or an
// export note, and for a login page to show itself.
const headSize = 8 << 10

// The header is the first row with this field, as channelfeed's parser
// finds it.
const headerField = "Company Account"

// readHead reads up to headSize bytes of body. err is io.EOF when the
// body ended within them, nil when there is more, and any other error is
// the read's failure after the bytes that did arrive.
func readHead(body io.Reader) (head []byte, err error) {
	buf := make([]byte, headSize)
	n := 0
	for n < len(buf) {
		m, err := body.Read(buf[n:])
		n += m
		if err != nil {
			return buf[:n], err
		}
	}
	return buf, nil
}

// sniff refuses an answer of batch n that is not a Settlement details
// report, judged by its Content-Type and head, the bytes readHead got
// (ended: all there is). Adyen's Customer Area answers some failed logins
// with its login page and 200, and an API gateway answers in JSON: saved
// as the report, either would fail the parser at night with words about
// columns instead of about the report user.
func sniff(n int64, status int, contentType string, head []byte, ended bool) error {
	text := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	start := bytes.TrimLeft(text, " \t\r\n")
	media, _, _ := mime.ParseMediaType(contentType)
	switch {
	case media == "text/html" || media == "application/xhtml+xml" || len(start) > 0 && start[0] == '<':
		return &fetch.Refusal{Status: status, Message: fmt.Sprintf(
			"batch %d came back as an HTML page (the Customer Area's login page?), not a report: is the report user's role right?", n)}
	case media == "application/json" || strings.HasSuffix(media, "+json") || len(start) > 0 && (start[0] == '{' || start[0] == '['):
		return jsonRefusal(n, status, start)
	case bytes.HasPrefix(text, []byte("PK\x03\x04")):
		return fmt.Errorf("adyen batch %d: came back as a ZIP or xlsx file, not the CSV report", n)
	case len(start) == 0 && ended:
		return fmt.Errorf("adyen batch %d: came back empty (HTTP %d), not a report", n, status)
	}
	if !hasHeader(text, ended) {
		return fmt.Errorf("adyen batch %d: not a Settlement details report: no row of its first %d bytes has a %s field",
			n, len(head), headerField)
	}
	return nil
}

// jsonRefusal is the refusal of a JSON answer, with the error code and
// message Adyen's API errors carry ({"errorCode":"000","message":...}).
func jsonRefusal(n int64, status int, body []byte) error {
	r := &fetch.Refusal{Status: status, Message: fmt.Sprintf("batch %d came back as JSON, not a report", n)}
	var e struct {
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	}
	// The head may be cut inside the JSON: then there is nothing to add.
	if json.Unmarshal(body, &e) == nil {
		if e.ErrorCode != "" {
			r.Code = reconcile.Quote(reconcile.Printable(e.ErrorCode))
		}
		if e.Message != "" {
			r.Message += ": " + reconcile.Quote(reconcile.Printable(e.Message))
		}
	}
	return r
}

// hasHeader reports whether a row of text has a Company Account field.
// Only whole lines are read: a head cut in the middle of a row could
// otherwise end in a field that merely starts like the header's.
func hasHeader(text []byte, ended bool) bool {
	if !ended {
		i := bytes.LastIndexByte(text, '\n')
		if i < 0 {
			return false
		}
		text = text[:i+1]
	}
	cr := csv.NewReader(bytes.NewReader(text))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err != nil {
			return false
		}
		for _, f := range rec {
			if strings.EqualFold(strings.TrimSpace(f), headerField) {
				return true
			}
		}
	}
}
