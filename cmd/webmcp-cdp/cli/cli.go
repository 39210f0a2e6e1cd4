// Package cli is webmcp-cdp's command-line plumbing, below the commands of
// package main: every flag's two more sources (the environment and a
// --config file), a single-value flag given twice as an error, a bad flag
// worded for the reader, and the exit status an error carries.
package cli

import "errors"

// ExitError ends the program with exit status Code, printing Err.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Usage is a usage error: a bad command line or configuration, exit
// status 2.
func Usage(err error) error { return &ExitError{Code: 2, Err: err} }

// ExitCode is the exit status of a command that failed with err: the one
// it carries, else 1.
func ExitCode(err error) int {
	if ce, ok := errors.AsType[*ExitError](err); ok {
		return ce.Code
	}
	return 1
}
