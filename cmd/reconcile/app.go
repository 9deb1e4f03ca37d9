package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"reconcile"
)

// Exit statuses.
const (
	ExitOK     = 0 // the run completed, with or without findings
	ExitFailed = 1 // the run failed: bad input, database, alert
	ExitUsage  = 2 // the command line was wrong
)

// App is the whole CLI with its outside world injected, so tests run it
// in-process exactly as a user does.
type App struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	// SlackOptions and HTTPClient let tests point Slack at a fake server;
	// Sleep, when set, replaces the waits between Slack retries.
	SlackOptions []slack.Option
	HTTPClient   *http.Client
	Sleep        func(context.Context, time.Duration) error
	// IsTerminal, when set, replaces the check of whether stderr is a
	// terminal: text logs and the progress display, or JSON logs only.
	IsTerminal func(io.Writer) bool
}

// exitUsage ends every usage text.
const exitUsage = `
Exit status: 0 the run completed (with or without findings), 1 it failed,
2 the command line was wrong. 'reconcile CMD -h' shows a command's flags.
`

// usageError is a mistake on the command line: exit status 2.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// newFlagSet returns a subcommand's flags, printing its usage to Stdout on
// -h and to nowhere on a parse error (Main prints one line instead).
func (a *App) newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		onceUnwrapped(fs)
		fmt.Fprintf(a.Stdout, "Usage: %s\n\nFlags:\n", synopsis)
		fs.SetOutput(a.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprint(a.Stdout, exitUsage)
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	onceEach(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // fs.Parse has printed the usage
		}
		return usagef(fs.Name(), "%s", err)
	}
	if fs.NArg() > 0 {
		return usagef(fs.Name(), "unexpected argument %s", reconcile.Quote(fs.Arg(0)))
	}
	return nil
}

// given reports whether the flag name was on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// onceEach makes every flag of fs refuse a second value: `--date
// 2026-11-28 --date 2026-11-29` is a mistake to point out, not a choice
// of the last one (the flag package's way).
func onceEach(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*onceValue); !done {
			f.Value = &onceValue{Value: f.Value}
		}
	})
}

// onceValue is a flag's value that may be set once.
type onceValue struct {
	flag.Value
	set bool
}

// String is the value's. (The flag package also calls it on a zero
// onceValue, which has none; the usage is printed with the values
// unwrapped, see onceUnwrapped.)
func (v *onceValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

// onceUnwrapped puts back the values onceEach wrapped, so that the flag
// package prints each flag's default as it would have.
func onceUnwrapped(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(*onceValue); ok {
			f.Value = v.Value
		}
	})
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errors.New("given more than once")
	}
	v.set = true
	return v.Value.Set(s)
}

// IsBoolFlag keeps a boolean flag usable without a value (--dry-run).
func (v *onceValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments, which it returns: the flag package stops at the first
// non-flag, and `review import FILE --reviewer NAME` is as natural as the
// flags first. After "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	onceEach(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err // the flag package has printed the usage
			}
			return nil, usagef(fs.Name(), "%s", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
