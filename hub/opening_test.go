package hub_test

// Tests of the opening of a cached tool's page: shared by callers, owned
// by none, and leaving no tab behind.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// stallingOpener opens tabs slowly: Open reports on started, then returns
// only when its context ends, with the tab it made and the context's error,
// as cdp.Browser.Open does when a page does not load in time.
type stallingOpener struct {
	*fakeBrowser
	started chan struct{}
	closed  chan string // the tabs closed
}

// CloseTab implements hub.TabCloser; it fails when ctx has ended.
func (b *stallingOpener) CloseTab(ctx context.Context, tab string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case b.closed <- tab:
	default: // a later opening's tab; the test reads only the first
	}
	return nil
}

func (b *stallingOpener) Open(ctx context.Context, _ string) (string, error) {
	signal(b.started)
	<-ctx.Done()
	return "stalled", fmt.Errorf("the page did not load: %w", ctx.Err())
}

// TestCachedCallSharerWithAShortDeadline has callers share the opening of a
// cached tool's page and give up before it opens. Under -race it shows
// whether they read what the opener writes without waiting for it.
func TestCachedCallSharerWithAShortDeadline(t *testing.T) {
	tests := []struct {
		name    string
		sharers int
	}{
		{"one sharer", 1},
		{"several sharers", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &stallingOpener{fakeBrowser: &fakeBrowser{}, started: make(chan struct{}, 1), closed: make(chan string, 1)}
			// The opener's bound is wide next to the sharers' 10 ms: a
			// sharer started late on a loaded machine must still meet its
			// own deadline before the opening fails.
			h := hub.New(b, hub.Options{CallTimeout: 2 * time.Second})
			h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
			h.TabClosed("A")

			opener := make(chan core.Outcome, 1)
			go func() { opener <- h.Call(context.Background(), site+"_find", nil) }()
			select {
			case <-b.started:
			case <-time.After(5 * time.Second):
				t.Fatal("the page was never opened")
			}
			var wg sync.WaitGroup
			for range tt.sharers {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
					defer cancel()
					r := h.Call(ctx, site+"_find", nil)
					if !r.IsError || !strings.Contains(text(t, r), "the client's deadline passed") {
						t.Errorf("sharer: result %v %q, want the client's deadline", r.IsError, text(t, r))
					}
				})
			}
			wg.Wait()
			if r := <-opener; !r.IsError || !strings.Contains(text(t, r), "opening that page failed") && !strings.Contains(text(t, r), "that page did not open within 2s") {
				t.Errorf("opener: result %v %q, want the opening to fail", r.IsError, text(t, r))
			}
			if n := b.count(); n != 0 {
				t.Errorf("the browser ran %d calls, want none", n)
			}
			select {
			case tab := <-b.closed:
				if tab != "stalled" {
					t.Errorf("closed tab %q, want the stalled one", tab)
				}
			case <-time.After(5 * time.Second):
				t.Error("the tab whose page did not load in time was left open")
			}
		})
	}
}

func TestFailedOpensCloseTheirTabs(t *testing.T) {
	tests := []struct {
		name       string
		failFor    int
		failInTab  bool
		wantOK     bool
		wantClosed []string
	}{
		{"a page that loads on the third try", 2, true, true, []string{"opened-1", "opened-2"}},
		{"a page that never loads", 100, true, false, []string{"opened-1", "opened-2", "opened-3"}},
		{"opens that fail without a tab", 2, false, true, nil},
		{"an open that works at once", 0, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &openingBrowser{fakeBrowser: &fakeBrowser{}, failFor: tt.failFor, failInTab: tt.failInTab}
			h := hub.New(b, hub.Options{CallTimeout: 10 * time.Second})
			b.onOpen = loadPage(h, 0, cachedTool("find"))
			h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
			h.TabClosed("A")
			r := h.Call(context.Background(), site+"_find", json.RawMessage(`{"q":"x"}`))
			if r.IsError == tt.wantOK {
				t.Errorf("result %v %q, want ok %v", r.IsError, text(t, r), tt.wantOK)
			}
			if got := b.closes(); !slices.Equal(got, tt.wantClosed) {
				t.Errorf("closed %q, want %q", got, tt.wantClosed)
			}
		})
	}
}

// gatedOpener opens a tab when release is closed, or fails when its
// context ends first; the page then loads with onOpen.
type gatedOpener struct {
	*fakeBrowser
	started chan struct{}
	release chan struct{}
	onOpen  func(url, tab string)
}

func (b *gatedOpener) Open(ctx context.Context, url string) (string, error) {
	signal(b.started)
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-b.release:
	}
	go b.onOpen(url, "gated")
	return "gated", nil
}

// TestCachedCallOpenerGivesUp: the caller that started opening a cached
// tool's page goes away; the callers that share the opening still get the
// page and their call.
func TestCachedCallOpenerGivesUp(t *testing.T) {
	tests := []struct {
		name    string
		giveUp  func(cancel context.CancelFunc)
		sharers int
	}{
		{"the opener cancels", func(cancel context.CancelFunc) { cancel() }, 1},
		{"the opener cancels, several share", func(cancel context.CancelFunc) { cancel() }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &gatedOpener{fakeBrowser: &fakeBrowser{}, started: make(chan struct{}, 1), release: make(chan struct{})}
			h := hub.New(b, hub.Options{CallTimeout: 10 * time.Second})
			b.onOpen = loadPage(h, 0, cachedTool("find"))
			h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
			h.TabClosed("A")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opener := make(chan core.Outcome, 1)
			go func() { opener <- h.Call(ctx, site+"_find", json.RawMessage(`{"q":"x"}`)) }()
			select {
			case <-b.started:
			case <-time.After(5 * time.Second):
				t.Fatal("the page was never opened")
			}
			results := make(chan core.Outcome, tt.sharers)
			for range tt.sharers {
				go func() { results <- h.Call(context.Background(), site+"_find", json.RawMessage(`{"q":"x"}`)) }()
			}
			// The sharers wait on the opening; then the opener goes away.
			tt.giveUp(cancel)
			if r := <-opener; !r.IsError || !strings.Contains(text(t, r), "cancelled by the client") {
				t.Errorf("opener: result %v %q, want cancelled", r.IsError, text(t, r))
			}
			close(b.release)
			for range tt.sharers {
				if r := <-results; r.IsError {
					t.Errorf("sharer: %q, want the call to run in the opened page", text(t, r))
				}
			}
		})
	}
}

// signal tells a test that an opening began, without blocking: a caller
// that comes after the others left starts an opening of its own, and a
// fake must not hang it.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
