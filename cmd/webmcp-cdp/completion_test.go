package main

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/internal/logging"
)

// TestFlagValueCompletion: on every command that has one of the flags with
// a known set of values, the shell completes those values, and each of them
// is one the flag's check takes (e2e/completion_test.go runs real bash).
func TestFlagValueCompletion(t *testing.T) {
	enums := []string{"backend", "list", "channel", "dialogs", "confirm", "log-level", "tool-names", "format", "rows"}
	root := newRoot()
	seen := map[string]int{}
	walkCommands(root, func(c *cobra.Command) {
		for _, name := range enums {
			if c.Flag(name) == nil {
				continue
			}
			complete, ok := c.GetFlagCompletionFunc(name)
			if !ok {
				t.Errorf("%s --%s has no value completion", cli.CommandPath(c), name)
				continue
			}
			vals, directive := complete(c, nil, "")
			if len(vals) < 2 || directive != cobra.ShellCompDirectiveNoFileComp {
				t.Errorf("%s --%s completes %q (directive %d)", cli.CommandPath(c), name, vals, directive)
			}
			seen[name]++
			for _, v := range vals {
				if err := c.Flag(name).Value.Set(v); err != nil {
					t.Errorf("%s --%s %s: %v", cli.CommandPath(c), name, v, err)
				}
			}
		}
	})
	for _, name := range enums {
		if seen[name] == 0 {
			t.Errorf("no command completes --%s", name)
		}
	}
	// And the checks take them: one check per set.
	for _, name := range []string{"backend", "list", "dialogs", "confirm", "tool-names"} {
		for _, v := range annotated(t, root, "launch", name) {
			var f serveFlags
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			f.register(fs)
			if err := fs.Set(name, v); err != nil {
				t.Fatal(err)
			}
			if _, err := f.check(t.Context()); err != nil {
				t.Errorf("--%s %s: %v", name, v, err)
			}
		}
	}
	for _, v := range annotated(t, root, "launch", "log-level") {
		if _, err := logging.New(nil, v, ""); err != nil {
			t.Errorf("--log-level %s: %v", v, err)
		}
	}
	for _, v := range annotated(t, root, "inspect", "format") {
		if err := cli.CheckFormat(v); err != nil {
			t.Errorf("--format %s: %v", v, err)
		}
	}
	if !slices.Equal(annotated(t, root, "attach", "channel"), annotated(t, root, "launch", "channel")) {
		t.Errorf("attach and launch complete different --channel values")
	}
}

// annotated returns the values noted on a command's flag.
func annotated(t *testing.T, root *cobra.Command, cmd, flag string) []string {
	t.Helper()
	c, _, err := root.Find([]string{cmd})
	if err != nil || c.Flag(flag) == nil {
		t.Fatalf("%s --%s: %v", cmd, flag, err)
	}
	return c.Flag(flag).Annotations[cli.ValuesAnnotation]
}
