package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
)

func newCall() *cobra.Command {
	var f ciFlags
	cmd := &cobra.Command{
		Use:   "call [flags] URL TOOL [JSON]",
		Short: "Load a page in headless Chromium, call one of its WebMCP tools, and print the MCP result",
		Long: "call launches headless Chromium, loads URL, waits for its WebMCP tools to settle, and calls TOOL\n" +
			"(the page's own name for it, or its routed name) with the JSON object given (default {}; \"-\"\n" +
			"reads it from standard input). The MCP CallToolResult is printed on standard output as JSON.\n\n" +
			"call waits (up to --timeout) for the page to load and to serve TOOL.\n\n" +
			"Exit status: 0 when the call succeeded, 1 when its result has isError, 2 when the page did not load\n" +
			"(an HTTP status of 400 or more, a network error), for a bad command line, a tool the page does not\n" +
			"have, or a browser that could not start.",
		Args: usageArgs(cobra.RangeArgs(2, 3)),
		RunE: func(cmd *cobra.Command, args []string) error {
			pageURL, tool := args[0], args[1]
			if err := cli.CheckPageURL(pageURL); err != nil {
				return err
			}
			input := json.RawMessage("{}")
			if len(args) == 3 {
				raw := []byte(args[2])
				if args[2] == "-" {
					var err error
					if raw, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 64<<20)); err != nil {
						return cli.Usage(fmt.Errorf("reading the arguments from standard input: %w", err))
					}
				}
				var obj map[string]any
				if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
					why := "null"
					if err != nil {
						why = cli.JSONAt(raw, err)
					}
					return cli.Usage(fmt.Errorf("the arguments %.100q are not a JSON object such as '{\"text\": \"hi\"}' (%s)", raw, why))
				}
				input = raw
			}
			b, err := startCI(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer b.Close()
			// The page must have TOOL: wait for it (within --timeout)
			// rather than for a quiet period alone.
			page, err := b.Session().Open(b.Context(), pageURL, ci.PageOptions{WaitFor: []string{tool}})
			if err != nil {
				return cli.Usage(b.OpenError(err))
			}
			res, err := page.Call(b.Context(), tool, input)
			if err != nil {
				if lost := b.Lost(); lost != nil && !errors.Is(err, ci.ErrNoTool) {
					return cli.Usage(lost)
				}
				return cli.Usage(err)
			}
			out, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return cli.Usage(fmt.Errorf("encoding the result: %w", err))
			}
			out = append(out, '\n')
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return cli.Usage(fmt.Errorf("writing the result: %w", err))
			}
			if res.IsError {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s returned an error result (isError)", tool)}
			}
			return nil
		},
	}
	f.register(cmd, true)
	return cmd
}
