package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newMan writes the manual pages from the cobra definitions with
// cobra/doc (through go-md2man), the same definitions --help and
// docs/flags.md come from: a page per command, written at packaging time
// (packaging/npm/pack.sh) rather than kept in the repository.
func newMan() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write the manual pages (section 1) of webmcp-cdp and each command into DIR",
		Long: "man writes webmcp-cdp.1 and one page per command (webmcp-cdp-launch.1, …) into DIR, made from\n" +
			"the same definitions as --help. Read one with man -l DIR/webmcp-cdp-inspect.1, or write them where\n" +
			"man looks: webmcp-cdp man ~/.local/share/man/man1. Their date is $SOURCE_DATE_EPOCH when set\n" +
			"(reproducible builds), else today.",
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // no "generated on <date>" footer
			header := &doc.GenManHeader{Title: "WEBMCP-CDP", Section: "1", Source: "webmcp-cdp " + version, Manual: "webmcp-cdp manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man: writing the pages into %s: %w", dir, err)
			}
			return nil
		},
	}
}
