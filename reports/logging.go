package reports

import (
	"context"
	"fmt"
	"log/slog"
)

// RedactingHandler returns h behind a handler that passes the message,
// every string value and every error of a record through RedactSecrets
// before h sees them: the log's last net for secrets. The
// code redacts what it knows may carry a secret (a DSN, an error from the
// database or Slack); this is the net under all of it, so a secret that
// reaches a log line by a path nobody thought of is still hidden.
func RedactingHandler(h slog.Handler) slog.Handler { return redactHandler{h} }

type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, RedactSecrets(rec.Message), rec.PC)
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
		return slog.String(a.Key, RedactSecrets(v.String()))
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
			return slog.String(a.Key, RedactSecrets(x.Error()))
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		default:
			// Anything else prints as fmt does; only when that text holds
			// a secret does it become the redacted text.
			s := fmt.Sprint(x)
			if red := RedactSecrets(s); red != s {
				return slog.String(a.Key, red)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
