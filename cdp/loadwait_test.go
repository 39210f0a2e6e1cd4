package cdp

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestWaitNavigation: what ends the wait after a navigation starts. Events
// that do not mean "arrived" do not end it: the load of the document before
// the new one, another navigation's commit, a child frame's commit or
// history change, and the new document's own history change before its
// load. Each case ends on an event that tells whether the ones before it
// were passed over.
func TestWaitNavigation(t *testing.T) {
	frame := func(id, parent, loader, typ string) string {
		p := ""
		if parent != "" {
			p = fmt.Sprintf(`"parentId":%q,`, parent)
		}
		return fmt.Sprintf(`{"frame":{"id":%q,%s"loaderId":%q,"url":"http://a/","domainAndRegistry":"","securityOrigin":"http://a","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":%q}`, id, p, loader, typ)
	}
	within := func(f string) ev {
		return ev{"Page.navigatedWithinDocument", fmt.Sprintf(`{"frameId":%q,"url":"http://a/#x","navigationType":"fragment"}`, f)}
	}
	var (
		load     = ev{"Page.loadEventFired", `{"timestamp":1}`}
		commit   = ev{"Page.frameNavigated", frame("F", "", "L", "Navigation")}
		restored = ev{"Page.frameNavigated", frame("F", "", "L", "BackForwardCacheRestore")}
		child    = ev{"Page.frameNavigated", frame("C", "F", "L", "BackForwardCacheRestore")}
	)
	tests := []struct {
		name    string
		started navStart
		events  []ev
		want    string
	}{
		{name: "same document", started: navStart{sameDocument: true}, want: "same-document"},
		{name: "commit, then load", events: []ev{commit, load}, want: "load"},
		{name: "within the document", events: []ev{within("F")}, want: "within"},
		{name: "back-forward cache", events: []ev{restored}, want: "bfcache"},
		{name: "a child frame's commit", events: []ev{commit, child, load}, want: "load"},
		{name: "the old document's load", events: []ev{load, within("F")}, want: "within"},
		{name: "a child frame's history", events: []ev{within("C"), commit, load}, want: "load"},
		{name: "the new document's history", events: []ev{commit, within("F"), load}, want: "load"},
		{name: "another navigation's document", started: navStart{loader: "L2"}, events: []ev{commit, load, within("F")}, want: "within"},
		{name: "our loader", started: navStart{loader: "L"}, events: []ev{commit, load}, want: "load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newTestConn(t)
			s := c.Attach("S")
			got := make(chan string, 1)
			go func() {
				how, err := waitNavigation(context.Background(), s, "F", func() (navStart, error) {
					for _, e := range tt.events {
						f.feed(t, event("S", e.method, e.params))
					}
					return tt.started, nil
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

// ev is one event fed to a fake session.
type ev struct{ method, params string }

func TestWaitNavigationFailures(t *testing.T) {
	t.Run("start fails", func(t *testing.T) {
		c, _ := newTestConn(t)
		boom := errors.New("boom")
		if _, err := waitNavigation(context.Background(), c.Attach("S"), "F", func() (navStart, error) { return navStart{}, boom }); !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the tab goes away", func(t *testing.T) {
		c, _ := newTestConn(t)
		s := c.Attach("S")
		if _, err := waitNavigation(context.Background(), s, "F", func() (navStart, error) { c.detach("S"); return navStart{}, nil }); !errors.Is(err, ErrTargetGone) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		c, _ := newTestConn(t)
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := waitNavigation(ctx, c.Attach("S"), "F", func() (navStart, error) { cancel(); return navStart{}, nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
}
