package cdp

import (
	"context"
	"errors"
	"testing"
)

// TestWaitNavigation: what ends the wait after a navigation starts. Events
// that do not mean "arrived" (a new document committing, a child frame
// restored from the back-forward cache) do not end it.
func TestWaitNavigation(t *testing.T) {
	const (
		load     = `{"timestamp":1}`
		commit   = `{"frame":{"id":"F","loaderId":"L","url":"http://a/","domainAndRegistry":"","securityOrigin":"http://a","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"Navigation"}`
		restored = `{"frame":{"id":"F","loaderId":"L","url":"http://a/","domainAndRegistry":"","securityOrigin":"http://a","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"BackForwardCacheRestore"}`
		child    = `{"frame":{"id":"C","parentId":"F","loaderId":"L","url":"http://a/c","domainAndRegistry":"","securityOrigin":"http://a","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"BackForwardCacheRestore"}`
	)
	type ev struct{ method, params string }
	tests := []struct {
		name   string
		same   bool
		events []ev
		want   string
	}{
		{name: "same document", same: true, want: "same-document"},
		{name: "load", events: []ev{{"Page.loadEventFired", load}}, want: "load"},
		{name: "within the document", events: []ev{{"Page.navigatedWithinDocument", `{"frameId":"F","url":"http://a/#x","navigationType":"fragment"}`}}, want: "within"},
		{name: "back-forward cache", events: []ev{{"Page.frameNavigated", restored}}, want: "bfcache"},
		{name: "commit, then load", events: []ev{{"Page.frameNavigated", commit}, {"Page.frameNavigated", child}, {"Page.loadEventFired", load}}, want: "load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newTestConn(t)
			s := c.Attach("S")
			got := make(chan string, 1)
			go func() {
				how, err := waitNavigation(context.Background(), s, func() (bool, error) {
					for _, e := range tt.events {
						f.feed(t, event("S", e.method, e.params))
					}
					return tt.same, nil
				})
				if err != nil {
					how = err.Error()
				}
				got <- how
			}()
			if how := recv(t, got, "the end of the wait"); how != tt.want {
				t.Fatalf("the wait ended with %q, want %q", how, tt.want)
			}
		})
	}
}

func TestWaitNavigationFailures(t *testing.T) {
	t.Run("start fails", func(t *testing.T) {
		c, _ := newTestConn(t)
		boom := errors.New("boom")
		if _, err := waitNavigation(context.Background(), c.Attach("S"), func() (bool, error) { return false, boom }); !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the tab goes away", func(t *testing.T) {
		c, _ := newTestConn(t)
		s := c.Attach("S")
		if _, err := waitNavigation(context.Background(), s, func() (bool, error) { c.detach("S"); return false, nil }); !errors.Is(err, ErrTargetGone) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		c, _ := newTestConn(t)
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := waitNavigation(ctx, c.Attach("S"), func() (bool, error) { cancel(); return false, nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
}
