package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

func newPolyfill() *cobra.Command {
	return &cobra.Command{
		Use:   "polyfill",
		Short: "Print the WebMCP page script, for a site to load in its own tests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), polyfill.Standalone())
			return err
		},
	}
}
