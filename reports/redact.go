package reports

import "regexp"

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
}

// RedactSecrets hides the secrets an error text may carry before it reaches
// an alert, a log line or summary.json: the password of a postgres:// or
// postgresql:// URL, of a password=... pair (sslpassword=, PGPASSWORD=
// too) and of a JSON "password" becomes xxxxx; a Slack token xox?-...
// becomes xox?-REDACTED; the secret path of a Slack webhook URL, REDACTED.
func RedactSecrets(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}
