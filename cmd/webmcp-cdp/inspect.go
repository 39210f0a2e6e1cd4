package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cibrowser"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
)

// ciFlags are the flags of CI mode (inspect, call, test): launch's, the
// page flags (--settle among them), the call flags where tools are called,
// and how long to wait for a page's tools.
type ciFlags struct {
	lf      launchFlags
	sf      serveFlags
	timeout time.Duration
}

// register adds CI mode's flags to cmd, the call flags when calls is set
// (call and test). The serving flags, which CI mode does not take, keep
// their defaults, but for the state directory: CI mode keeps cached tools in
// memory and never touches the user's state file.
func (f *ciFlags) register(cmd *cobra.Command, calls bool) {
	fs := cmd.Flags()
	f.lf.register(cmd)
	fs.MarkDeprecated("headless", "CI mode is always headless")
	f.sf.pageFlags.register(fs)
	// Defaults only: no command line reaches this set.
	defaults := pflag.NewFlagSet("defaults", pflag.ContinueOnError)
	if calls {
		f.sf.callFlags.register(fs)
	} else {
		f.sf.callFlags.register(defaults)
	}
	f.sf.registerServing(defaults)
	f.sf.stateDir = ""
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "longest wait for a page to load and its tools to settle")
	fs.DurationVar(&f.timeout, "settle-timeout", 10*time.Second, "the former name of --timeout")
	fs.MarkDeprecated("settle-timeout", "use --timeout")
}

// usageArgs makes a bad number of arguments exit with status 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return cli.Usage(fmt.Errorf("%w (usage: %s)", err, cmd.UseLine()))
		}
		return nil
	}
}

// startCI checks the flags, launches headless Chromium and instruments it
// (cmd/webmcp-cdp/cibrowser). Every failure exits with status 2.
func startCI(ctx context.Context, f *ciFlags) (*cibrowser.Browser, error) {
	backend, err := f.sf.check(ctx)
	if err != nil {
		return nil, cli.Usage(err)
	}
	if f.sf.settle <= 0 || f.timeout < f.sf.settle {
		return nil, cli.Usage(fmt.Errorf("--settle %s and --timeout %s: both must be positive, and the timeout at least the settle time", f.sf.settle, f.timeout))
	}
	f.lf.headless = true
	f.sf.viewport = f.lf.viewport
	so, err := f.sf.options(backend, false)
	if err != nil {
		return nil, cli.Usage(err)
	}
	b, err := cibrowser.Start(ctx, cibrowser.Options{
		Launch:  f.lf.options(backend),
		Serve:   so,
		Settle:  f.sf.settle,
		Timeout: f.timeout,
		Version: version,
	})
	if err != nil {
		return nil, cli.Usage(err)
	}
	return b, nil
}

func newInspect() *cobra.Command {
	var f ciFlags
	var asJSON bool
	var format string
	var waitFor []string
	cmd := &cobra.Command{
		Use:   "inspect [flags] URL",
		Short: "Load a page in headless Chromium and print its WebMCP tools and lint findings",
		Long: "inspect launches headless Chromium, loads URL, waits for its WebMCP tools to settle, and prints\n" +
			"each tool (name, routed name, description, input schema, annotations) and the lint findings:\n" +
			"empty or huge descriptions, input schemas that are not objects or do not compile as JSON Schema,\n" +
			"names that clients reject or that webmcp-cdp has to cut, instruction-like text in descriptions,\n" +
			"and tools webmcp-cdp refused. A page with no tools is explained: its console errors, uncaught\n" +
			"exceptions, failed requests, and whether it has a WebMCP API at all. See docs/ci.md.\n\n" +
			"Exit status: 0 when no finding is an error, 1 when one is, 2 when the page did not load (an HTTP\n" +
			"status of 400 or more, a network error), for a bad command line, or a browser that could not start.",
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckPageURL(args[0]); err != nil {
				return err
			}
			if asJSON {
				format = "json"
			}
			if err := cli.CheckFormat(format); err != nil {
				return err
			}
			b, err := startCI(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer b.Close()
			page, err := b.Session().Open(b.Context(), args[0], ci.PageOptions{WaitFor: waitFor})
			if err != nil {
				return cli.Usage(b.OpenError(err))
			}
			in := ci.Inspect(page, f.timeout)
			out := cmd.OutOrStdout()
			if format == "json" {
				err = in.WriteJSON(out)
			} else {
				err = in.WriteText(out)
			}
			if err != nil {
				return cli.Usage(fmt.Errorf("writing the report: %w", err))
			}
			if in.Errors > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %s", args[0], ci.Plural(in.Errors, "lint error"))}
			}
			return nil
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools and findings as one JSON object (--format json)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cli.OneOf(cmd.Flags(), "format", cli.OutputFormats())
	cmd.Flags().StringArrayVar(&waitFor, "wait-for-tool", nil, "wait (up to --timeout) until the page serves this tool, by the page's own name; repeatable")
	return cmd
}
