package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file words a bad command line for the reader. Each command takes
// only the flags that change what it does, so a flag of another command is
// a common slip (`inspect --confirm writes`): pflag's "unknown flag" would
// send the reader looking for a typo, so the error names the commands that
// take the flag instead.

// FlagError is every command's FlagErrorFunc: a bad flag is a usage error
// (exit status 2), and a flag of other commands names them.
func FlagError(cmd *cobra.Command, err error) error {
	if ne, ok := errors.AsType[*pflag.NotExistError](err); ok && ne.GetSpecifiedShortnames() == "" {
		name := ne.GetSpecifiedName()
		if users := commandsWithFlag(cmd.Root(), name); len(users) > 0 {
			err = fmt.Errorf("--%s is a flag of %s; %s does not use it (see %s --help)", name, joinAnd(users), CommandPath(cmd), cmd.CommandPath())
		}
	}
	return Usage(err)
}

// commandsWithFlag lists, in help order, the paths of the commands under
// root that show the flag name (hidden and deprecated flags are not
// offered).
func commandsWithFlag(root *cobra.Command, name string) []string {
	var out []string
	EachCommand(root, func(c *cobra.Command) {
		if f := c.Flags().Lookup(name); c != root && f != nil && !f.Hidden && c.IsAvailableCommand() {
			out = append(out, CommandPath(c))
		}
	})
	return out
}

// EachCommand calls visit with root, then every command under it, in help
// order.
func EachCommand(root *cobra.Command, visit func(*cobra.Command)) {
	visit(root)
	for _, sub := range root.Commands() {
		EachCommand(sub, visit)
	}
}

// CommandPath is a command's path without the program's name ("relay
// token").
func CommandPath(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// joinAnd joins names as prose: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
