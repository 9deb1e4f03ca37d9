package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"reconcile/reports"
	"reconcile/terminal"
)

// The log goes to stderr: JSON, one object a line, for whatever collects a
// daemon's or a CronJob's output; text when a person is watching.

// logLevel is the --log-level flag: debug, info, warn or error.
type logLevel struct{ slog.Level }

func (l *logLevel) String() string { return strings.ToLower(l.Level.String()) }

func (l *logLevel) Set(s string) error {
	switch strings.ToLower(s) {
	case "debug":
		l.Level = slog.LevelDebug
	case "info":
		l.Level = slog.LevelInfo
	case "warn":
		l.Level = slog.LevelWarn
	case "error":
		l.Level = slog.LevelError
	default:
		// slog would take "info+2" and "WARNING"; the flag keeps to the
		// four words the help names.
		return fmt.Errorf("want debug, info, warn or error")
	}
	return nil
}

// logLevelFlag adds --log-level to a subcommand's flags; a bad level is a
// flag error, so a usage error (exit 2).
func logLevelFlag(fs *flag.FlagSet) *logLevel {
	l := &logLevel{slog.LevelInfo}
	fs.Var(l, "log-level", "log `LEVEL`: debug, info, warn or error (default info)")
	return l
}

// terminal reports whether w is a terminal a person is watching.
func (a *App) terminal(w io.Writer) bool {
	if a.IsTerminal != nil {
		return a.IsTerminal(w)
	}
	return terminal.Is(w)
}

// newLogger returns a command's logger on stderr: text on a terminal, JSON
// otherwise, every message and value passed through reports.RedactSecrets.
func (a *App) newLogger(level *logLevel) *slog.Logger {
	return a.loggerTo(a.Stderr, a.terminal(a.Stderr), level)
}

func (a *App) loggerTo(w io.Writer, text bool, level *logLevel) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if level != nil {
		opts.Level = level.Level
	}
	var h slog.Handler
	if text {
		h = slog.NewTextHandler(w, opts)
	} else {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(reports.RedactingHandler(h))
}

// logAndProgress returns the logger of a manual run and, when stderr is a
// terminal, the progress line sharing stderr with it. Not on a terminal
// there is no progress at all: no line is made, nothing is drawn.
func (a *App) logAndProgress(level *logLevel) (*slog.Logger, terminal.Progress) {
	if !a.terminal(a.Stderr) {
		return a.loggerTo(a.Stderr, false, level), nil
	}
	logw, progress := terminal.Share(a.Stderr)
	return a.loggerTo(logw, true, level), progress
}
