package reconcile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// currencyDigits is the number of minor-unit digits of each ISO 4217
// currency the job accepts. A currency not listed is refused.
var currencyDigits = map[string]int{
	"AED": 2, "AUD": 2, "BRL": 2, "CAD": 2, "CHF": 2, "CNY": 2, "CZK": 2,
	"DKK": 2, "EUR": 2, "GBP": 2, "HKD": 2, "HUF": 2, "IDR": 2, "ILS": 2,
	"INR": 2, "MXN": 2, "MYR": 2, "NOK": 2, "NZD": 2, "PHP": 2, "PLN": 2,
	"RON": 2, "RUB": 2, "SAR": 2, "SEK": 2, "SGD": 2, "THB": 2, "TRY": 2,
	"TWD": 2, "USD": 2, "ZAR": 2, "MOP": 2,
	"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "UGX": 0,
	"BHD": 3, "JOD": 3, "KWD": 3, "OMR": 3, "TND": 3,
}

// CurrencyDigits returns the minor-unit digits of an ISO 4217 code.
func CurrencyDigits(code string) (int, bool) {
	d, ok := currencyDigits[code]
	return d, ok
}

// Errors of amount parsing; ParseAmount wraps them with the offending text.
var (
	ErrUnknownCurrency = errors.New("unknown currency")
	ErrBadAmount       = errors.New("not a plain decimal amount")
	ErrAmountPrecision = errors.New("more decimals than the currency has")
	ErrAmountRange     = errors.New("amount out of range")
)

// MaxFileTotal bounds what one file's amounts and fees (a settlement
// file's rows, a bank statement's entries) may add up to in one currency,
// in minor units: a quarter of an int64, so that no sum the night makes
// of them, with our side's amounts and the fees a contract expects beside
// them or a payout's arrivals of earlier nights, can pass what an int64
// holds. It is 2.3
// × 10^16 major units of a two-decimal currency, past any real settlement
// file by orders of magnitude.
const MaxFileTotal = math.MaxInt64 / 4

// FileTotals adds up one file's amounts per currency, and says where a
// currency's total would pass MaxFileTotal. Rows come mostly in one
// currency: the last one's total is kept at hand.
type FileTotals struct {
	last  string
	total *int64
	by    map[string]*int64
}

// Add counts v (minor units, by size) in currency's total, reporting
// false, and counting nothing, when v is negative or the total would
// pass MaxFileTotal.
func (ft *FileTotals) Add(currency string, v int64) bool {
	if ft.total == nil || currency != ft.last {
		if ft.by == nil {
			ft.by = map[string]*int64{}
		}
		total := ft.by[currency]
		if total == nil {
			total = new(int64)
			ft.by[currency] = total
		}
		ft.last, ft.total = currency, total
	}
	if v < 0 || *ft.total > MaxFileTotal-v {
		return false
	}
	*ft.total += v
	return true
}

// ParseAmount reads a plain decimal string in major units ("99.80", "-5",
// "0.5") as minor units of currency, exactly. It refuses thousands
// separators, exponents, a bare sign, an empty string and more decimals
// than the currency has.
func ParseAmount(s, currency string) (int64, error) {
	digits, ok := CurrencyDigits(currency)
	if !ok {
		return 0, fmt.Errorf("%w %s", ErrUnknownCurrency, Quote(currency))
	}
	return ParseDecimal(s, digits)
}

// ParseDecimal reads a plain decimal string as an integer scaled by
// 10^scale: ParseDecimal("0.01000", 5) is 1000. Trailing zeros beyond scale
// are accepted; significant digits beyond it are not.
func ParseDecimal(s string, scale int) (int64, error) {
	orig := s
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (frac == "" || !allDigits(frac))) {
		return 0, fmt.Errorf("%s: %w", Quote(orig), ErrBadAmount)
	}
	trimmed := strings.TrimRight(frac, "0")
	if len(trimmed) > scale {
		return 0, fmt.Errorf("%s: %w (%d)", Quote(orig), ErrAmountPrecision, scale)
	}
	frac = trimmed + strings.Repeat("0", scale-len(trimmed))
	v, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", Quote(orig), ErrAmountRange)
	}
	if neg {
		v = -v
	}
	return v, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatAmount writes minor units of currency as a plain decimal string in
// major units: FormatAmount(9980, "CNY") is "99.80". An unknown currency is
// written with two decimals.
func FormatAmount(minor int64, currency string) string {
	digits, ok := CurrencyDigits(currency)
	if !ok {
		digits = 2
	}
	return FormatDecimal(minor, digits)
}

// FormatDecimal writes v scaled by 10^-scale as a plain decimal string.
func FormatDecimal(v int64, scale int) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	s := strconv.FormatUint(u, 10)
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
