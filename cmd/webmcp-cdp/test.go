package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
)

func newTest() *cobra.Command {
	var f ciFlags
	var junit, baseURL string
	cmd := &cobra.Command{
		Use:   "test [flags] FILE",
		Short: "Check a site's WebMCP tools against a spec file (YAML or JSON) in headless Chromium",
		Long: "test reads a spec of pages, the tools each must have, and calls with their expected results\n" +
			"(exact text, contained text, isError, a JSON subset of structuredContent), runs it in headless\n" +
			"Chromium one page at a time, and prints each check and a last line \"N passed, M failed\".\n" +
			"Relative page URLs resolve against --base-url, else the spec's base, else the directory the\n" +
			"spec's serve field names, served on 127.0.0.1 for the run. See the README's \"CI mode\".\n\n" +
			"Exit status: 0 when every check passed, 1 when one failed, 2 for a bad spec or command line,\n" +
			"a browser that could not start or went away, or a JUnit file that could not be written.",
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			spec, err := ci.LoadSpec(file)
			if err != nil {
				return usageError(err)
			}
			base := baseURL
			if dir := spec.ServeDir(); dir != "" {
				if base != "" {
					slog.Info("--base-url given: not serving the spec's directory", "serve", dir)
				} else {
					served, stop, err := ci.ServeDir(dir)
					if err != nil {
						return usageError(fmt.Errorf("%s: %w", file, err))
					}
					defer stop()
					slog.Info("serving the spec's directory", "dir", dir, "url", served)
					base = served
				}
			}
			urls, err := spec.URLs(base)
			if err != nil {
				return usageError(fmt.Errorf("%s: %w", file, err))
			}
			var junitFile *os.File
			if junit != "" {
				// Create it now: a path that cannot be written fails before
				// the browser starts.
				if junitFile, err = os.Create(junit); err != nil {
					return usageError(fmt.Errorf("--junit: %w", err))
				}
				defer junitFile.Close()
			}
			b, err := startCI(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer b.close()
			rep := (&ci.Runner{Session: b.sess, Out: cmd.OutOrStdout()}).Run(b.ctx, file, spec, urls)
			if junitFile != nil {
				if err := rep.WriteJUnit(junitFile); err != nil {
					return usageError(fmt.Errorf("--junit %s: %w", junit, err))
				}
				if err := junitFile.Close(); err != nil {
					return usageError(fmt.Errorf("--junit %s: %w", junit, err))
				}
			}
			if lost := b.lost(); lost != nil {
				return lost
			}
			if passed, failed := rep.Counts(); failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d of %d checks failed", failed, passed+failed)}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&junit, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "URL that relative page URLs resolve against (overrides the spec's base and serve)")
	return cmd
}
