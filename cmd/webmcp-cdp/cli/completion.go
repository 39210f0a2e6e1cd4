package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file completes the values of flags that take one of a known set,
// in the shells of cobra's `completion` command (bash, zsh, fish,
// powershell). The set is noted on the flag where it is registered, from
// the same list its check uses (polyfill.Backends for --backend, say), and
// one pass over the command tree hands each to cobra: no second list.

// ValuesAnnotation is the pflag annotation that holds a flag's values.
const ValuesAnnotation = "webmcp-cdp/values"

// OneOf notes on the flag name of fs the values it takes, for completion.
// The flag must be registered first.
func OneOf[T ~string](fs *pflag.FlagSet, name string, values []T) {
	vs := make([]string, len(values))
	for i, v := range values {
		vs[i] = string(v)
	}
	if err := fs.SetAnnotation(name, ValuesAnnotation, vs); err != nil {
		panic(fmt.Sprintf("completion of --%s: %v", name, err)) // a flag registered after its values
	}
}

// CompleteValues registers, on every command from root down, the
// completion of each flag that OneOf noted. Other flags complete as cobra
// does by default (file names).
func CompleteValues(root *cobra.Command) {
	done := map[*pflag.Flag]bool{}
	EachCommand(root, func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.PersistentFlags(), c.Flags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				vals, ok := f.Annotations[ValuesAnnotation]
				if !ok || done[f] {
					return
				}
				done[f] = true
				if err := c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)); err != nil {
					panic(fmt.Sprintf("completion of %s --%s: %v", c.CommandPath(), f.Name, err))
				}
			})
		}
	})
}
