package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// nopBrowser runs no tools.
type nopBrowser struct{}

func (nopBrowser) Invoke(context.Context, string, string, json.RawMessage) (core.Result, error) {
	return core.Result{}, nil
}

// TestCloseDoesNotWaitOutTheSaveGap changes the cached tools while the
// state file is being written, so that the writer has to write again after
// the gap that spaces writes (an hour here). Close must have the writer
// write at once rather than wait out the gap.
func TestCloseDoesNotWaitOutTheSaveGap(t *testing.T) {
	tests := []struct {
		name  string
		extra []string // cached tools registered during the first write
		want  []string
	}{
		{"one change during the write", []string{"second"}, []string{"first", "second"}},
		{"several changes during the write", []string{"second", "third", "fourth"}, []string{"first", "fourth", "second", "third"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			h := New(nopBrowser{}, Options{StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
			h.saveGap = time.Hour
			cached := func(name string) core.Tool {
				return core.Tool{Name: name, Description: "d", Annotations: map[string]any{"cache": true}}
			}
			src := core.Source{Key: "doc", Tab: "T", Frame: "T", Origin: "https://example.com", URL: "https://example.com/", Backend: "polyfill"}
			var once sync.Once
			h.store.beforeRename = func() {
				once.Do(func() {
					tools := []core.Tool{cached("first")}
					for _, n := range tt.extra {
						tools = append(tools, cached(n))
						h.Update(src, slices.Clone(tools), nil)
					}
				})
			}
			h.Update(src, []core.Tool{cached("first")}, nil)

			closed := make(chan error, 1)
			go func() { closed <- h.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Fatalf("Close: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Close waited out the gap between writes instead of writing at once")
			}
			got := loadNames(t, dir)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("the state file holds %q, want %q", got, tt.want)
			}
		})
	}
}
