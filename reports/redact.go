package reports

import "regexp"

var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// The password of a PostgreSQL URL. It runs to the last '@' before the
	// path, so a password with a raw '@' in it is hidden whole.
	{regexp.MustCompile(`(?i)(\bpostgres(?:ql)?://[^:/@\s]*:)[^\s/?#]*@`), "${1}xxxxx@"},
	// password=... in a key/value DSN or a URL query, quoted or not.
	{regexp.MustCompile(`(?i)(\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,]*)`), "${1}xxxxx"},
	// Slack bot, user, app and refresh tokens; the prefix says which kind
	// of token leaked, which is worth keeping.
	{regexp.MustCompile(`\b(xox[abposre](?:\.xox[abposr])?|xapp)-[A-Za-z0-9-]+`), "${1}-REDACTED"},
	// The path of an incoming webhook URL is its secret.
	{regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s"']+`), "${1}REDACTED"},
}

// RedactSecrets hides the secrets an error text may carry before it reaches
// an alert, a log line or summary.json: the password of a postgres:// or
// postgresql:// URL and of a password=... pair becomes xxxxx, and a Slack
// token xox?-... becomes xox?-REDACTED.
func RedactSecrets(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}
