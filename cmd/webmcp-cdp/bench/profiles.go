package bench

// This file is the measured server's side: `webmcp-cdp bench` starts
// webmcp-cdp with CPUProfileEnv, MemProfileEnv or MemStatsEnv set, and the
// program's main writes what they ask for with these.

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// StartCPUProfile starts CPU profiling into path, when path is not empty, and
// returns the func that stops it and closes the file.
func StartCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: creating the CPU profile: %w", CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: starting the CPU profile: %w", CPUProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "webmcp-cdp: writing the CPU profile %s: %v\n", path, err)
		}
	}, nil
}

// StartMemProfile, when path is not empty, writes a heap profile to path
// as soon as ctx ends (a signal asks the process to stop), before the
// browser and the sessions are torn down: the profile is the heap as of the
// last garbage collection, the state the process was serving in, sampled
// every 4 KiB allocated. The returned func waits for that write, or writes
// the profile at once when the process ends without a signal.
//
// Without a path the heap is not sampled at all: the sampler keeps a table
// of the stacks it saw (/memory/classes/profiling/buckets, 1.4 MB with the
// default rate) that nothing here reads.
func StartMemProfile(ctx context.Context, path string) func() {
	if path == "" {
		runtime.MemProfileRate = 0
		return func() {}
	}
	// A finer sample than the default 512 KiB: the heap is a few MB.
	runtime.MemProfileRate = 4 << 10
	return AtStop(ctx, path, writeHeapProfile)
}

// AtStop, when path is not empty, calls write(path) once as soon as ctx
// ends (a signal asks the process to stop), before the browser and the
// sessions are torn down. The returned func waits for that write, or makes
// it at once when the process ends without a signal. An error goes to
// stderr.
func AtStop(ctx context.Context, path string, write func(path string) error) func() {
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

// WriteMemStatsFile writes the Go runtime's memory figures to path
// (WriteMemStats).
func WriteMemStatsFile(path string) error {
	return writeTo(path, MemStatsEnv, "the memory figures", WriteMemStats)
}

// writeHeapProfile writes the heap profile to path.
func writeHeapProfile(path string) error {
	return writeTo(path, MemProfileEnv, "the heap profile", pprof.WriteHeapProfile)
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
