package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"reconcile"
)

// Checked is a config file read as check-config reads it: every problem,
// not only the first, each with the line of its setting.
type Checked struct {
	File    string
	Decoded *Decoded
	// Problems are the file's problems in the order of their lines, each
	// one line of text starting with where it is ("file:line: ").
	Problems []string
}

// Check reads the config file at path as Load does, but reports every
// problem rather than the first, and with them what run lets through
// because its flags can stand in but schedule needs. The error is for a
// file that cannot be read as JSON at all: then nothing else can be
// checked.
func Check(path string) (*Checked, error) {
	b, err := Read(path)
	if err != nil {
		return nil, err
	}
	d, err := Decode(b)
	var nj *NotJSON
	switch {
	case errors.As(err, &nj) && nj.Line > 0:
		return nil, fmt.Errorf("%s:%d: %w", path, nj.Line, nj)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &Checked{File: path, Decoded: d}
	cfg := &d.Config
	type lineProblem struct {
		line int
		msg  string
	}
	var found []lineProblem
	for _, p := range d.Problems {
		found = append(found, lineProblem{p.Line, fmt.Sprintf("%s:%d: %s", path, p.Line, p.Describe(cfg))})
	}
	for _, err := range append(cfg.Problems(), cfg.ScheduleProblems()...) {
		var fe *FieldError
		at := ""
		if errors.As(err, &fe) {
			at = fe.Path
		}
		found = append(found, lineProblem{d.LineOf(at), c.At(at) + reconcile.FirstLine(err.Error())})
	}
	if len(found) == 0 {
		// The walker reads the file as Load does; should they ever
		// disagree, Load has the last word.
		if _, err := Load(path); err != nil {
			found = append(found, lineProblem{0, reconcile.FirstLine(err.Error())})
		}
	}
	slices.SortStableFunc(found, func(a, b lineProblem) int { return cmp.Compare(a.line, b.line) })
	for _, p := range found {
		c.Problems = append(c.Problems, p.msg)
	}
	return c, nil
}

// At is where the setting at path is, for the start of a problem line:
// "file:line: " when the file has it, "file: " when it takes the default.
func (c *Checked) At(path string) string {
	if line := c.Decoded.LineOf(path); line > 0 {
		return fmt.Sprintf("%s:%d: ", c.File, line)
	}
	return c.File + ": "
}
