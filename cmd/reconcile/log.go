package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/robfig/cron/v3"

	"reconcile/reports"
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
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
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
	return slog.New(redactHandler{h})
}

// discardLogger is the logger of a Job built without one.
var discardLogger = slog.New(slog.DiscardHandler)

// redactHandler passes the message, every string value and every error of
// a record through reports.RedactSecrets before its handler sees them. The
// code redacts what it knows may carry a secret (a DSN, an error from the
// database or Slack); this is the net under all of it, so a secret that
// reaches a log line by a path nobody thought of is still hidden.
type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, reports.RedactSecrets(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, reports.RedactSecrets(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = redactAttr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			// An error's text is where a DSN or a token hides; the handler
			// would print just that text anyway.
			return slog.String(a.Key, reports.RedactSecrets(x.Error()))
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		default:
			// Anything else prints as fmt does; only when that text holds
			// a secret does it become the redacted text.
			s := fmt.Sprint(x)
			if red := reports.RedactSecrets(s); red != s {
				return slog.String(a.Key, red)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// cronLogger sends robfig/cron's own messages to the log: its routine
// ones (start, wake, run) at Debug, a tick skipped because the last one is
// still running at Warn, and its errors (a panic recovered) at Error.
type cronLogger struct{ log *slog.Logger }

var _ cron.Logger = cronLogger{}

func (c cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.log.Warn("tick skipped: the previous one is still running", kv...)
		return
	}
	c.log.Debug("cron "+msg, kv...)
}

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.log.Error("cron "+msg, append([]any{"error", err}, kv...)...)
}
