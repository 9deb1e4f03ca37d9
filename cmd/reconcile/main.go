// Command reconcile is the nightly payment-reconciliation job: it compares
// the channels' settlement files with the orders and refunds in PostgreSQL,
// reverses unambiguous duplicates, and reports the rest for review.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"reconcile"
	"reconcile/reports"
)

func main() {
	// The job's large structures hold no pointers, so collecting more
	// often costs little and keeps the peak memory near what is live.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the job to stop and record why; a second one
	// stops the process at once, as it would without the job's handling.
	go func() {
		<-ctx.Done()
		stop()
	}()
	app := &App{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now}
	os.Exit(app.Main(ctx, os.Args[1:]))
}

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

// usageError is a mistake on the command line: exit status 2.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

var commands = []struct {
	name, synopsis string
}{
	{"run", "reconcile one business date: every configured channel, or one"},
	{"migrate", "create or upgrade the database schema"},
	{"schedule", "run as a daemon, reconciling yesterday at the configured time"},
	{"demo", "run the job on the bundled fixtures against a throwaway PostgreSQL"},
	{"review", "import the decisions written in a review workbook"},
	{"alert", "send a run's alert that could not be sent"},
	{"report", "one workbook, summary and alert for a date run as shards"},
	{"check-config", "check a config and its environment; show what the next tick would do"},
	{"help", "show this help, or a command's"},
}

const mainUsage = `reconcile compares payment channels' settlement files with our own records.

Usage:
  reconcile run --date YYYY-MM-DD [--channel NAME] [--file PATH] [flags]
  reconcile --date YYYY-MM-DD ...      (the same as run)
  reconcile migrate [--dsn DSN]
  reconcile schedule [--config FILE]
  reconcile demo [--out DIR]
  reconcile review import FILE.xlsx [--reviewer NAME]
  reconcile alert --resend RUN_ID
  reconcile run --shard I/N …  /  reconcile report --date D --channel C
  reconcile check-config [--config FILE]
  reconcile help [COMMAND]

Commands:
`

const exitUsage = `
Exit status: 0 the run completed (with or without findings), 1 it failed,
2 the command line was wrong. 'reconcile CMD -h' shows a command's flags.
`

// Main runs the command line and returns the exit status.
func (a *App) Main(ctx context.Context, args []string) int {
	if a.Getenv == nil {
		a.Getenv = os.Getenv
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	err := a.dispatch(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(a.Stderr, "reconcile %s: %s\n", ue.cmd, ue.msg)
		if ue.cmd != "" {
			fmt.Fprintf(a.Stderr, "Try 'reconcile %s -h'.\n", ue.cmd)
		} else {
			fmt.Fprintln(a.Stderr, "Try 'reconcile help'.")
		}
		return ExitUsage
	default:
		fmt.Fprintf(a.Stderr, "reconcile: %s\n", errorText(err))
		return ExitFailed
	}
}

func (a *App) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		a.printHelp(a.Stderr)
		return &usageError{msg: "no command given"}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return a.runCmd(ctx, rest)
	case "migrate":
		return a.migrateCmd(ctx, rest)
	case "schedule":
		return a.scheduleCmd(ctx, rest)
	case "demo":
		return a.demoCmd(ctx, rest)
	case "review":
		return a.reviewCmd(ctx, rest)
	case "alert":
		return a.alertCmd(ctx, rest)
	case "report":
		return a.reportCmd(ctx, rest)
	case "check-config":
		return a.checkConfigCmd(ctx, rest)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			return a.dispatch(ctx, []string{rest[0], "-h"})
		}
		a.printHelp(a.Stdout)
		return nil
	}
	if len(cmd) > 1 && cmd[0] == '-' {
		return a.runCmd(ctx, args) // `reconcile --date …` is `reconcile run --date …`
	}
	return &usageError{msg: fmt.Sprintf("unknown command %s", reconcile.Quote(cmd))}
}

func (a *App) printHelp(w io.Writer) {
	fmt.Fprint(w, mainUsage)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.synopsis)
	}
	fmt.Fprint(w, exitUsage)
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

// maxErrorText bounds the text of an error as the job records and shows
// it (stderr, runs.error, summary.json, the alert): a sentence naming a
// file, a line and a column with a short quote of the value fits many
// times over, and a value copied whole by some library does not.
const maxErrorText = 2048

// errorText is err as a person reads it: secrets hidden, its lines
// joined into one (a line repeated is said once), at most maxErrorText
// bytes. Hidden first, so a cut cannot keep half a password out of the
// patterns' reach.
func errorText(err error) string {
	var lines []string
	for _, l := range strings.Split(reports.RedactSecrets(err.Error()), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines, " ")
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … (%d bytes in all)", s[:cut], len(s))
}

func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
