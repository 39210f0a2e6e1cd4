package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file makes a single-value flag given twice an error: pflag keeps the
// last value, so `attach --browser-url A --browser-url B` would serve only
// B without a word.

// repeatableInstead names, for a single-value flag, the repeatable flag
// that takes several values in its place.
func repeatableInstead(name string) (string, bool) {
	alt, ok := map[string]string{
		"browser-url": "--browser NAME=URL, once for each browser",
		"ws-endpoint": "--browser NAME=URL, once for each browser",
		"selenium":    "--browsers N to start several browsers on one Grid",
	}[name]
	return alt, ok
}

// CheckRepeats returns a usage error when args give one of the command's
// single-value flags more than once. It parses args a second time, on a
// copy of the command's flags that only counts; what the copy cannot parse
// is left to cobra, which reports it.
func CheckRepeats(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == nil {
		return nil
	}
	counts := map[string]int{}
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsWhitelist.UnknownFlags = true
	repeatable := map[string]bool{}
	add := func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		_, slice := f.Value.(pflag.SliceValue)
		repeatable[f.Name] = slice
		fs.AddFlag(&pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, NoOptDefVal: f.NoOptDefVal, Value: &countValue{typ: f.Value.Type()}})
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	_ = fs.ParseAll(rest, func(f *pflag.Flag, _ string) error {
		counts[f.Name]++
		return nil
	})
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if counts[f.Name] > 1 && !repeatable[f.Name] {
			names = append(names, f.Name)
		}
	})
	if len(names) == 0 {
		return nil
	}
	name := names[0] // VisitAll goes in name order
	msg := fmt.Sprintf("--%s is given %d times but takes one value (the last would silently win)", name, counts[name])
	if alt, ok := repeatableInstead(name); ok {
		return Usage(fmt.Errorf("%s: use %s", msg, alt))
	}
	return Usage(fmt.Errorf("%s: give it once", msg))
}

// countValue stands in for a flag's value while CheckRepeats parses.
type countValue struct{ typ string }

func (v *countValue) String() string   { return "" }
func (v *countValue) Set(string) error { return nil }
func (v *countValue) Type() string     { return v.typ }
