package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"reconcile"
)

// Decoded is a config file read by Decode: the settings that could be
// read, with the defaults applied, and where each setting stands.
type Decoded struct {
	Config Config
	// Lines maps the JSON path of every setting in the file to the line
	// of its key (or, in an array, of its element).
	Lines map[string]int
	// Problems are the file's decoding problems, in the order found.
	Problems []Problem
}

// NotJSON is a config file that is not JSON at all, so nothing in it can
// be read; Line is 0 when the decoder does not say where.
type NotJSON struct {
	Line int
	Msg  string
}

func (e *NotJSON) Error() string { return "not valid JSON: " + e.Msg }

// Decode reads a config file as Load does, but goes on past a mistake, so
// that check-config can name every one with its line. The error is a
// *NotJSON when src cannot be read as JSON at all.
func Decode(src []byte) (*Decoded, error) {
	var v any
	if err := json.Unmarshal(src, &v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &NotJSON{Line: lineAt(src, int(se.Offset)), Msg: strings.TrimPrefix(se.Error(), "json: ")}
		}
		return nil, &NotJSON{Msg: msg}
	}
	d := &Decoded{}
	w := &configWalker{src: src, lines: map[string]int{}}
	w.value(src, 0, "", reflect.ValueOf(&d.Config).Elem())
	d.Config.applyDefaults()
	d.Lines, d.Problems = w.lines, w.problems
	return d, nil
}

// LineOf is the line of the setting at path in the file, or of the
// nearest setting holding it that the file has; 0 when the file has none
// (the setting takes its default).
func (d *Decoded) LineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if line, ok := d.Lines[p]; ok {
			return line
		}
	}
	return 0
}

// parentPath drops the last key or index of a JSON path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// configWalker decodes a config file as Load's strict decoder does,
// but goes on past a mistake: every unknown key and every value of the
// wrong kind becomes a problem at its line, and every setting that can be
// read is. Structs are walked key by key; other values are decoded with
// encoding/json, so their UnmarshalJSON methods (Duration) apply.
// channelfeed.Mapping is walked too: its UnmarshalJSON only refuses
// unknown keys, which the walker does with a line number.
type configWalker struct {
	src      []byte
	lines    map[string]int // JSON path → line of its key (or element)
	problems []Problem
}

// Problem is a decoding problem at a JSON path and line. An unknown key's
// path is that of the object holding it.
type Problem struct {
	Path, Msg string
	Line      int
}

var channelPath = regexp.MustCompile(`^channels\[(\d+)\](?:\.(.+))?$`)

// Describe renders the problem for a reader, naming a channel by its name
// too: channels[2] "adyen": grace: ….
func (p Problem) Describe(cfg *Config) string {
	where := p.Path
	if m := channelPath.FindStringSubmatch(p.Path); m != nil {
		where = "channels[" + m[1] + "]"
		if i, err := strconv.Atoi(m[1]); err == nil && i < len(cfg.Channels) {
			_, where = cfg.Channels[i].Where(i)
		}
		if m[2] != "" {
			where += ": " + m[2]
		}
	}
	if where == "" {
		return p.Msg
	}
	return where + ": " + p.Msg
}

func lineAt(src []byte, off int) int {
	off = min(max(off, 0), len(src))
	return 1 + bytes.Count(src[:off], []byte{'\n'})
}

func (w *configWalker) fail(path string, line int, format string, args ...any) {
	w.problems = append(w.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...), Line: line})
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
