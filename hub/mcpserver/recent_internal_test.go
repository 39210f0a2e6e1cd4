package mcpserver

import (
	"fmt"
	"testing"
	"time"
)

// TestRecentClients: stateless clients are listed most recent first,
// within the window, at most maxRecent of them however many names
// clients make up.
func TestRecentClients(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var r recentClients
	add := func(name string, at time.Time) { r.add(recentKey{name: name, version: "1"}, at) }
	add("old", now.Add(-recentWindow-time.Second))
	add("a", now.Add(-2*time.Second))
	add("b", now.Add(-time.Second))
	got := r.list(now)
	if len(got) != 2 || got[0].Name != "b" || got[1].Name != "a" {
		t.Fatalf("list = %+v, want b then a (old is past the window)", got)
	}
	for i := range 3 * maxRecent {
		add(fmt.Sprintf("flood-%d", i), now.Add(time.Duration(i)*time.Millisecond))
	}
	r.mu.Lock()
	n := len(r.seen)
	r.mu.Unlock()
	if n > maxRecent {
		t.Errorf("%d clients kept, want at most %d", n, maxRecent)
	}
	if got := r.list(now.Add(time.Second)); got[0].Name != fmt.Sprintf("flood-%d", 3*maxRecent-1) {
		t.Errorf("the most recent is %q, want the last flood entry", got[0].Name)
	}
}
