package bankfeed

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"reconcile"
)

// readCamt053 reads ISO 20022 camt.053 (BankToCustomerStatement), the
// versions camt.053.001.02 to .001.08, as a stream of XML tokens: each
// entry is handed on at its </Ntry>, and no more than one entry is held.
//
// Elements are matched by their local name; the Document's namespace
// must be one of the seven versions, or none. Anything but a
// BkToCstmrStmt under Document (a camt.052 report, a camt.054
// notification, a business envelope around the Document) is refused.
//
// What is read, and what real files do that the schema does not say:
//   - Stmt/Id is the statement's id; Acct/Id/IBAN, else Acct/Id/Othr/Id
//     (a bank's own account number) its account; Acct/Ccy its currency,
//     else that of its balances (the ABN AMRO and PostFinance samples
//     leave Acct/Ccy out). Every Amt of a statement is in its currency.
//   - Bal OPBD is the opening balance, else PRCD (German banks state the
//     previous closing booked balance instead); CLBD the closing one.
//     Other balances (CLAV, FWAV, ITBD, ...) are read and let be. Every
//     statement states an opening and a closing balance: every public
//     sample does, even one without entries; a statement without is
//     a truncated file or an intraday report sent as a statement, which
//     cannot be checked; it is refused. Balances come before the entries,
//     as the schema orders them: entries are handed on as they are read,
//     so the statement's id, account and currency must be known by then.
//   - Ntry/Sts is text up to .06 and <Sts><Cd>BOOK</Cd></Sts> from .07;
//     both are read, in every version. BOOK, PDNG and INFO are taken;
//     anything else (FUTR of the newer code list) is refused.
//   - RvslInd true marks a reversal; CdtDbtInd still says what the entry
//     did to the balance, as ISO 20022 defines it.
//   - BookgDt and ValDt are a Dt or a DtTm; of a DtTm the date is taken
//     as written (the ABN AMRO sample writes a Dutch midnight as 23:00Z
//     of the day before; that is the day it says).
//   - TxDtls, directly under NtryDtls (where the schema puts them) or
//     under NtryDtls/Btch (where some writers nest them): the first
//     EndToEndId other than NOTPROVIDED (what SEPA writes for none) is
//     the entry's; later ones go to the remittance. The counterparty is
//     RltdPties Dbtr/Nm for a credit and Cdtr/Nm for a debit (.08 nests
//     both as Dbtr/Pty/Nm and Cdtr/Pty/Nm), from the first TxDtls that
//     names one. A reversal keeps the parties of what it reverses (a
//     returned transfer of ours still names its creditor under Cdtr), so
//     for a reversal the other side is read.
//   - Remittance is, in the file's order, the later EndToEndIds,
//     RmtInf/Ustrd, RmtInf/Strd/CdtrRefInf/Ref, Strd/RfrdDocInf/Nb and
//     Ntry/AddtlNtryInf, joined by single spaces. Tabs and line breaks
//     inside a value are read as spaces (XML whitespace); any other
//     control character is refused.
//   - TxsSummry and the batch's NbOfTxs and TtlAmt are not checked:
//     banks differ in whether they count pending and reversed entries;
//     the balances are the check.
//
// The XML itself is held to what a bank writes: UTF-8 (a BOM is
// skipped; another declared encoding is refused), no DOCTYPE or other
// declaration (nothing to expand, no external entity), no entity but the
// five predefined and character references, no processing instruction
// but the XML declaration, LF or CR LF line ends (a CR alone would make
// every line number of an error wrong), elements nested at most
// camtMaxDepth deep with at most camtMaxAttrs attributes, a text at most
// maxText bytes, any one tag, text or comment at most camtMaxToken
// bytes, and nothing after the Document element but white space and
// comments. Errors name the element's path, with the position of a Stmt,
// Bal, Ntry and TxDtls among its kind: Document/BkToCstmrStmt/Stmt[2]/Ntry[14]/Amt.
func readCamt053(r io.Reader, o Options, fn func(reconcile.BankEntry) error) ([]reconcile.BankStatement, error) {
	c, err := newCamtReader(r, o, fn)
	if err != nil {
		return nil, err
	}
	for {
		c.tokLine, _ = c.d.InputPos()
		tok, err := c.d.Token()
		c.in.n = 0
		if err == io.EOF {
			return c.finish()
		}
		if err != nil {
			return nil, c.decodeError(err)
		}
		if err := c.token(tok); err != nil {
			return nil, err
		}
	}
}

const (
	// camtMaxDepth bounds how deep elements nest: the deepest of
	// camt.053.001.08, a tax record's period in a batch entry, is 16.
	camtMaxDepth = 32
	// camtMaxAttrs bounds an element's attributes, namespace
	// declarations included: camt elements carry Ccy at most.
	camtMaxAttrs = 16
	// camtMaxName bounds an element's name, which errors quote: ISO
	// 20022 names are a few letters.
	camtMaxName = 64
	// camtMaxToken bounds the bytes of one tag, text or comment as
	// written, entity references and all, so that the decoder never
	// buffers more.
	camtMaxToken = maxRemittance
)

// camtNamespace is the namespace of camt.053.001.02 to .08 without its
// last digit.
const camtNamespace = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.0"

// camtMessages names the messages a Document may hold instead of a
// statement, so that a refusal says what the file is.
var camtMessages = map[string]string{
	"BkToCstmrAcctRpt":      "a camt.052 account report",
	"BkToCstmrDbtCdtNtfctn": "a camt.054 debit/credit notification",
}

// camtReader is the state of one file being read.
type camtReader struct {
	o  Options
	fn func(reconcile.BankEntry) error
	in *camtInput
	d  *xml.Decoder

	// tokLine is where the token being read starts.
	tokLine int
	tokens  int
	// full is the open elements' path as errors name it, with the
	// positions of Stmt, Bal, Ntry and TxDtls; plain is the same path
	// without them, as slots are looked up.
	full, plain []byte
	frames      []camtFrame
	// text is the innermost element's text so far.
	text []byte

	docNS   string
	sawDoc  bool
	sawMsg  bool
	done    bool // the Document element is closed
	stmtRel int  // where a path below the open Stmt starts in plain
	st      *camtStmt
	bal     *camtBal
	ent     *camtEntry
	stmts   []reconcile.BankStatement
}

// camtFrame is one open element.
type camtFrame struct {
	line        int
	full, plain int    // lengths of the paths before the element
	kids        [4]int // of its children Stmt, Bal, Ntry, TxDtls so far
}

func newCamtReader(r io.Reader, o Options, fn func(reconcile.BankEntry) error) (*camtReader, error) {
	in, err := newCamtInput(r, o)
	if err != nil {
		return nil, err
	}
	d := xml.NewDecoder(in)
	d.Strict = true
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "utf8") {
			return r, nil
		}
		return nil, &camtCharsetError{label}
	}
	return &camtReader{o: o, fn: fn, in: in, d: d}, nil
}

// token takes one token of the file.
func (c *camtReader) token(tok xml.Token) error {
	c.tokens++
	switch t := tok.(type) {
	case xml.StartElement:
		return c.start(t)
	case xml.EndElement:
		return c.end()
	case xml.CharData:
		return c.chars(t)
	case xml.ProcInst:
		if t.Target == "xml" && c.tokens == 1 {
			return nil
		}
		return c.o.errorf(c.tokLine, c.field(),
			"processing instruction %s: a statement carries none but the XML declaration at its start", reconcile.Quote(t.Target))
	case xml.Directive:
		return c.o.errorf(c.tokLine, c.field(),
			"declaration %s: a statement has no DOCTYPE, and the reader takes no entity definitions", reconcile.Quote(camtFirstWord(string(t))))
	}
	return nil // a comment
}

// chars takes text: inside an element it is kept for the element's end,
// outside the Document it may be white space only.
func (c *camtReader) chars(t xml.CharData) error {
	if len(c.frames) == 0 {
		if len(strings.TrimLeft(string(t), " \t\r\n")) > 0 {
			return c.o.errorf(c.tokLine, c.field(), "text outside the Document element")
		}
		return nil
	}
	if len(c.text)+len(t) > maxText {
		return c.o.errorf(c.tokLine, c.field(), "text longer than the %d bytes the reader takes", maxText)
	}
	c.text = append(c.text, t...)
	return nil
}

// start takes a start tag: it checks the element's bounds, opens it and
// starts what it begins (the message, a statement, a balance, an entry).
func (c *camtReader) start(t xml.StartElement) error {
	name := t.Name.Local
	switch {
	case c.done:
		return c.o.errorf(c.tokLine, c.field(), "element %s after the Document element", reconcile.Quote(name))
	case len(c.frames) == camtMaxDepth:
		return c.o.errorf(c.tokLine, c.field(), "elements nested more than %d deep", camtMaxDepth)
	case len(name) > camtMaxName:
		return c.o.errorf(c.tokLine, c.field(), "element name of %d bytes: %s", len(name), reconcile.Quote(name))
	}
	c.push(name)
	c.text = c.text[:0]
	if len(t.Attr) > camtMaxAttrs {
		return c.o.errorf(c.tokLine, c.field(), "%d attributes, more than the %d the reader takes", len(t.Attr), camtMaxAttrs)
	}
	switch len(c.frames) {
	case 1:
		return c.document(t)
	case 2:
		return c.message(name)
	case 3:
		if name == "Stmt" {
			c.stmtRel = len(c.plain) + 1
			c.st = &camtStmt{path: c.field()}
			c.st.Line = c.tokLine
		}
		return nil
	}
	if c.st == nil {
		return nil
	}
	switch c.slot() {
	case camtSlotBal:
		return c.balanceStart()
	case camtSlotNtry:
		return c.entryStart()
	case camtSlotBalAmt:
		return c.amountCurrency(t, &c.bal.ccy)
	case camtSlotAmt:
		return c.amountCurrency(t, &c.ent.ccy)
	}
	return nil
}

// document checks the root element: a Document of camt.053.001.02 to
// .08, or of no namespace. Which namespace is checked with the message,
// so that a camt.052 is named as such.
func (c *camtReader) document(t xml.StartElement) error {
	c.sawDoc = true // a second root is refused by start, once this one ends
	if t.Name.Local != "Document" {
		return c.o.errorf(c.tokLine, c.field(), "root element <%s>, not the Document of a camt.053 statement", t.Name.Local)
	}
	c.docNS = t.Name.Space
	return nil
}

// message checks the Document's one child: a BkToCstmrStmt of a version
// the reader knows.
func (c *camtReader) message(name string) error {
	if c.sawMsg {
		return c.o.errorf(c.tokLine, c.field(), "a second message in the Document")
	}
	c.sawMsg = true
	if name != "BkToCstmrStmt" {
		if what, ok := camtMessages[name]; ok {
			return c.o.errorf(c.tokLine, c.field(), "%s (%s), not a camt.053 statement (BkToCstmrStmt)", what, name)
		}
		return c.o.errorf(c.tokLine, c.field(), "<%s> is not a camt.053 statement (BkToCstmrStmt)", name)
	}
	if ns := c.docNS; ns != "" {
		v, ok := strings.CutPrefix(ns, camtNamespace)
		if !ok || len(v) != 1 || v < "2" || v > "8" {
			return c.o.errorf(c.tokLine, c.field(), "namespace %s: the reader takes camt.053.001.02 to camt.053.001.08",
				reconcile.Quote(ns))
		}
	}
	return nil
}

// end takes an end tag: the element's value goes where its slot says,
// and what it began is finished.
func (c *camtReader) end() error {
	var err error
	switch len(c.frames) {
	case 1:
		c.done = true
	case 3:
		if c.st != nil {
			err = c.statementEnd()
		}
	default:
		if c.st != nil && len(c.frames) > 3 {
			err = c.value(c.slot())
		}
	}
	c.text = c.text[:0]
	c.pop()
	return err
}

// finish checks, at the end of the file, that it held a statement.
func (c *camtReader) finish() ([]reconcile.BankStatement, error) {
	switch {
	case !c.sawDoc:
		return nil, c.o.errorf(c.tokLine, "", "no Document element: the file is empty or not XML")
	case len(c.stmts) == 0:
		return nil, c.o.errorf(c.tokLine, "Document/BkToCstmrStmt/Stmt", "the file holds no statement")
	}
	return c.stmts, nil
}

// push opens an element.
func (c *camtReader) push(name string) {
	f := camtFrame{line: c.tokLine, full: len(c.full), plain: len(c.plain)}
	if len(c.frames) > 0 {
		c.full = append(c.full, '/')
		c.plain = append(c.plain, '/')
	}
	c.full = append(c.full, name...)
	c.plain = append(c.plain, name...)
	if k := camtIndexed(name); k >= 0 && len(c.frames) > 0 {
		parent := &c.frames[len(c.frames)-1]
		parent.kids[k]++
		c.full = fmt.Appendf(c.full, "[%d]", parent.kids[k])
	}
	c.frames = append(c.frames, f)
}

// pop closes the innermost element.
func (c *camtReader) pop() {
	f := c.frames[len(c.frames)-1]
	c.frames = c.frames[:len(c.frames)-1]
	c.full = c.full[:f.full]
	c.plain = c.plain[:f.plain]
}

// camtIndexed is where in camtFrame.kids an element is counted whose
// position errors name, or -1.
func camtIndexed(name string) int {
	switch name {
	case "Stmt":
		return 0
	case "Bal":
		return 1
	case "Ntry":
		return 2
	case "TxDtls":
		return 3
	}
	return -1
}

// field is the innermost open element's path, as errors name it.
func (c *camtReader) field() string { return string(c.full) }

// line is where the innermost open element starts.
func (c *camtReader) line() int { return c.frames[len(c.frames)-1].line }

// slot is what the innermost element is to the reader, by its path
// below the open Stmt.
func (c *camtReader) slot() camtSlot {
	if len(c.plain) < c.stmtRel {
		return camtSlotNone // the Stmt itself
	}
	return camtSlots[string(c.plain[c.stmtRel:])] // looked up without a copy
}

// decodeError turns what the decoder refused into a ParseError at the
// line it stopped on.
func (c *camtReader) decodeError(err error) error {
	line, _ := c.d.InputPos()
	var ie *camtInputError
	var ce *camtCharsetError
	var se *xml.SyntaxError
	switch {
	case errors.As(err, &ie):
		return c.o.errorf(line, c.field(), "%s", ie.msg)
	case errors.As(err, &ce):
		return c.o.errorf(line, c.field(), "declared encoding %s: the reader takes UTF-8 only", reconcile.Quote(ce.label))
	case errors.As(err, &se) && se.Msg == "unexpected EOF" && len(c.frames) > 0:
		return c.o.errorf(se.Line, c.field(), "the file ends inside <%s>: it is truncated", c.innermost())
	case errors.As(err, &se) && se.Msg == "unexpected EOF":
		return c.o.errorf(se.Line, c.field(), "the file ends inside a tag: it is truncated")
	case errors.As(err, &se):
		return c.o.errorf(se.Line, c.field(), "malformed XML: %s", camtCut(se.Msg))
	}
	return c.o.wrap(line, c.field(), fmt.Errorf("read: %w", err))
}

// innermost is the innermost open element's name.
func (c *camtReader) innermost() string {
	return strings.TrimPrefix(string(c.plain[c.frames[len(c.frames)-1].plain:]), "/")
}

// camtCut shortens a message of the decoder, which may repeat names from
// the file, and keeps it UTF-8.
func camtCut(s string) string {
	const max = 120
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

func camtFirstWord(s string) string {
	if i := strings.IndexAny(s, " \t\r\n["); i >= 0 {
		return s[:i]
	}
	return s
}

// camtInput is the file as the decoder reads it, byte by byte (an
// io.ByteReader is read as is, never buffered again): it refuses what no
// XML of a bank holds before the decoder buffers it.
type camtInput struct {
	r *bufio.Reader
	n int // bytes since the last token
}

// camtInputError is a refusal of the bytes themselves.
type camtInputError struct{ msg string }

func (e *camtInputError) Error() string { return e.msg }

// camtCharsetError is a declared encoding other than UTF-8.
type camtCharsetError struct{ label string }

func (e *camtCharsetError) Error() string { return "encoding " + e.label }

// newCamtInput skips a UTF-8 byte order mark and refuses UTF-16, which
// the decoder would report as a puzzling syntax error.
func newCamtInput(r io.Reader, o Options) (*camtInput, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(3)
	switch {
	case len(head) == 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF:
		br.Discard(3) // cannot fail: peeked
	case len(head) >= 2 && (head[0] == 0xFE && head[1] == 0xFF || head[0] == 0xFF && head[1] == 0xFE):
		return nil, o.errorf(1, "", "the file is UTF-16: the reader takes UTF-8 only")
	}
	return &camtInput{r: br}, nil
}

func (in *camtInput) ReadByte() (byte, error) {
	b, err := in.r.ReadByte()
	if err != nil {
		return 0, err
	}
	in.n++
	switch {
	case in.n > camtMaxToken:
		return 0, &camtInputError{fmt.Sprintf("a tag, text or comment longer than %d bytes", camtMaxToken)}
	case b == 0:
		return 0, &camtInputError{"NUL byte"}
	case b == '\r':
		if next, err := in.r.Peek(1); err != nil || next[0] != '\n' {
			return 0, &camtInputError{"CR without LF: lines must end in LF or CR LF"}
		}
	}
	return b, nil
}

// Read is there for the decoder's CharsetReader, which is handed the
// input as an io.Reader.
func (in *camtInput) Read(p []byte) (int, error) {
	for i := range p {
		b, err := in.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				return i, nil
			}
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}

// camtSlot is what an element's value is to the reader, by its path
// below the Stmt.
type camtSlot uint8

const (
	camtSlotNone camtSlot = iota
	camtSlotStmtID
	camtSlotIBAN
	camtSlotOthrID
	camtSlotAcctCcy
	camtSlotBal
	camtSlotBalCode
	camtSlotBalAmt
	camtSlotBalCdtDbt
	camtSlotBalDt
	camtSlotBalDtTm
	camtSlotNtry
	camtSlotAmt
	camtSlotCdtDbt
	camtSlotRvsl
	camtSlotSts
	camtSlotStsCode
	camtSlotBookDt
	camtSlotBookDtTm
	camtSlotValDt
	camtSlotValDtTm
	camtSlotBankRef
	camtSlotDomain
	camtSlotFamily
	camtSlotSubFamily
	camtSlotPrtryCode
	camtSlotAddtlInfo
	camtSlotEndToEnd
	camtSlotDebtor
	camtSlotCreditor
	camtSlotUstrd
	camtSlotCdtrRef
	camtSlotDocNb
)

// camtSlots maps a path below Stmt onto its slot. TxDtls values are
// found under NtryDtls and under NtryDtls/Btch.
var camtSlots = func() map[string]camtSlot {
	m := map[string]camtSlot{
		"Id": camtSlotStmtID, "Acct/Id/IBAN": camtSlotIBAN, "Acct/Id/Othr/Id": camtSlotOthrID, "Acct/Ccy": camtSlotAcctCcy,
		"Bal": camtSlotBal, "Bal/Tp/CdOrPrtry/Cd": camtSlotBalCode, "Bal/Amt": camtSlotBalAmt, "Bal/CdtDbtInd": camtSlotBalCdtDbt,
		"Bal/Dt/Dt": camtSlotBalDt, "Bal/Dt/DtTm": camtSlotBalDtTm,
		"Ntry": camtSlotNtry, "Ntry/Amt": camtSlotAmt, "Ntry/CdtDbtInd": camtSlotCdtDbt, "Ntry/RvslInd": camtSlotRvsl,
		"Ntry/Sts": camtSlotSts, "Ntry/Sts/Cd": camtSlotStsCode, "Ntry/Sts/Prtry": camtSlotStsCode,
		"Ntry/BookgDt/Dt": camtSlotBookDt, "Ntry/BookgDt/DtTm": camtSlotBookDtTm,
		"Ntry/ValDt/Dt": camtSlotValDt, "Ntry/ValDt/DtTm": camtSlotValDtTm, "Ntry/AcctSvcrRef": camtSlotBankRef,
		"Ntry/BkTxCd/Domn/Cd": camtSlotDomain, "Ntry/BkTxCd/Domn/Fmly/Cd": camtSlotFamily,
		"Ntry/BkTxCd/Domn/Fmly/SubFmlyCd": camtSlotSubFamily, "Ntry/BkTxCd/Prtry/Cd": camtSlotPrtryCode,
		"Ntry/AddtlNtryInf": camtSlotAddtlInfo,
	}
	tx := map[string]camtSlot{
		"Refs/EndToEndId":   camtSlotEndToEnd,
		"RltdPties/Dbtr/Nm": camtSlotDebtor, "RltdPties/Dbtr/Pty/Nm": camtSlotDebtor,
		"RltdPties/Cdtr/Nm": camtSlotCreditor, "RltdPties/Cdtr/Pty/Nm": camtSlotCreditor,
		"RmtInf/Ustrd": camtSlotUstrd, "RmtInf/Strd/CdtrRefInf/Ref": camtSlotCdtrRef, "RmtInf/Strd/RfrdDocInf/Nb": camtSlotDocNb,
	}
	for path, slot := range tx {
		m["Ntry/NtryDtls/TxDtls/"+path] = slot
		m["Ntry/NtryDtls/Btch/TxDtls/"+path] = slot
	}
	return m
}()

// value takes the text of an element that ends, by its slot.
func (c *camtReader) value(slot camtSlot) error {
	switch {
	case slot == camtSlotNone:
		return nil
	case slot <= camtSlotBalDtTm:
		return c.statementValue(slot)
	case slot == camtSlotNtry:
		return c.entryEnd()
	case slot <= camtSlotAddtlInfo:
		return c.entryValue(slot)
	}
	return c.detailValue(slot)
}

// xmlSpace reads XML white space inside a value as spaces.
var xmlSpace = strings.NewReplacer("\t", " ", "\r", " ", "\n", " ")

// text is the innermost element's text as a value: XML white space at
// its ends trimmed, inside it read as spaces; what the job cannot store
// or show refused.
func (c *camtReader) textValue() (string, error) {
	s := strings.Trim(string(c.text), " \t\r\n")
	if strings.ContainsAny(s, "\t\r\n") {
		s = xmlSpace.Replace(s)
	}
	if f := checkText(s, maxText); f != "" {
		return "", c.o.errorf(c.line(), c.field(), "%s", f)
	}
	return s, nil
}

// required is textValue for an element that may not be empty.
func (c *camtReader) required() (string, error) {
	s, err := c.textValue()
	if err == nil && s == "" {
		err = c.o.errorf(c.line(), c.field(), "empty <%s>", c.innermost())
	}
	return s, err
}

// amountCurrency reads the Ccy of an Amt start tag.
func (c *camtReader) amountCurrency(t xml.StartElement, ccy *string) error {
	for _, a := range t.Attr {
		if a.Name.Local == "Ccy" && a.Name.Space == "" {
			if _, ok := reconcile.CurrencyDigits(a.Value); !ok {
				return c.o.errorf(c.tokLine, c.field(), "unknown currency %s", reconcile.Quote(a.Value))
			}
			*ccy = a.Value
			return nil
		}
	}
	return c.o.errorf(c.tokLine, c.field(), "amount without its Ccy attribute")
}

// amount reads the Amt that ends, in currency: an unsigned decimal with
// no more decimals than the currency has.
func (c *camtReader) amount(currency string) (int64, error) {
	s, err := c.required()
	if err != nil {
		return 0, err
	}
	if s[0] == '-' || s[0] == '+' {
		return 0, c.o.errorf(c.line(), c.field(), "amount %s has a sign; CdtDbtInd says which way it goes", reconcile.Quote(s))
	}
	v, err := reconcile.ParseAmount(s, currency)
	if err != nil {
		return 0, c.o.wrap(c.line(), c.field(), fmt.Errorf("amount %w", err))
	}
	return v, nil
}

// creditDebit reads a CdtDbtInd: true for CRDT.
func (c *camtReader) creditDebit() (bool, error) {
	s, err := c.textValue()
	if err != nil {
		return false, err
	}
	switch s {
	case "CRDT":
		return true, nil
	case "DBIT":
		return false, nil
	}
	return false, c.o.errorf(c.line(), c.field(), "%s is neither CRDT nor DBIT", reconcile.Quote(s))
}

// date reads an ISODate (withTime false) or an ISODateTime, whose date is
// taken as written, as midnight UTC.
func (c *camtReader) date(withTime bool) (time.Time, error) {
	s, err := c.textValue()
	if err != nil {
		return time.Time{}, err
	}
	if t, ok := camtDate(s, withTime); ok {
		return t, nil
	}
	what := "date (YYYY-MM-DD)"
	if withTime {
		what = "date and time (YYYY-MM-DDThh:mm:ss)"
	}
	return time.Time{}, c.o.errorf(c.line(), c.field(), "%s is not a %s that exists", reconcile.Quote(s), what)
}

func camtDate(s string, withTime bool) (time.Time, bool) {
	if withTime {
		if len(s) <= 10 || s[10] != 'T' {
			return time.Time{}, false
		}
		if _, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", s); err != nil {
			if _, err := time.Parse("2006-01-02T15:04:05.999999999", s); err != nil {
				return time.Time{}, false
			}
		}
		s = s[:10]
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// camtStmt is the statement being read.
type camtStmt struct {
	reconcile.BankStatement
	path       string // of the Stmt, as errors name it
	iban, othr string
	acctCcy    bool // Currency is the account's, else its first balance's
	balances   int
	// opbd, prcd and clbd are the balances that count.
	opbd, prcd, clbd *camtBal
}

// camtBal is a balance being read, and once read, a balance that counts.
type camtBal struct {
	path, code string
	line       int
	ccy        string
	amount     int64
	hasAmt     bool
	sign       int // 1 CRDT, -1 DBIT, 0 not yet read
	// amtLine and amtPath are where its Amt is: a statement that does not
	// add up is refused there.
	amtLine int
	amtPath string
}

// statementValue takes a value of the statement: its id, account,
// currency, or of one of its balances.
func (c *camtReader) statementValue(slot camtSlot) (err error) {
	st, b := c.st, c.bal
	switch slot {
	case camtSlotStmtID:
		st.ID, err = c.required()
	case camtSlotIBAN:
		st.iban, err = c.required()
	case camtSlotOthrID:
		st.othr, err = c.required()
	case camtSlotAcctCcy:
		err = c.accountCurrency()
	case camtSlotBal:
		err = c.balanceEnd()
	case camtSlotBalCode:
		b.code, err = c.textValue()
	case camtSlotBalAmt:
		b.amount, err = c.amount(b.ccy)
		b.hasAmt, b.amtLine, b.amtPath = true, c.line(), c.field()
	case camtSlotBalCdtDbt:
		var credit bool
		credit, err = c.creditDebit()
		b.sign = -1
		if credit {
			b.sign = 1
		}
	case camtSlotBalDt:
		_, err = c.date(false)
	case camtSlotBalDtTm:
		_, err = c.date(true)
	}
	return err
}

func (c *camtReader) accountCurrency() error {
	s, err := c.required()
	if err != nil {
		return err
	}
	if _, ok := reconcile.CurrencyDigits(s); !ok {
		return c.o.errorf(c.line(), c.field(), "unknown currency %s", reconcile.Quote(s))
	}
	if c.st.balances > 0 && s != c.st.Currency {
		return c.o.errorf(c.line(), c.field(), "account in %s after balances in %s", s, c.st.Currency)
	}
	c.st.Currency, c.st.acctCcy = s, true
	return nil
}

// balanceStart begins a balance; balances come before the entries.
func (c *camtReader) balanceStart() error {
	if c.st.Entries > 0 {
		return c.o.errorf(c.tokLine, c.field(), "balance after the statement's entries: camt.053 states balances first")
	}
	c.bal = &camtBal{path: c.field(), line: c.tokLine}
	return nil
}

// balanceEnd checks a balance and keeps it when it is one that counts.
func (c *camtReader) balanceEnd() error {
	b, st := c.bal, c.st
	c.bal = nil
	switch {
	case !b.hasAmt:
		return c.o.errorf(b.line, b.path+"/Amt", "balance without Amt")
	case b.sign == 0:
		return c.o.errorf(b.line, b.path+"/CdtDbtInd", "balance without CdtDbtInd")
	case st.Currency == "":
		st.Currency = b.ccy
	case b.ccy != st.Currency:
		return c.o.errorf(b.amtLine, b.amtPath, "balance in %s on a statement in %s", b.ccy, st.Currency)
	}
	st.balances++
	b.amount *= int64(b.sign)
	var slot **camtBal
	switch b.code {
	case "OPBD":
		slot = &st.opbd
	case "PRCD":
		slot = &st.prcd
	case "CLBD":
		slot = &st.clbd
	default:
		return nil
	}
	if *slot != nil {
		return c.o.errorf(b.line, b.path, "a second %s balance in the statement", b.code)
	}
	*slot = b
	return nil
}

// statementEnd checks the statement that ends and keeps it: it must
// state its balances, and its booked entries must take the opening
// balance to the closing one.
func (c *camtReader) statementEnd() error {
	st := c.st
	c.st = nil
	if err := c.statementHead(st, c.tokLine); err != nil {
		return err
	}
	open := st.opbd
	if open == nil {
		open = st.prcd
	}
	switch {
	case st.balances == 0:
		return c.o.errorf(c.tokLine, st.path+"/Bal", "statement without balances: camt.053 states an opening and a closing balance")
	case open == nil:
		return c.o.errorf(c.tokLine, st.path+"/Bal", "statement without an opening balance (OPBD or PRCD)")
	case st.clbd == nil:
		return c.o.errorf(c.tokLine, st.path+"/Bal", "statement without a closing balance (CLBD)")
	}
	st.Opening, st.HasOpening = open.amount, true
	st.Closing, st.HasClosing = st.clbd.amount, true
	if err := st.Balanced(); err != nil {
		return c.o.wrap(st.clbd.amtLine, st.clbd.amtPath, err)
	}
	c.stmts = append(c.stmts, st.BankStatement)
	return nil
}

// statementHead checks that the statement has said what its entries
// carry: its id, its account and, unless it states no balance yet, its
// currency. line is where the reader is.
func (c *camtReader) statementHead(st *camtStmt, line int) error {
	st.Account = st.iban
	if st.Account == "" {
		st.Account = st.othr
	}
	switch {
	case st.ID == "":
		return c.o.errorf(line, st.path+"/Id", "statement without its Id")
	case st.Account == "":
		return c.o.errorf(line, st.path+"/Acct/Id", "statement without its account (Acct/Id/IBAN or Acct/Id/Othr/Id)")
	}
	return nil
}

// camtEntry is the entry being read.
type camtEntry struct {
	reconcile.BankEntry
	path   string // of the Ntry, as errors name it
	ccy    string // of its Amt
	hasAmt bool
	hasCD  bool
	// domain, family, subFamily and prtry are its BkTxCd.
	domain, family, subFamily, prtry string
	debtor, creditor                 string
	remittance                       []byte
}

// entryStart begins an entry: its statement's id, account and currency
// must be known, since it is handed on at its end.
func (c *camtReader) entryStart() error {
	st := c.st
	if err := c.statementHead(st, c.tokLine); err != nil {
		return err
	}
	if st.Currency == "" {
		return c.o.errorf(c.tokLine, st.path+"/Bal", "entry before any balance or Acct/Ccy: the statement's currency is not known")
	}
	c.ent = &camtEntry{path: c.field()}
	c.ent.Line = c.tokLine
	return nil
}

// entryValue takes a value of the entry itself.
func (c *camtReader) entryValue(slot camtSlot) (err error) {
	e := c.ent
	switch slot {
	case camtSlotAmt:
		if e.ccy != c.st.Currency {
			return c.o.errorf(c.line(), c.field(), "entry in %s on a statement in %s", e.ccy, c.st.Currency)
		}
		e.Amount, err = c.amount(e.ccy)
		e.Currency, e.hasAmt = e.ccy, true
	case camtSlotCdtDbt:
		e.Credit, err = c.creditDebit()
		e.hasCD = true
	case camtSlotRvsl:
		e.Reversal, err = c.reversal()
	case camtSlotSts, camtSlotStsCode:
		err = c.status(slot)
	case camtSlotBookDt, camtSlotBookDtTm:
		e.BookedOn, err = c.date(slot == camtSlotBookDtTm)
	case camtSlotValDt, camtSlotValDtTm:
		e.ValueOn, err = c.date(slot == camtSlotValDtTm)
	case camtSlotBankRef:
		e.BankRef, err = c.textValue()
	case camtSlotDomain:
		e.domain, err = c.textValue()
	case camtSlotFamily:
		e.family, err = c.textValue()
	case camtSlotSubFamily:
		e.subFamily, err = c.textValue()
	case camtSlotPrtryCode:
		e.prtry, err = c.textValue()
	case camtSlotAddtlInfo:
		var s string
		if s, err = c.textValue(); err == nil {
			err = c.remit(s)
		}
	}
	return err
}

func (c *camtReader) reversal() (bool, error) {
	s, err := c.textValue()
	switch {
	case err != nil:
		return false, err
	case s == "true" || s == "1":
		return true, nil
	case s == "false" || s == "0":
		return false, nil
	}
	return false, c.o.errorf(c.line(), c.field(), "%s is not true or false", reconcile.Quote(s))
}

// status reads Sts: its text up to .06, its Cd (or Prtry) from .07.
// The <Sts> around a Cd ends after it, with no text of its own.
func (c *camtReader) status(slot camtSlot) error {
	s, err := c.textValue()
	if err != nil {
		return err
	}
	if slot == camtSlotSts && s == "" && c.ent.Status != "" {
		return nil
	}
	switch s {
	case "BOOK", "PDNG", "INFO":
		if c.ent.Status != "" {
			return c.o.errorf(c.line(), c.field(), "entry status given twice")
		}
		c.ent.Status = s
		return nil
	case "":
		return c.o.errorf(c.line(), c.field(), "empty entry status")
	}
	return c.o.errorf(c.line(), c.field(), "entry status %s: the reader takes BOOK, PDNG and INFO", reconcile.Quote(s))
}

// detailValue takes a value of one of the entry's TxDtls.
func (c *camtReader) detailValue(slot camtSlot) error {
	e := c.ent
	s, err := c.textValue()
	if err != nil || s == "" {
		return err
	}
	switch slot {
	case camtSlotEndToEnd:
		switch {
		case s == "NOTPROVIDED":
		case e.EndToEndID == "":
			e.EndToEndID = s
		default:
			return c.remit(s)
		}
	case camtSlotDebtor:
		if e.debtor == "" {
			e.debtor = s
		}
	case camtSlotCreditor:
		if e.creditor == "" {
			e.creditor = s
		}
	case camtSlotUstrd, camtSlotCdtrRef, camtSlotDocNb:
		return c.remit(s)
	}
	return nil
}

// remit adds s, the value of the element that ends, to the entry's
// remittance.
func (c *camtReader) remit(s string) error {
	if s == "" {
		return nil
	}
	e := c.ent
	if len(e.remittance) > 0 {
		e.remittance = append(e.remittance, ' ')
	}
	e.remittance = append(e.remittance, s...)
	if len(e.remittance) > maxRemittance {
		return c.o.errorf(c.line(), c.field(), "remittance of the entry longer than the %d bytes the reader takes", maxRemittance)
	}
	return nil
}

// entryEnd checks the entry that ends, counts it in its statement and
// hands it on.
func (c *camtReader) entryEnd() error {
	e, st := c.ent, c.st
	c.ent = nil
	switch {
	case !e.hasAmt:
		return c.o.errorf(e.Line, e.path+"/Amt", "entry without Amt")
	case !e.hasCD:
		return c.o.errorf(e.Line, e.path+"/CdtDbtInd", "entry without CdtDbtInd")
	case e.Status == "":
		return c.o.errorf(e.Line, e.path+"/Sts", "entry without Sts")
	}
	e.Account, e.Statement = st.Account, st.ID
	e.TypeCode = e.prtry
	if e.domain != "" {
		e.TypeCode = camtJoin(e.domain, e.family, e.subFamily)
	}
	// A reversal names the parties of what it reverses.
	e.Counterparty = e.debtor
	if e.Credit == e.Reversal {
		e.Counterparty = e.creditor
	}
	e.Remittance = string(e.remittance)
	if !st.Count(e.BankEntry) {
		return c.o.errorf(e.Line, e.path+"/Amt", "the statement's entries add up past what the reader can count")
	}
	return c.fn(e.BankEntry)
}

// camtJoin joins a bank transaction code's domain, family and
// sub-family as "PMNT/RCDT/ESCT", leaving out the parts not given.
func camtJoin(parts ...string) string {
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}
