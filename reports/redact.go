package reports

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// The password of a PostgreSQL URL. It runs to the last '@' of the
	// URL, so a password with a raw '@', '/', '?' or '#' in it (a URL
	// that does not even parse) is hidden whole; a later '@' hides more
	// than the password, never less.
	{regexp.MustCompile(`(?i)(\bpostgres(?:ql)?://[^:/@\s"']*:)[^\s"']*@`), "${1}xxxxx@"},
	// password=... in a key/value DSN or a URL query, quoted or not; also
	// sslpassword=, PGPASSWORD= and db_password=, so no word boundary.
	{regexp.MustCompile(`(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,]*)`), "${1}xxxxx"},
	// "password": "..." in JSON text an error may quote.
	{regexp.MustCompile(`(?i)("[^"]*password"\s*:\s*)"(?:[^"\\]|\\.)*"`), `${1}"xxxxx"`},
	// Slack bot, user, app and refresh tokens; the prefix says which kind
	// of token leaked, which is worth keeping.
	{regexp.MustCompile(`\b(xox[abposre](?:\.xox[abposr])?|xapp)-[A-Za-z0-9-]+`), "${1}-REDACTED"},
	// The path of an incoming webhook URL is its secret.
	{regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s"']+`), "${1}REDACTED"},
	// A Stripe secret or restricted key, live or test.
	{regexp.MustCompile(`\b((?:sk|rk)_(?:live|test))_[A-Za-z0-9]+`), "${1}_REDACTED"},
	// A private key, PEM-armoured, whole or cut off.
	{regexp.MustCompile(`-----BEGIN ([A-Z ]*)PRIVATE KEY-----(?:[^-]|-[^-])*(?:-----END [A-Z ]*PRIVATE KEY-----)?`), "-----BEGIN ${1}PRIVATE KEY----- REDACTED"},
	// The credentials of an Authorization header: basic auth, a bearer
	// key, a WeChat Pay signature.
	{regexp.MustCompile(`(?i)\b(Basic|Bearer)\s+[A-Za-z0-9+/=._-]{8,}`), "${1} REDACTED"},
	{regexp.MustCompile(`(WECHATPAY2-SHA256-RSA2048)\s+[^\n]*`), "${1} REDACTED"},
}

// RedactSecrets hides the secrets an error text may carry before it reaches
// an alert, a log line or summary.json: the password of a postgres:// or
// postgresql:// URL, of a password=... pair (sslpassword=, PGPASSWORD=
// too) and of a JSON "password" becomes xxxxx; a Slack token xox?-...
// becomes xox?-REDACTED; the secret path of a Slack webhook URL, REDACTED;
// a Stripe key sk_live_... becomes sk_live_REDACTED; a PEM private key,
// the credentials of an Authorization header (Basic, Bearer, WeChat Pay's
// signature), REDACTED.
func RedactSecrets(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// MaxErrorText bounds the text of an error as the job records and shows
// it (stderr, runs.error, summary.json, the alert): a sentence naming a
// file, a line and a column with a short quote of the value fits many
// times over, and a value copied whole by some library does not.
const MaxErrorText = 2048

// ErrorText is err as a person reads it: secrets hidden, its lines joined
// into one (a line repeated is said once), at most MaxErrorText bytes.
// Hidden first, so a cut cannot keep half a password out of the patterns'
// reach.
func ErrorText(err error) string {
	var lines []string
	for _, l := range strings.Split(RedactSecrets(err.Error()), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines, " ")
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … (%d bytes in all)", s[:cut], len(s))
}
