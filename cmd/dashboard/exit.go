package main

import (
	"errors"
	"fmt"
	"io"
)

// exitError is a command's exit status with what it says on standard
// error (nothing when msg is empty).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a mistake in the command line: exit status 2.
func usageError(format string, a ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, a...)}
}

// failure is a failure to do what the command line asked: exit status 1.
func failure(format string, a ...any) error {
	return &exitError{code: 1, msg: fmt.Sprintf(format, a...)}
}

// quietExit ends a command with a status and nothing more to say (-h, or
// what was said already).
func quietExit(code int) error { return &exitError{code: code} }

// exitWith writes err's message after the command's name and returns its
// exit status: 0 for no error, 1 for an error that is no exitError.
func exitWith(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return 0
	}
	code, msg := 1, err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, msg)
	}
	return code
}
