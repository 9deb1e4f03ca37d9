package adyen

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"reconcile"
	"reconcile/fetch"
)

// The Customer Areas reports are downloaded from.
const (
	LiveBaseURL = "https://ca-live.adyen.com"
	TestBaseURL = "https://ca-test.adyen.com"
)

// maxMerchantAccount is the length of Adyen's Merchant Account column,
// text(80): no account code is longer.
const maxMerchantAccount = 80

// Config is what a Source needs. The report user is either Username and
// Password (basic authentication) or APIKey, not both.
type Config struct {
	// MerchantAccount is the merchant account code the reports are of, as
	// the Customer Area spells it ("AcmeShopECOM"): letters, digits, and
	// _ - . only.
	MerchantAccount string
	// Username is the report user, report@Company.YourCompany (API
	// credentials made for reports are named report_123456@Company.YourCompany).
	Username string
	// Password is the report user's password, sent as it is: spaces and
	// tabs at its ends are part of it.
	Password string
	// APIKey, instead of Username and Password, is an API key of the
	// report user, sent as X-API-Key.
	APIKey string
	// BaseURL is the Customer Area: LiveBaseURL when empty, TestBaseURL for
	// the test environment. Always https: the credentials travel in every
	// request.
	BaseURL string
	// Client makes the calls; nil is a fetch.Client with its defaults.
	Client *fetch.Client
}

// String shows the configuration without its secrets, so a Config
// printed by mistake (%v, %+v, %#v) leaks nothing.
func (c Config) String() string {
	return fmt.Sprintf("adyen.Config{MerchantAccount: %q, Username: %q, Password: %s, APIKey: %s, BaseURL: %q}",
		c.MerchantAccount, c.Username, redacted(c.Password), redacted(c.APIKey), c.BaseURL)
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

func redacted(secret string) string {
	if secret == "" {
		return "(empty)"
	}
	return "(set)"
}

// Source downloads one merchant account's Settlement details reports.
type Source struct {
	merchant string
	base     string // scheme://host[/prefix], no trailing slash
	username string
	password string
	apiKey   string
	client   *fetch.Client
}

// String names the source without its credentials.
func (s *Source) String() string {
	return "adyen settlement details of merchant account " + s.merchant
}

// GoString is String, for %#v: the fields hold the credentials.
func (s *Source) GoString() string { return s.String() }

// New checks cfg and returns its Source. Nothing is sent: a merchant
// account code that could leave its place in the URL's path, a base URL
// that is not https, credentials missing or doubled are refused here.
func New(cfg Config) (*Source, error) {
	if err := checkMerchantAccount(cfg.MerchantAccount); err != nil {
		return nil, fmt.Errorf("adyen: %w", err)
	}
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("adyen: %w", err)
	}
	if err := checkCredentials(cfg); err != nil {
		return nil, fmt.Errorf("adyen: %w", err)
	}
	client := cfg.Client
	if client == nil {
		client = &fetch.Client{}
	}
	return &Source{
		merchant: cfg.MerchantAccount,
		base:     base,
		username: cfg.Username,
		password: cfg.Password,
		apiKey:   cfg.APIKey,
		client:   client,
	}, nil
}

// checkMerchantAccount holds the code to Adyen's alphabet for account
// codes. It goes into the URL's path: a slash, a percent sign or a dot
// segment could point the request, and the report user's credentials,
// at another account's files.
func checkMerchantAccount(m string) error {
	switch {
	case m == "":
		return errors.New("MerchantAccount is empty")
	case len(m) > maxMerchantAccount:
		return fmt.Errorf("MerchantAccount is %d bytes; Adyen's codes have at most %d", len(m), maxMerchantAccount)
	case m == "." || strings.Contains(m, ".."):
		return fmt.Errorf("MerchantAccount %s is a path's dot segment, not an account code", printable(m))
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("MerchantAccount %s has %s: Adyen's account codes are letters, digits, and _ - . only", printable(m), printable(m[i:i+1]))
		}
	}
	return nil
}

func checkBaseURL(raw string) (string, error) {
	if raw == "" {
		return LiveBaseURL, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's error quotes the whole value; a base URL should not hold a
		// secret, but a mistyped one may.
		return "", errors.New("BaseURL is not a URL")
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Errorf("BaseURL must be https, not %s: the report user's credentials go with every request", printable(u.Scheme))
	case u.Host == "":
		return "", errors.New("BaseURL has no host")
	case u.User != nil:
		return "", errors.New("BaseURL carries a user: set Username and Password instead")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", errors.New("BaseURL has a query or a fragment: it is only the Customer Area's address")
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

func checkCredentials(cfg Config) error {
	if cfg.APIKey != "" {
		if cfg.Username != "" || cfg.Password != "" {
			return errors.New("set APIKey, or Username and Password, not both")
		}
		if reconcile.EdgeSpace(cfg.APIKey) {
			return fmt.Errorf("APIKey: %w, which no API key has (a line ending or a paste left in its file or variable?)", reconcile.ErrSecretSpaces)
		}
		if !validHeaderValue(cfg.APIKey) {
			return errors.New("APIKey has a space or a control character")
		}
		return nil
	}
	switch {
	case cfg.Username == "" && cfg.Password == "":
		return errors.New("no credentials: set Username and Password of the report user, or APIKey")
	case cfg.Username == "":
		return errors.New("Username is empty: the report user is named like report@Company.YourCompany")
	case cfg.Password == "":
		return errors.New("Password is empty")
	case strings.Contains(cfg.Username, ":"):
		// Basic authentication ends the user at the first colon.
		return errors.New("Username has a colon, which basic authentication cannot carry")
	case hasControl(cfg.Username):
		return errors.New("Username has a control character")
	case !utf8.ValidString(cfg.Password):
		return errors.New("Password is not UTF-8 text")
	case strings.ContainsFunc(cfg.Password, unsent):
		return errors.New("Password has a control character or an invisible character (a second line, or a byte order mark an editor put in its file?)")
	}
	return nil
}

// unsent is a character no password of a person is typed with: a control
// character but the tab, or an invisible one (a byte order mark, a
// zero-width space). Spaces and tabs, at the ends too, are the password's.
func unsent(r rune) bool {
	return unicode.IsControl(r) && r != '\t' || unicode.Is(unicode.Cf, r)
}

// validHeaderValue is a key that can go in a header as it is: printable
// ASCII without spaces.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// printable quotes a value of the configuration for an error, cut short.
func printable(s string) string {
	return reconcile.Quote(s)
}

// authorize puts the report user's credentials on req.
func (s *Source) authorize(req *http.Request) {
	if s.apiKey != "" {
		req.Header.Set("X-API-Key", s.apiKey)
		return
	}
	req.SetBasicAuth(s.username, s.password)
}
