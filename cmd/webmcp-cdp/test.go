package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
)

func newTest() *cobra.Command {
	var f ciFlags
	var junit, baseURL, format string
	var update bool
	cmd := &cobra.Command{
		Use:   "test [flags] FILE",
		Short: "Check a site's WebMCP tools against a spec file (YAML or JSON) in headless Chromium",
		Long: "test reads a spec of pages, the tools each must have, and calls with their expected results\n" +
			"(exact text, contained text, regular expressions, isError, JSON paths or subsets of the result),\n" +
			"runs it in headless Chromium one page at a time, and prints each check and a last line\n" +
			"\"N passed, M failed\". Relative page URLs resolve against --base-url, else the spec's base, else the\n" +
			"directory the spec's serve field names, served on 127.0.0.1 for the run. See docs/ci.md and\n" +
			"docs/ci-spec.md.\n\n" +
			"With GITHUB_ACTIONS=true it also prints GitHub annotations (::error file=SPEC,line=N::...), and\n" +
			"with GITHUB_STEP_SUMMARY set it appends a Markdown summary to that file.\n\n" +
			"Exit status: 0 when every check passed, 1 when one failed, 2 when a page did not load (an HTTP\n" +
			"status of 400 or more, a network error), for a bad spec or command line, a browser that could\n" +
			"not start or went away, or a report that could not be written.",
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if err := cli.CheckFormat(format); err != nil {
				return err
			}
			spec, err := ci.LoadSpec(file)
			if err != nil {
				return cli.Usage(err)
			}
			if err := spec.Substitute(os.LookupEnv); err != nil {
				return cli.Usage(err)
			}
			base := baseURL
			if dir := spec.ServeDir(); dir != "" {
				if base != "" {
					slog.Info("--base-url given: not serving the spec's directory", "serve", dir)
				} else {
					served, stop, err := ci.ServeDir(dir)
					if err != nil {
						return cli.Usage(fmt.Errorf("%s: %w", file, err))
					}
					defer stop()
					slog.Info("serving the spec's directory", "dir", dir, "url", served)
					base = served
				}
			}
			urls, err := spec.URLs(base)
			if err != nil {
				return cli.Usage(err)
			}
			var junitFile *os.File
			if junit != "" {
				// Create it now: a path that cannot be written fails before
				// the browser starts.
				if junitFile, err = os.Create(junit); err != nil {
					return cli.Usage(fmt.Errorf("--junit: %w", err))
				}
				defer junitFile.Close()
			}
			b, err := startCI(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer b.Close()
			progress, annotations := cmd.OutOrStdout(), cmd.OutOrStdout()
			if format == "json" {
				// Standard output is for the JSON report alone.
				progress, annotations = cmd.ErrOrStderr(), cmd.ErrOrStderr()
			}
			rep := (&ci.Runner{Session: b.Session(), Out: progress, Update: update}).Run(b.Context(), file, spec, urls)
			if update {
				if err := ci.WriteUpdates(progress, file, rep.Updates); err != nil {
					return cli.Usage(err)
				}
			}
			outs := ci.Outputs{Stdout: cmd.OutOrStdout(), Annotations: annotations, Format: format, JUnitName: junit, Getenv: os.Getenv}
			if junitFile != nil { // (a nil *os.File is not a nil io.WriteCloser)
				outs.JUnit = junitFile
			}
			if err := rep.WriteOutputs(outs); err != nil {
				return cli.Usage(err)
			}
			if lost := b.Lost(); lost != nil {
				return cli.Usage(lost)
			}
			n := rep.Counts()
			total := n.Passed + n.Failed + n.Errors + n.Skipped
			if n.Errors > 0 {
				return &cli.ExitError{Code: 2, Err: fmt.Errorf("%s could not run (a page did not load); %d of %d checks failed", ci.Plural(n.Errors, "check"), n.Failed, total)}
			}
			if n.Failed > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("%d of %d checks failed", n.Failed, total)}
			}
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringVar(&junit, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "URL that relative page URLs resolve against (overrides the spec's base and serve)")
	cmd.Flags().BoolVar(&update, "update", false, "take the results whose snapshot differs as the new snapshots: rewrite them in FILE (keeping ignore and matches marks) and print what changed")
	cmd.Flags().StringVar(&format, "format", "text", "output: text (each check as it runs), or json (one JSON report on stdout; the progress goes to stderr)")
	cli.OneOf(cmd.Flags(), "format", cli.OutputFormats())
	return cmd
}
