// Command webmcp-cdp makes the WebMCP tools of web pages usable by any MCP
// client: it launches Chrome (or attaches to one), puts the WebMCP page API
// into every document over the Chrome DevTools Protocol, and serves the tools
// that pages register as routed MCP tools.
//
// The commands are in one file each; this package only parses flags and
// wires the packages together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/internal/logging"
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	// `webmcp-cdp bench --cpuprofile` sets this on the server it measures.
	stopProfile, err := startCPUProfile(os.Getenv(bench.CPUProfileEnv))
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
	// SIGTERM: clean up, then exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// `webmcp-cdp bench --memprofile` sets this on the server it measures.
	writeMemProfile := startMemProfile(ctx, os.Getenv(bench.MemProfileEnv))
	// And `webmcp-cdp bench` sets this on the server of its memory rows.
	writeMemStats := atStop(ctx, os.Getenv(bench.MemStatsEnv), writeMemStats)
	root := newRoot()
	err = checkRepeats(root, os.Args[1:])
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
	stop()
	// Before os.Exit, which would skip a deferred stop and leave the
	// profile truncated.
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webmcp-cdp:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

// startCPUProfile starts CPU profiling into path, when path is not empty, and
// returns the func that stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: creating the CPU profile: %w", bench.CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: starting the CPU profile: %w", bench.CPUProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "webmcp-cdp: writing the CPU profile %s: %v\n", path, err)
		}
	}, nil
}

// startMemProfile, when path is not empty, writes a heap profile to path
// as soon as ctx ends (a signal asks the process to stop), before the
// browser and the sessions are torn down: the profile is the heap as of the
// last garbage collection, the state the process was serving in, sampled
// every 4 KiB allocated. The returned func waits for that write, or writes
// the profile at once when the process ends without a signal.
//
// Without a path the heap is not sampled at all: the sampler keeps a table
// of the stacks it saw (/memory/classes/profiling/buckets, 1.4 MB with the
// default rate) that nothing here reads.
func startMemProfile(ctx context.Context, path string) func() {
	if path == "" {
		runtime.MemProfileRate = 0
		return func() {}
	}
	// A finer sample than the default 512 KiB: the heap is a few MB.
	runtime.MemProfileRate = 4 << 10
	return atStop(ctx, path, writeHeapProfile)
}

// atStop, when path is not empty, calls write(path) once as soon as ctx
// ends (a signal asks the process to stop), before the browser and the
// sessions are torn down. The returned func waits for that write, or makes
// it at once when the process ends without a signal. An error goes to
// stderr.
func atStop(ctx context.Context, path string, write func(path string) error) func() {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	var once sync.Once
	do := func() {
		once.Do(func() {
			defer close(done)
			if err := write(path); err != nil {
				fmt.Fprintf(os.Stderr, "webmcp-cdp: %v\n", err)
			}
		})
	}
	go func() {
		<-ctx.Done()
		do()
	}()
	return func() {
		do()
		<-done
	}
}

// writeMemStats writes the Go runtime's memory figures to path
// (bench.WriteMemStats).
func writeMemStats(path string) error {
	return writeTo(path, bench.MemStatsEnv, "the memory figures", bench.WriteMemStats)
}

// writeHeapProfile writes the heap profile to path.
func writeHeapProfile(path string) error {
	return writeTo(path, bench.MemProfileEnv, "the heap profile", pprof.WriteHeapProfile)
}

// writeTo creates the file at path and writes what into it with write;
// an error names the environment variable env that asked for it.
func writeTo(path, env, what string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: creating %s: %w", env, what, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: writing %s %s: %w", env, what, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: writing %s %s: %w", env, what, path, err)
	}
	return nil
}

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
			if err := applyConfig(cmd, os.Getenv); err != nil {
				return usageError(err)
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
	oneOf(root.PersistentFlags(), "log-level", logging.Levels())
	root.PersistentFlags().StringVar(&logFile, "log-file", "", "also write the full log, at debug level, to `FILE` (appended)")
	root.PersistentFlags().String(configFlag, "", "read flags from a YAML or JSON `FILE` keyed by flag name (see the end of --help)")
	root.SetUsageTemplate(root.UsageTemplate() + configHelp)
	// Inherited by every command: a bad flag exits 2, and a flag of other
	// commands names them (flagerror.go).
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newLaunch(), newAttach(), newDemo(), newPolyfill(), newVersion(), newBench(), newMan())
	root.AddCommand(newInspect(), newCall(), newTest())
	root.AddCommand(newRelay(), newConnect())
	// cobra's `completion bash|zsh|fish|powershell`, made now rather than
	// at Execute so that the docs and the tests see it.
	root.InitDefaultCompletionCmd()
	completeValues(root)
	return root
}
