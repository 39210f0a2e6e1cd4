// Command webmcp-cdp makes the WebMCP tools of web pages usable by any MCP
// client: it launches Chrome (or attaches to one), puts the WebMCP page API
// into every document over the Chrome DevTools Protocol, and serves the tools
// that pages register as routed MCP tools.
//
// This package turns flags and config into options, wires and maps errors
// to exit codes; the larger parts live beside it: cli, serve (a browser, or
// a fleet, served over stdio, HTTP or the relay), cibrowser, relaycmd, bench.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/relaycmd"
	"github.com/webmcp-cdp/webmcp-cdp/internal/logging"
)

func main() {
	// `webmcp-cdp bench --cpuprofile` sets this on the server it measures.
	stopProfile, err := bench.StartCPUProfile(os.Getenv(bench.CPUProfileEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "webmcp-cdp:", err)
		os.Exit(1)
	}
	// A broken pipe on stdout or stderr must not kill the process: the
	// browser and its temporary profile would be left behind. With SIGPIPE
	// notified (and the notes dropped), a write to fd 1 or 2 fails with
	// EPIPE instead (os/signal, "SIGPIPE"): a lost stderr loses only the log,
	// and a lost stdout ends the MCP session with exit 1. Notify rather than
	// Ignore, so that the browser we start does not inherit SIG_IGN.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// SIGHUP (the terminal or the parent went) ends the session like
	// SIGTERM, unless --userscript takes it to read the scripts again.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, stopHangup := cli.WithHangup(ctx)
	// `webmcp-cdp bench --memprofile` sets this on the server it measures.
	writeMemProfile := bench.StartMemProfile(ctx, os.Getenv(bench.MemProfileEnv))
	// And `webmcp-cdp bench` sets this on the server of its memory rows.
	writeMemStats := bench.AtStop(ctx, os.Getenv(bench.MemStatsEnv), bench.WriteMemStatsFile)
	root := newRoot()
	err = cli.CheckRepeats(root, os.Args[1:])
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	writeMemProfile()
	writeMemStats()
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// A signal while starting: stopping is what was asked for, as it is
		// once serving (the cleanup has run by now).
		slog.Info("interrupted while starting; stopped", "during", err)
		err = nil
	}
	stopHangup()
	stop()
	// Before os.Exit, which would skip a deferred stop and leave the
	// profile truncated.
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webmcp-cdp:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// newRoot builds the command tree: every command, the persistent flags
// (--log-level, --log-file, --config) and the flag plumbing of package cli.
func newRoot() *cobra.Command {
	var level, logFile string
	root := &cobra.Command{
		Use:           "webmcp-cdp",
		Short:         "Serve the WebMCP tools of web pages to MCP clients, over the Chrome DevTools Protocol",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// Before anything reads a flag: the environment and --config
			// fill in the flags not given (help needs none of them).
			if cmd.Name() == "help" {
				return nil
			}
			if err := cli.ApplyConfig(cmd, os.Getenv); err != nil {
				return cli.Usage(err)
			}
			// stdout belongs to the MCP stdio transport: logs go to stderr.
			logger, err := logging.New(os.Stderr, level, logFile)
			if err != nil {
				return err
			}
			slog.SetDefault(logger)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&level, "log-level", "info", "log level: debug, info, warn or error; logs go to stderr, one short line each (full lines at debug)")
	cli.OneOf(root.PersistentFlags(), "log-level", logging.Levels())
	root.PersistentFlags().StringVar(&logFile, "log-file", "", "also write the full log, at debug level, to `FILE` (appended)")
	root.PersistentFlags().String(cli.ConfigFlag, "", "read flags from a YAML or JSON `FILE` keyed by flag name (see the end of --help)")
	root.SetUsageTemplate(root.UsageTemplate() + cli.ConfigHelp)
	// Inherited by every command: a bad flag exits 2, and a flag of other
	// commands names them (flagerror.go).
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(newLaunch(), newAttach(), newDemo(), newPolyfill(), newVersion(), newBench(), newMan())
	root.AddCommand(newInspect(), newCall(), newTest())
	root.AddCommand(relaycmd.NewRelay(), relaycmd.NewConnect(version))
	// cobra's `completion bash|zsh|fish|powershell`, made now rather than
	// at Execute so that the docs and the tests see it.
	root.InitDefaultCompletionCmd()
	cli.CompleteValues(root)
	return root
}
