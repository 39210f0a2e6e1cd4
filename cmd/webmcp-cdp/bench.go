package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/internal/bench"
)

func newBench() *cobra.Command {
	var calls int
	var tabs []int
	var markdown bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure webmcp-cdp on this machine and print one table (Chromium required)",
		Long: "bench runs this binary as an MCP server over stdio and over HTTP against a bench page with ten\n" +
			"tools, next to raw Runtime.callFunctionOn calls into the same page, and prints p50/p95/p99\n" +
			"latencies, their ratio, navigation to list_changed, calls/s with 8 callers, and the RSS of the\n" +
			"webmcp-cdp process with 1, 10 and 100 tabs.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary: %w", err)
			}
			rep, err := bench.Run(cmd.Context(), bench.Options{Binary: self, Calls: calls, Tabs: tabs})
			if err != nil {
				return err
			}
			if markdown {
				fmt.Fprint(cmd.OutOrStdout(), rep.Markdown())
			} else {
				fmt.Fprint(cmd.OutOrStdout(), rep.Table())
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&calls, "calls", 200, "sequential calls per latency row")
	cmd.Flags().IntSliceVar(&tabs, "tabs", []int{1, 10, 100}, "tab counts of the memory rows")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print a Markdown table (for the docs)")
	return cmd
}
