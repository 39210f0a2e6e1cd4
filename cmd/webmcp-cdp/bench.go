package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

func newBench() *cobra.Command {
	var calls int
	var tabs []int
	var markdown bool
	var cpuprofile, memprofile string
	var rows []string
	var forwardPage, forwardHTTPPage, forwardHTTPAddr string
	var forwardHTTPMode bench.ForwardHTTPMode
	var grid string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure webmcp-cdp on this machine and print one table (Chromium required)",
		Long: "bench runs this binary as an MCP server over stdio and over HTTP against a bench page with ten\n" +
			"tools. Each latency row makes tools/call and raw Runtime.callFunctionOn calls into the same page\n" +
			"in one loop, alternating which goes first, and prints p50/p95/p99 of both and their ratios. Over\n" +
			"HTTP it measures the go-sdk client at MCP 2026-07-28 and 2025-11-25 in one loop with raw CDP and\n" +
			"a minimal stateless forwarder, the floor of any server behind that client. It also prints\n" +
			"calls/s of 8 concurrent callers over stdio next to 8 raw CDP callers (alternating rounds),\n" +
			"navigation to the client having the new tools, and the RSS of the webmcp-cdp process with 1,\n" +
			"10 and 100 tabs (anonymous and file pages), then the Go runtime's figures of that process:\n" +
			"heap, goal, stacks, goroutines, collections.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if forwardPage != "" {
				// The floor the bench measures a server against (bench.Forward).
				return bench.Forward(cmd.Context(), forwardPage, os.Stdin, os.Stdout)
			}
			if forwardHTTPPage != "" {
				// The same floor behind a streamable HTTP client (bench.ForwardHTTP).
				return bench.ForwardHTTP(cmd.Context(), forwardHTTPPage, forwardHTTPAddr, forwardHTTPMode)
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary: %w", err)
			}
			if grid == "" {
				grid = os.Getenv(envSeleniumURL)
			}
			rep, err := bench.Run(cmd.Context(), bench.Options{Binary: self, Calls: calls, Tabs: tabs, CPUProfile: cpuprofile, MemProfile: memprofile, Rows: rows, Grid: grid})
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
	cmd.Flags().IntVar(&calls, "calls", 200, "call pairs (tools/call and raw CDP) per latency row")
	cmd.Flags().IntSliceVar(&tabs, "tabs", []int{1, 10, 100}, "tab counts of the memory rows")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print a Markdown table (for the docs)")
	cmd.Flags().StringVar(&memprofile, "memprofile", "", "write a heap profile of the webmcp-cdp server of the memory rows (over HTTP) to `FILE`, taken when they are done (read it with go tool pprof)")
	cmd.Flags().StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the webmcp-cdp server measured over stdio to `FILE` (read it with go tool pprof)")
	cmd.Flags().StringVar(&forwardPage, "forward-page", "", "run as the minimal forwarder the bench measures servers against, on `URL` (stdin and stdout)")
	cmd.Flags().MarkHidden("forward-page")
	cmd.Flags().StringVar(&forwardHTTPPage, "forward-http-page", "", "run as the minimal streamable HTTP forwarder the bench measures servers against, on `URL`")
	cmd.Flags().MarkHidden("forward-http-page")
	cmd.Flags().StringVar(&forwardHTTPAddr, "forward-http-addr", "", "the `HOST:PORT` the streamable HTTP forwarder listens on")
	cmd.Flags().MarkHidden("forward-http-addr")
	cmd.Flags().BoolVar(&forwardHTTPMode.SSE, "forward-http-sse", false, "the streamable HTTP forwarder answers tools/call with an event stream")
	cmd.Flags().MarkHidden("forward-http-sse")
	cmd.Flags().BoolVar(&forwardHTTPMode.Stateless, "forward-http-stateless", false, "the streamable HTTP forwarder serves MCP 2026-07-28 only, statelessly")
	cmd.Flags().MarkHidden("forward-http-stateless")
	cmd.Flags().StringVar(&grid, "selenium", "", "the Selenium Grid of the grid rows, with at least three free slots (default $"+envSeleniumURL+"; without either they are skipped)")
	cmd.Flags().StringSliceVar(&rows, "rows", nil, "measure only these groups of rows: "+strings.Join(bench.RowGroups, ", ")+" (all when empty, but navsteps, measured only when named)")
	cli.OneOf(cmd.Flags(), "rows", bench.RowGroups)
	return cmd
}
