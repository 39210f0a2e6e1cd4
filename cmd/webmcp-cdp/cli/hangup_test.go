//go:build unix

package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHangup: SIGHUP ends the context of WithHangup, unless a command took
// it (OnHangup): then it calls the reload, each time, and the context goes
// on. Not parallel: the signal goes to the whole test process.
func TestHangup(t *testing.T) {
	for _, tt := range []struct {
		name  string
		taken bool
	}{
		{"not taken: ends", false},
		{"taken: reloads", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := WithHangup(context.Background())
			defer stop()
			reloads := make(chan struct{}, 2)
			if tt.taken {
				OnHangup(ctx, func() { reloads <- struct{}{} })
			}
			for range 2 {
				if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				select {
				case <-reloads:
				case <-ctx.Done():
					if tt.taken {
						t.Fatal("SIGHUP ended the context though a command took it")
					}
					return
				case <-time.After(10 * time.Second):
					t.Fatal("SIGHUP did nothing")
				}
			}
			if !tt.taken {
				t.Fatal("SIGHUP reloaded though no command took it")
			}
			if ctx.Err() != nil {
				t.Error("the context ended")
			}
		})
	}
}
