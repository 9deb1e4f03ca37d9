package bankfeed

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// bai2Base is a small file that reads: the hostile cases change it a line
// at a time. Its totals: 100000 + 150000 + 60000 + 10000 (03) + 60000 +
// 10000 (16) = 390000.
var bai2Base = []string{
	"01,021000021,ACMEPAY,260316,0415,1,,,2/",
	"02,ACMEPAY,021000021,1,260315,2400,USD,2/",
	"03,000123456789,USD,010,100000,,,015,150000,,,100,60000,1,,400,10000,1,/",
	"16,142,60000,0,0075123456TC,,ORIG CO NAME:STRIPE ORIG ID:1800948598",
	"16,475,10000,,00000001042,1042,CHECK PAID",
	"49,390000,4/",
	"98,390000,1,6/",
	"99,390000,1,8/",
}

func bai2Join(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// bai2Set is bai2Base with line n (1-based) replaced by each of lines.
func bai2Set(n int, lines ...string) string {
	return bai2Join(slices.Concat(bai2Base[:n-1], lines, bai2Base[n:]))
}

// bai2Insert is bai2Base with lines inserted before line n.
func bai2Insert(n int, lines ...string) string {
	return bai2Join(slices.Concat(bai2Base[:n-1], lines, bai2Base[n-1:]))
}

func TestBAI2Base(t *testing.T) {
	stmts, entries, err := read(t, "bai2", []byte(bai2Join(bai2Base)))
	if err != nil {
		t.Fatal(err)
	}
	checkRead(t, stmts, entries)
	if len(stmts) != 1 || len(entries) != 2 || !stmts[0].HasClosing {
		t.Fatalf("got %d statements, %d entries: %+v", len(stmts), len(entries), stmts)
	}
}

// TestBAI2Facts pins what the golden cases must say, so that a wrong
// want.json cannot be refreshed into place unnoticed.
func TestBAI2Facts(t *testing.T) {
	stmts, entries := bai2Golden(t, "two-groups")
	if len(stmts) != 4 || len(entries) != 8 {
		t.Fatalf("got %d statements and %d entries, want 4 and 8", len(stmts), len(entries))
	}
	op := stmts[0]
	if op.ID != "1/2026-03-15/000123456789" || op.Account != "000123456789" || op.Currency != "USD" || op.Line != 3 {
		t.Errorf("operating account statement %+v", op)
	}
	if !op.HasOpening || !op.HasClosing || op.Opening != 8450000 || op.Closing != 11970565 ||
		op.Credits != 3740055 || op.Debits != 219490 || op.Entries != 5 {
		t.Errorf("operating account balances %+v, want 84500.00 + 37400.55 − 2194.90 = 119705.65 over 5 entries", op)
	}
	if s := stmts[1]; s.HasOpening || s.HasClosing || s.Debits != 125000 {
		t.Errorf("account without a closing ledger %+v: its balances must not be set", s)
	}
	if s := stmts[2]; s.Currency != "CAD" || s.Opening != 250000 || s.Closing != 230000 {
		t.Errorf("CAD account %+v, want the group's currency and 2500.00 → 2300.00", s)
	}
	stripe := entries[0]
	if stripe.Amount != 1240055 || !stripe.Credit || stripe.Counterparty != "STRIPE" || stripe.TypeCode != "142" ||
		stripe.BankRef != "0075123456TC" || stripe.Line != 4 || stripe.Status != "BOOK" ||
		!strings.Contains(stripe.Remittance, "DESC DATE:260315 CO ENTRY DESCR:TRANSFER") ||
		!strings.HasSuffix(stripe.Remittance, "IND ID:po_1QxYzAbCdEfGhIjK IND NAME:ACME PAYMENTS INC TRN: 0751611248TC") {
		t.Errorf("Stripe payout %+v", stripe)
	}
	wire := entries[1]
	if wire.Amount != 2500000 || !wire.Credit || wire.EndToEndID != "ADY-PO-88213" ||
		!strings.Contains(wire.Remittance, "B/O: ADYEN N.V., AMSTERDAM NL REF: TX4718293XT batch 12") {
		t.Errorf("Adyen wire %+v", wire)
	}
	if e := entries[2]; e.Credit || e.Amount != 125000 || e.EndToEndID != "1042" {
		t.Errorf("check paid %+v, want a debit of 1250.00, check 1042", e)
	}
	asOf, value := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	if e := entries[7]; !e.BookedOn.Equal(asOf) || !e.ValueOn.Equal(value) || e.Statement != "1/2026-03-15/4400124" {
		t.Errorf("value-dated entry %+v, want booked on the as-of date, valued 2026-03-16", e)
	}

	_, entries = bai2Golden(t, "fixed-80")
	if got := entries[0].Remittance; got != "WIRE IN ADYEN N.V. AMSTERDAM REF TX4718293XT batch 12 SETTLEMENT PAYOUT" {
		t.Errorf("text cut at column 80 reads %q", got)
	}
	if e := entries[3]; e.TypeCode != "890" || e.Status != "INFO" {
		t.Errorf("890 entry %+v, want INFO", e)
	}
	stmts, _ = bai2Golden(t, "continuations")
	if stmts[1].ID != "7/2026-03-15/10200123456/2" || stmts[0].Credits != 307500 || stmts[0].Debits != 12000 {
		t.Errorf("continuations: %+v", stmts)
	}
	stmts, entries = bai2Golden(t, "funds-types")
	if stmts[0].HasClosing || stmts[1].Currency != "JPY" || entries[5].Amount != 250000 || !entries[0].ValueOn.Equal(value) {
		t.Errorf("funds types: %+v %+v", stmts, entries)
	}
}

func bai2Golden(t *testing.T, name string) ([]reconcile.BankStatement, []reconcile.BankEntry) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "bai2", name, "input.bai2"))
	if err != nil {
		t.Fatal(err)
	}
	stmts, entries, err := read(t, "bai2", data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return stmts, entries
}

func TestBAI2Refused(t *testing.T) {
	long88 := "88," + strings.Repeat("REMITTANCE TEXT ", 62)
	tests := []struct {
		name  string
		data  string
		line  int
		field string
		says  string
	}{
		{"bare CR", bai2Set(5, "16,475,10000,,00000001042,1042,CHECK\rPAID"), 5, "", "CR without LF"},
		{"CR alone ending the file", strings.TrimSuffix(bai2Join(bai2Base), "\n") + "\r", 8, "", "CR without LF"},
		{"NUL in text", bai2Set(5, "16,475,10000,,00000001042,1042,CHECK\x00PAID"), 5, "16 text", "NUL"},
		{"NUL in an 88 of text", bai2Insert(5, "88,IND ID:po_1Qx\x00Yz"), 5, "16 text", "NUL"},
		{"NUL in account number", bai2Set(3, "03,0001234\x0056789,USD,010,100000,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 account number", "NUL"},
		{"invalid UTF-8", bai2Set(5, "16,475,10000,,00000001042,1042,CHECK PAID \xff"), 5, "16 text", "UTF-8"},
		{"control character", bai2Set(5, "16,475,10000,,00000001042,1042,CHECK\tPAID"), 5, "16 text", "control character"},
		{"10 MB line", bai2Set(5, "16,475,10000,,00000001042,1042,"+strings.Repeat("X", 10<<20)), 5, "", "longer than"},
		{"record too long with its 88s", bai2Insert(5, slices.Repeat([]string{long88}, 70)...), 4, "16", "with its 88 continuations is longer than"},
		{"empty file", "", 0, "01", "empty"},
		{"missing 99", bai2Join(bai2Base[:7]), 8, "99", "truncated"},
		{"missing 49, 98 and 99", bai2Join(bai2Base[:5]), 6, "99", "inside the account of line 3"},
		{"wrong 49 total", bai2Set(6, "49,390001,4/"), 6, "49 account control total", "add up to 390000, the 49 says 390001"},
		{"wrong 49 record count", bai2Set(6, "49,390000,5/"), 6, "49 number of records", "4 records"},
		{"wrong 98 total", bai2Set(7, "98,390001,1,6/"), 7, "98 group control total", "add up to 390000"},
		{"wrong 98 accounts", bai2Set(7, "98,390000,2,6/"), 7, "98 number of accounts", "1 accounts"},
		{"wrong 99 total", bai2Set(8, "99,-390000,1,8/"), 8, "99 file control total", "the 99 says -390000"},
		{"wrong 99 groups", bai2Set(8, "99,390000,2,8/"), 8, "99 number of groups", "1 groups"},
		{"wrong 99 record count", bai2Set(8, "99,390000,1,9/"), 8, "99 number of records", "8 records"},
		{"88 first", bai2Insert(1, "88,ORIG CO NAME:STRIPE"), 1, "88", "no record before it"},
		{"16 before 03", bai2Insert(3, "16,475,10000,,00000001042,1042,CHECK PAID"), 3, "16", "no 03"},
		{"03 outside a group", bai2Join(slices.Delete(slices.Clone(bai2Base), 1, 2)), 2, "03", "outside a group"},
		{"group never closed", bai2Join(slices.Delete(slices.Clone(bai2Base), 6, 7)), 7, "99", "before the 98 trailer of the group of line 2"},
		{"account never closed", bai2Join(slices.Delete(slices.Clone(bai2Base), 5, 6)), 6, "98", "before the 49 trailer of the account of line 3"},
		{"no 01", bai2Join(bai2Base[1:]), 1, "02", "not an 01 file header"},
		{"second 01", bai2Insert(2, bai2Base[0]), 2, "01", "a second 01"},
		{"record after the 99", bai2Join(append(slices.Clone(bai2Base), bai2Base[0])), 9, "01", "after the 99"},
		{"empty line before the 99", bai2Insert(6, ""), 6, "", "empty line"},
		{"amount 12.34", bai2Set(5, "16,475,12.34,,00000001042,1042,CHECK PAID"), 5, "16 amount", "decimal point"},
		{"amount -500 in a 16", bai2Set(5, "16,475,-500,,00000001042,1042,CHECK PAID"), 5, "16 amount", `"-500" has a sign`},
		{"amount +500 in a 16", bai2Set(5, "16,475,+500,,00000001042,1042,CHECK PAID"), 5, "16 amount", "has a sign"},
		{"signed distribution in a 16", bai2Set(5, "16,475,10000,S,-5000,15000,0,00000001042,1042,CHECK PAID"), 5, "16 immediate amount", "has a sign"},
		{"amount with a letter", bai2Set(5, "16,475,1OOOO,,00000001042,1042,CHECK PAID"), 5, "16 amount", "not a plain decimal amount"},
		{"amount with a thousands separator", bai2Set(3, "03,000123456789,USD,010,100 000,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 010 amount", "not a plain decimal amount"},
		{"amount past int64", bai2Set(5, "16,475,99999999999999999999,,00000001042,1042,CHECK PAID"), 5, "16 amount", "out of range"},
		{"total past int64", bai2Set(3, "03,000123456789,USD,010,9223372036854775807,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 015 amount", "out of range"},
		{"empty 16 amount", bai2Set(5, "16,475,,,00000001042,1042,CHECK PAID"), 5, "16 amount", "only an 890"},
		{"unknown currency XYZ", bai2Set(3, "03,000123456789,XYZ,010,100000,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 currency", `unknown currency "XYZ"`},
		{"unknown group currency", bai2Set(2, "02,ACMEPAY,021000021,1,260315,2400,usd,2/"), 2, "02 currency", "unknown currency"},
		{"as-of date 261301", bai2Set(2, "02,ACMEPAY,021000021,1,261301,2400,USD,2/"), 2, "02 as-of date", `"261301" is not a date YYMMDD that exists`},
		{"as-of date 29 February 2026", bai2Set(2, "02,ACMEPAY,021000021,1,260229,2400,USD,2/"), 2, "02 as-of date", "that exists"},
		{"value date 260431", bai2Set(5, "16,475,10000,V,260431,,00000001042,1042,CHECK PAID"), 5, "16 value date", "that exists"},
		{"as-of time 2460", bai2Set(2, "02,ACMEPAY,021000021,1,260315,2460,USD,2/"), 2, "02 as-of time", "not a time"},
		{"type code of unknown direction", bai2Set(5, "16,801,10000,,00000001042,1042,CHECK PAID"), 5, "16 type code", "type code 801 is none the standard assigns"},
		{"status code in a 16", bai2Set(5, "16,015,10000,,00000001042,1042,CHECK PAID"), 5, "16 type code", "015 is an account status code"},
		{"type code of two digits", bai2Set(5, "16,45,10000,,00000001042,1042,CHECK PAID"), 5, "16 type code", "not a type code"},
		{"version 3", bai2Set(1, "01,021000021,ACMEPAY,260316,0415,1,,,3/"), 1, "01 version", "version \"3\""},
		{"group status test only", bai2Set(2, "02,ACMEPAY,021000021,4,260315,2400,USD,2/"), 2, "02 group status", "test only"},
		{"group status deletion", bai2Set(2, "02,ACMEPAY,021000021,2,260315,2400,USD,2/"), 2, "02 group status", "deletion"},
		{"unknown record code", bai2Set(5, "17,475,10000,,00000001042,1042,CHECK PAID"), 5, "record code", `unknown record code "17"`},
		{"record code without comma", bai2Set(6, "49/"), 6, "49", "not followed by a comma"},
		{"two records on a line", bai2Set(6, "49,390000,4/ 98,390000,1,6/"), 6, "49 number of records", "a line holds one record"},
		{"a field too many", bai2Set(6, "49,390000,4,7/"), 6, "49", `"7" after the last field`},
		{"amount without a type code", bai2Set(3, "03,000123456789,USD,,100000,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 amount", "no type code"},
		{"second 015", bai2Set(3, "03,000123456789,USD,010,100000,,,015,150000,,,015,150000,,,100,60000,1,,400,10000,1,/"), 3, "03 015 amount", "a second 015"},
		{"unknown funds type", bai2Set(5, "16,475,10000,X,00000001042,1042,CHECK PAID"), 5, "16 funds type", `funds type "X"`},
		{"S distribution not adding up", bai2Set(5, "16,475,10000,S,5000,4000,0,00000001042,1042,CHECK PAID"), 5, "16 funds type", "adds up to 9000, the amount is 10000"},
		{"D with fewer pairs than it counts", bai2Set(5, "16,475,10000,D,3,0,5000,1,5000,CHK1042,1042,CHECK PAID"), 5, "16 distribution days", "not a whole number"},
		{"closing balance not adding up", bai2Join(slices.Concat(bai2Base[:2],
			[]string{"03,000123456789,USD,010,100000,,,015,150001,,,100,60000,1,,400,10000,1,/"},
			bai2Base[3:5], []string{"49,390001,4/", "98,390001,1,6/", "99,390001,1,8/"})), 3, "03 015 amount", "is not the closing balance 1500.01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, "bai2", tt.data, tt.line, tt.field, tt.says)
		})
	}
}

// TestBAI2ControlTotals: whatever does not add up, or ends before it can
// be added up, is a control total error.
func TestBAI2ControlTotals(t *testing.T) {
	for name, data := range map[string]string{
		"49 total":       bai2Set(6, "49,390001,4/"),
		"49 records":     bai2Set(6, "49,390000,3/"),
		"98 total":       bai2Set(7, "98,0,1,6/"),
		"99 records":     bai2Set(8, "99,390000,1,7/"),
		"truncated":      bai2Join(bai2Base[:6]),
		"distribution":   bai2Set(5, "16,475,10000,D,1,0,9999,00000001042,1042,CHECK PAID"),
		"balance":        bai2Set(3, "03,000123456789,USD,010,100001,,,015,150000,,,100,60000,1,,400,10000,1,/"),
		"empty 49 total": bai2Set(6, "49,,4/"),
	} {
		_, _, err := read(t, "bai2", []byte(data))
		if !errors.Is(err, reconcile.ErrControlTotal) {
			t.Errorf("%s: got %v, want a control total error", name, err)
		}
	}
}

// TestBAI2Streams: entries go to fn as they are read, and fn's error
// stops the read as it is.
func TestBAI2Streams(t *testing.T) {
	stop := errors.New("stop")
	var seen []int
	r, err := Lookup("bai2")
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := r(strings.NewReader(bai2Join(bai2Base)), Options{Name: "statement"}, func(e reconcile.BankEntry) error {
		seen = append(seen, e.Line)
		return stop
	})
	if err != stop || stmts != nil || !slices.Equal(seen, []int{4}) {
		t.Errorf("got %v, %v, entries of lines %v; want fn's error as is after line 4", stmts, err, seen)
	}
	seen = nil
	_, err = r(strings.NewReader(bai2Set(8, "99,390000,1,9/")), Options{Name: "statement"}, func(e reconcile.BankEntry) error {
		seen = append(seen, e.Line)
		return nil
	})
	if err == nil || !slices.Equal(seen, []int{4, 5}) {
		t.Errorf("got %v and entries of lines %v; want both entries handed on before the 99 is refused", err, seen)
	}
}

// TestBAI2LongOriginator: text that names an originator but lacks the
// ACH keys after it gives no counterparty, rather than all of its text.
func TestBAI2LongOriginator(t *testing.T) {
	stmts, entries, err := read(t, "bai2", []byte(bai2Set(4, "16,142,60000,0,0075123456TC,,ORIG CO NAME:"+strings.Repeat("STRIPE ", 1000))))
	if err != nil {
		t.Fatal(err)
	}
	checkRead(t, stmts, entries)
	if entries[0].Counterparty != "" {
		t.Errorf("counterparty of %d bytes, want none", len(entries[0].Counterparty))
	}
}

func TestBAI2Originator(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"ORIG CO NAME:STRIPE ORIG ID:1800948598 DESC DATE:260315 CO ENTRY DESCR:TRANSFER", "STRIPE"},
		{"ORIG CO NAME:AMEX EPAYMENT ORIG ID:1134992250", "AMEX EPAYMENT"},
		{"ORIG CO NAME:SEATTLEUTILTIES  CO ENTRY DESCR:WEB_PAY  SEC:WEB", "SEATTLEUTILTIES"},
		{"Orig CO Name:Citi Autopay           Orig ID:Citicardap Desc Date:210803", "Citi Autopay"},
		{"ACH CREDIT ORIG CO NAME:Stripe, Inc", "Stripe, Inc"},
		{"ORIG CO NAME:CAFÉ ÉCLAIR SAS ORIG ID:9", "CAFÉ ÉCLAIR SAS"},
		{"ORIG CO NAME: ORIG ID:9", ""},
		{"ORIG CO NAME:" + strings.Repeat("X", 35) + " ORIG ID:9", strings.Repeat("X", 35)},
		{"ORIG CO NAME:" + strings.Repeat("X", 36) + " ORIG ID:9", ""},
		{"WIRE IN ADYEN N.V.", ""},
	} {
		if got := bai2Originator(tt.text); got != tt.want {
			t.Errorf("bai2Originator(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestBAI2Clock(t *testing.T) {
	for s, want := range map[string]bool{
		"0000": true, "2359": true, "2400": true, "9999": true, "14:59:35": true,
		"2401": false, "1260": false, "930": false, "14:59:60": false, "24:00": false, "ab12": false,
	} {
		if got := bai2Clock(s); got != want {
			t.Errorf("bai2Clock(%q) = %v, want %v", s, got, want)
		}
	}
}
