package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// TestCallLog: the status page lists the last calls, newest first, at most
// lastCalls of them however many were made.
func TestCallLog(t *testing.T) {
	tests := []struct {
		calls, want int
	}{
		{0, 0},
		{3, 3},
		{lastCalls, lastCalls},
		{2*lastCalls + 7, lastCalls},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.calls), func(t *testing.T) {
			var l callLog
			for i := range tt.calls {
				l.add(hub.CallRecord{Tool: fmt.Sprint(i)})
			}
			got := l.list()
			if len(got) != tt.want {
				t.Fatalf("%d calls listed, want %d", len(got), tt.want)
			}
			for i, r := range got {
				if want := fmt.Sprint(tt.calls - 1 - i); r.Tool != want {
					t.Errorf("call %d listed is %q, want %q (newest first)", i, r.Tool, want)
				}
			}
		})
	}
}

// TestRecordingStartsOnce: without --record the recorder is not hooked
// until the status page asks (startRecording), then once; after the
// server's context ends it is never hooked again.
func TestRecordingStartsOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := hub.New(echoBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(ctx, h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	s.recording.mu.Lock()
	hooked := s.recording.unhook != nil
	s.recording.mu.Unlock()
	if hooked || !s.recording.lazy {
		t.Fatalf("the server's own recorder is hooked at New (lazy %v)", s.recording.lazy)
	}
	first := s.startRecording()
	if first.IsZero() || s.startRecording() != first {
		t.Errorf("startRecording gave %v, then another time", first)
	}
	cancel()
	// A server whose context ended before the page asked never hooks it.
	late := New(ctx, h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	late.stopRecording() // as the context's AfterFunc does; it may not have run yet
	if since := late.startRecording(); !since.IsZero() {
		t.Errorf("the recorder was hooked at %v after the server's context ended", since)
	}
}
