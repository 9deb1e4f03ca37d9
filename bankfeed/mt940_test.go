package bankfeed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// mtReadCase reads a golden case's input through the MT940 reader.
func mtReadCase(t *testing.T, name string) ([]reconcile.BankStatement, []reconcile.BankEntry) {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "mt940", name, "input.*"))
	if err != nil || len(inputs) != 1 {
		t.Fatalf("case %s: %v %v", name, inputs, err)
	}
	data, err := os.ReadFile(inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	stmts, entries, err := read(t, "mt940", data)
	if err != nil {
		t.Fatalf("case %s: %v", name, err)
	}
	return stmts, entries
}

func mtUTC(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// TestMT940Facts pins what the golden cases must say, so that a wrong
// want.json cannot be refreshed into place unnoticed.
func TestMT940Facts(t *testing.T) {
	t.Run("ing-sepa", func(t *testing.T) {
		stmts, entries := mtReadCase(t, "ing-sepa")
		if len(stmts) != 1 || len(entries) != 4 {
			t.Fatalf("got %d statements, %d entries, want 1, 4", len(stmts), len(entries))
		}
		st := stmts[0]
		// :28C: is wrapped after 0006: the number is 00069.
		if st.ID != "P260310000000001/00069" || st.Account != "NL69INGB0123456789EUR" || st.Currency != "EUR" {
			t.Errorf("statement %q of %q in %s", st.ID, st.Account, st.Currency)
		}
		if st.Opening != 730211 || st.Closing != 3182231 || st.Credits != 2462265 || st.Debits != 10245 {
			t.Errorf("balances %d → %d, credits %d, debits %d", st.Opening, st.Closing, st.Credits, st.Debits)
		}
		stripe, adyen, ddt := entries[0], entries[1], entries[2]
		if stripe.Amount != 941805 || !stripe.Credit || stripe.BankRef != "00000000001101" || stripe.Line != 10 {
			t.Errorf("stripe payout: %+v", stripe)
		}
		if stripe.EndToEndID != "STRIPE-PO-1QxYzA2bC3dE4fG5hI6" || stripe.Counterparty != "STRIPE PAYMENTS EUROPE LTD" ||
			!strings.Contains(stripe.Remittance, "STRIPE PAYOUT po_1QxYzA2bC3dE4fG5hI6jK7lM") {
			t.Errorf("stripe payout: %+v", stripe)
		}
		if adyen.Amount != 1520460 || adyen.EndToEndID != "" || !strings.HasSuffix(adyen.Remittance, "TX4718293XT batch 12") {
			t.Errorf("adyen payout: %+v", adyen)
		}
		// The /EREF/ is cut over two lines and the mandate over three.
		if ddt.Credit || ddt.Amount != 8995 || ddt.EndToEndID != "INV-2026-03-00417" || ddt.Counterparty != "Hosting B.V." ||
			!strings.Contains(ddt.Remittance, "MND-00417") {
			t.Errorf("direct debit: %+v", ddt)
		}
	})
	t.Run("german", func(t *testing.T) {
		stmts, entries := mtReadCase(t, "german")
		if len(stmts) != 2 || len(entries) != 4 {
			t.Fatalf("got %d statements, %d entries, want 2, 4", len(stmts), len(entries))
		}
		if stmts[0].ID != "STARTUMSE/00012/001" || stmts[0].Closing != 2197324 || stmts[1].Opening != 2197324 || stmts[1].Closing != 1950834 {
			t.Errorf("statements %+v", stmts)
		}
		e := entries[0]
		if e.EndToEndID != "STRIPE-PO-1QxYzA2bC3dE4fG5hI6" || e.Counterparty != "STRIPE PAYMENTS EUROPE LIMITED" ||
			!strings.Contains(e.Remittance, "po_1QxYzA2bC3dE4fG5hI6jK7lM") {
			t.Errorf("stripe payout: %+v", e)
		}
		// The line breaks after DR: the amount is on the next line.
		if e := entries[2]; e.Amount != 245000 || e.Credit || e.TypeCode != "N005" || e.EndToEndID != "RE-2026-0311-LAGER-0004-17" {
			t.Errorf("direct debit: %+v", e)
		}
		if e := entries[3]; e.Remittance != "Kontofuehrung 02/2026 Entgelt Abrechnung vom 16.03.2026" {
			t.Errorf("charges remittance %q", e.Remittance)
		}
	})
	t.Run("rabobank-reversal", func(t *testing.T) {
		stmts, entries := mtReadCase(t, "rabobank-reversal")
		if len(stmts) != 2 || len(entries) != 4 || stmts[1].Credits != 160995 || stmts[1].Debits != 26210 || stmts[1].Closing != 544785 {
			t.Fatalf("statements %+v, %d entries", stmts, len(entries))
		}
		want := []struct {
			credit, reversal  bool
			amount            int64
			booked, valueDate time.Time
		}{
			{true, false, 152000, mtUTC(2026, 1, 1), mtUTC(2025, 12, 31)}, // entry 0101, value 251231
			{false, false, 1210, mtUTC(2025, 12, 31), mtUTC(2026, 1, 2)},  // entry 1231, value 260102
			{false, true, 25000, mtUTC(2026, 1, 2), mtUTC(2026, 1, 2)},    // RC: a credit reversed
			{true, true, 8995, mtUTC(2026, 1, 2), mtUTC(2026, 1, 2)},      // RD: a debit reversed
		}
		for i, w := range want {
			e := entries[i]
			if e.Credit != w.credit || e.Reversal != w.reversal || e.Amount != w.amount || !e.BookedOn.Equal(w.booked) || !e.ValueOn.Equal(w.valueDate) {
				t.Errorf("entry %d: got %v %v %d booked %s value %s, want %+v", i, e.Credit, e.Reversal, e.Amount,
					e.BookedOn.Format(time.DateOnly), e.ValueOn.Format(time.DateOnly), w)
			}
		}
		if e := entries[2]; e.Counterparty != "Stripe Payments Europe Ltd" || !strings.Contains(e.Remittance, "po_1QzR8sT9uV0wX1yZ2aB3cD4e") {
			t.Errorf("reversed payout: %+v", e)
		}
	})
	t.Run("swift-blocks", func(t *testing.T) {
		stmts, entries := mtReadCase(t, "swift-blocks")
		if len(stmts) != 3 || len(entries) != 5 {
			t.Fatalf("got %d statements, %d entries, want 3, 5", len(stmts), len(entries))
		}
		if stmts[2].Account != "NL47SNSB0987654321" || stmts[2].Entries != 0 || stmts[1].Closing != 2411234 {
			t.Errorf("statements %+v", stmts)
		}
		if e := entries[4]; !e.BookedOn.Equal(mtUTC(2026, 3, 3)) || e.Amount != 2178 || !strings.Contains(e.Remittance, "Factuur 8812734411") {
			t.Errorf("direct debit: %+v", e)
		}
	})
}

// mtDoc is a statement file of lines, LF-ended.
func mtDoc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// mtStmt is a statement of one entry, its :61: and its closing balance
// given.
func mtStmt(line61, closing string) string {
	return mtDoc(":20:STMT1", ":25:NL69INGB0123456789", ":28C:1/1", ":60F:C260310EUR100,00",
		line61, ":86:/REMI/payout po_1/", closing)
}

const mtGood61, mtGood62 = ":61:2603100310C50,00NTRFNONREF//B1", ":62F:C260310EUR150,00"

func TestMT940Good(t *testing.T) {
	stmts, entries, err := read(t, "mt940", []byte(mtStmt(mtGood61, mtGood62)))
	if err != nil || len(stmts) != 1 || len(entries) != 1 || entries[0].Amount != 5000 || entries[0].Remittance != "payout po_1" {
		t.Fatalf("got %+v %+v %v", stmts, entries, err)
	}
}

func TestMT940Refused(t *testing.T) {
	good := mtStmt(mtGood61, mtGood62)
	sub := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	long86 := ":86:" + strings.Repeat("y", 60) + strings.Repeat("\n"+strings.Repeat("y", 65), 1100)
	for _, c := range []struct {
		name, data  string
		line        int
		field, says string
	}{
		{"bare CR", sub(":25:NL69INGB0123456789\n", ":25:NL69INGB0123456789\r"), 2, "", "CR without LF"},
		{"NUL", sub("payout", "pay\x00out"), 6, "", "NUL"},
		{"invalid UTF-8", sub("payout", "pay\xffout"), 6, "", "invalid UTF-8"},
		{"control character", sub("payout", "pay\x1bout"), 6, "", "control character"},
		{"tab", sub("payout", "pay\tout"), 6, "", "control character"},
		{"10 MB line", sub("payout", strings.Repeat("x", 10<<20)), 6, "", "longer than 4096 bytes"},
		{":61: past maxText", sub(mtGood61, mtGood61+strings.Repeat("\n"+strings.Repeat("z", 65), 70)), 5, ":61:", "runs past 4096"},
		{":86: past maxRemittance", sub(":86:/REMI/payout po_1/", long86), 6, ":86:", "runs past 65536"},
		{":61: before :60F:", mtDoc(":20:S", ":25:A", ":28C:1", mtGood61, ":60F:C260310EUR100,00", mtGood62), 4, ":61:", "before the opening balance"},
		{"two :60F:", sub(mtGood61, ":60F:C260310EUR100,00\n"+mtGood61), 5, ":60F:", "second opening balance"},
		{"no :60F:", mtDoc(":20:S", ":25:A", ":28C:1", mtGood62), 4, ":62F:", "before the opening balance"},
		{"value date 261301", sub("2603100310C", "2613010310C"), 5, ":61:", `value date "261301" does not exist`},
		{"value date 30 February", sub("2603100310C", "2602300310C"), 5, ":61:", "does not exist"},
		{"value date not digits", sub("2603100310C", "26031A0310C"), 5, ":61:", "not a date YYMMDD"},
		{"entry date 1340", sub("2603100310C", "2603101340C"), 5, ":61:", `entry date "1340" does not exist`},
		{"thousands separator", sub("C50,00", "C1.234,56"), 5, ":61:", `"1.234,56" is not digits with a decimal comma`},
		{"two commas", sub("C50,00", "C1,234,56"), 5, ":61:", "not digits with a decimal comma"},
		{"no amount", sub("C50,00", "C,50"), 5, ":61:", "not digits with a decimal comma"},
		{"3 decimals in EUR", sub("C50,00", "C50,001"), 5, ":61:", `"50,001" has more decimals than EUR has`},
		{"amount past int64", sub("C50,00", "C99999999999999999999,00"), 5, ":61:", "past the largest"},
		{"balance past int64", sub("EUR100,00", "EUR99999999999999999999,00"), 4, ":60F:", "past the largest"},
		{"unknown currency", sub("EUR100,00", "XYZ100,00"), 4, ":60F:", `unknown currency "XYZ"`},
		{"lower-case currency", sub("EUR100,00", "eur100,00"), 4, ":60F:", "unknown currency"},
		{"D/C mark X", sub("0310C50", "0310X50"), 5, ":61:", `mark "X" is not C, D, RC or RD`},
		{"D/C mark RX", sub("0310C50", "0310RX50"), 5, ":61:", `mark "RX" is not C, D, RC or RD`},
		{"balance mark X", sub(":60F:C", ":60F:X"), 4, ":60F:", `mark "X" is not C or D`},
		{"text after balance", sub(mtGood62, mtGood62+" EUR"), 7, ":62F:", "after the amount"},
		{"no transaction type", sub("NTRFNONREF//B1", ""), 5, ":61:", "transaction type"},
		{"transaction type n-rf", sub("NTRF", "N-RF"), 5, ":61:", "transaction type"},
		{"a :61: in another currency", sub("0310C50", "0310CD50"), 5, ":61:", "funds code D is not the third letter of the statement's currency EUR"},
		{"closing in another currency", sub(mtGood62, ":62F:C260310USD150,00"), 7, ":62F:", "closing balance in USD, the opening balance in EUR"},
		{"unbalanced", sub(mtGood62, ":62F:C260310EUR150,01"), 7, ":62F:", "control total does not add up"},
		{"truncated without :62F:", strings.TrimSuffix(good, mtGood62+"\n"), 6, ":62F:", "ends without its closing balance"},
		{"cut at :20:", mtDoc(":20:S"), 1, ":60F:", "no opening balance"},
		{":86: without :61:", sub(mtGood61+"\n", ""), 5, ":86:", "follows no :61:"},
		{"two :86:", sub(mtGood62, ":86:again\n"+mtGood62), 7, ":86:", "follows no :61:"},
		{":61: after :62F:", mtStmt(mtGood61, mtGood62+"\n"+mtGood61), 8, ":61:", "after the closing balance"},
		{":25: after :60F:", sub(mtGood61, ":25:B\n"+mtGood61), 5, ":25:", "after the opening balance"},
		{"two :25:", sub(":28C:", ":25:B\n:28C:"), 3, ":25:", "second account"},
		{"no :25:", sub(":25:NL69INGB0123456789\n", ""), 3, ":60F:", "before the account :25:"},
		{"no :28C:", sub(":28C:1/1\n", ""), 3, ":60F:", "before the statement number"},
		{"empty :25:", sub(":25:NL69INGB0123456789", ":25: "), 2, ":25:", "empty field"},
		{":64: before :62F:", sub(mtGood62, ":64:C260310EUR150,00\n"+mtGood62), 7, ":64:", "before the closing balance"},
		{"statement twice", good + good, 8, ":20:", `statement "STMT1/1/1" of account "NL69INGB0123456789" again`},
		{"field before :20:", ":25:A\n" + good, 1, ":25:", "outside a statement"},
		{"junk line", "<html>\n" + good, 1, "", "neither a field"},
		{"empty file", "", 0, ":20:", "no MT940 statement"},
		{"only blank lines", "\n\n-\n", 3, ":20:", "no MT940 statement"},
		{"block 2 of an MT950", "{1:F01BANKBEBBAXXX0000000000}{2:O950BANKBEBBXXXXN}{4:\n" + good + "-}\n", 1, "{2:", "not a message of type 940"},
		{"block 4 left open", "{1:F01BANKBEBBAXXX0000000000}{2:O940BANKBEBBXXXXN}{4:\n" + good, 8, "{4:", "block {4: of line 1 is not closed"},
		{"block 4 opened twice", "{1:F01BANKBEBBAXXX0000000000}{4:\n" + good + "{1:F01BANKBEBBAXXX0000000000}{4:\n", 9, "{4:", "not closed"},
		{"block not closed", "{1:F01BANKBEBBAXXX0000000000\n" + good, 1, "{1:", "not closed on its line"},
		{"text after {4:", "{1:F01BANKBEBBAXXX0000000000}{4::20:X\n" + good, 1, "{4:", "after {4: on its line"},
		{"} without {4:", good + "-}\n", 8, "", "closes no block {4:"},
		{"credits past int64", mtDoc(":20:S", ":25:A", ":28C:1", ":60F:C260310EUR0,", ":61:260310C92233720368547758,07NTRFNONREF",
			":61:260310C1,NTRFNONREF", ":62F:C260310EUR1,"), 6, ":61:", "credits run past"},
	} {
		t.Run(c.name, func(t *testing.T) { refused(t, "mt940", c.data, c.line, c.field, c.says) })
	}
}

func TestMT940ControlTotal(t *testing.T) {
	_, _, err := read(t, "mt940", []byte(mtStmt(mtGood61, ":62F:C260310EUR150,01")))
	if !errors.Is(err, reconcile.ErrControlTotal) {
		t.Fatalf("got %v, want an error wrapping ErrControlTotal", err)
	}
	if !strings.Contains(err.Error(), "statement:7: column :62F:") {
		t.Errorf("error %q does not name line 7 and :62F:", err)
	}
	// :62M: is checked per message, and named as such.
	_, _, err = read(t, "mt940", []byte(mtStmt(mtGood61, ":62M:C260310EUR149,00")))
	if !errors.Is(err, reconcile.ErrControlTotal) || !strings.Contains(err.Error(), "column :62M:") {
		t.Errorf("got %v, want a control total naming :62M:", err)
	}
}

// TestMT940Stream holds the reader to streaming: entries reach fn as
// they are read, before a later fault; fn's error stops the read and is
// returned as is.
func TestMT940Stream(t *testing.T) {
	r, _ := Lookup("mt940")
	data := mtStmt(mtGood61, mtGood62) + mtDoc(":20:S2", ":25:A", ":28C:2", ":60F:C260310EUR1,00",
		":61:2603100310C1,00NTRFNONREF", ":62F:C260310EUR9,99")
	var got int
	_, err := r(strings.NewReader(data), Options{Name: "f"}, func(reconcile.BankEntry) error { got++; return nil })
	if !errors.Is(err, reconcile.ErrControlTotal) || got != 2 {
		t.Errorf("got %d entries and %v, want 2 entries, then the control total", got, err)
	}
	stop := errors.New("stop")
	_, err = r(strings.NewReader(data), Options{Name: "f"}, func(reconcile.BankEntry) error { return stop })
	if err != stop {
		t.Errorf("got %v, want fn's error as is", err)
	}
}

func TestMT940Lines(t *testing.T) {
	for _, c := range []struct {
		name, data string
		check      func(e reconcile.BankEntry) bool
	}{
		{"CRLF", strings.ReplaceAll(mtStmt(mtGood61, mtGood62), "\n", "\r\n"),
			func(e reconcile.BankEntry) bool { return e.BankRef == "B1" }},
		{"byte order mark", "\xef\xbb\xbf" + mtStmt(mtGood61, mtGood62),
			func(e reconcile.BankEntry) bool { return e.Amount == 5000 }},
		{"no line end at the end", strings.TrimSuffix(mtStmt(mtGood61, mtGood62), "\n"),
			func(e reconcile.BankEntry) bool { return e.Amount == 5000 }},
		// A time wrapped so that a line starts :26: continues the field.
		{"wrapped time", strings.Replace(mtStmt(mtGood61, mtGood62), "po_1/", "po_1 at 2026-03-10T16\n:26:37/", 1),
			func(e reconcile.BankEntry) bool { return e.Remittance == "payout po_1 at 2026-03-10T16:26:37" }},
		// A reference cut over lines comes out whole.
		{"reference cut", strings.Replace(mtStmt(mtGood61, mtGood62), "/REMI/payout po_1/", "/EREF/po_1Qx\nYz//REMI/x/", 1),
			func(e reconcile.BankEntry) bool { return e.EndToEndID == "po_1QxYz" }},
		{"customer reference", strings.Replace(mtStmt(mtGood61, mtGood62), "NONREF//B1", "CUST-7 //B1\nextra", 1),
			func(e reconcile.BankEntry) bool {
				return e.EndToEndID == "CUST-7" && e.Remittance == "extra payout po_1"
			}},
		{"bank reference NONREF", strings.Replace(mtStmt(mtGood61, mtGood62), "NONREF//B1", "01916//NONREF", 1),
			func(e reconcile.BankEntry) bool { return e.EndToEndID == "01916" && e.BankRef == "" }},
		{"amount 50,", strings.Replace(mtStmt(mtGood61, mtGood62), "C50,00", "C50,", 1),
			func(e reconcile.BankEntry) bool { return e.Amount == 5000 }},
		{"funds code", strings.Replace(mtStmt(mtGood61, mtGood62), "C50,00", "CR50,00", 1),
			func(e reconcile.BankEntry) bool { return e.Credit && e.Amount == 5000 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			stmts, entries, err := read(t, "mt940", []byte(c.data))
			if err != nil || len(stmts) != 1 || len(entries) != 1 || !c.check(entries[0]) {
				t.Fatalf("got %+v %+v %v", stmts, entries, err)
			}
			checkRead(t, stmts, entries)
		})
	}
}

// TestMT940Info reads the dialects of :86: as real files write them.
func TestMT940Info(t *testing.T) {
	for _, c := range []struct {
		name, in              string
		eref, name2, remitted string
	}{
		{"free text", "HIER EEN  OMSCHRIJVING", "", "", "HIER EEN OMSCHRIJVING"},
		{"ING", "/EREF/E2E1//CNTP/NL08INGB0000001234/INGBNL2A/ING Testrekening/AMSTERDAM//REMI/STRD/CUR/5200150700013379/",
			"E2E1", "ING Testrekening", "5200150700013379"},
		{"Rabobank", "/BENM//NAME/Kosten/REMI/Periode 01-10-2013 t/m 31-12-2013/ISDT/2014-01-01", "", "Kosten", "Periode 01-10-2013 t/m 31-12-2013"},
		{"ABN AMRO", "/TRTP/SEPA OVERBOEKING/IBAN/NL30ABNA0000000000/BIC/RABONL2U/NAME/V. Oornaam/REMI/Order 123/EREF/tr_X1",
			"tr_X1", "V. Oornaam", "SEPA OVERBOEKING Order 123"},
		{"German", "166?00GUTSCHRIFT?100399?20EREF+EndToEndIdTFNR20004000?2101?22SVWZ+TO 13?30PBNKDEFF100?31DE42100100100043921105?32Ri chter Renate",
			"EndToEndIdTFNR2000400001", "Ri chter Renate", "EREF+EndToEndIdTFNR2000400001 SVWZ+TO 13"},
		{"German keywords mid-line", "835?20Cie.?21EREF+ 1234567890123 PAYPAL?22MREF+ 12AB CRED+ X",
			"1234567890123 PAYPAL", "", "Cie. EREF+ 1234567890123 PAYPAL MREF+ 12AB CRED+ X"},
		{"Triodos", "000>100987654321>20ALGEMENE TUSSENREKENING KOS>21TEN VAN 01-10-2010", "", "", "ALGEMENE TUSSENREKENING KOSTEN VAN 01-10-2010"},
		{"German ?60", "105?20Rechnung 12?60und 13?64ignored", "", "", "Rechnung 12 und 13"},
		{"not a code", "/FOO/bar", "", "", "/FOO/bar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := mtParseInfo(c.in)
			if in.eref != c.eref || in.name != c.name2 || in.remittance != c.remitted {
				t.Errorf("got %q %q %q, want %q %q %q", in.eref, in.name, in.remittance, c.eref, c.name2, c.remitted)
			}
		})
	}
}

// TestMT940Envelopes reads the same statement in each envelope banks
// use.
func TestMT940Envelopes(t *testing.T) {
	st := mtStmt(mtGood61, mtGood62)
	for _, c := range []struct{ name, data string }{
		{"bare", st},
		{"dash", st + "-\n\n" + strings.Replace(st, "STMT1", "STMT2", 1) + "-\n"},
		{"blocks on a line", "{1:F01SNSBNL2AXXXX0000000000}{2:O940SNSBNL2AXXXXN}{3:}{4:\n" + st + "-}{5:}\n"},
		{"blocks on lines", "{1:F01INGBNL2ABXXX0000000000}\n{2:I940INGBNL2AXXXN}\n{3:{108:B1}}\n{4:\n" + st + "-\n}\n"},
		{"Rabobank", ":940:\n" + st},
		{"ABN AMRO", "ABNANL2A\n940\nABNANL2A\n" + st + "-\n"},
		{"old ING", "0000 01INGBNL2AXXXX00001\n0000 01INGBNL2AXXXX00001\n940 00\n" + st + "-XXX\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stmts, entries, err := read(t, "mt940", []byte(c.data))
			if err != nil || len(stmts) == 0 || len(entries) != len(stmts) {
				t.Fatalf("got %+v %+v %v", stmts, entries, err)
			}
			checkRead(t, stmts, entries)
		})
	}
}

func BenchmarkMT940(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(":20:S\n:25:NL69INGB0123456789\n:28C:1\n:60F:C260310EUR0,00\n")
	for range 10000 {
		buf.WriteString(":61:2603100310C1,00NTRFNONREF//B1\n:86:/EREF/E1//NAME/STRIPE//REMI/USTD//STRIPE PAYOUT po_1QxYzA2bC3dE4fG5hI6jK7lM/\n")
	}
	buf.WriteString(":62F:C260310EUR10000,00\n")
	r, _ := Lookup("mt940")
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := r(bytes.NewReader(buf.Bytes()), Options{Name: "b"}, func(reconcile.BankEntry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
