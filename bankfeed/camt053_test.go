package bankfeed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// camtGood is a small camt.053.001.02 statement, one element group a
// line, that the tests below break one way at a time: line 6 is the
// opening balance, 7 the closing one, 8 the entry.
const camtGood = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
<BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-02T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">100.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">110.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>
<Ntry><Amt Ccy="EUR">10.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt></Ntry>
</Stmt>
</BkToCstmrStmt>
</Document>
`

// Paths of camtGood's elements as errors name them.
const (
	camtStmt1   = "Document/BkToCstmrStmt/Stmt[1]"
	camtNtry1   = camtStmt1 + "/Ntry[1]"
	camtClosing = camtStmt1 + "/Bal[2]/Amt"
)

// camtLine is line n of camtGood, without its line end.
func camtLine(n int) string { return strings.Split(camtGood, "\n")[n-1] }

// camtWith is camtGood with old replaced by new, once; old must be there.
func camtWith(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(camtGood, old) {
		t.Fatalf("%q is not in the statement", old)
	}
	return strings.Replace(camtGood, old, new, 1)
}

func TestCamt053Good(t *testing.T) {
	stmts, entries, err := read(t, "camt053", []byte(camtGood))
	if err != nil {
		t.Fatal(err)
	}
	checkRead(t, stmts, entries)
	if len(stmts) != 1 || len(entries) != 1 {
		t.Fatalf("got %d statements, %d entries, want 1 and 1", len(stmts), len(entries))
	}
	e := entries[0]
	if e.Amount != 1000 || !e.Credit || e.Line != 8 || e.Status != "BOOK" || e.Statement != "S1" ||
		e.Account != "DE89370400440532013000" || !e.BookedOn.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("entry %+v", e)
	}
}

// TestCamt053Facts pins what the golden cases say, so that a wrong
// want.json cannot be refreshed into place unnoticed.
func TestCamt053Facts(t *testing.T) {
	load := func(name string) ([]reconcile.BankStatement, []reconcile.BankEntry) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata", "camt053", name, "input.xml"))
		if err != nil {
			t.Fatal(err)
		}
		stmts, entries, err := read(t, "camt053", data)
		if err != nil {
			t.Fatal(err)
		}
		return stmts, entries
	}

	stmts, entries := load("v02-two-accounts")
	if len(stmts) != 2 || len(entries) != 6 {
		t.Fatalf("v02: %d statements, %d entries, want 2 and 6", len(stmts), len(entries))
	}
	gbp := stmts[1]
	if gbp.Account != "40051512345678" || gbp.Currency != "GBP" || gbp.Opening != 231055 || gbp.Closing != 386194 ||
		gbp.Credits != 219139 || gbp.Debits != 64000 {
		t.Errorf("v02 second statement (Othr/Id, currency of its balances, PRCD): %+v", gbp)
	}
	if e := entries[3]; e.Counterparty != "STRIPE PAYMENTS UK LTD" || e.EndToEndID != "" ||
		e.Remittance != "STRIPE po_1QxYz8LkdIwHu7ixQ2wEr9aB" || e.Amount != 120433 || e.Currency != "GBP" {
		t.Errorf("v02 Stripe payout: %+v", e)
	}
	if e := entries[2]; e.TypeCode != "NCHG+805" || e.Credit || e.Amount != 1290 {
		t.Errorf("v02 fee with a proprietary code only: %+v", e)
	}

	stmts, entries = load("v04-batch")
	batch := entries[0]
	if batch.Amount != 315000 || batch.EndToEndID != "E2E-KUNDE-7781" || batch.Counterparty != "Muster Handels AG" ||
		batch.Remittance != "000000000000020260311000186 R-2026-0412 000000000000020260311000412 ORDER-55120 "+
			"RF18539007547034 SAMMELGUTSCHRIFT QR-IBAN VERARBEITUNG VOM 11.03.2026 PAKET ID: 260311CH00A1B2C3" {
		t.Errorf("v04 batch of three: %+v", batch)
	}
	if s := stmts[0]; s.Credits != 742685 || s.Debits != 31240 || s.Closing != 3271855 || s.Entries != 3 {
		t.Errorf("v04 statement: %+v", s)
	}

	stmts, entries = load("v08-status-code")
	if s := stmts[0]; s.Opening != 712035 || s.Closing != 1443643 || s.Credits != 740508 || s.Debits != 8900 || s.Entries != 5 {
		t.Errorf("v08 statement (the pending debit not counted): %+v", s)
	}
	if e := entries[2]; !e.Reversal || !e.Credit || e.Counterparty != "Maria Schneider" || e.TypeCode != "PMNT/ICDT/RRTN" {
		t.Errorf("v08 returned refund: %+v", e)
	}
	if e := entries[3]; e.Status != "PDNG" || !e.BookedOn.IsZero() || e.Amount != 120000 || e.Counterparty != "Lagerhaus Nord GmbH" {
		t.Errorf("v08 pending debit: %+v", e)
	}
	if e := entries[1]; !e.BookedOn.Equal(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)) || e.Remittance != "BeispielShopDE TX4718293XT batch 14" {
		t.Errorf("v08 Adyen payout booked with a DtTm: %+v", e)
	}

	stmts, _ = load("v04-no-entries")
	if s := stmts[0]; s.Opening != -21540 || s.Closing != -21540 || s.Entries != 0 || s.Account != "0417164300" {
		t.Errorf("v04 overdrawn statement without entries: %+v", s)
	}
}

// TestCamt053Dialects reads what real files vary in besides the goldens.
func TestCamt053Dialects(t *testing.T) {
	ns := `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">`
	tx := `<NtryDtls><Btch><NbOfTxs>2</NbOfTxs>` +
		`<TxDtls><Refs><EndToEndId>E1</EndToEndId></Refs><RltdPties><Cdtr><Nm>Us</Nm></Cdtr><Dbtr><Nm>Payer One</Nm></Dbtr></RltdPties>` +
		`<RmtInf><Ustrd>first</Ustrd></RmtInf></TxDtls>` +
		`<TxDtls><Refs><EndToEndId>E2</EndToEndId></Refs><RltdPties><Dbtr><Nm>Payer Two</Nm></Dbtr></RltdPties></TxDtls>` +
		`</Btch></NtryDtls></Ntry>`
	for _, c := range []struct {
		name, old, new string
		check          func(e reconcile.BankEntry) bool
	}{
		{"no namespace", ns, `<Document>`, nil},
		{"namespace prefix", "", "", nil},
		{"utf8 label", `encoding="UTF-8"`, `encoding="utf8"`, nil},
		{"no declaration", `<?xml version="1.0" encoding="UTF-8"?>`, `<!-- exported -->`, nil},
		{"status code", `<Sts>BOOK</Sts>`, `<Sts><Cd>BOOK</Cd></Sts>`, nil},
		{"reversal 1", `<Sts>`, `<RvslInd>1</RvslInd><Sts>`, func(e reconcile.BankEntry) bool { return e.Reversal && e.Credit }},
		{"tab and line break in text", `</BookgDt>`, "</BookgDt><AddtlNtryInf> two\tparts\n  here </AddtlNtryInf>",
			func(e reconcile.BankEntry) bool { return e.Remittance == "two parts   here" }},
		{"TxDtls under Btch", `</Ntry>`, tx, func(e reconcile.BankEntry) bool {
			return e.EndToEndID == "E1" && e.Counterparty == "Payer One" && e.Remittance == "first E2"
		}},
		{"a credit names its debtor", `</Ntry>`, `<NtryDtls><TxDtls><RltdPties><Dbtr><Pty><Nm>Payer</Nm></Pty></Dbtr>` +
			`<Cdtr><Pty><Nm>Us</Nm></Pty></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>`,
			func(e reconcile.BankEntry) bool { return e.Counterparty == "Payer" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := camtGood
			if c.old != "" {
				data = camtWith(t, c.old, c.new)
			} else {
				data = strings.Replace(strings.Replace(data, "<Document", "<c:Document xmlns:c=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\"", 1),
					"</Document>", "</c:Document>", 1)
			}
			stmts, entries, err := read(t, "camt053", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			checkRead(t, stmts, entries)
			if len(entries) != 1 || entries[0].Amount != 1000 {
				t.Fatalf("entries %+v", entries)
			}
			if c.check != nil && !c.check(entries[0]) {
				t.Errorf("entry %+v", entries[0])
			}
		})
	}
}

// TestCamt053Debit reads debits: a debit names its creditor; a credit
// reversed (taken back) keeps the parties of the credit, so it names the
// debtor that paid it.
func TestCamt053Debit(t *testing.T) {
	parties := `<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>Payer</Nm></Dbtr><Cdtr><Nm>Payee</Nm></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>`
	for _, c := range []struct {
		name, rvsl, want string
	}{
		{"debit", "", "Payee"},
		{"credit reversed", "<RvslInd>true</RvslInd>", "Payer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := camtWith(t, `<CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt></Ntry>`,
				`<CdtDbtInd>DBIT</CdtDbtInd>`+c.rvsl+`<Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt>`+parties)
			data = strings.Replace(data, `110.00`, `90.00`, 1)
			stmts, entries, err := read(t, "camt053", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			checkRead(t, stmts, entries)
			e := entries[0]
			if e.Credit || e.Reversal != (c.rvsl != "") || e.Counterparty != c.want || stmts[0].Debits != 1000 {
				t.Errorf("entry %+v, statement %+v", e, stmts[0])
			}
		})
	}
}

// TestCamt053Callback stops the read with fn's error, as it is.
func TestCamt053Callback(t *testing.T) {
	stop := errors.New("stop")
	r, _ := Lookup("camt053")
	_, err := r(strings.NewReader(camtGood), Options{Name: "statement"}, func(reconcile.BankEntry) error { return stop })
	if err != stop {
		t.Fatalf("got %v, want fn's error as is", err)
	}
}

func TestCamt053Unbalanced(t *testing.T) {
	data := camtWith(t, `110.00`, `110.01`)
	refused(t, "camt053", data, 7, camtClosing, "is not the closing balance 110.01")
	_, _, err := read(t, "camt053", []byte(data))
	if !errors.Is(err, reconcile.ErrControlTotal) {
		t.Errorf("got %v, want ErrControlTotal", err)
	}
}

// camtRefusal is a file the reader must refuse, and where and why.
type camtRefusal struct {
	name, data  string
	line        int
	field, says string
}

func camtRefuses(t *testing.T, cases []camtRefusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused(t, "camt053", c.data, c.line, c.field, c.says)
		})
	}
}

// TestCamt053RefusedXML refuses what is not a camt.053 statement as a
// bank writes one: hostile XML, other encodings, other messages, a
// truncated file.
func TestCamt053RefusedXML(t *testing.T) {
	deep := strings.Repeat("<X>", 40)
	deepField := "Document/BkToCstmrStmt/GrpHdr" + strings.Repeat("/X", camtMaxDepth-3)
	laughs := `<!DOCTYPE Document [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>` + "\n"
	xxe := `<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` + "\n"
	decl := `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	camtRefuses(t, []camtRefusal{
		{"billion laughs", strings.Replace(camtWith(t, `</BookgDt>`, `</BookgDt><AddtlNtryInf>&lol2;</AddtlNtryInf>`), decl, decl+laughs, 1),
			2, "", "DOCTYPE"},
		{"external entity", strings.Replace(camtWith(t, `</BookgDt>`, `</BookgDt><AddtlNtryInf>&xxe;</AddtlNtryInf>`), decl, decl+xxe, 1),
			2, "", "DOCTYPE"},
		{"undefined entity", camtWith(t, `<Sts>BOOK</Sts>`, `<Sts>&book;</Sts>`), 8, camtNtry1 + "/Sts", "invalid character entity &book;"},
		{"latin-1", camtWith(t, `encoding="UTF-8"`, `encoding="ISO-8859-1"`), 1, "", `declared encoding "ISO-8859-1"`},
		{"utf-16", "\xff\xfe<\x00", 1, "", "UTF-16"},
		{"depth bomb", camtWith(t, `<MsgId>`, deep+`<MsgId>`), 4, deepField, "nested more than 32 deep"},
		{"10 MB text", camtWith(t, `</BookgDt>`, `</BookgDt><AddtlNtryInf>`+strings.Repeat("A", 10<<20)+`</AddtlNtryInf>`),
			8, camtNtry1 + "/AddtlNtryInf", "longer than"},
		{"text past maxText", camtWith(t, `</BookgDt>`, `</BookgDt><AddtlNtryInf>`+strings.Repeat("A", maxText+1)+`</AddtlNtryInf>`),
			8, camtNtry1 + "/AddtlNtryInf", "text longer than the 4096 bytes"},
		{"NUL reference", camtWith(t, `<Id>S1</Id>`, `<Id>S&#0;1</Id>`), 5, camtStmt1 + "/Id", "U+0000"},
		{"NUL byte", camtWith(t, `<Id>S1</Id>`, "<Id>S\x001</Id>"), 5, camtStmt1 + "/Id", "NUL byte"},
		{"control character", camtWith(t, `<Id>S1</Id>`, `<Id>S&#127;1</Id>`), 5, camtStmt1 + "/Id", "control character U+007F"},
		{"invalid UTF-8", camtWith(t, `<Id>S1</Id>`, "<Id>S\xff1</Id>"), 5, camtStmt1 + "/Id", "invalid UTF-8"},
		{"CR alone", camtWith(t, "</Acct>\n", "</Acct>\r"), 5, camtStmt1, "CR without LF"},
		{"processing instruction", camtWith(t, `<BkToCstmrStmt>`, `<?php echo 1; ?><BkToCstmrStmt>`), 3, "Document", "processing instruction"},
		{"truncated", camtGood[:strings.Index(camtGood, "</Stmt>")], 9, camtStmt1, "the file ends inside <Stmt>: it is truncated"},
		{"truncated in a tag", camtGood[:strings.Index(camtGood, "</Stmt>")+3], 9, camtStmt1, "truncated"},
		{"camt.052", strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(camtGood, "BkToCstmrStmt", "BkToCstmrAcctRpt"),
			"Stmt>", "Rpt>"), "camt.053", "camt.052"), 3, "Document/BkToCstmrAcctRpt", "camt.052 account report"},
		{"camt.054", strings.ReplaceAll(camtGood, "BkToCstmrStmt", "BkToCstmrDbtCdtNtfctn"), 3, "Document/BkToCstmrDbtCdtNtfctn", "camt.054"},
		{"camt.053.001.10", camtWith(t, "camt.053.001.02", "camt.053.001.10"), 3, "Document/BkToCstmrStmt", `namespace "urn:iso:std:iso:20022:tech:xsd:camt.053.001.10"`},
		{"root not Document", strings.ReplaceAll(camtGood, "Document", "Envelope"), 2, "Envelope", "not the Document"},
		{"a second Document", camtGood + camtGood[strings.Index(camtGood, "<Document"):], 12, "", "after the Document"},
		{"text after Document", camtGood + "trailing", 11, "", "text outside the Document"},
		{"empty", "", 1, "", "no Document element"},
		{"attributes", camtWith(t, `<Ntry>`, `<Ntry`+camtAttrs(20)+`>`),
			8, camtNtry1, "20 attributes"},
		{"name not UTF-8", camtWith(t, `<MsgId>M1</MsgId>`, "<M\xff/>"), 4, "Document/BkToCstmrStmt/GrpHdr", "invalid XML name"},
		{"long name", camtWith(t, `<MsgId>M1</MsgId>`, `<`+strings.Repeat("N", 100)+`/>`), 4, "Document/BkToCstmrStmt/GrpHdr", "element name of 100 bytes"},
	})
}

// TestCamt053RefusedValues refuses statements whose values or structure
// the reader cannot take whole.
func TestCamt053RefusedValues(t *testing.T) {
	camtRefuses(t, []camtRefusal{
		{"three decimals", camtWith(t, `>10.00<`, `>10.005<`), 8, camtNtry1 + "/Amt", "more decimals than the currency has"},
		{"exponent", camtWith(t, `>10.00<`, `>1e3<`), 8, camtNtry1 + "/Amt", "not a plain decimal"},
		{"sign", camtWith(t, `>10.00<`, `>-5.00<`), 8, camtNtry1 + "/Amt", "has a sign"},
		{"decimal comma", camtWith(t, `>10.00<`, `>1,00<`), 8, camtNtry1 + "/Amt", "not a plain decimal"},
		{"past int64", camtWith(t, `>10.00<`, `>92233720368547758.08<`), 8, camtNtry1 + "/Amt", "out of range"},
		{"empty amount", camtWith(t, `>10.00<`, `><`), 8, camtNtry1 + "/Amt", "empty <Amt>"},
		{"unknown currency", camtWith(t, `<Amt Ccy="EUR">10.00`, `<Amt Ccy="XXX">10.00`), 8, camtNtry1 + "/Amt", `unknown currency "XXX"`},
		{"no currency", camtWith(t, `<Amt Ccy="EUR">10.00`, `<Amt>10.00`), 8, camtNtry1 + "/Amt", "without its Ccy"},
		{"entry currency", camtWith(t, `<Amt Ccy="EUR">10.00`, `<Amt Ccy="USD">10.00`), 8, camtNtry1 + "/Amt", "entry in USD on a statement in EUR"},
		{"CdtDbtInd XXX", camtWith(t, `<CdtDbtInd>CRDT</CdtDbtInd><Sts>`, `<CdtDbtInd>XXX</CdtDbtInd><Sts>`), 8, camtNtry1 + "/CdtDbtInd", "neither CRDT nor DBIT"},
		{"no Amt", camtWith(t, `<Amt Ccy="EUR">10.00</Amt><CdtDbtInd>CRDT`, `<CdtDbtInd>CRDT`), 8, camtNtry1 + "/Amt", "entry without Amt"},
		{"no CdtDbtInd", camtWith(t, `<CdtDbtInd>CRDT</CdtDbtInd><Sts>`, `<Sts>`), 8, camtNtry1 + "/CdtDbtInd", "without CdtDbtInd"},
		{"no Sts", camtWith(t, `<Sts>BOOK</Sts>`, ``), 8, camtNtry1 + "/Sts", "entry without Sts"},
		{"status FUTR", camtWith(t, `<Sts>BOOK</Sts>`, `<Sts><Cd>FUTR</Cd></Sts>`), 8, camtNtry1 + "/Sts/Cd", `status "FUTR"`},
		{"status twice", camtWith(t, `<Sts>BOOK</Sts>`, `<Sts>BOOK</Sts><Sts>PDNG</Sts>`), 8, camtNtry1 + "/Sts", "given twice"},
		{"RvslInd yes", camtWith(t, `<Sts>`, `<RvslInd>yes</RvslInd><Sts>`), 8, camtNtry1 + "/RvslInd", "not true or false"},
		{"no such day", camtWith(t, `<BookgDt><Dt>2026-03-02`, `<BookgDt><Dt>2026-02-30`), 8, camtNtry1 + "/BookgDt/Dt", "that exists"},
		{"time as a date", camtWith(t, `<BookgDt><Dt>2026-03-02`, `<BookgDt><Dt>2026-03-02T10:00:00`), 8, camtNtry1 + "/BookgDt/Dt", "that exists"},
		{"bad time", camtWith(t, `<BookgDt><Dt>2026-03-02</Dt>`, `<BookgDt><DtTm>2026-03-02T25:00:00</DtTm>`), 8, camtNtry1 + "/BookgDt/DtTm", "that exists"},
		{"balance sign", camtWith(t, `>100.00<`, `>-100.00<`), 6, camtStmt1 + "/Bal[1]/Amt", "has a sign"},
		{"balance currency", camtWith(t, `<Amt Ccy="EUR">110.00`, `<Amt Ccy="GBP">110.00`), 7, camtClosing, "balance in GBP on a statement in EUR"},
		{"balance CdtDbtInd", camtWith(t, `</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>`, `</Amt><Dt><Dt>2026-03-02</Dt></Dt></Bal>`),
			6, camtStmt1 + "/Bal[1]/CdtDbtInd", "balance without CdtDbtInd"},
		{"two closing balances", camtWith(t, "</Bal>\n<Ntry>", "</Bal>\n"+camtLine(7)+"<Ntry>"),
			8, camtStmt1 + "/Bal[3]", "a second CLBD"},
		{"no closing balance", camtWith(t, `<Cd>CLBD</Cd>`, `<Cd>CLAV</Cd>`), 9, camtStmt1 + "/Bal", "without a closing balance"},
		{"no opening balance", camtWith(t, `<Cd>OPBD</Cd>`, `<Cd>ITBD</Cd>`), 9, camtStmt1 + "/Bal", "without an opening balance"},
		{"no balances", strings.Replace(strings.Replace(camtGood, camtLine(6)+"\n", "", 1),
			camtLine(7)+"\n", "", 1), 7, camtStmt1 + "/Bal", "statement without balances"},
		{"balance after entries", camtWith(t, "</Ntry>", "</Ntry><Bal></Bal>"), 8, camtStmt1 + "/Bal[3]", "balance after the statement's entries"},
		{"entry before Id", camtWith(t, `<Id>S1</Id>`, ``), 8, camtStmt1 + "/Id", "statement without its Id"},
		{"no account", camtWith(t, `<Id><IBAN>DE89370400440532013000</IBAN></Id>`, ``), 8, camtStmt1 + "/Acct/Id", "without its account"},
		{"no statement", camtGood[:strings.Index(camtGood, "<Stmt>")] + "</BkToCstmrStmt></Document>", 5, "Document/BkToCstmrStmt/Stmt", "no statement"},
		{"sums past int64", camtWith(t, "</Ntry>\n", "</Ntry>"+strings.Repeat(strings.Replace(camtLine(8), "10.00", "92233720368547758.07", 1), 2)+"\n"),
			8, "Document/BkToCstmrStmt/Stmt[1]/Ntry[2]/Amt", "add up past"},
	})
}

// camtAttrs is n distinct attributes.
func camtAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(` a`)
		b.WriteString(strings.Repeat("b", i))
		b.WriteString(`="1"`)
	}
	return b.String()
}
