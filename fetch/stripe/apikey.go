package stripe

import (
	"errors"
	"fmt"
	"strings"

	"reconcile"
)

// APIKey is a Stripe secret (sk_…) or restricted (rk_…) API key. It
// prints as a placeholder, so a Config logged with %v or %+v does not show
// it.
type APIKey string

// String hides the key.
func (k APIKey) String() string { return "(stripe api key not shown)" }

// GoString hides the key from %#v too.
func (k APIKey) GoString() string { return k.String() }

// maxKeyBytes bounds a key: Stripe's are about 110 characters today.
const maxKeyBytes = 512

// ParseAPIKey reads an API key as the Dashboard shows it (Developers →
// API keys), as config.Secret reads it from its file or variable: with
// the file's line ending taken off, nothing else. A key with spaces at
// its ends is refused saying so (reconcile.ErrSecretSpaces), not trimmed.
// Its errors say what is wrong, never what was given.
func ParseAPIKey(b []byte) (APIKey, error) {
	k := APIKey(b)
	if err := k.check(); err != nil {
		return "", err
	}
	return k, nil
}

// check says what is wrong with k, without quoting it.
func (k APIKey) check() error {
	s := string(k)
	switch {
	case s == "":
		return errors.New("empty: give the account's secret key (sk_…) or a restricted key (rk_…)")
	case reconcile.EdgeSpace(s):
		return fmt.Errorf("%w, which no Stripe API key has (a paste, or a second line ending, left in its file or variable?)", reconcile.ErrSecretSpaces)
	case strings.HasPrefix(s, "pk_"):
		return errors.New("a publishable key (pk_…), which cannot read reports: give the secret key (sk_…) or a restricted key (rk_…)")
	case strings.HasPrefix(s, "whsec_"):
		return errors.New("a webhook signing secret (whsec_…), not an API key: give the secret key (sk_…) or a restricted key (rk_…)")
	case !strings.HasPrefix(s, "sk_live_") && !strings.HasPrefix(s, "sk_test_") &&
		!strings.HasPrefix(s, "rk_live_") && !strings.HasPrefix(s, "rk_test_"):
		return errors.New("not a Stripe API key: want one starting sk_live_, rk_live_ (or sk_test_, rk_test_)")
	case len(s) > maxKeyBytes:
		return errors.New("longer than any Stripe API key")
	}
	// Letters, digits and underscores only: anything else is a paste gone
	// wrong, and a line break would end the Authorization header.
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return errors.New("holds a character no Stripe API key has (a space, a quote, a line break?)")
		}
	}
	if len(s) <= len("sk_live_") {
		return errors.New("only a prefix: the key is cut short")
	}
	return nil
}
