package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/inputfile"
	"reconcile/ledger"
	"reconcile/reports"
)

const checkConfigSynopsis = `reconcile check-config [--config FILE] [--dsn DSN]

Checks, before 03:00 rather than at it, everything the job reads: the config
file (syntax, unknown keys, time zones, path templates, formats, mappings,
durations, the schedule), the Slack and database settings in the
environment (the database is asked, within 5 seconds, whether it answers
and whether its schema is current) and the out directory. Every problem is
one line naming the file, line and setting; secrets are never printed, only
the names of the variables holding them.

Then it shows what the next tick of 'reconcile schedule' would do: per
channel, the business dates due (within the lookback window and not yet
reconciled; without the database, every date of the window) and whether
each date's file is there, and which missing ones are overdue.

Exit status 0 when there is no problem, 1 when there is any.`

// dbCheckTimeout bounds how long check-config waits for the database.
const dbCheckTimeout = 5 * time.Second

func (a *App) checkConfigCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("check-config", checkConfigSynopsis)
	config := fs.String("config", "", "config `FILE` (JSON; default: the built-in defaults, which name no channels)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: the variable the config names, $RECONCILE_DATABASE_URL)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ck := &configCheck{file: *config, w: a.Stdout}
	cfg, ok := ck.load()
	if ok {
		ck.channels(cfg)
	}
	ck.flush()
	if ok {
		ck.slack(cfg, a.Getenv)
		db := ck.database(ctx, cfg, *dsn, a.Getenv)
		if db != nil {
			defer db.Close()
		}
		ck.outDir(cfg.OutDir)
		ck.nextTick(ctx, cfg, db, a.Now())
	}
	what := "the built-in defaults"
	if *config != "" {
		what = "config " + *config
	}
	switch n := len(ck.problems); n {
	case 0:
		fmt.Fprintf(a.Stdout, "\n%s: no problems\n", what)
		return nil
	case 1:
		return fmt.Errorf("%s: 1 problem (the line starting with \"problem:\" above)", what)
	default:
		return fmt.Errorf("%s: %d problems (the lines starting with \"problem:\" above)", what, n)
	}
}

// configCheck collects what check-config finds, printing each line as it
// goes; problems are counted for the exit status.
type configCheck struct {
	file     string
	w        io.Writer
	lines    map[string]int // JSON path of a setting → its line in the file
	problems []string
	pending  []pendingProblem // the config file's, until flush
}

func (ck *configCheck) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	ck.problems = append(ck.problems, msg)
	fmt.Fprintf(ck.w, "problem: %s\n", msg)
}

func (ck *configCheck) ok(format string, args ...any) {
	fmt.Fprintf(ck.w, "ok: %s\n", fmt.Sprintf(format, args...))
}

func (ck *configCheck) note(format string, args ...any) {
	fmt.Fprintf(ck.w, "note: %s\n", fmt.Sprintf(format, args...))
}

// at is where a setting is, for the start of a problem line: "file:line: "
// when the file has it, "file: " when it takes the default.
func (ck *configCheck) at(path string) string {
	if ck.file == "" {
		return ""
	}
	for p := path; p != ""; p = parentPath(p) {
		if line, ok := ck.lines[p]; ok {
			return fmt.Sprintf("%s:%d: ", ck.file, line)
		}
	}
	return ck.file + ": "
}

// parentPath drops the last key or index of a JSON path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// load reads the config as LoadConfig does, reporting every problem rather
// than the first. ok is false when the file could not be read as JSON at
// all: then nothing else can be checked.
func (ck *configCheck) load() (cfg Config, ok bool) {
	if ck.file == "" {
		ck.note("no --config: checking the built-in defaults (no channels; database and Slack from the default variables)")
		return DefaultConfig(), true
	}
	b, err := readConfig(ck.file)
	if err != nil {
		ck.problem("%s", err)
		return Config{}, false
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			ck.problem("%s:%d: not valid JSON: %s", ck.file, lineAt(b, int(se.Offset)), strings.TrimPrefix(se.Error(), "json: "))
		} else {
			ck.problem("%s: not valid JSON: %s", ck.file, strings.TrimPrefix(err.Error(), "json: "))
		}
		return Config{}, false
	}
	w := &configWalker{src: b, lines: map[string]int{}}
	w.value(b, 0, "", reflect.ValueOf(&cfg).Elem())
	cfg.applyDefaults()
	ck.lines = w.lines
	fmt.Fprintf(ck.w, "config %s: %d channels\n", ck.file, len(cfg.Channels))

	for _, p := range w.problems {
		ck.pending = append(ck.pending, pendingProblem{p.line, fmt.Sprintf("%s:%d: %s", ck.file, p.line, p.describe(&cfg))})
	}
	for _, err := range cfg.problems() {
		var fe *fieldError
		path := ""
		if errors.As(err, &fe) {
			path = fe.path
		}
		ck.cfgProblem(path, "%s", oneLine(err.Error()))
	}
	if len(ck.pending) == 0 {
		// The walker reads the file as LoadConfig does; should they ever
		// disagree, LoadConfig has the last word.
		if _, err := LoadConfig(ck.file); err != nil {
			ck.pending = append(ck.pending, pendingProblem{0, oneLine(err.Error())})
		}
	}
	return cfg, true
}

// pendingProblem is a problem of the config file, printed with the others
// in the order of their lines.
type pendingProblem struct {
	line int
	msg  string
}

// cfgProblem notes a problem with the setting at path, for flush.
func (ck *configCheck) cfgProblem(path, format string, args ...any) {
	ck.pending = append(ck.pending, pendingProblem{ck.lineOf(path), ck.at(path) + fmt.Sprintf(format, args...)})
}

// flush prints the config file's problems in the order of their lines.
func (ck *configCheck) flush() {
	slices.SortStableFunc(ck.pending, func(a, b pendingProblem) int { return cmp.Compare(a.line, b.line) })
	for _, p := range ck.pending {
		ck.problem("%s", p.msg)
	}
	ck.pending = nil
}

func (ck *configCheck) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if line, ok := ck.lines[p]; ok {
			return line
		}
	}
	return 0
}

// placeholder is a {word} in a path template.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// channels checks what LoadConfig lets through because `run` with --file,
// --format or --channel does not need it, but `schedule` does.
func (ck *configCheck) channels(cfg Config) {
	if len(cfg.Channels) == 0 && ck.file != "" {
		ck.cfgProblem("channels", "channels: none configured: schedule refuses such a config, and run needs --channel")
	}
	lookback := time.Duration(cfg.Schedule.LookbackDays) * 24 * time.Hour
	for i, ch := range cfg.Channels {
		at, where := ch.where(i)
		if ch.Format == "" {
			ck.cfgProblem(at+".format", "%s: format is empty: want one of %s", where, strings.Join(channelfeed.Formats(), ", "))
		}
		if msg := templateTrouble(ch.Path); msg != "" {
			ck.cfgProblem(at+".path", "%s: %s", where, msg)
		}
		if ch.Format != "" && ch.Format != "stripe" {
			var keys []string
			if ch.OrderMetadataKey != "" {
				keys = append(keys, "order_metadata_key")
			}
			if ch.RefundMetadataKey != "" {
				keys = append(keys, "refund_metadata_key")
			}
			if len(keys) > 0 {
				ck.cfgProblem(at+"."+keys[0], "%s: %s: only read by format stripe, not %s", where, strings.Join(keys, " and "), reconcile.Quote(ch.Format))
			}
		}
		if g := ch.grace(); g >= 24*time.Hour {
			ck.cfgProblem(at+".grace", "%s: grace %s: want less than a day (it is a window before the end of the day)", where, g)
		}
		if d := ch.deadline(time.Time{}).Sub(time.Time{}); lookback > 0 && d >= lookback {
			ck.cfgProblem(at+".deadline", "%s: deadline %s: want less than the lookback window (schedule.lookback_days %d), or a missing file leaves the window before it is alerted",
				where, d, cfg.Schedule.LookbackDays)
		}
	}
}

// templateTrouble says what is wrong with a path template, or "".
func templateTrouble(path string) string {
	if path == "" {
		return "path is empty: schedule, and run without --file, cannot find the channel's file"
	}
	var unknown []string
	dated := false
	for _, p := range placeholder.FindAllString(path, -1) {
		switch p {
		case "{date}", "{yyyymmdd}":
			dated = true
		default:
			unknown = append(unknown, p)
		}
	}
	switch {
	case len(unknown) > 0:
		return fmt.Sprintf("path %q: unknown placeholder %s (known: {date} for 2026-11-28, {yyyymmdd} for 20261128)", path, strings.Join(unknown, ", "))
	case !dated:
		return fmt.Sprintf("path %q has no {date} or {yyyymmdd}: every business date would read the same file", path)
	}
	return ""
}

// slack checks the Slack variables the config names, never printing
// their values: a token or a webhook URL is a secret.
func (ck *configCheck) slack(cfg Config, getenv func(string) string) {
	s := cfg.Slack
	token := getenv(s.TokenEnv) != ""
	channel, from := s.Channel, "slack.channel"
	if channel == "" {
		channel, from = getenv(s.ChannelEnv), "$"+s.ChannelEnv
	}
	webhook := getenv(s.WebhookEnv)
	webhookOK := false
	if webhook != "" {
		u, err := url.Parse(webhook)
		webhookOK = err == nil && u.Scheme == "https" && u.Host != ""
		if !webhookOK {
			ck.problem("slack: $%s is set but is not an https URL (it should be the incoming webhook's https://hooks.slack.com/… address)", s.WebhookEnv)
		}
	}
	switch {
	case token && channel == "":
		ck.problem("slack: $%s is set but no channel is: set slack.channel in the config or $%s", s.TokenEnv, s.ChannelEnv)
	case token:
		ck.ok("slack: alerts posted by the bot ($%s) to %s (from %s), workbook attached", s.TokenEnv, channel, from)
	case webhookOK:
		ck.ok("slack: alerts sent to the incoming webhook in $%s (the message only, no workbook)", s.WebhookEnv)
	case webhook == "":
		ck.note("slack: neither $%s nor $%s is set: alerts are printed on stdout", s.TokenEnv, s.WebhookEnv)
	}
}

// database checks that the database answers and its schema is current, and
// returns it open then (nil otherwise). Only the variable's name is
// printed, never the DSN.
func (ck *configCheck) database(ctx context.Context, cfg Config, dsn string, getenv func(string) string) *ledger.DB {
	from := "--dsn"
	if dsn == "" {
		from, dsn = "$"+cfg.DatabaseURLEnv, getenv(cfg.DatabaseURLEnv)
	}
	if dsn == "" {
		ck.problem("database: %s is not set: run and schedule need it (the DSN of the job's PostgreSQL)", from)
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, dbCheckTimeout)
	defer cancel()
	db, err := ledger.Open(tctx, dsn)
	if err != nil {
		ck.problem("database (%s): unreachable: %s", from, dbTrouble(tctx, err))
		return nil
	}
	missing, err := db.Unapplied(tctx)
	if err != nil {
		db.Close()
		ck.problem("database (%s): cannot read its schema version: %s", from, dbTrouble(tctx, err))
		return nil
	}
	all, _ := ledger.Migrations()
	if len(missing) > 0 {
		db.Close()
		ck.problem("database (%s): schema not current: %d of %d migrations not applied (%s): run 'reconcile migrate'",
			from, len(missing), len(all), strings.Join(missing, ", "))
		return nil
	}
	ck.ok("database (%s): reachable, schema current (%d migrations)", from, len(all))
	return db
}

// dbTrouble says in a few words why the database could not be used,
// without the DSN: pgx's messages quote parts of it.
func dbTrouble(ctx context.Context, err error) string {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", dbCheckTimeout)
	case errors.As(err, &pgErr):
		return fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return reports.RedactSecrets(msg)
}

// outDir checks that runs can write their reports.
func (ck *configCheck) outDir(dir string) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ck.note("out_dir %s does not exist yet: the first run creates it", dir)
	case err != nil:
		ck.problem("%sout_dir %s: %s", ck.at("out_dir"), dir, err)
	case !st.IsDir():
		ck.problem("%sout_dir %s is not a directory", ck.at("out_dir"), dir)
	default:
		f, err := os.CreateTemp(dir, ".reconcile-check-*")
		if err != nil {
			ck.problem("%sout_dir %s is not writable: %s", ck.at("out_dir"), dir, errors.Unwrap(err))
			return
		}
		f.Close()
		os.Remove(f.Name())
		ck.ok("out_dir %s: writable", dir)
	}
}

// nextTick prints when `reconcile schedule` would tick next and what that
// tick would find, per channel, through the scheduler's own Plan.
func (ck *configCheck) nextTick(ctx context.Context, cfg Config, db *ledger.DB, now time.Time) {
	loc, zoneErr := time.LoadLocation(cfg.Schedule.TimeZone)
	// As `schedule` reads it: cron.New's parser is the standard one.
	sched, specErr := cron.ParseStandard(cfg.Schedule.Spec)
	if zoneErr != nil || specErr != nil {
		fmt.Fprintln(ck.w, "\nNext tick: unknown until schedule.spec and schedule.time_zone are mended.")
		return
	}
	next := sched.Next(now.In(loc))
	fmt.Fprintf(ck.w, "\nNext tick: %s (schedule %s in %s)\n", next.Format(time.RFC3339), reconcile.Quote(cfg.Schedule.Spec), loc)
	if len(cfg.Channels) == 0 {
		return
	}
	lookback := cfg.Schedule.LookbackDays
	if db == nil {
		fmt.Fprintf(ck.w, "Without a usable database the dates cannot be checked against past runs: every date of the lookback window (%d days) is listed, files as they are now.\n", lookback)
	} else {
		fmt.Fprintf(ck.w, "Dates due: in the lookback window (%d days) and not yet reconciled; files as they are now.\n", lookback)
	}
	for i, ch := range cfg.Channels {
		_, where := ch.where(i)
		if ch.Name != "" {
			where = ch.Name
		}
		if _, err := time.LoadLocation(ch.TimeZone); err != nil {
			fmt.Fprintf(ck.w, "  %s: dates unknown until its time_zone is mended\n", where)
			continue
		}
		if ch.Path == "" {
			fmt.Fprintf(ck.w, "  %s (%s): no path template, so no file is looked for\n", where, ch.TimeZone)
			continue
		}
		one := cfg
		one.Channels = cfg.Channels[i : i+1]
		s := &Scheduler{Config: one, Job: &Job{DB: db}, Now: func() time.Time { return next }}
		due, err := s.Plan(ctx)
		if err != nil {
			ck.problem("database: cannot read past runs of %s: %s", where, dbTrouble(ctx, err))
			continue
		}
		switch {
		case db == nil:
			fmt.Fprintf(ck.w, "  %s (%s): %d dates\n", where, ch.TimeZone, len(due))
		case len(due) == 0:
			fmt.Fprintf(ck.w, "  %s (%s): nothing due: every date of the window is reconciled\n", where, ch.TimeZone)
		default:
			fmt.Fprintf(ck.w, "  %s (%s): %d of %d dates due\n", where, ch.TimeZone, len(due), lookback)
		}
		for _, d := range due {
			state := "missing"
			if d.Ready {
				state = "found"
				if err := readable(d.Spec.File); err != nil {
					state = "unreadable"
					ck.problem("%s: %s: %s", where, d.Spec.Day, err)
				}
			}
			line := fmt.Sprintf("    %s  %-10s %s", d.Spec.Day, state, d.Spec.File)
			if d.Overdue {
				line += "  overdue since " + d.Deadline.Format(time.RFC3339)
			}
			fmt.Fprintln(ck.w, line)
		}
	}
}

// readable is nil when path is a regular file the job can open, opened
// as a run opens it: a named pipe is refused, not waited on.
func readable(path string) error {
	f, err := inputfile.Open(path, "settlement file")
	if err != nil {
		return err
	}
	return f.Close()
}

// configWalker decodes a config file as LoadConfig's strict decoder does,
// but goes on past a mistake: every unknown key and every value of the
// wrong kind becomes a problem at its line, and every setting that can be
// read is. Structs are walked key by key; other values are decoded with
// encoding/json, so their UnmarshalJSON methods (Duration) apply.
// channelfeed.Mapping is walked too: its UnmarshalJSON only refuses
// unknown keys, which the walker does with a line number.
type configWalker struct {
	src      []byte
	lines    map[string]int // JSON path → line of its key (or element)
	problems []walkProblem
}

// walkProblem is a decoding problem at a JSON path. An unknown key's path
// is that of the object holding it.
type walkProblem struct {
	path, msg string
	line      int
}

var channelPath = regexp.MustCompile(`^channels\[(\d+)\](?:\.(.+))?$`)

// describe renders the problem for a reader, naming a channel by its name
// too: channels[2] "adyen": grace: ….
func (p walkProblem) describe(cfg *Config) string {
	where := p.path
	if m := channelPath.FindStringSubmatch(p.path); m != nil {
		where = "channels[" + m[1] + "]"
		if i, err := strconv.Atoi(m[1]); err == nil && i < len(cfg.Channels) {
			_, where = cfg.Channels[i].where(i)
		}
		if m[2] != "" {
			where += ": " + m[2]
		}
	}
	if where == "" {
		return p.msg
	}
	return where + ": " + p.msg
}

func lineAt(src []byte, off int) int {
	off = min(max(off, 0), len(src))
	return 1 + bytes.Count(src[:off], []byte{'\n'})
}

func (w *configWalker) fail(path string, line int, format string, args ...any) {
	w.problems = append(w.problems, walkProblem{path: path, msg: fmt.Sprintf(format, args...), line: line})
}

// value decodes raw, found at offset off of the file, into v.
func (w *configWalker) value(raw []byte, off int, path string, v reflect.Value) {
	switch {
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct:
		if string(raw) == "null" {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		w.value(raw, off, path, v.Elem())
	case v.Kind() == reflect.Struct:
		w.object(raw, off, path, v)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		w.array(raw, off, path, v)
	default:
		if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
			w.fail(path, lineAt(w.src, off), "%s", decodeTrouble(err))
		}
	}
}

func (w *configWalker) object(raw []byte, off int, path string, v reflect.Value) {
	if string(raw) == "null" {
		return
	}
	if raw[0] != '{' {
		w.fail(path, lineAt(w.src, off), "want an object {…}, not %s", jsonKind(raw))
		return
	}
	fields := jsonFields(v.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return // json.Unmarshal has vouched for the syntax
		}
		key, _ := tok.(string)
		keyOff := off + int(dec.InputOffset()) - 1
		var rv json.RawMessage
		if err := dec.Decode(&rv); err != nil {
			return
		}
		valOff := off + int(dec.InputOffset()) - len(rv)
		p := key
		if path != "" {
			p = path + "." + key
		}
		w.lines[p] = lineAt(w.src, keyOff)
		idx, ok := fields[key]
		if !ok {
			// encoding/json matches keys ignoring case, after an exact match.
			for name, i := range fields {
				if strings.EqualFold(name, key) {
					idx, ok = i, true
					break
				}
			}
		}
		if !ok {
			w.fail(path, w.lines[p], "unknown key %s", reconcile.Quote(key))
			continue
		}
		w.value(rv, valOff, p, v.Field(idx))
	}
}

func (w *configWalker) array(raw []byte, off int, path string, v reflect.Value) {
	if string(raw) == "null" {
		return
	}
	if raw[0] != '[' {
		w.fail(path, lineAt(w.src, off), "want an array […], not %s", jsonKind(raw))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // [
	v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	for i := 0; dec.More(); i++ {
		var rv json.RawMessage
		if err := dec.Decode(&rv); err != nil {
			return
		}
		valOff := off + int(dec.InputOffset()) - len(rv)
		p := fmt.Sprintf("%s[%d]", path, i)
		w.lines[p] = lineAt(w.src, valOff)
		elem := reflect.New(v.Type().Elem()).Elem()
		w.value(rv, valOff, p, elem)
		v.Set(reflect.Append(v, elem))
	}
}

// jsonFields maps the JSON keys of a struct type to its fields.
func jsonFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = i
	}
	return m
}

// jsonKind names the kind of a JSON value for a message.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// decodeTrouble turns an encoding/json error into words for a config's
// reader, who knows JSON rather than Go types.
func decodeTrouble(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if error(ute) == err {
			return fmt.Sprintf("want %s, not %s", goKind(ute.Type), ute.Value)
		}
		// An UnmarshalJSON method's own words (Duration's) say it better.
		return strings.TrimSuffix(err.Error(), ": "+ute.Error())
	}
	return strings.ReplaceAll(err.Error(), "json: ", "")
}

func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return goKind(t.Elem())
	}
	return t.String()
}
