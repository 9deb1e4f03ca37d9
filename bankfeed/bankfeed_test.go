package bankfeed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"reconcile"
)

var update = flag.Bool("update", false, "rewrite testdata/<format>/<case>/want.json from the readers' output")

// read reads a whole file through the format's reader.
func read(t testing.TB, format string, data []byte) ([]reconcile.BankStatement, []reconcile.BankEntry, error) {
	t.Helper()
	r, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	var entries []reconcile.BankEntry
	stmts, err := r(bytes.NewReader(data), Options{Name: "statement"}, func(e reconcile.BankEntry) error {
		entries = append(entries, e)
		return nil
	})
	return stmts, entries, err
}

// golden is a case's want.json: what the reader made of input.*.
type golden struct {
	Statements []reconcile.BankStatement
	Entries    []reconcile.BankEntry
}

// TestGolden reads every testdata/<format>/<case>/input.* and compares
// the statements and entries with want.json.
func TestGolden(t *testing.T) {
	for _, format := range Formats() {
		inputs, err := filepath.Glob(filepath.Join("testdata", format, "*", "input.*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) == 0 {
			t.Errorf("no golden cases for format %s", format)
		}
		for _, input := range inputs {
			dir := filepath.Dir(input)
			t.Run(format+"/"+filepath.Base(dir), func(t *testing.T) {
				data, err := os.ReadFile(input)
				if err != nil {
					t.Fatal(err)
				}
				stmts, entries, err := read(t, format, data)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				checkRead(t, stmts, entries)
				b, err := json.MarshalIndent(golden{stmts, entries}, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				b = append(b, '\n')
				path := filepath.Join(dir, "want.json")
				if *update {
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -update creates it)", err)
				}
				if !bytes.Equal(b, want) {
					t.Errorf("read differs from %s (go test -update rewrites it)\ngot:\n%s", path, b)
				}
			})
		}
	}
}

// checkRead holds what every reader returns to what the job relies on:
// amounts never negative, in a currency the job knows, text it can store
// and show, every statement balanced, and its credits and debits the sums
// of its booked entries.
func checkRead(t testing.TB, stmts []reconcile.BankStatement, entries []reconcile.BankEntry) {
	t.Helper()
	type sums struct {
		credits, debits int64
		n               int
	}
	by := map[[2]string]*sums{}
	for _, s := range stmts {
		if err := s.Balanced(); err != nil {
			t.Errorf("statement %s of %s: %v", s.ID, s.Account, err)
		}
		if _, ok := reconcile.CurrencyDigits(s.Currency); !ok {
			t.Errorf("statement %s: currency %q", s.ID, s.Currency)
		}
		by[[2]string{s.Account, s.ID}] = &sums{}
	}
	for _, e := range entries {
		if e.Amount < 0 {
			t.Errorf("line %d: amount %d < 0", e.Line, e.Amount)
		}
		if _, ok := reconcile.CurrencyDigits(e.Currency); !ok {
			t.Errorf("line %d: currency %q", e.Line, e.Currency)
		}
		for _, s := range []string{e.Account, e.Statement, e.Status, e.BankRef, e.EndToEndID, e.TypeCode, e.Counterparty} {
			if f := checkText(s, maxText); f != "" {
				t.Errorf("line %d: %q: %s", e.Line, s, f)
			}
		}
		if f := checkText(e.Remittance, maxRemittance); f != "" {
			t.Errorf("line %d: remittance: %s", e.Line, f)
		}
		if e.Line <= 0 {
			t.Errorf("entry %+v has no line", e)
		}
		s := by[[2]string{e.Account, e.Statement}]
		if s == nil {
			t.Errorf("line %d: entry of account %q statement %q, which the read did not return", e.Line, e.Account, e.Statement)
			continue
		}
		s.n++
		if e.Status != "BOOK" {
			continue
		}
		if e.Credit {
			s.credits += e.Amount
		} else {
			s.debits += e.Amount
		}
	}
	for _, st := range stmts {
		s := by[[2]string{st.Account, st.ID}]
		if s.credits != st.Credits || s.debits != st.Debits || s.n != st.Entries {
			t.Errorf("statement %s of %s says credits %d, debits %d, %d entries; its entries: %d, %d, %d",
				st.ID, st.Account, st.Credits, st.Debits, st.Entries, s.credits, s.debits, s.n)
		}
	}
}

// fuzzReader feeds a reader its golden inputs changed at random: it must
// never panic, must refuse with a ParseError naming the file, and what it
// does not refuse must hold to checkRead.
func fuzzReader(f *testing.F, format string, seeds ...[]byte) {
	inputs, err := filepath.Glob(filepath.Join("testdata", format, "*", "input.*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stmts, entries, err := read(t, format, data)
		if err != nil {
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) || pe.File != "statement" {
				t.Fatalf("error is not a ParseError of the file: %v", err)
			}
			return
		}
		checkRead(t, stmts, entries)
	})
}

// refused reads data and wants a ParseError whose line, field and
// message say where and what.
func refused(t *testing.T, format string, data string, line int, field string, says string) {
	t.Helper()
	_, _, err := read(t, format, []byte(data))
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a ParseError", err)
	}
	if pe.Line != line || pe.Column != field {
		t.Errorf("refused at line %d field %q, want line %d field %q: %v", pe.Line, pe.Column, line, field, err)
	}
	if !bytes.Contains([]byte(pe.Err.Error()), []byte(says)) {
		t.Errorf("error %q does not say %q", pe.Err, says)
	}
}

// TestReadFile: a statement file is read whole and named by the SHA-256
// of all its bytes; a directory is refused before it is read.
func TestReadFile(t *testing.T) {
	path := filepath.Join("testdata", "mt940", "german", "input.sta")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	stmts, sha, err := ReadFile(path, "mt940", Options{}, func(reconcile.BankEntry) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if want := hex.EncodeToString(sum[:]); sha != want || len(stmts) == 0 || n == 0 {
		t.Errorf("sha %s (want %s), %d statements, %d entries", sha, want, len(stmts), n)
	}
	if _, _, err := ReadFile("testdata", "mt940", Options{}, nil); err == nil {
		t.Error("a directory was read as a statement")
	}
	if _, _, err := ReadFile(path, "camt054", Options{}, nil); !errors.Is(err, reconcile.ErrUnknownFormat) {
		t.Errorf("unknown format: %v", err)
	}
}

// TestStatementFormats: the domain's list of statement formats, by which
// a run is known to be a statement's night, is the readers'.
func TestStatementFormats(t *testing.T) {
	if got, want := Formats(), reconcile.StatementFormats; !slices.Equal(got, want) {
		t.Errorf("readers %v, reconcile.StatementFormats %v", got, want)
	}
}
