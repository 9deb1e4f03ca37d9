package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"reconcile"
	"reconcile/inputfile"
)

// Secret names where a secret is: an environment variable or a file, never
// the config itself.
type Secret struct {
	Env  string `json:"env,omitempty"`
	File string `json:"file,omitempty"`
}

// UnmarshalJSON refuses a secret written into the config as a string, in
// words that do not repeat it.
func (s *Secret) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '"' {
		return errors.New(`a secret is never written in the config: give {"env": "VARIABLE"} or {"file": "/path"}`)
	}
	type plain Secret
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf(`a secret is {"env": "VARIABLE"} or {"file": "/path"}: %w`, err)
	}
	*s = Secret(p)
	return nil
}

// String says where the secret is, never what it is.
func (s Secret) String() string {
	switch {
	case s.Env != "":
		return "$" + s.Env
	case s.File != "":
		return s.File
	}
	return "(not set)"
}

// maxSecretBytes bounds a secret file: a 4096-bit PEM key is 3 KB, a
// certificate chain a few.
const maxSecretBytes = 64 << 10

// secretValue is the one rule of what a secret is, wherever the job reads
// one (a fetch block's keys and passwords, the DSN, the Slack token and
// webhook): the file's or the variable's bytes less the one line ending,
// LF or CRLF, a file usually ends with. Nothing else is taken off: a
// password may begin or end with a space or a tab, and trimming it would
// send another password, refused with no hint why. A secret that cannot
// have such spaces (an API key, a token) is refused by its reader saying
// so (reconcile.ErrSecretSpaces); a PEM key's parser reads past them.
func secretValue(b []byte) []byte {
	if v, ok := bytes.CutSuffix(b, []byte("\n")); ok {
		v, _ = bytes.CutSuffix(v, []byte("\r"))
		return v
	}
	return b
}

// Read returns the secret by the one rule (secretValue); getenv looks up
// an environment variable. Errors name where it was looked for, never
// what was found.
func (s Secret) Read(getenv func(string) string) ([]byte, error) {
	var where string
	var b []byte
	switch {
	case s.Env != "" && s.File != "":
		return nil, errors.New("a secret names both env and file: give one")
	case s.Env != "":
		v := getenv(s.Env)
		if v == "" {
			return nil, fmt.Errorf("$%s is not set", s.Env)
		}
		where, b = "$"+s.Env, []byte(v)
	case s.File != "":
		var err error
		if b, err = inputfile.ReadFile(s.File, "secret file", maxSecretBytes); err != nil {
			return nil, err
		}
		where = "secret file " + s.File
	default:
		return nil, errors.New(`not set: give {"env": "VARIABLE"} or {"file": "/path"}`)
	}
	b = secretValue(b)
	switch {
	case len(b) == 0:
		return nil, fmt.Errorf("%s is empty", where)
	case len(bytes.TrimSpace(b)) == 0:
		return nil, fmt.Errorf("%s holds only white space", where)
	}
	return b, nil
}

// EnvSecret reads a secret the job takes from a variable that may be
// left unset (the DSN, the Slack token and webhook): "" when it is, else
// its value by the one rule (secretValue). None of these can begin or end
// with a space, so one that does is refused (reconcile.ErrSecretSpaces),
// naming the variable, not the value.
func EnvSecret(getenv func(string) string, name string) (string, error) {
	v := getenv(name)
	if v == "" {
		return "", nil
	}
	b := secretValue([]byte(v))
	if reconcile.EdgeSpace(string(b)) || len(b) == 0 {
		return "", fmt.Errorf("$%s: %w (a line ending, a space or a tab from a paste?)", name, reconcile.ErrSecretSpaces)
	}
	return string(b), nil
}

// envName is what an environment variable may be called.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

func (s Secret) problem(at, where, name string) error {
	switch {
	case s.Env == "" && s.File == "":
		return fieldErrorf(at, `%s: fetch %s is not set: give {"env": "VARIABLE"} or {"file": "/path"}`, where, name)
	case s.Env != "" && s.File != "":
		return fieldErrorf(at, "%s: fetch %s names both env and file: give one", where, name)
	case s.Env != "" && !envName.MatchString(s.Env):
		return fieldErrorf(at, "%s: fetch %s.env %s is not a variable name", where, name, reconcile.Quote(s.Env))
	case s.File != "" && (strings.ContainsAny(s.File, "\x00\n\r") || !strings.HasPrefix(s.File, "/") && !strings.HasPrefix(s.File, ".")):
		return fieldErrorf(at, "%s: fetch %s.file %s: want an absolute path (or one starting with ./)", where, name, reconcile.Quote(s.File))
	}
	return nil
}

// Secrets are the Slack bot token and webhook URL of the variables s
// names, "" when unset, read by the one rule of secrets (EnvSecret); one
// with spaces at its ends is refused.
func (s Slack) Secrets(getenv func(string) string) (token, webhook string, err error) {
	if token, err = EnvSecret(getenv, s.TokenEnv); err != nil {
		return "", "", fmt.Errorf("slack: %w", err)
	}
	if webhook, err = EnvSecret(getenv, s.WebhookEnv); err != nil {
		return "", "", fmt.Errorf("slack: %w", err)
	}
	return token, webhook, nil
}
