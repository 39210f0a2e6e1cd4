package hub_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// hintingBrowser is a fakeBrowser that records what its tabs are shown
// (hub.Hinter) and, while calls run, what each saw.
type hintingBrowser struct {
	*fakeBrowser
	fail error // ShowHints fails with it when set

	mu    sync.Mutex
	shown []string // "tab from->to reset"
	undos int
	cur   core.Hints // what the tab shows
}

func (b *hintingBrowser) ShowHints(_ context.Context, tab string, ch core.HintChange) (func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shown = append(b.shown, fmt.Sprintf("%s %q->%q reset=%v", tab, ch.From.Locale, ch.To.Locale, ch.Reset))
	if b.fail != nil {
		return nil, b.fail
	}
	b.cur = ch.To
	return func() {
		b.mu.Lock()
		b.undos++
		b.mu.Unlock()
	}, nil
}

func (b *hintingBrowser) showing() core.Hints {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// TestHintsPerCall: a call shows its tab its hints before it runs; the
// same hints again change nothing; a call without hints shows the
// browser's own; calls without hints in their context leave the tab alone;
// a change that failed fails the call and is made whole (reset) next time.
func TestHintsPerCall(t *testing.T) {
	fr := core.Hints{Locale: "fr-FR", Timezone: "Asia/Tokyo", Geo: true, Latitude: 35.6, Longitude: 139.7}
	de := core.Hints{Locale: "de-DE", Timezone: "Europe/Berlin"}
	b := &hintingBrowser{fakeBrowser: &fakeBrowser{}}
	var during core.Hints
	b.respond = func(context.Context, invocation) (core.Result, error) {
		during = b.showing()
		return core.Result{Kind: "string", Value: "ok"}, nil
	}
	h := hub.New(b, hub.Options{})
	t.Cleanup(func() { h.Close() })
	h.Update(mkDoc("k", "T", origin), mkTools("where"), nil)

	steps := []struct {
		name  string
		ctx   context.Context
		fail  error
		want  core.Hints // what the call saw
		shown string     // the change made, "" for none
		err   bool
	}{
		{"no hints in the context", context.Background(), nil, core.Hints{}, "", false},
		{"Tokyo's", hub.WithHints(context.Background(), fr), nil, fr, `T ""->"fr-FR" reset=false`, false},
		// The same hints again: only the position's permission, for the
		// call.
		{"Tokyo's again", hub.WithHints(context.Background(), fr), nil, fr, `T "fr-FR"->"fr-FR" reset=false`, false},
		{"none", hub.WithHints(context.Background(), core.Hints{}), nil, core.Hints{}, `T "fr-FR"->"" reset=false`, false},
		{"a change that fails", hub.WithHints(context.Background(), fr), errors.New("gone"), core.Hints{}, `T ""->"fr-FR" reset=false`, true},
		{"made whole", hub.WithHints(context.Background(), fr), nil, fr, `T "fr-FR"->"fr-FR" reset=true`, false},
		{"German", hub.WithHints(context.Background(), de), nil, de, `T "fr-FR"->"de-DE" reset=false`, false},
		{"German again: no round trip", hub.WithHints(context.Background(), de), nil, de, "", false},
	}
	for _, st := range steps {
		b.mu.Lock()
		b.fail, b.shown = st.fail, nil
		b.mu.Unlock()
		during = core.Hints{}
		res := h.Call(st.ctx, site+"_where", nil)
		b.mu.Lock()
		shown := b.shown
		b.mu.Unlock()
		if res.IsError != st.err || during != st.want {
			t.Errorf("%s: error %v (%s), the call saw %+v; want error %v, %+v", st.name, res.IsError, text(t, res), during, st.err, st.want)
		}
		if (st.shown == "" && len(shown) != 0) || (st.shown != "" && (len(shown) != 1 || shown[0] != st.shown)) {
			t.Errorf("%s: shown %q, want %q", st.name, shown, st.shown)
		}
	}
	if b.undos != 5 {
		t.Errorf("the call-scoped part was undone %d times, want 5 (once per call the tab was shown hints for)", b.undos)
	}
}

// TestHintsWait: a call with other hints waits until the tab's call with
// Tokyo's ends, and never runs beside it.
func TestHintsWait(t *testing.T) {
	b := &hintingBrowser{fakeBrowser: &fakeBrowser{started: make(chan invocation, 2)}}
	release := make(chan struct{})
	b.respond = func(ctx context.Context, in invocation) (core.Result, error) {
		<-release
		return core.Result{Kind: "string", Value: b.showing().Locale}, nil
	}
	h := hub.New(b, hub.Options{})
	t.Cleanup(func() { h.Close() })
	h.Update(mkDoc("k", "T", origin), mkTools("where"), nil)

	first := make(chan string)
	go func() {
		res := h.Call(hub.WithHints(context.Background(), core.Hints{Locale: "fr-FR"}), site+"_where", nil)
		first <- text(t, res)
	}()
	<-b.started // Tokyo's call runs
	second := make(chan string)
	go func() {
		res := h.Call(hub.WithHints(context.Background(), core.Hints{Locale: "de-DE"}), site+"_where", nil)
		second <- text(t, res)
	}()
	select {
	case <-b.started:
		t.Fatal("a call with other hints ran beside the first")
	default:
	}
	release <- struct{}{}
	if got := <-first; got != "fr-FR" {
		t.Errorf("the first call saw %q", got)
	}
	<-b.started
	release <- struct{}{}
	if got := <-second; got != "de-DE" {
		t.Errorf("the second call saw %q", got)
	}
}
