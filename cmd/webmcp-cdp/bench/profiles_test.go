package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestStartMemProfile checks that the heap profile is written when the
// context ends (a signal) and when the process ends without one, and that
// nothing is written, nor the heap sampled, without a path.
func TestStartMemProfile(t *testing.T) {
	tests := []struct {
		name   string
		path   bool
		cancel bool
		rate   int // the heap sampling rate after the start
	}{
		{"asked to stop", true, true, 4 << 10},
		{"ends without a signal", true, false, 4 << 10},
		{"no path", false, true, 0},
	}
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := ""
			if tc.path {
				path = filepath.Join(dir, "heap.pprof")
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			wait := StartMemProfile(ctx, path)
			if runtime.MemProfileRate != tc.rate {
				t.Errorf("heap sampling rate %d, want %d", runtime.MemProfileRate, tc.rate)
			}
			if tc.cancel {
				cancel()
			}
			wait()
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.path {
				if len(entries) != 0 {
					t.Fatalf("wrote %d files without a path", len(entries))
				}
				return
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// A profile is gzipped protobuf.
			if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
				t.Fatalf("the profile (%d bytes) is not gzipped", len(b))
			}
		})
	}
}

// TestMemStatsAtStop checks that the runtime's memory figures are written
// when the context ends, in the form the bench reads.
func TestMemStatsAtStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memstats")
	ctx, cancel := context.WithCancel(t.Context())
	wait := AtStop(ctx, path, WriteMemStatsFile)
	cancel()
	wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("/memory/classes/total:bytes ")) {
		t.Errorf("the figures lack the total:\n%s", b)
	}
}
