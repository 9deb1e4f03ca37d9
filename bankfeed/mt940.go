package bankfeed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"reconcile"
)

// readMT940 reads SWIFT MT940 customer statements. Each message (:20:
// to :62F: or :62M:) is one BankStatement, its ID the :20: reference, a
// slash and the :28C: statement number, its Account the :25: value as
// written (an IBAN, a bank code and account, sometimes with the currency
// appended), its Currency the opening balance's. Its balances are
// checked per message: a statement continued in the next message
// (:60M:, :62M:) adds up on its own.
//
// Lines end in LF or CRLF; a CR alone, NUL, invalid UTF-8 and control
// characters (the TAB of old ING files, the SOH and ETX framing of mBank
// files too) are refused with the line named. A line is at most
// mtMaxLine bytes: SWIFT wraps at 65 characters, banks write longer.
//
// Envelopes, as files come: bare statements one after the other or
// separated by a line "-" (ABN AMRO, Knab, German banks); SWIFT blocks
// {1:…}{2:O940…}{3:…}{4: closed by -} or by "-" and "}" on lines of
// their own, blocks on one line or each on its own (SNS, ASN, ING); a
// first line :940: (Rabobank), old ING's "-XXX" footer and a bank's own
// header lines of capitals, digits and spaces before a :20: (ABN AMRO's
// ABNANL2A and 940). Blank lines between statements are skipped. A block
// 2 naming another message than 940 is refused, and so is a block 4 the
// file leaves open.
//
// Fields: a line starting with a tag MT940 has (:20: :21: :25: :28:
// :28C: :60F: :60M: :61: :86: :62F: :62M: :64: :65:) begins a field;
// any other line continues the field before it, joined WITHOUT a
// separator: banks wrap at any point, in words and in references (ING
// cuts an /EREF/ value in two), so a space would break a reference. A
// line shaped like a tag MT940 does not have continues its field too:
// German banks wrap times such as 16:26:37 so that a line starts :26:.
// Inside a statement a line "-" is the end of the message only once the
// closing balance is read; before it, it is wrapped text (ING wraps a
// mandate reference MND-EV01 so). :28: is read as :28C: (ABN AMRO,
// Triodos); :21:, :64: and :65: are ignored, and so is a :86: after the
// closing balance (the statement's own information).
//
// :61: is read as SWIFT lays it out: value date, optional entry date
// (four spaces in its place, as ASN writes, mean none), C, D, RC
// (reversed credit: a debit) or RD (reversed debit: a credit), optional
// funds code (the currency's third letter: German banks write CR, DR and
// RCR for euros; another letter is another currency, refused), amount
// with a decimal comma (Knab omits the comma of a whole amount),
// transaction type (N062, NTRF, S103) and the references. Everything up
// to the transaction type is read across line breaks (Sparkassen break
// the line after the debit/credit mark); the customer and bank
// references run to the end of the line the type ends on, and the lines
// after it are the supplementary details, which go into Remittance. A
// customer reference that only says where the reference is (NONREF,
// EREF, PREF, MARF, KREF+, as ING, Rabobank and German banks write) is
// none, and so is a bank reference NONREF (PostFinance). Dates must
// exist (some German banks write 30 February: refused); years are 20YY,
// and an entry date across a year end from its value date (entry 1231,
// value 0101) takes the year before or after.
//
// :86: comes in three dialects:
//   - Subfields /CODE/ (ING, Rabobank, ABN AMRO, SEPA-era Dutch banks):
//     /EREF/ is the EndToEndID, /NAME/ the Counterparty (else the name in
//     /CNTP/, /BENM/ or /ORDP/), /IBAN/ /BIC/ /ADDR/ /ISDT/ are dropped,
//     and /REMI/ (without ING's USTD// or STRD/CUR/) and every other code
//     of mtSubfieldCodes go into Remittance, joined by single spaces. A
//     code not in that list is text of the subfield before it.
//   - German ?NN (also Triodos's >NN): a three-digit code, then ?20–?29
//     and ?60–?63 the purpose text, ?32–?33 the Counterparty. Banks cut
//     these texts into subfields of 27 characters, in words, references
//     and SEPA keywords (S?25VWZ+): after a subfield of 27 characters the
//     next is joined WITHOUT a separator, after a shorter one (which
//     ended with its text, as old-style lines and the last piece do)
//     with a single space. The value of EREF+ in the purpose text is the
//     EndToEndID; the whole purpose text is the Remittance.
//   - Anything else is free text: Remittance, whole.
//
// Runs of spaces in Remittance and Counterparty are made one: SNS and ASN
// pad their lines to 65 characters. EREF+ and /EREF/ NOTPROVIDED are no
// reference.
func readMT940(r io.Reader, o Options, fn func(reconcile.BankEntry) error) ([]reconcile.BankStatement, error) {
	m := &mtReader{o: o, fn: fn, seen: map[[2]string]int{}}
	sc := bufio.NewScanner(r)
	// Room for a line of mtMaxLine bytes and its CRLF.
	sc.Buffer(make([]byte, 0, 4<<10), mtMaxLine+2)
	for sc.Scan() {
		m.line++
		s, err := m.text(sc.Bytes())
		if err != nil {
			return nil, err
		}
		if err := m.next(s); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, o.errorf(m.line+1, "", "line longer than %d bytes", mtMaxLine)
	} else if err != nil {
		return nil, o.wrap(m.line+1, "", fmt.Errorf("read: %w", err))
	}
	return m.end()
}

// mtMaxLine bounds one line of a file.
const mtMaxLine = 4 << 10

// mtBOM is a UTF-8 byte order mark, which a file re-saved on Windows
// may begin with; it is dropped.
var mtBOM = []byte("\xef\xbb\xbf")

// mtReader is the state of a read: the statement being read, its field
// and its entry waiting for its :86:.
type mtReader struct {
	o     Options
	fn    func(reconcile.BankEntry) error
	line  int // the line last read, 1-based
	stmts []reconcile.BankStatement
	seen  map[[2]string]int // account and ID → the line of the statement
	// block4 is the line of the {4: the file opened and has not closed
	// yet, 0 outside one.
	block4  int
	st      *mtStatement // nil outside a statement
	field   mtField
	pending *reconcile.BankEntry // a :61: read, before its :86:
}

// mtStatement is a statement being read.
type mtStatement struct {
	reconcile.BankStatement
	ref, number string // :20: and :28C:
	hasAccount  bool
	hasNumber   bool
	closingLine int
	closingTag  string
}

// mtField is a field being read: its tag, its first line and its text,
// continuation lines joined; breaks are where the lines after the first
// begin in text (for :61:, whose line ends matter).
type mtField struct {
	tag    string
	line   int
	text   []byte
	breaks []int
}

// text checks a line, without its line end, and returns it.
func (m *mtReader) text(b []byte) (string, error) {
	if m.line == 1 {
		b = bytes.TrimPrefix(b, mtBOM)
	}
	if len(b) > mtMaxLine {
		return "", m.o.errorf(m.line, "", "line longer than %d bytes", mtMaxLine)
	}
	// The scanner has dropped the CR of a CRLF: any CR left is bare.
	if i := bytes.IndexByte(b, '\r'); i >= 0 {
		return "", m.o.errorf(m.line, "", "line ends in a CR without LF (byte %d of the line): lines must end in LF or CRLF", i+1)
	}
	s := string(b)
	if f := reconcile.TextFault(s); f != "" {
		return "", m.o.errorf(m.line, "", "%s", f)
	}
	for i, r := range s {
		if unicode.IsControl(r) { // C0, DEL and C1 (U+0085 NEL, …)
			return "", m.o.errorf(m.line, "", "control character %U at byte %d of the line", r, i+1)
		}
	}
	return s, nil
}

// next reads one line.
func (m *mtReader) next(s string) error {
	if m.st == nil {
		return m.outside(s)
	}
	if tag, rest, ok := mtTag(s); ok {
		if err := m.endField(); err != nil {
			return err
		}
		if tag == "20" {
			if err := m.endStatement(); err != nil {
				return err
			}
			m.beginStatement(rest)
			return nil
		}
		return m.beginField(tag, rest)
	}
	t := strings.TrimRight(s, " ")
	switch {
	case m.closed() && (t == "-" || t == "-XXX"):
		return m.endMessage()
	case strings.HasPrefix(t, "}"), strings.HasPrefix(t, "-}"), strings.HasPrefix(t, "{1:"):
		if err := m.endMessage(); err != nil {
			return err
		}
		return m.envelope(t)
	}
	return m.field.add(m, s)
}

// closed reports whether the statement's closing balance has begun.
func (m *mtReader) closed() bool {
	return m.st.HasClosing || m.field.tag == "62F" || m.field.tag == "62M"
}

// outside reads a line between statements: an envelope, a bank's
// header, or the :20: that begins a statement.
func (m *mtReader) outside(s string) error {
	t := strings.TrimRight(s, " ")
	switch {
	case t == "" || t == "-" || t == "-XXX" || t == ":940:":
		return nil
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "}"), strings.HasPrefix(t, "-}"):
		return m.envelope(t)
	}
	if tag, rest, ok := mtTag(s); ok {
		if tag != "20" {
			return m.o.errorf(m.line, mtName(tag), "field outside a statement: a statement begins with :20:")
		}
		m.beginStatement(rest)
		return nil
	}
	if mtHeaderLine(t) {
		return nil
	}
	return m.o.errorf(m.line, "", "line %s is neither a field of a statement nor its envelope", reconcile.Quote(s))
}

// mtHeaderLine reports whether a line outside a statement is a bank's
// own header (ABN AMRO: ABNANL2A, 940; old ING: 0000 01INGBNL2AXXXX00001,
// 940 00).
func mtHeaderLine(s string) bool {
	if len(s) > 35 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ') {
			return false
		}
	}
	return true
}

// envelope reads a line of SWIFT blocks: {1:…}{2:…}{3:…}{4: opens a
// message's text, }, -} or -}{5:…} closes it.
func (m *mtReader) envelope(s string) error {
	if t, ok := strings.CutPrefix(s, "-}"); ok {
		s = "}" + t
	}
	if t, ok := strings.CutPrefix(s, "}"); ok {
		if m.block4 == 0 {
			return m.o.errorf(m.line, "", "} closes no block {4:")
		}
		m.block4, s = 0, t
	}
	for s != "" {
		if s[0] != '{' {
			return m.o.errorf(m.line, "", "text %s after the SWIFT blocks of the line", reconcile.Quote(s))
		}
		id, body, ok := strings.Cut(s[1:], ":")
		if !ok {
			return m.o.errorf(m.line, "", "SWIFT block %s has no ':'", reconcile.Quote(s))
		}
		if id == "4" {
			if body != "" {
				return m.o.errorf(m.line, "{4:", "text %s after {4: on its line: the fields begin on the next", reconcile.Quote(body))
			}
			if m.block4 != 0 {
				return m.o.errorf(m.line, "{4:", "block {4: of line %d is not closed with -}", m.block4)
			}
			m.block4 = m.line
			return nil
		}
		n := mtBlockEnd(body)
		if n < 0 {
			return m.o.errorf(m.line, "{"+id+":", "SWIFT block not closed on its line")
		}
		if id == "2" && !mtIs940(body[:n]) {
			return m.o.errorf(m.line, "{2:", "block 2 %s is not a message of type 940", reconcile.Quote(body[:n]))
		}
		s = body[n+1:]
	}
	return nil
}

// mtBlockEnd is the index of the } that closes a block whose body s
// begins, blocks nested in it ({3:{108:…}}) counted; -1 if none does.
func mtBlockEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// mtIs940 reports whether a block 2 (I940… sent, O940… received) is of
// an MT940.
func mtIs940(b string) bool {
	return len(b) >= 4 && (b[0] == 'I' || b[0] == 'O') && b[1:4] == "940"
}

// mtTags are the tags MT940 has, without their colons.
var mtTags = []string{"20", "21", "25", "28C", "28", "60F", "60M", "61", "86", "62F", "62M", "64", "65"}

// mtTag splits a line that begins a field into its tag and the rest.
func mtTag(s string) (tag, rest string, ok bool) {
	if len(s) < 4 || s[0] != ':' {
		return "", "", false
	}
	for _, t := range mtTags {
		if len(s) > len(t)+1 && s[1:1+len(t)] == t && s[1+len(t)] == ':' {
			return t, s[len(t)+2:], true
		}
	}
	return "", "", false
}

// mtName is a tag as errors name it.
func mtName(tag string) string { return ":" + tag + ":" }

// add appends a continuation line to the field.
func (f *mtField) add(m *mtReader, s string) error {
	if s == "" {
		return nil
	}
	limit := maxText
	if f.tag == "86" {
		limit = maxRemittance
	}
	if len(f.text)+len(s) > limit {
		return m.o.errorf(f.line, mtName(f.tag), "field runs past %d bytes at line %d", limit, m.line)
	}
	f.breaks = append(f.breaks, len(f.text))
	f.text = append(f.text, s...)
	return nil
}

// endMessage ends a message: its last field, and its statement.
func (m *mtReader) endMessage() error {
	if err := m.endField(); err != nil {
		return err
	}
	return m.endStatement()
}

// end finishes the read at the end of the file.
func (m *mtReader) end() ([]reconcile.BankStatement, error) {
	if m.st != nil {
		if err := m.endMessage(); err != nil {
			return nil, err
		}
	}
	if m.block4 != 0 {
		return nil, m.o.errorf(m.line, "{4:", "block {4: of line %d is not closed with -}: is the file cut short?", m.block4)
	}
	if len(m.stmts) == 0 {
		return nil, m.o.errorf(m.line, ":20:", "no MT940 statement in the file")
	}
	return m.stmts, nil
}

// begin starts a field with the rest of its tag's line.
func (f *mtField) begin(tag string, line int, rest string) {
	f.tag, f.line = tag, line
	f.text = append(f.text[:0], rest...)
	f.breaks = f.breaks[:0]
}

// beginStatement starts a statement at its :20:.
func (m *mtReader) beginStatement(rest string) {
	m.st = &mtStatement{}
	m.st.Line = m.line
	m.field.begin("20", m.line, rest)
}

// beginField starts a field other than :20:, in its place in the
// statement. A field other than :86: completes the entry before it.
func (m *mtReader) beginField(tag, rest string) error {
	if m.pending != nil && tag != "86" {
		if err := m.emit(); err != nil {
			return err
		}
	}
	if err := m.order(tag); err != nil {
		return err
	}
	m.field.begin(tag, m.line, rest)
	return nil
}

// order refuses a field out of its place: a statement is :20:, :21:,
// :25:, :28C:, :60F:, then :61: each with its :86:, then :62F:, :64:,
// :65: and :86:.
func (m *mtReader) order(tag string) error {
	st := m.st
	bad := func(format string, args ...any) error {
		return m.o.errorf(m.line, mtName(tag), format, args...)
	}
	switch tag {
	case "21", "25", "28", "28C":
		switch {
		case st.HasOpening:
			return bad("after the opening balance: it comes before it")
		case tag == "25" && st.hasAccount:
			return bad("second account in the statement")
		case (tag == "28" || tag == "28C") && st.hasNumber:
			return bad("second statement number in the statement")
		}
	case "60F", "60M":
		switch {
		case st.HasOpening:
			return bad("second opening balance in the statement")
		case !st.hasAccount:
			return bad("opening balance before the account :25:")
		case !st.hasNumber:
			return bad("opening balance before the statement number :28C:")
		}
	case "61":
		switch {
		case !st.HasOpening:
			return bad("statement line before the opening balance :60F:")
		case st.HasClosing:
			return bad("statement line after the closing balance")
		}
	case "86":
		if m.pending == nil && !st.HasClosing {
			return bad("information that follows no :61: statement line")
		}
	case "62F", "62M":
		switch {
		case !st.HasOpening:
			return bad("closing balance before the opening balance :60F:")
		case st.HasClosing:
			return bad("second closing balance in the statement")
		}
	case "64", "65":
		if !st.HasClosing {
			return bad("balance before the closing balance :62F:")
		}
	}
	return nil
}

// endField reads the field just ended.
func (m *mtReader) endField() error {
	f := &m.field
	defer func() { f.tag = "" }()
	st := m.st
	v := strings.TrimSpace(string(f.text))
	if v == "" && (f.tag == "20" || f.tag == "25" || f.tag == "28" || f.tag == "28C") {
		return m.o.errorf(f.line, mtName(f.tag), "empty field")
	}
	switch f.tag {
	case "20":
		st.ref = v
	case "25":
		st.Account, st.hasAccount = v, true
	case "28", "28C":
		st.number, st.hasNumber = v, true
	case "60F", "60M":
		return m.opening(f, v)
	case "61":
		e, err := m.statementLine(f)
		m.pending = e
		return err
	case "86":
		if m.pending == nil {
			return nil // the statement's own information
		}
		if err := m.info(m.pending, f); err != nil {
			return err
		}
		return m.emit()
	case "62F", "62M":
		return m.closing(f, v)
	}
	return nil
}

// opening reads the opening balance: the statement's currency, and its
// ID now that its :20:, :25: and :28C: are read.
func (m *mtReader) opening(f *mtField, v string) error {
	b, err := m.balance(f, v)
	if err != nil {
		return err
	}
	st := m.st
	st.Currency, st.Opening, st.HasOpening = b.currency, b.amount, true
	st.ID = st.ref + "/" + st.number
	if len(st.ID) > maxText {
		return m.o.errorf(st.Line, ":20:", "statement reference and number run past %d bytes", maxText)
	}
	key := [2]string{st.Account, st.ID}
	if line, dup := m.seen[key]; dup {
		return m.o.errorf(st.Line, ":20:", "statement %s of account %s again: the file has it at line %d too",
			reconcile.Quote(st.ID), reconcile.Quote(st.Account), line)
	}
	m.seen[key] = st.Line
	return nil
}

// closing reads the closing balance.
func (m *mtReader) closing(f *mtField, v string) error {
	b, err := m.balance(f, v)
	if err != nil {
		return err
	}
	st := m.st
	if b.currency != st.Currency {
		return m.o.errorf(f.line, mtName(f.tag), "closing balance in %s, the opening balance in %s", b.currency, st.Currency)
	}
	st.Closing, st.HasClosing = b.amount, true
	st.closingLine, st.closingTag = f.line, f.tag
	return nil
}

// endStatement checks the statement just ended and keeps it.
func (m *mtReader) endStatement() error {
	st := m.st
	switch {
	case !st.HasOpening:
		return m.o.errorf(m.line, ":60F:", "statement %s of line %d has no opening balance :60F: or :60M:",
			reconcile.Quote(st.ref), st.Line)
	case !st.HasClosing:
		return m.o.errorf(m.line, ":62F:", "statement %s of line %d ends without its closing balance :62F: or :62M: (is the file cut short?)",
			reconcile.Quote(st.ref), st.Line)
	}
	if err := st.Balanced(); err != nil {
		return m.o.wrap(st.closingLine, mtName(st.closingTag), err)
	}
	m.stmts = append(m.stmts, st.BankStatement)
	m.st = nil
	return nil
}

// emit counts the entry read into its statement and hands it on.
func (m *mtReader) emit() error {
	e := m.pending
	m.pending = nil
	if !m.st.Count(*e) {
		what := "debits"
		if e.Credit {
			what = "credits"
		}
		return m.o.errorf(e.Line, ":61:", "the statement's %s run past the largest amount the job takes", what)
	}
	return m.fn(*e)
}

// mtBalance is a balance field read: :60F:, :62F: and their M twins.
type mtBalance struct {
	currency string
	amount   int64 // signed
}

// balance reads a balance: C or D, the date YYMMDD, the currency and
// the amount (C140219EUR662,23).
func (m *mtReader) balance(f *mtField, v string) (mtBalance, error) {
	bad := func(format string, args ...any) (mtBalance, error) {
		return mtBalance{}, m.o.errorf(f.line, mtName(f.tag), format, args...)
	}
	if len(v) < 11 {
		return bad("balance %s is not a mark C or D, a date, a currency and an amount", reconcile.Quote(v))
	}
	if v[0] != 'C' && v[0] != 'D' {
		return bad("debit/credit mark %s is not C or D", reconcile.Quote(v[:1]))
	}
	if _, err := mtDate(v[1:7], "date"); err != nil {
		return mtBalance{}, m.o.wrap(f.line, mtName(f.tag), err)
	}
	b := mtBalance{currency: v[7:10]}
	if _, ok := reconcile.CurrencyDigits(b.currency); !ok {
		return mtBalance{}, m.o.wrap(f.line, mtName(f.tag), fmt.Errorf("%w %s", reconcile.ErrUnknownCurrency, reconcile.Quote(b.currency)))
	}
	amount, n, err := mtAmount(v[10:], b.currency)
	if err == nil && n < len(v)-10 {
		err = fmt.Errorf("text %s after the amount", reconcile.Quote(v[10+n:]))
	}
	if err != nil {
		return mtBalance{}, m.o.wrap(f.line, mtName(f.tag), err)
	}
	b.amount = amount
	if v[0] == 'D' {
		b.amount = -amount
	}
	return b, nil
}

// mtAmount reads the amount s begins with, digits with a decimal comma
// (1234,56 and 1234, alike), in minor units of currency, and the bytes
// it takes.
func mtAmount(s, currency string) (int64, int, error) {
	i := mtDigitsAt(s, 0)
	whole, frac := s[:i], ""
	if i < len(s) && s[i] == ',' {
		j := mtDigitsAt(s, i+1)
		frac, i = s[i+1:j], j
	}
	if whole == "" || i < len(s) && (s[i] == '.' || s[i] == ',') {
		j := i
		for j < len(s) && (mtDigit(s[j]) || s[j] == '.' || s[j] == ',') {
			j++
		}
		return 0, 0, fmt.Errorf("amount %s is not digits with a decimal comma (1234,56, without thousands separators): %w",
			reconcile.Quote(s[:j]), reconcile.ErrBadAmount)
	}
	dec := whole
	if frac != "" {
		dec += "." + frac
	}
	v, err := reconcile.ParseAmount(dec, currency)
	switch {
	case errors.Is(err, reconcile.ErrAmountPrecision):
		return 0, 0, fmt.Errorf("amount %s has more decimals than %s has: %w", reconcile.Quote(s[:i]), currency, reconcile.ErrAmountPrecision)
	case errors.Is(err, reconcile.ErrAmountRange):
		return 0, 0, fmt.Errorf("amount %s is past the largest the job takes: %w", reconcile.Quote(s[:i]), reconcile.ErrAmountRange)
	case err != nil:
		return 0, 0, fmt.Errorf("amount %s: %w", reconcile.Quote(s[:i]), err)
	}
	return v, i, nil
}

// mtDigitsAt is the end of the run of digits of s from i.
func mtDigitsAt(s string, i int) int {
	for i < len(s) && mtDigit(s[i]) {
		i++
	}
	return i
}

func mtDigit(c byte) bool { return c >= '0' && c <= '9' }

// mtDate reads a date YYMMDD, of the years 2000 to 2099, one that
// exists; what names it in errors.
func mtDate(s, what string) (time.Time, error) {
	if len(s) != 6 || mtDigitsAt(s, 0) != 6 {
		return time.Time{}, fmt.Errorf("%s %s is not a date YYMMDD", what, reconcile.Quote(s))
	}
	t, ok := mtDay(2000+mtNum(s[0:2]), mtNum(s[2:4]), mtNum(s[4:6]))
	if !ok {
		return time.Time{}, fmt.Errorf("%s %s does not exist", what, reconcile.Quote(s))
	}
	return t, nil
}

// mtDay is the date y-mo-d, and whether it exists.
func mtDay(y, mo, d int) (time.Time, bool) {
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	return t, mo >= 1 && mo <= 12 && d >= 1 && t.Day() == d && int(t.Month()) == mo
}

// mtNum is the value of two digits.
func mtNum(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// statementLine reads a :61: into the entry it describes.
func (m *mtReader) statementLine(f *mtField) (*reconcile.BankEntry, error) {
	s, st := string(f.text), m.st
	bad := func(format string, args ...any) (*reconcile.BankEntry, error) {
		return nil, m.o.errorf(f.line, ":61:", format, args...)
	}
	value, booked, i, err := mtEntryDates(s)
	if err != nil {
		return nil, m.o.wrap(f.line, ":61:", err)
	}
	e := &reconcile.BankEntry{Account: st.Account, Statement: st.ID, Currency: st.Currency, Status: "BOOK",
		ValueOn: value, BookedOn: booked, Line: f.line}
	credit, reversal, n := mtMark(s[i:])
	if n == 0 {
		mark := s[i:min(i+1, len(s))]
		if mark == "R" {
			mark = s[i:min(i+2, len(s))]
		}
		return bad("debit/credit mark %s is not C, D, RC or RD", reconcile.Quote(mark))
	}
	e.Credit, e.Reversal = credit, reversal
	i += n
	if i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		if s[i] != st.Currency[2] {
			return bad("funds code %c is not the third letter of the statement's currency %s: the entry is in another currency", s[i], st.Currency)
		}
		i++
	}
	e.Amount, n, err = mtAmount(s[i:], st.Currency)
	if err != nil {
		return nil, m.o.wrap(f.line, ":61:", err)
	}
	i += n
	if len(s) < i+4 || !mtTypeCode(s[i:i+4]) {
		return bad("transaction type %s is not a letter and three letters or digits (NTRF, N062)", reconcile.Quote(s[i:min(i+4, len(s))]))
	}
	e.TypeCode = s[i : i+4]
	i += 4
	// The references end with the line the type is on; the lines after
	// it are the supplementary details.
	end := len(s)
	for _, b := range f.breaks {
		if b >= i {
			end = b
			break
		}
	}
	cust, bank, _ := strings.Cut(s[i:end], "//")
	e.EndToEndID = mtCustomerRef(strings.TrimSpace(cust))
	e.BankRef = mtNoRef(strings.TrimSpace(bank))
	e.Remittance = mtSqueeze(s[end:])
	return e, nil
}

// mtEntryDates reads the value date and the entry date a :61: begins
// with, and the bytes they take. Without an entry date the entry is
// booked on its value date.
func mtEntryDates(s string) (value, booked time.Time, n int, err error) {
	value, err = mtDate(s[:min(6, len(s))], "value date")
	if err != nil {
		return value, booked, 0, err
	}
	booked, n = value, 6
	switch rest := s[6:]; {
	case len(rest) >= 4 && mtDigitsAt(rest[:4], 0) == 4:
		var ok bool
		if booked, ok = mtEntryDate(value, rest[:4]); !ok {
			return value, booked, 0, fmt.Errorf("entry date %s does not exist", reconcile.Quote(rest[:4]))
		}
		n = 10
	case strings.HasPrefix(rest, "    "):
		n = 10
	}
	return value, booked, n, nil
}

// mtEntryDate is the entry date MMDD of an entry of value date value:
// of its year, or of the year before or after when the two are on
// either side of a year end.
func mtEntryDate(value time.Time, mmdd string) (time.Time, bool) {
	y, mo, d := value.Year(), mtNum(mmdd[:2]), mtNum(mmdd[2:])
	switch vm := int(value.Month()); {
	case mo-vm > 6:
		y--
	case vm-mo > 6:
		y++
	}
	return mtDay(y, mo, d)
}

// mtMark reads the debit/credit mark s begins with: what the entry did
// to the balance, whether it reverses an earlier one, and its length.
func mtMark(s string) (credit, reversal bool, n int) {
	switch {
	case strings.HasPrefix(s, "RC"):
		return false, true, 2
	case strings.HasPrefix(s, "RD"):
		return true, true, 2
	case strings.HasPrefix(s, "C"):
		return true, false, 1
	case strings.HasPrefix(s, "D"):
		return false, false, 1
	}
	return false, false, 0
}

// mtTypeCode reports whether t is a transaction type: N, F or S and
// three letters or digits, as banks write them.
func mtTypeCode(t string) bool {
	if t[0] < 'A' || t[0] > 'Z' {
		return false
	}
	for i := 1; i < 4; i++ {
		if c := t[i]; !(c >= 'A' && c <= 'Z' || mtDigit(c)) {
			return false
		}
	}
	return true
}

// mtCustomerRef is the customer reference of a :61:, empty where it
// only says there is none or where in :86: it is.
func mtCustomerRef(c string) string {
	switch c {
	case "NONREF", "EREF", "PREF", "MARF", "IREF", "KREF", "EREF+", "KREF+":
		return ""
	}
	return c
}

// info reads a :86: into the entry before it.
func (m *mtReader) info(e *reconcile.BankEntry, f *mtField) error {
	in := mtParseInfo(string(f.text))
	if in.eref != "" {
		e.EndToEndID = in.eref
	}
	e.Counterparty = in.name
	e.Remittance = mtJoin(e.Remittance, in.remittance)
	for _, v := range []struct {
		what, s string
		max     int
	}{{"end-to-end reference", e.EndToEndID, maxText}, {"name", e.Counterparty, maxText}, {"remittance text", e.Remittance, maxRemittance}} {
		if len(v.s) > v.max {
			return m.o.errorf(f.line, ":86:", "%s runs past %d bytes", v.what, v.max)
		}
	}
	return nil
}

// mtInfo is what a :86: says of its entry.
type mtInfo struct {
	eref, name, remittance string
}

// mtParseInfo reads a :86: in its dialect.
func mtParseInfo(s string) mtInfo {
	if len(s) >= 6 && mtDigitsAt(s[:3], 0) == 3 && (s[3] == '?' || s[3] == '>') && mtDigitsAt(s[4:6], 0) == 2 {
		return mtGermanInfo(s)
	}
	if _, ok := mtCodeAt(s, 0); ok {
		return mtSlashInfo(s)
	}
	return mtInfo{remittance: mtSqueeze(s)}
}

// mtGermanInfo reads the German ?NN form: a business transaction code,
// then subfields, each ?, two digits and text.
func mtGermanInfo(s string) mtInfo {
	sep := s[3]
	var purpose, name mtPieces
	for rest := s[3:]; rest != ""; {
		code, body := rest[1:3], rest[3:]
		n := mtNextSubfield(body, sep)
		switch v := body[:n]; {
		case code >= "20" && code <= "29", code >= "60" && code <= "63":
			purpose.add(v)
		case code == "32", code == "33":
			name.add(v)
		}
		rest = body[n:]
	}
	p := purpose.b.String()
	return mtInfo{eref: mtSEPAValue(p, "EREF+"), name: mtSqueeze(name.b.String()), remittance: mtSqueeze(p)}
}

// mtPieces joins the subfields of one text of a German :86:. A subfield
// is at most 27 characters: one that long was cut there, in a word or a
// reference, and the next goes on without a separator; a shorter one
// ended where its text did, and a space follows it.
type mtPieces struct {
	b   strings.Builder
	cut bool // the last subfield was cut
}

func (p *mtPieces) add(v string) {
	if p.b.Len() > 0 && !p.cut {
		p.b.WriteByte(' ')
	}
	p.b.WriteString(v)
	p.cut = utf8.RuneCountInString(v) >= 27
}

// mtNextSubfield is where the next ?NN begins in s, or len(s).
func mtNextSubfield(s string, sep byte) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == sep && mtDigit(s[i+1]) && mtDigit(s[i+2]) {
			return i
		}
	}
	return len(s)
}

// mtSEPAKeys begin the parts of a German purpose text (EREF+ the
// end-to-end reference, SVWZ+ the remittance text, ...).
var mtSEPAKeys = []string{"EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "SVWZ+", "ABWA+", "ABWE+",
	"IBAN+", "BIC+", "PURP+", "MDAT+", "SQTP+", "ORCR+", "ORMR+", "DDAT+", "COAM+", "OAMT+"}

// mtSEPAValue is the value of key in a purpose text: up to the next
// key, or the end.
func mtSEPAValue(p, key string) string {
	i := strings.Index(p, key)
	if i < 0 {
		return ""
	}
	v := p[i+len(key):]
	end := len(v)
	for _, k := range mtSEPAKeys {
		if j := strings.Index(v[:end], k); j >= 0 {
			end = j
		}
	}
	return mtNoRef(strings.TrimSpace(v[:end]))
}

// mtNoRef is a reference, empty where it says there is none.
func mtNoRef(s string) string {
	if s == "NOTPROVIDED" || s == "NONREF" {
		return ""
	}
	return s
}

// mtSubfieldCodes are the codes of the /CODE/ form: the SEPA-era ones of
// ING, Rabobank and ABN AMRO.
var mtSubfieldCodes = map[string]bool{
	"EREF": true, "KREF": true, "MREF": true, "PREF": true, "IREF": true, "CREF": true, "MARF": true,
	"CSID": true, "RTRN": true, "REMI": true, "NAME": true, "ADDR": true, "IBAN": true, "BIC": true,
	"ORDP": true, "BENM": true, "CNTP": true, "ULTB": true, "ULTC": true, "ULTD": true, "PURP": true,
	"BUSP": true, "ISDT": true, "EXCH": true, "CHGS": true, "OCMT": true, "TRTP": true, "SUM": true,
}

// mtCodeAt reads a code /CODE/ at s[i].
func mtCodeAt(s string, i int) (string, bool) {
	if i >= len(s) || s[i] != '/' {
		return "", false
	}
	for n := 3; n <= 4; n++ {
		if j := i + 1 + n; j < len(s) && s[j] == '/' && mtSubfieldCodes[s[i+1:j]] {
			return s[i+1 : j], true
		}
	}
	return "", false
}

// mtSlashInfo reads the /CODE/ form: each code's value runs to the next
// code. ING ends a value with a slash before the next code's
// (/EREF/x//CNTP/), ABN AMRO does not (/NAME/x/REMI/): both read alike.
func mtSlashInfo(s string) mtInfo {
	var in mtInfo
	var party string
	var remi []string
	for i := 0; i < len(s); {
		code, _ := mtCodeAt(s, i)
		start := i + len(code) + 2
		// The next code may begin at the slash that closes this one.
		next := len(s)
		for k := start - 1; k < len(s); k++ {
			if _, ok := mtCodeAt(s, k); ok {
				next = k
				break
			}
		}
		v := ""
		if next > start {
			v = strings.TrimSpace(strings.TrimRight(s[start:next], "/"))
		}
		switch code {
		case "EREF":
			if in.eref == "" {
				in.eref = mtNoRef(v)
			}
		case "NAME":
			if in.name == "" {
				in.name = v
			}
		case "CNTP", "BENM", "ORDP":
			// account/BIC/name/place
			if parts := strings.Split(v, "/"); len(parts) >= 3 && party == "" {
				party = parts[2]
			}
		case "IBAN", "BIC", "ADDR", "ISDT":
		case "REMI":
			remi = append(remi, mtRemi(v))
		default:
			remi = append(remi, v)
		}
		i = next
	}
	if in.name == "" {
		in.name = party
	}
	in.name = mtSqueeze(in.name)
	in.remittance = mtSqueeze(strings.Join(remi, " "))
	return in
}

// mtRemi is the text of a /REMI/, without ING's USTD// (unstructured)
// or STRD/CUR/ (a structured reference: the reference follows).
func mtRemi(v string) string {
	if v == "USTD" || v == "STRD" {
		return ""
	}
	if t, ok := strings.CutPrefix(v, "USTD/"); ok {
		return strings.TrimLeft(t, "/")
	}
	if t, ok := strings.CutPrefix(v, "STRD/"); ok {
		_, ref, _ := strings.Cut(t, "/")
		return ref
	}
	return v
}

// mtSqueeze trims s and makes each run of spaces in it one.
func mtSqueeze(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] == ' ' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mtJoin joins two texts with a space, either may be empty.
func mtJoin(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}
