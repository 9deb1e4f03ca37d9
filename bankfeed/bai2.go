package bankfeed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"reconcile"
)

// readBAI2 reads a BAI2 file (BAI Cash Management Balance Reporting
// Specifications, version 2) as US and Canadian banks send it: an 01 file
// header, groups (02 … 98) of one originator and as-of date, and in each
// group accounts (03 … 49) with their balances, summaries and
// transactions (16). Each account of a group is one statement, each 16
// one entry.
//
// What the files look like, and what the reader makes of them:
//   - One record to a physical line, ending in LF or CRLF. A record goes
//     on in 88 lines: a 03's fields where its line stopped (even between
//     a type code and its amount), a 16's references, and a 16's text.
//     A '/' with more of the line after it (two records on a line) is
//     refused, but in a 16's references, where Goldman Sachs writes
//     customer references such as "AB/GS/…/…".
//   - A record ends at '/', or at the end of its line: banks leave the
//     slash off the 99 (SVB) and off text (Goldman Sachs, NatWest, as the
//     standard asks). SVB ends 03 and 88 lines with a comma before the
//     slash (",,,/"): an empty field ending a line where a type code would
//     begin is no field. Blanks that pad a line to a fixed length are
//     dropped; a file ends with nothing but empty lines after its 99.
//   - The text of a 16 runs to the end of its line, commas and slashes
//     included, and on through its 88s; a slash ending the line is no
//     text (Canadian banks write "RETURNED CHEQUE     /"). The pieces are
//     joined by one space, but after a line that fills the physical
//     record length (the 01's, or 80 where it gives none) to its last
//     column: the bank cut the text there (NatWest: "…CLIE" / "NT…"),
//     and the pieces are joined as they are.
//   - Amounts are whole numbers of the currency's minor units (12345 USD
//     is 123.45); a decimal point is refused. A 16 amount is unsigned,
//     as the 16 record's description says (its Data Elements allow a
//     "+", which no file looked at writes). The currency is the 03's,
//     else the 02's, else USD. An empty control total is 0 (a real
//     account with no amounts ends "49,,2/").
//   - Dates are YYMMDD, 69–99 the 1900s (Go's rule); times HHMM up to
//     2400, 9999 (end of day), and NatWest's HH:MM:SS.
//   - Direction by type code (Appendix A and the customized ranges the
//     standard reserves): credit 100–399, 720–728, 920–959; debit
//     400–699, 760, 960–999. 890 is non-monetary: an INFO entry, neither.
//     Any other code in a 16 (status codes, 700–719, 900–919, codes never
//     assigned) is refused naming it.
//   - Counterparty is the ACH originator of text such as "ORIG CO
//     NAME:STRIPE ORIG ID:… CO ENTRY DESCR:…", up to the next ACH key
//     (JPMorgan's and other banks' ACH text), at most 35 characters.
//   - BookedOn is the group's as-of date, ValueOn a funds type V's value
//     date as written (the standard moves an earlier one to the as-of
//     date for availability, which the job does not compute), else the
//     as-of date.
//   - Statement ID: file id/as-of date/account; where one file gives the
//     same account on the same as-of date again (a Canadian bank repeats
//     it in a group, once per value date), "/2", "/3" follow.
//   - Control totals, each refusing the file (reconcile.ErrControlTotal):
//     the 49 is the sum of the amounts of the account's 03 and 16 records
//     and their 88s, as written (not funds type distributions), and the
//     count of its records 03 to 49; the 98 the sum of its 49 totals, its
//     03s and its records 02 to 98; the 99 the sum of the 98 totals, the
//     02s and all records. A funds type S or D adds up to its amount.
//   - Opening (010) + credits − debits = closing (015) holds in files
//     that carry a day's whole detail, not in intraday reports nor where
//     a bank details an account in part. The 03 says which: where its
//     total credits (100) and debits (400) are what its 16s add up to,
//     the balances are checked and set on the statement; elsewhere
//     neither is set.
//   - Group status 2 (deletion) and 4 (test only) are refused: neither
//     is a statement to book.
func readBAI2(r io.Reader, o Options, fn func(reconcile.BankEntry) error) ([]reconcile.BankStatement, error) {
	b := &bai2Reader{o: o, fn: fn, lines: newBAI2Lines(r, o), ids: map[string]int{}}
	if err := b.read(); err != nil {
		return nil, err
	}
	return b.stmts, nil
}

const (
	// bai2RecordLength is the physical record length of a file whose 01
	// gives none, for where text is cut: NatWest's 80 columns.
	bai2RecordLength = 80
	// bai2MaxRecord bounds a record with its 88s, and so a line.
	bai2MaxRecord = maxRemittance
	// bai2MaxID bounds a sender, a file id, an account number: a
	// statement's id made of them stays within maxText.
	bai2MaxID = 1 << 10
)

// bai2Reader is the state of one read: where in the file's envelopes it
// is, and what the open envelopes have added up to so far.
type bai2Reader struct {
	o     Options
	fn    func(reconcile.BankEntry) error
	lines *bai2Lines

	begun, ended bool // the 01 and the 99 read
	fileID       string
	recLen       int   // physical record length
	total        int64 // the 98 totals so far
	groups       int
	records      int // physical records from the 01 on
	group        *bai2Group
	acct         *bai2Account
	stmts        []reconcile.BankStatement
	ids          map[string]int // statement ids given, for repeats
}

// bai2Group is an open group, 02 to 98.
type bai2Group struct {
	line     int
	asOf     time.Time
	currency string
	total    int64 // its 49 totals
	accounts int
	records  int
}

// bai2Account is an open account, 03 to 49.
type bai2Account struct {
	stmt    reconcile.BankStatement
	total   int64 // the amounts of its records
	records int
	// The 03's opening and closing ledger (010, 015), total credits (100)
	// and total debits (400).
	opening, closing, credits, debits bai2Summary
}

type bai2Summary struct {
	v    int64
	line int
	set  bool
}

// read reads the file a logical record at a time: a record is whole when
// the next line is not an 88.
func (b *bai2Reader) read() error {
	var rec *bai2Record
	for {
		s, ok := b.lines.next()
		if !ok {
			break
		}
		line := b.lines.line
		if strings.TrimLeft(s, " ") == "" {
			if err := b.blank(&rec, line); err != nil {
				return err
			}
			continue
		}
		code, p, err := b.part(s, line)
		if err != nil {
			return err
		}
		if code == "88" {
			if rec == nil {
				return b.o.errorf(line, "88", "an 88 continuation with no record before it to continue")
			}
			if rec.size += len(s); rec.size > bai2MaxRecord {
				return b.o.errorf(rec.line, rec.code, "the %s record with its 88 continuations is longer than %d bytes (to line %d)", rec.code, bai2MaxRecord, line)
			}
			rec.parts = append(rec.parts, p)
			continue
		}
		if rec != nil {
			if err := b.record(rec); err != nil {
				return err
			}
		}
		rec = &bai2Record{code: code, line: line, parts: []bai2Part{p}, size: len(s)}
	}
	if b.lines.err != nil {
		return b.lines.err
	}
	if rec != nil {
		if err := b.record(rec); err != nil {
			return err
		}
	}
	return b.complete()
}

// blank takes an empty line (or one of blanks): only after the 99, where
// a fixed-length file may pad its last block.
func (b *bai2Reader) blank(rec **bai2Record, line int) error {
	if *rec != nil && (*rec).code == "99" {
		if err := b.record(*rec); err != nil {
			return err
		}
		*rec = nil
	}
	if !b.ended {
		return b.o.errorf(line, "", "an empty line before the 99 file trailer")
	}
	return nil
}

// complete refuses a file that ends before its 99: a truncated download.
func (b *bai2Reader) complete() error {
	if b.ended {
		return nil
	}
	last := b.lines.line
	var open string
	switch {
	case !b.begun:
		return b.o.errorf(0, "01", "the file is empty: no 01 file header")
	case b.acct != nil:
		open = fmt.Sprintf(", inside the account of line %d (no 49)", b.acct.stmt.Line)
	case b.group != nil:
		open = fmt.Sprintf(", inside the group of line %d (no 98)", b.group.line)
	}
	return b.o.wrap(last+1, "99", fmt.Errorf("%w: the file ends after line %d%s without its 99 file trailer (truncated download?)",
		reconcile.ErrControlTotal, last, open))
}

// record checks where a record stands among the envelopes, counts it
// (an 88 is a record of its own) and reads it.
func (b *bai2Reader) record(rec *bai2Record) error {
	switch {
	case b.ended:
		return b.o.errorf(rec.line, rec.code, "a %s record after the 99 file trailer", rec.code)
	case !b.begun && rec.code != "01":
		return b.o.errorf(rec.line, rec.code, "the file begins with a %s record, not an 01 file header", rec.code)
	}
	n := len(rec.parts)
	b.records += n
	if b.group != nil {
		b.group.records += n
	}
	if b.acct != nil {
		b.acct.records += n
	}
	f := &bai2Fields{parts: rec.parts, line: rec.line}
	switch rec.code {
	case "01":
		return b.fileHeader(rec, f)
	case "02":
		return b.groupHeader(rec, f)
	case "03":
		return b.accountHeader(rec, f)
	case "16":
		return b.detail(rec, f)
	case "49":
		return b.accountTrailer(f)
	case "98":
		return b.groupTrailer(f)
	}
	return b.fileTrailer(f)
}

func (b *bai2Reader) fileHeader(rec *bai2Record, f *bai2Fields) error {
	if b.begun {
		return b.o.errorf(rec.line, "01", "a second 01 file header: one file to a file")
	}
	b.begun = true
	for _, name := range []string{"01 sender", "01 receiver"} {
		if _, err := b.ident(f, name, true); err != nil {
			return err
		}
	}
	if _, err := b.date(f, "01 creation date"); err != nil {
		return err
	}
	if err := b.clock(f, "01 creation time", false); err != nil {
		return err
	}
	id, err := b.ident(f, "01 file id", true)
	if err != nil {
		return err
	}
	b.fileID = id
	n, given, err := b.number(f, "01 physical record length", false)
	if err != nil {
		return err
	}
	b.recLen = bai2RecordLength
	if given {
		b.recLen = n
	}
	if _, _, err := b.number(f, "01 block size", false); err != nil {
		return err
	}
	v, err := b.field(f, "01 version")
	if err != nil {
		return err
	}
	if v != "2" {
		return b.o.errorf(f.line, "01 version", "version %s: this reads BAI2, version 2", reconcile.Quote(v))
	}
	return b.end(f, "01")
}

func (b *bai2Reader) groupHeader(rec *bai2Record, f *bai2Fields) error {
	if b.group != nil {
		return b.o.errorf(rec.line, "02", "an 02 group header before the 98 trailer of the group of line %d", b.group.line)
	}
	g := &bai2Group{line: rec.line, records: len(rec.parts)}
	if _, err := b.ident(f, "02 ultimate receiver", false); err != nil {
		return err
	}
	if _, err := b.ident(f, "02 originator", true); err != nil {
		return err
	}
	if err := b.groupStatus(f); err != nil {
		return err
	}
	var err error
	if g.asOf, err = b.date(f, "02 as-of date"); err != nil {
		return err
	}
	if err := b.clock(f, "02 as-of time", true); err != nil {
		return err
	}
	if g.currency, err = b.currency(f, "02 currency", "USD"); err != nil {
		return err
	}
	m, err := b.field(f, "02 as-of date modifier")
	if err != nil {
		return err
	}
	if m != "" && (len(m) != 1 || m[0] < '1' || m[0] > '4') {
		return b.o.errorf(f.line, "02 as-of date modifier", "%s is not an as-of date modifier (1 to 4)", reconcile.Quote(m))
	}
	b.group = g
	b.groups++
	return b.end(f, "02")
}

// groupStatus takes updates (1) and corrections (3), the groups that
// report an account's day.
func (b *bai2Reader) groupStatus(f *bai2Fields) error {
	s, err := b.field(f, "02 group status")
	if err != nil {
		return err
	}
	switch s {
	case "1", "3":
		return nil
	case "2":
		return b.o.errorf(f.line, "02 group status", "group status 2 (deletion) takes back a group sent before: there is no statement to book")
	case "4":
		return b.o.errorf(f.line, "02 group status", "group status 4 (test only): the group is not a statement to book")
	}
	return b.o.errorf(f.line, "02 group status", "%s is not a group status (1 update, 2 deletion, 3 correction, 4 test)", reconcile.Quote(s))
}

func (b *bai2Reader) accountHeader(rec *bai2Record, f *bai2Fields) error {
	switch {
	case b.group == nil:
		return b.o.errorf(rec.line, "03", "an 03 account record outside a group: no 02 group header before it")
	case b.acct != nil:
		return b.o.errorf(rec.line, "03", "an 03 account record before the 49 trailer of the account of line %d", b.acct.stmt.Line)
	}
	number, err := b.ident(f, "03 account number", true)
	if err != nil {
		return err
	}
	cur, err := b.currency(f, "03 currency", b.group.currency)
	if err != nil {
		return err
	}
	a := &bai2Account{records: len(rec.parts)}
	a.stmt = reconcile.BankStatement{ID: b.statementID(number), Account: number, Currency: cur, Line: rec.line}
	b.acct = a
	b.group.accounts++
	return b.summaries(f, a)
}

// statementID is the file id, the as-of date and the account number,
// numbered from the second time they come in the file.
func (b *bai2Reader) statementID(account string) string {
	id := b.fileID + "/" + b.group.asOf.Format(time.DateOnly) + "/" + account
	b.ids[id]++
	if n := b.ids[id]; n > 1 {
		id += "/" + strconv.Itoa(n)
	}
	return id
}

// summaries reads the 03's repeating type code, amount, item count and
// funds type, keeping the balances and totals the checks need.
func (b *bai2Reader) summaries(f *bai2Fields, a *bai2Account) error {
	for f.left() {
		code, err := b.field(f, "03 type code")
		if err != nil {
			return err
		}
		if code == "" {
			if f.lineEnded() {
				continue // a comma before the '/': SVB ends 03 and 88 lines ",,,/"
			}
			if err := b.noSummary(f); err != nil {
				return err
			}
			continue
		}
		line := f.line
		if !bai2IsTypeCode(code) {
			return b.o.errorf(line, "03 type code", "%s is not a type code (three digits)", reconcile.Quote(code))
		}
		v, given, err := b.summary(f, "03 "+code)
		if err != nil {
			return err
		}
		if !given {
			continue
		}
		if err := b.add(&a.total, v, f.line, "03 "+code+" amount"); err != nil {
			return err
		}
		if err := a.keep(code, v, line, b.o); err != nil {
			return err
		}
	}
	return nil
}

// noSummary reads the rest of a summary whose type code is empty: Goldman
// Sachs writes "USD,,,,,060" for none; an amount without a code is a
// broken file.
func (b *bai2Reader) noSummary(f *bai2Fields) error {
	for _, name := range []string{"03 amount", "03 item count", "03 funds type"} {
		s, err := b.field(f, name)
		if err != nil {
			return err
		}
		if s != "" {
			return b.o.errorf(f.line, name, "%s with no type code before it", reconcile.Quote(s))
		}
	}
	return nil
}

// summary reads one summary's amount, item count and funds type; given is
// false for an empty amount.
func (b *bai2Reader) summary(f *bai2Fields, name string) (v int64, given bool, err error) {
	s, err := b.field(f, name+" amount")
	if err != nil {
		return 0, false, err
	}
	line := f.line
	if s != "" {
		if v, err = b.amount(s, line, name+" amount", true); err != nil {
			return 0, false, err
		}
	}
	if _, _, err := b.number(f, name+" item count", false); err != nil {
		return 0, false, err
	}
	fu, err := b.funds(f, name, true)
	if err != nil {
		return 0, false, err
	}
	if s != "" {
		err = b.distributed(fu, v, f.line, name)
	}
	return v, s != "", err
}

// keep keeps the summaries the balance check reads; a second one of them
// is refused, as the standard allows one amount to a type code.
func (a *bai2Account) keep(code string, v int64, line int, o Options) error {
	var s *bai2Summary
	switch code {
	case "010":
		s = &a.opening
	case "015":
		s = &a.closing
	case "100":
		s = &a.credits
	case "400":
		s = &a.debits
	default:
		return nil
	}
	if s.set {
		return o.errorf(line, "03 "+code+" amount", "a second %s in the account (the first on line %d)", code, s.line)
	}
	*s = bai2Summary{v: v, line: line, set: true}
	return nil
}

func (b *bai2Reader) detail(rec *bai2Record, f *bai2Fields) error {
	a := b.acct
	if a == nil {
		return b.o.errorf(rec.line, "16", "a 16 transaction detail outside an account: no 03 account record before it")
	}
	e, err := b.entry(rec, f, a)
	if err != nil {
		return err
	}
	if err := b.add(&a.total, e.Amount, rec.line, "16 amount"); err != nil {
		return err
	}
	if !a.stmt.Count(e) {
		return b.o.wrap(rec.line, "16 amount", fmt.Errorf("%w: the account's entries add up past the largest amount there is",
			reconcile.ErrAmountRange))
	}
	return b.fn(e)
}

// entry reads a 16: type code, amount, funds type, bank and customer
// references, text.
func (b *bai2Reader) entry(rec *bai2Record, f *bai2Fields, a *bai2Account) (reconcile.BankEntry, error) {
	e := reconcile.BankEntry{Account: a.stmt.Account, Statement: a.stmt.ID, Currency: a.stmt.Currency,
		Status: "BOOK", BookedOn: b.group.asOf, ValueOn: b.group.asOf, Line: rec.line}
	code, dir, err := b.detailType(f)
	if err != nil {
		return e, err
	}
	e.TypeCode, e.Credit = code, dir == bai2Credit
	if dir == bai2Info {
		e.Status = "INFO"
	}
	s, err := b.field(f, "16 amount")
	if err != nil {
		return e, err
	}
	switch {
	case s != "":
		if e.Amount, err = b.amount(s, f.line, "16 amount", false); err != nil {
			return e, err
		}
	case dir != bai2Info:
		return e, b.o.errorf(f.line, "16 amount", "empty: only an 890 (non-monetary information) has no amount")
	}
	fu, err := b.funds(f, "16", false)
	if err != nil {
		return e, err
	}
	if s != "" {
		if err := b.distributed(fu, e.Amount, f.line, "16"); err != nil {
			return e, err
		}
	}
	if !fu.value.IsZero() {
		e.ValueOn = fu.value
	}
	if e.BankRef, err = b.ref(f, "16 bank reference"); err != nil {
		return e, err
	}
	if e.EndToEndID, err = b.ref(f, "16 customer reference"); err != nil {
		return e, err
	}
	e.Remittance = f.text(b.recLen)
	if fault := checkText(e.Remittance, maxRemittance); fault != "" {
		return e, b.o.errorf(rec.faultLine(), "16 text", "%s", fault)
	}
	e.Counterparty = bai2Originator(e.Remittance)
	return e, nil
}

// detailType reads a 16's type code and what it does to the balance.
func (b *bai2Reader) detailType(f *bai2Fields) (string, bai2Direction, error) {
	code, err := b.field(f, "16 type code")
	if err != nil {
		return "", 0, err
	}
	if !bai2IsTypeCode(code) {
		return "", 0, b.o.errorf(f.line, "16 type code", "%s is not a type code (three digits)", reconcile.Quote(code))
	}
	dir, why := bai2TypeDirection(code)
	if dir == bai2Unknown {
		return "", 0, b.o.errorf(f.line, "16 type code", "type code %s %s: whether the entry is a credit or a debit is unknown", code, why)
	}
	return code, dir, nil
}

func (b *bai2Reader) accountTrailer(f *bai2Fields) error {
	a := b.acct
	if a == nil {
		return b.o.errorf(f.line, "49", "a 49 account trailer with no account open: no 03 before it")
	}
	total, err := b.controlTotal(f, "49 account control total")
	if err != nil {
		return err
	}
	if total != a.total {
		return b.mismatch(f.line, "49 account control total", "the amounts of account %s (its 03, 16 and 88 records) add up to %d, the 49 says %d",
			reconcile.Quote(a.stmt.Account), a.total, total)
	}
	if err := b.count(f, "49 number of records", a.records, "records from its 03 to this 49, 88s included"); err != nil {
		return err
	}
	if err := b.end(f, "49"); err != nil {
		return err
	}
	if err := b.balances(a); err != nil {
		return err
	}
	if err := b.add(&b.group.total, total, f.line, "49 account control total"); err != nil {
		return err
	}
	b.stmts = append(b.stmts, a.stmt)
	b.acct = nil
	return nil
}

// balances checks opening + credits − debits = closing where the 03 says
// its detail is whole: its 100 and 400 are what its 16s add up to.
func (b *bai2Reader) balances(a *bai2Account) error {
	s := &a.stmt
	if !a.opening.set || !a.closing.set || !a.credits.set || !a.debits.set ||
		a.credits.v != s.Credits || a.debits.v != s.Debits {
		return nil
	}
	s.Opening, s.Closing, s.HasOpening, s.HasClosing = a.opening.v, a.closing.v, true, true
	if err := s.Balanced(); err != nil {
		return b.o.wrap(a.closing.line, "03 015 amount", fmt.Errorf("account %s: %w", reconcile.Quote(s.Account), err))
	}
	return nil
}

func (b *bai2Reader) groupTrailer(f *bai2Fields) error {
	g := b.group
	switch {
	case g == nil:
		return b.o.errorf(f.line, "98", "a 98 group trailer with no group open: no 02 before it")
	case b.acct != nil:
		return b.o.errorf(f.line, "98", "a 98 group trailer before the 49 trailer of the account of line %d", b.acct.stmt.Line)
	}
	total, err := b.controlTotal(f, "98 group control total")
	if err != nil {
		return err
	}
	if total != g.total {
		return b.mismatch(f.line, "98 group control total", "the 49 totals of the group add up to %d, the 98 says %d", g.total, total)
	}
	if err := b.count(f, "98 number of accounts", g.accounts, "accounts (03 records)"); err != nil {
		return err
	}
	if err := b.count(f, "98 number of records", g.records, "records from its 02 to this 98, 88s included"); err != nil {
		return err
	}
	if err := b.end(f, "98"); err != nil {
		return err
	}
	if err := b.add(&b.total, total, f.line, "98 group control total"); err != nil {
		return err
	}
	b.group = nil
	return nil
}

func (b *bai2Reader) fileTrailer(f *bai2Fields) error {
	switch {
	case b.acct != nil:
		return b.o.errorf(f.line, "99", "the 99 file trailer before the 49 trailer of the account of line %d", b.acct.stmt.Line)
	case b.group != nil:
		return b.o.errorf(f.line, "99", "the 99 file trailer before the 98 trailer of the group of line %d", b.group.line)
	}
	total, err := b.controlTotal(f, "99 file control total")
	if err != nil {
		return err
	}
	if total != b.total {
		return b.mismatch(f.line, "99 file control total", "the 98 totals of the file add up to %d, the 99 says %d", b.total, total)
	}
	if err := b.count(f, "99 number of groups", b.groups, "groups (02 records)"); err != nil {
		return err
	}
	if err := b.count(f, "99 number of records", b.records, "records, 88s included"); err != nil {
		return err
	}
	b.ended = true
	return b.end(f, "99")
}

// mismatch is the error of a control total that does not add up.
func (b *bai2Reader) mismatch(line int, field, format string, args ...any) error {
	return b.o.wrap(line, field, fmt.Errorf("%w: "+format, append([]any{reconcile.ErrControlTotal}, args...)...))
}

// count reads a trailer's count and holds it to what was counted.
func (b *bai2Reader) count(f *bai2Fields, name string, got int, what string) error {
	n, _, err := b.number(f, name, true)
	if err != nil {
		return err
	}
	if n != got {
		return b.mismatch(f.line, name, "%d %s, the trailer says %d", got, what, n)
	}
	return nil
}

// add adds v to *sum, refusing a sum past int64.
func (b *bai2Reader) add(sum *int64, v int64, line int, name string) error {
	s, ok := reconcile.AddChecked(*sum, v)
	if !ok {
		return b.o.wrap(line, name, fmt.Errorf("%w: adding %d to %d passes the largest amount there is", reconcile.ErrAmountRange, v, *sum))
	}
	*sum = s
	return nil
}

// bai2Lines reads a file a physical line at a time, each at most
// bai2MaxRecord bytes and ending in LF or CRLF (the last may end in
// nothing): a CR anywhere else, even at the very end, is refused.
type bai2Lines struct {
	sc   *bufio.Scanner
	o    Options
	line int   // the line last read, 1-based
	err  error // why next stopped before the end of the file
}

func newBAI2Lines(r io.Reader, o Options) *bai2Lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), bai2MaxRecord+2)
	sc.Split(scanBAI2Line)
	return &bai2Lines{sc: sc, o: o}
}

// scanBAI2Line is bufio.ScanLines but for a CR at the end of the file,
// which it leaves in the line to be refused.
func scanBAI2Line(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// next returns the next line without its line end; false at the end of
// the file or at a fault, which err then holds.
func (l *bai2Lines) next() (string, bool) {
	if l.err != nil {
		return "", false
	}
	if !l.sc.Scan() {
		switch err := l.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			l.err = l.o.errorf(l.line+1, "", "line longer than %d bytes", bai2MaxRecord)
		case err != nil:
			l.err = l.o.wrap(l.line+1, "", fmt.Errorf("read: %w", err))
		}
		return "", false
	}
	l.line++
	b := l.sc.Bytes()
	switch i := bytes.IndexByte(b, '\r'); {
	case len(b) > bai2MaxRecord:
		l.err = l.o.errorf(l.line, "", "line longer than %d bytes", bai2MaxRecord)
	case i >= 0:
		l.err = l.o.errorf(l.line, "", "a CR without LF (byte %d of the line): lines end in LF or CRLF", i+1)
	}
	return string(b), l.err == nil
}

// bai2Record is a logical record: its first physical record and its 88
// continuations.
type bai2Record struct {
	code  string
	line  int
	parts []bai2Part
	size  int // bytes of its lines
}

// faultLine is the first line of the record whose text the job cannot
// take (a NUL, a control character, not UTF-8), or the record's line
// when the fault is its length.
func (rec *bai2Record) faultLine() int {
	for _, p := range rec.parts {
		if checkText(p.s, maxRemittance) != "" {
			return p.line
		}
	}
	return rec.line
}

// bai2Part is one physical record of a logical one.
type bai2Part struct {
	// s is the line after its record code and comma, without the blanks
	// that pad it and the '/' that ends it.
	s    string
	line int
	n    int // the line's length
	// open is a line that ends in neither '/' nor a blank: where n is the
	// physical record length, its text was cut at the last column.
	open bool
}

// part splits a line into its record code and the rest.
func (b *bai2Reader) part(s string, line int) (string, bai2Part, error) {
	code := s[:min(2, len(s))]
	switch code {
	case "01", "02", "03", "16", "49", "88", "98", "99":
	default:
		return "", bai2Part{}, b.o.errorf(line, "record code", "unknown record code %s: a line begins with 01, 02, 03, 16, 49, 88, 98 or 99",
			reconcile.Quote(code))
	}
	if len(s) < 3 || s[2] != ',' {
		return "", bai2Part{}, b.o.errorf(line, code, "record code %s is not followed by a comma", code)
	}
	rest := s[3:]
	t := strings.TrimRight(rest, " ")
	p := bai2Part{line: line, n: len(s)}
	if strings.HasSuffix(t, "/") {
		t = t[:len(t)-1]
	} else {
		p.open = len(t) == len(rest)
	}
	p.s = t
	return code, p, nil
}

// bai2Fields hands out the fields of a logical record in order, going on
// into its 88s where a line's fields end.
type bai2Fields struct {
	parts []bai2Part
	i     int    // the part being read
	begun bool   // rest holds part i
	rest  string // what is left of it
	more  bool   // rest holds a field yet (it may be empty)
	line  int    // the line of the field last handed out
}

// next returns the next field, and false when the record has none left
// (a field it leaves off is taken as empty).
func (f *bai2Fields) next() (string, bool) {
	for {
		if !f.begun {
			if f.i >= len(f.parts) {
				return "", false
			}
			f.rest, f.more, f.begun = f.parts[f.i].s, true, true
			f.line = f.parts[f.i].line
		}
		if f.more {
			field, rest, found := strings.Cut(f.rest, ",")
			f.rest, f.more = rest, found
			return field, true
		}
		f.i++
		f.begun = false
	}
}

// left reports whether the record has fields left.
func (f *bai2Fields) left() bool {
	if f.begun {
		return f.more || f.i+1 < len(f.parts)
	}
	return f.i < len(f.parts)
}

// lineEnded reports whether the field last handed out was the last of
// its line.
func (f *bai2Fields) lineEnded() bool { return f.begun && !f.more }

// text returns the rest of the record as a 16's text: the rest of the
// current line, commas and all, and the whole of each 88 after it, joined
// as readBAI2 says.
func (f *bai2Fields) text(recLen int) string {
	var sb strings.Builder
	cut := false // the piece before ended at a cut
	take := func(s string, p bai2Part) {
		if !cut {
			s = strings.TrimLeft(s, " ")
		}
		if s = strings.TrimRight(s, " "); s != "" {
			if sb.Len() > 0 && !cut {
				sb.WriteByte(' ')
			}
			sb.WriteString(s)
		}
		cut = p.open && p.n == recLen
	}
	j := f.i
	if f.begun {
		if f.more {
			take(f.rest, f.parts[j])
		}
		j++
	}
	for ; j < len(f.parts); j++ {
		take(f.parts[j].s, f.parts[j])
	}
	f.i, f.begun, f.more = len(f.parts), false, false
	return sb.String()
}

// field returns the next field, refusing a '/' in it: the field is no
// text, so the '/' ended the record and the line goes on after it.
func (b *bai2Reader) field(f *bai2Fields, name string) (string, error) {
	s, _ := f.next()
	if strings.IndexByte(s, '/') >= 0 {
		return "", b.o.errorf(f.line, name, "%s holds a '/', which ends a record, and the line goes on after it: a line holds one record",
			reconcile.Quote(s))
	}
	return s, nil
}

// end refuses fields past a record's last; empty ones (a comma before
// the '/') are let be.
func (b *bai2Reader) end(f *bai2Fields, code string) error {
	for f.left() {
		s, err := b.field(f, code)
		if err != nil {
			return err
		}
		if s != "" {
			return b.o.errorf(f.line, code, "%s after the last field of the %s record", reconcile.Quote(s), code)
		}
	}
	return nil
}

// ident reads an identifier: a sender, a file id, an account number.
func (b *bai2Reader) ident(f *bai2Fields, name string, required bool) (string, error) {
	s, err := b.field(f, name)
	if err != nil {
		return "", err
	}
	if s == "" && required {
		return "", b.o.errorf(f.line, name, "empty: the field is required")
	}
	if fault := checkText(s, bai2MaxID); fault != "" {
		return "", b.o.errorf(f.line, name, "%s: %s", reconcile.Quote(s), fault)
	}
	return s, nil
}

// ref reads a 16's bank or customer reference, which may hold a '/'.
func (b *bai2Reader) ref(f *bai2Fields, name string) (string, error) {
	s, _ := f.next()
	if fault := checkText(s, maxText); fault != "" {
		return "", b.o.errorf(f.line, name, "%s: %s", reconcile.Quote(s), fault)
	}
	return s, nil
}

func (b *bai2Reader) currency(f *bai2Fields, name, otherwise string) (string, error) {
	s, err := b.field(f, name)
	if err != nil || s == "" {
		return otherwise, err
	}
	if _, ok := reconcile.CurrencyDigits(s); !ok {
		return "", b.o.errorf(f.line, name, "unknown currency %s", reconcile.Quote(s))
	}
	return s, nil
}

// number reads a whole number; given is false for an empty field, which
// only an optional one may be.
func (b *bai2Reader) number(f *bai2Fields, name string, required bool) (n int, given bool, err error) {
	s, err := b.field(f, name)
	if err != nil {
		return 0, false, err
	}
	if s == "" {
		if required {
			return 0, false, b.o.errorf(f.line, name, "empty: the field is required")
		}
		return 0, false, nil
	}
	n, err = strconv.Atoi(s)
	if err != nil || !bai2Digits(s) {
		return 0, false, b.o.errorf(f.line, name, "%s is not a whole number", reconcile.Quote(s))
	}
	return n, true, nil
}

// amount reads an amount: a whole number of minor units, with a sign
// only where signed.
func (b *bai2Reader) amount(s string, line int, name string, signed bool) (int64, error) {
	switch {
	case strings.IndexByte(s, '.') >= 0:
		return 0, b.o.errorf(line, name, "%s has a decimal point: amounts are whole numbers of the currency's minor units (12345 is 123.45 USD)",
			reconcile.Quote(s))
	case !signed && (strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")):
		return 0, b.o.errorf(line, name, "%s has a sign: a 16 amount is unsigned, its type code says whether it is a credit or a debit",
			reconcile.Quote(s))
	}
	v, err := reconcile.ParseDecimal(s, 0)
	if err != nil {
		return 0, b.o.wrap(line, name, err)
	}
	return v, nil
}

// controlTotal reads a trailer's control total; an empty one is 0.
func (b *bai2Reader) controlTotal(f *bai2Fields, name string) (int64, error) {
	s, err := b.field(f, name)
	if err != nil || s == "" {
		return 0, err
	}
	return b.amount(s, f.line, name, true)
}

// date reads a date YYMMDD.
func (b *bai2Reader) date(f *bai2Fields, name string) (time.Time, error) {
	s, err := b.field(f, name)
	if err != nil {
		return time.Time{}, err
	}
	if len(s) != 6 || !bai2Digits(s) {
		return time.Time{}, b.o.errorf(f.line, name, "%s is not a date YYMMDD", reconcile.Quote(s))
	}
	t, err := time.Parse("060102", s)
	if err != nil {
		return time.Time{}, b.o.errorf(f.line, name, "%s is not a date YYMMDD that exists", reconcile.Quote(s))
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

// clock reads a time of day, which the job does not keep but holds to
// its form, as a field out of place shows in it.
func (b *bai2Reader) clock(f *bai2Fields, name string, optional bool) error {
	s, err := b.field(f, name)
	if err != nil || (s == "" && optional) {
		return err
	}
	if !bai2Clock(s) {
		return b.o.errorf(f.line, name, "%s is not a time HHMM", reconcile.Quote(s))
	}
	return nil
}

// bai2Clock reports whether s is a time: HHMM from 0000 to 2400, 9999
// for the end of the day, or NatWest's HH:MM:SS.
func bai2Clock(s string) bool {
	if len(s) == 8 && s[2] == ':' && s[5] == ':' {
		if !bai2Digits(s[6:]) || s[6] > '5' {
			return false
		}
		s = s[:2] + s[3:5]
	}
	if len(s) != 4 || !bai2Digits(s) {
		return false
	}
	h, m := (s[0]-'0')*10+s[1]-'0', (s[2]-'0')*10+s[3]-'0'
	return s == "9999" || m < 60 && (h < 24 || h == 24 && m == 0)
}

// bai2Funds is what a funds type says beyond availability.
type bai2Funds struct {
	value time.Time // the value date of funds type V
	// dist is what an S or D distribution adds up to, and hasDist
	// whether there is one.
	dist    int64
	hasDist bool
}

// funds reads a funds type and the fields it brings: V a value date and
// time, S three amounts, D a count and as many days and amounts.
func (b *bai2Reader) funds(f *bai2Fields, name string, signed bool) (bai2Funds, error) {
	var fu bai2Funds
	t, err := b.field(f, name+" funds type")
	if err != nil {
		return fu, err
	}
	switch t {
	case "", "Z", "0", "1", "2":
		return fu, nil
	case "V":
		if fu.value, err = b.date(f, name+" value date"); err != nil {
			return fu, err
		}
		return fu, b.clock(f, name+" value time", true)
	case "S":
		fu.hasDist = true
		for _, when := range []string{"immediate", "one-day", "two-or-more-day"} {
			if err := b.distribution(f, &fu, name+" "+when+" amount", signed); err != nil {
				return fu, err
			}
		}
		return fu, nil
	case "D":
		fu.hasDist = true
		n, _, err := b.number(f, name+" distributions", true)
		for i := 0; i < n && err == nil; i++ {
			if _, _, err = b.number(f, name+" distribution days", true); err == nil {
				err = b.distribution(f, &fu, name+" distribution amount", signed)
			}
		}
		return fu, err
	}
	return fu, b.o.errorf(f.line, name+" funds type", "funds type %s: the standard has 0, 1, 2, V, S, D and Z", reconcile.Quote(t))
}

// distribution reads one amount of an S or D distribution; an empty one
// is none.
func (b *bai2Reader) distribution(f *bai2Fields, fu *bai2Funds, name string, signed bool) error {
	s, err := b.field(f, name)
	if err != nil || s == "" {
		return err
	}
	v, err := b.amount(s, f.line, name, signed)
	if err != nil {
		return err
	}
	return b.add(&fu.dist, v, f.line, name)
}

// distributed holds an S or D distribution to the amount it distributes.
func (b *bai2Reader) distributed(fu bai2Funds, amount int64, line int, name string) error {
	if !fu.hasDist || fu.dist == amount {
		return nil
	}
	return b.mismatch(line, name+" funds type", "the availability distribution adds up to %d, the amount is %d", fu.dist, amount)
}

func bai2Digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func bai2IsTypeCode(s string) bool { return len(s) == 3 && bai2Digits(s) }

// bai2Direction is what a 16's type code does to the balance.
type bai2Direction int

const (
	bai2Unknown bai2Direction = iota
	bai2Credit
	bai2Debit
	bai2Info // 890: neither
)

// bai2TypeDirection maps a type code to its direction by the standard's
// Appendix A and customized ranges; for an unknown one it says why.
func bai2TypeDirection(code string) (bai2Direction, string) {
	n, _ := strconv.Atoi(code)
	switch {
	case n >= 100 && n <= 399, n >= 720 && n <= 728, n >= 920 && n <= 959:
		return bai2Credit, ""
	case n >= 400 && n <= 699, n == 760, n >= 960 && n <= 999:
		return bai2Debit, ""
	case n == 890:
		return bai2Info, ""
	case n <= 99, n >= 701 && n <= 709, n >= 900 && n <= 919:
		return bai2Unknown, "is an account status code, not a transaction"
	}
	return bai2Unknown, "is none the standard assigns (credits 100–399, 720–728, 920–959; debits 400–699, 760, 960–999; 890 information)"
}

// bai2ACHKeys are the keys that follow the originator's name in the ACH
// text banks write: "ORIG CO NAME:STRIPE ORIG ID:1800948598 DESC
// DATE:260315 CO ENTRY DESCR:TRANSFER SEC:CCD TRACE#:… EED:… IND ID:…
// IND NAME:… TRN:…".
var bai2ACHKeys = []string{" ORIG ID:", " DESC DATE:", " CO ENTRY DESCR:", " SEC:", " TRACE#:", " EED:",
	" IND ID:", " IND NAME:", " TRN:", " CO ID:"}

const (
	bai2OrigName = "ORIG CO NAME:"
	// bai2MaxName bounds an originator's name: an ACH company name is 16
	// characters, an IAT originator's 35. Longer, it is text that lacks
	// the keys that end a name, and no name.
	bai2MaxName = 35
)

// bai2Originator returns the ACH originator an entry's text names, "" if
// none. Keys are matched without regard to case, as some banks write
// "Orig CO Name:"; text is valid UTF-8, which keeps the byte offsets of
// its upper-case copy.
func bai2Originator(text string) string {
	up := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, text)
	i := strings.Index(up, bai2OrigName)
	if i < 0 {
		return ""
	}
	start := i + len(bai2OrigName)
	end := len(text)
	for _, k := range bai2ACHKeys {
		if j := strings.Index(up[start:end], k); j >= 0 {
			end = start + j
		}
	}
	name := strings.TrimSpace(text[start:end])
	if utf8.RuneCountInString(name) > bai2MaxName {
		return ""
	}
	return name
}
