package cibrowser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// browserIn returns a Browser over the given run and parent contexts, as
// Start makes one, without a browser behind it.
func browserIn(run, parent context.Context) *Browser {
	return &Browser{ctx: run, parent: parent, close: func() {}}
}

func TestLostAndOpenError(t *testing.T) {
	gone := errors.New("lost the browser: the browser exited: signal: killed")
	notFound := &ci.LoadError{
		URL:  "http://127.0.0.1:1/missing",
		Load: core.PageLoad{URL: "http://127.0.0.1:1/missing", Status: 404, StatusText: "Not Found"},
		Diagnosis: core.PageDiagnosis{
			Load:     core.PageLoad{URL: "http://127.0.0.1:1/missing", Status: 404, StatusText: "Not Found"},
			Problems: []core.PageProblem{{Kind: core.ProblemConsole, Text: "boom"}},
		},
	}
	tests := []struct {
		name     string
		browser  func(t *testing.T) *Browser
		openErr  error
		wantLost string // "" for nil
		wantOpen []string
		wantIs   error
	}{
		{
			name:     "running, plain error passes through",
			browser:  func(t *testing.T) *Browser { return browserIn(t.Context(), t.Context()) },
			openErr:  errors.New("no such tool"),
			wantOpen: []string{"no such tool"},
		},
		{
			name:     "running, load error gets the diagnosis",
			browser:  func(t *testing.T) *Browser { return browserIn(t.Context(), t.Context()) },
			openErr:  fmt.Errorf("opening: %w", notFound),
			wantOpen: []string{"HTTP 404", "\n  boom"},
			wantIs:   notFound,
		},
		{
			name: "browser gone",
			browser: func(t *testing.T) *Browser {
				run, cancel := context.WithCancelCause(t.Context())
				cancel(gone)
				return browserIn(run, t.Context())
			},
			openErr:  notFound,
			wantLost: gone.Error(),
			wantOpen: []string{gone.Error()},
			wantIs:   gone,
		},
		{
			name: "interrupted",
			browser: func(t *testing.T) *Browser {
				parent, cancel := context.WithCancelCause(t.Context())
				run, stop := context.WithCancelCause(parent)
				t.Cleanup(func() { stop(nil) })
				cancel(errors.New("signal: interrupt"))
				return browserIn(run, parent)
			},
			openErr:  notFound,
			wantLost: "interrupted: signal: interrupt",
			wantOpen: []string{"interrupted: signal: interrupt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.browser(t)
			lost := b.Lost()
			switch {
			case tt.wantLost == "" && lost != nil:
				t.Errorf("Lost() = %v, want nil", lost)
			case tt.wantLost != "" && (lost == nil || lost.Error() != tt.wantLost):
				t.Errorf("Lost() = %v, want %q", lost, tt.wantLost)
			}
			got := b.OpenError(tt.openErr)
			if got == nil {
				t.Fatal("OpenError returned nil")
			}
			for _, want := range tt.wantOpen {
				if !strings.Contains(got.Error(), want) {
					t.Errorf("OpenError() = %q, want it to contain %q", got, want)
				}
			}
			if tt.wantIs != nil && !errors.Is(got, tt.wantIs) {
				t.Errorf("OpenError() = %v, does not wrap %v", got, tt.wantIs)
			}
		})
	}
}
