package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
)

func newVersion() *cobra.Command {
	var browserURL string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, and the browser's with --browser-url",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "webmcp-cdp", version)
			if browserURL == "" {
				return nil
			}
			v, err := serve.BrowserVersion(cmd.Context(), browserURL)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "browser %s (protocol %s)\n", v.Product, v.ProtocolVersion)
			return nil
		},
	}
	cmd.Flags().StringVar(&browserURL, "browser-url", "", "also print the version of the browser at this debugging address")
	return cmd
}
