package config

import (
	"fmt"
	"strings"
)

// zoneTrouble says why time.LoadLocation refused a name, without
// repeating the name.
func zoneTrouble(err error) string {
	if strings.HasPrefix(err.Error(), "unknown time zone") {
		return "unknown time zone"
	}
	return err.Error()
}

// FieldError is a problem with one setting.
type FieldError struct {
	// Path is the setting's JSON path ("schedule.spec",
	// "channels[2].time_zone").
	Path string
	err  error
}

func (e *FieldError) Error() string { return e.err.Error() }
func (e *FieldError) Unwrap() error { return e.err }

func fieldErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, err: fmt.Errorf(format, args...)}
}
