package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BankEntry is one entry of a bank statement: money that moved on one of
// our accounts, as the bank booked it. Whatever the format (camt.053,
// MT940, BAI2), an entry says the same things; what a format does not
// carry is left empty.
type BankEntry struct {
	// Account is the account the entry is booked on, as its statement
	// names it (an IBAN, or the bank's account number).
	Account string
	// Statement is the id of the statement the entry belongs to (camt
	// Stmt/Id, MT940 :20: and :28C:, BAI2 the group and account).
	Statement string
	Amount    int64 // minor units of Currency, never negative
	Currency  string
	// Credit is money in; a debit (money out, a payout sent back) is
	// false. It is what the entry did to the balance.
	Credit bool
	// Reversal marks an entry that undoes an earlier one (camt RvslInd,
	// MT940 RC and RD): a credit reversed is a debit with Reversal set.
	Reversal bool
	// Status is BOOK for a booked entry, PDNG for one pending, INFO for
	// one the bank only tells of (camt Sts). MT940 and BAI2 entries are
	// booked.
	Status string
	// BookedOn and ValueOn are dates (midnight UTC); BookedOn is zero when
	// the statement gives none.
	BookedOn, ValueOn time.Time
	// BankRef is the bank's own reference of the entry (camt AcctSvcrRef,
	// MT940 the bank's reference after //, BAI2 the bank reference).
	BankRef string
	// EndToEndID is the sender's reference carried end to end (camt
	// EndToEndId, MT940 /EREF/ or the customer reference, BAI2 the
	// customer reference).
	EndToEndID string
	// TypeCode is the bank's code for the kind of entry (camt BkTxCd
	// Domain/Family/SubFamily or its proprietary code, MT940 the type such
	// as NTRF, BAI2 the type code).
	TypeCode string
	// Counterparty is the other party's name where the statement gives it
	// (camt RltdPties, MT940 /NAME/ or ?32, BAI2 text).
	Counterparty string
	// Remittance is the entry's free text and structured references
	// (camt Ustrd and Strd, MT940 :86:, BAI2 88 records), joined by
	// spaces: a payout's id or batch reference is looked for in it.
	Remittance string
	// Line is the entry's first line in its file.
	Line int
}

// Signed is the entry's effect on its account's balance: positive for a
// credit, negative for a debit.
func (e BankEntry) Signed() int64 {
	if e.Credit {
		return e.Amount
	}
	return -e.Amount
}

// BankStatement is one account's statement of one period, as a file
// carries it: its balances and what its entries added up to. A file may
// hold several statements, of several accounts.
type BankStatement struct {
	ID       string
	Account  string
	Currency string
	// Opening and Closing are the booked balances the statement states
	// (camt OPBD or PRCD and CLBD, MT940 :60F:/:60M: and :62F:/:62M:,
	// BAI2 010 and 015), signed, in minor units; HasOpening and
	// HasClosing say whether it states them.
	Opening, Closing       int64
	HasOpening, HasClosing bool
	// Credits and Debits are the sums of its booked entries' amounts;
	// Entries counts every entry, pending ones too.
	Credits, Debits int64
	Entries         int
	Line            int // where the statement begins in its file
}

// Balanced reports, for a statement that states both balances, whether
// its booked entries take the opening balance to the closing one:
// opening + credits − debits = closing. A statement that states only one
// balance, or neither, has nothing to add up (BAI2 totals are checked
// by their own records).
func (s BankStatement) Balanced() error {
	if !s.HasOpening || !s.HasClosing {
		return nil
	}
	sum, ok := AddChecked(s.Opening, s.Credits)
	if ok {
		sum, ok = AddChecked(sum, -s.Debits)
	}
	if !ok || sum != s.Closing {
		return fmt.Errorf("%w: opening balance %s + credits %s − debits %s is not the closing balance %s",
			ErrControlTotal, FormatAmount(s.Opening, s.Currency), FormatAmount(s.Credits, s.Currency),
			FormatAmount(s.Debits, s.Currency), FormatAmount(s.Closing, s.Currency))
	}
	return nil
}

// Count adds e to the statement: every entry to Entries, a booked one's
// amount to Credits or Debits, as Balanced reads them. It reports false,
// counting nothing, when the sum would pass int64.
func (s *BankStatement) Count(e BankEntry) bool {
	if e.Status == "BOOK" {
		sum := &s.Debits
		if e.Credit {
			sum = &s.Credits
		}
		v, ok := AddChecked(*sum, e.Amount)
		if !ok {
			return false
		}
		*sum = v
	}
	s.Entries++
	return true
}

// Key identifies an entry across nights and corrected statements: its
// account and the bank's reference, else what the entry says (never its
// line or its statement's id, which a corrected statement may change).
// Two entries of one statement with the same key are told apart by the
// reader of the night ("-2", "-3", … after the second and later).
func (e BankEntry) Key() string {
	if e.BankRef != "" {
		return e.Account + "/" + e.BankRef
	}
	h := sha256.New()
	for _, s := range []string{e.Account, e.Currency, strconv.FormatInt(e.Amount, 10), strconv.FormatBool(e.Credit),
		strconv.FormatBool(e.Reversal), e.BookedOn.Format(time.DateOnly), e.ValueOn.Format(time.DateOnly),
		e.EndToEndID, e.TypeCode, e.Counterparty, e.Remittance} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return e.Account + "/#" + hex.EncodeToString(h.Sum(nil)[:16])
}

// SameAccount reports whether a statement's account is the configured
// one: compared without spaces and in upper case, and allowing the
// currency after it, as MT940 files write it (NL69INGB0123456789EUR,
// "NL34RABO0123456789 EUR").
func SameAccount(configured, stated, currency string) bool {
	norm := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, " ", "")) }
	c, s := norm(configured), norm(stated)
	return c != "" && (s == c || s == c+norm(currency))
}
