package serve_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/cdptest"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// These tests drive serve.Spaces over fake browsers (cdp/cdptest): each
// space a Session over a browser the source starts, with no Chrome. They
// wait on events (a browser ended, a space's server returned), bounded by
// cdptest.Patience; no assertion depends on how fast the machine is.

var (
	alice = mcpserver.Person{Issuer: "https://id.example", Subject: "alice"}
	bob   = mcpserver.Person{Issuer: "https://id.example", Subject: "bob"}
	carol = mcpserver.Person{Issuer: "https://id.example", Subject: "carol"}
)

// newSpaces returns spaces whose browsers come from src, closed when the
// test ends.
func newSpaces(t *testing.T, src *cdptest.Source, so serve.SpacesOptions) *serve.Spaces {
	t.Helper()
	so.Source = func() browsers.Source { return src }
	ss := serve.NewSpaces(t.Context(), &serve.Options{}, so)
	t.Cleanup(ss.Close)
	return ss
}

// space returns p's space's server, failing the test on an error.
func space(t *testing.T, ss *serve.Spaces, p mcpserver.Person) *mcpserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), cdptest.Patience)
	defer cancel()
	srv, err := ss.Space(ctx, p)
	if err != nil {
		t.Fatalf("the space of %s: %v", p.Subject, err)
	}
	if srv == nil {
		t.Fatalf("the space of %s: no server", p.Subject)
	}
	return srv
}

func TestSpaceID(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, q mcpserver.Person
		same bool
	}{
		{"the same person", alice, alice, true},
		{"two subjects", alice, bob, false},
		{"one subject of two issuers", alice, mcpserver.Person{Issuer: "https://other.example", Subject: "alice"}, false},
		{"pairs that concatenate alike", mcpserver.Person{Issuer: "a", Subject: "bc"}, mcpserver.Person{Issuer: "ab", Subject: "c"}, false},
		{"a subject that holds the separator", mcpserver.Person{Issuer: "x", Subject: "1:y"}, mcpserver.Person{Issuer: "x1:", Subject: "y"}, false},
		{"an empty issuer", mcpserver.Person{Subject: "alice"}, mcpserver.Person{Issuer: "alice"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := serve.SpaceID(tc.p), serve.SpaceID(tc.q)
			if (a == b) != tc.same {
				t.Errorf("SpaceID(%+v) = %s, SpaceID(%+v) = %s: same %v, want %v", tc.p, a, tc.q, b, a == b, tc.same)
			}
			for _, x := range []struct {
				p  mcpserver.Person
				id string
			}{{tc.p, a}, {tc.q, b}} {
				// A subject of hex digits only may stand in a hash by chance.
				if strings.Trim(x.p.Subject, "0123456789abcdef") != "" && strings.Contains(x.id, x.p.Subject) {
					t.Errorf("SpaceID(%+v) = %s holds the subject", x.p, x.id)
				}
				if x.id == "" || strings.ContainsAny(x.id, "/\\:. ") {
					t.Errorf("SpaceID(%+v) = %q: not a name for a file", x.p, x.id)
				}
			}
		})
	}
}

// Each person gets a space of their own, and keeps it: one browser each.
func TestSpacesPerPerson(t *testing.T) {
	src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true})
	ss := newSpaces(t, src, serve.SpacesOptions{})
	a, b := space(t, ss, alice), space(t, ss, bob)
	if a == b {
		t.Fatal("alice and bob got the same server")
	}
	if again := space(t, ss, alice); again != a {
		t.Error("alice's second request got another server")
	}
	if n := ss.Count(); n != 2 {
		t.Errorf("Count: %d, want 2", n)
	}
	src.Next(t)
	src.Next(t)
	if n := src.Starts(); n != 2 {
		t.Errorf("%d browsers started, want 2: one a person", n)
	}
	if g := ss.Gauges(); g.Spaces() != 2 || g.Sessions() != 0 {
		t.Errorf("gauges: %d spaces and %d sessions, want 2 and 0", g.Spaces(), g.Sessions())
	}
}

// A person's first requests at once open one space, and all get it.
func TestSpacesFirstRequestsAtOnce(t *testing.T) {
	src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true})
	ss := newSpaces(t, src, serve.SpacesOptions{})
	const n = 10
	srvs := make([]*mcpserver.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { srvs[i], errs[i] = ss.Space(t.Context(), alice) })
	}
	wg.Wait()
	src.Next(t)
	for i := range n {
		if errs[i] != nil || srvs[i] == nil || srvs[i] != srvs[0] {
			t.Errorf("request %d: %p, %v; want request 0's server %p", i, srvs[i], errs[i], srvs[0])
		}
	}
	if got := src.Starts(); got != 1 {
		t.Errorf("%d browsers started, want 1", got)
	}
	if got := ss.Count(); got != 1 {
		t.Errorf("Count: %d, want 1", got)
	}
}

// Past Max a newcomer is told to come back later, and nobody's space is
// closed or given to them.
func TestSpacesFull(t *testing.T) {
	src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true})
	ss := newSpaces(t, src, serve.SpacesOptions{Max: 2})
	a, b := space(t, ss, alice), space(t, ss, bob)
	src.Next(t)
	src.Next(t)
	srv, err := ss.Space(t.Context(), carol)
	var full *mcpserver.SpacesFullError
	if !errors.As(err, &full) || srv != nil {
		t.Fatalf("carol, past the maximum: %p, %v; want a *SpacesFullError", srv, err)
	}
	if full.Max != 2 || full.RetryAfter <= 0 {
		t.Errorf("SpacesFullError %+v: want Max 2 and a RetryAfter", full)
	}
	if n := ss.Count(); n != 2 {
		t.Errorf("Count: %d, want 2", n)
	}
	if n := src.Starts(); n != 2 {
		t.Errorf("%d browsers started, want 2: none for carol", n)
	}
	if space(t, ss, alice) != a || space(t, ss, bob) != b {
		t.Error("alice's or bob's space changed when carol was refused")
	}
	if n := src.Ends(); n != 0 {
		t.Errorf("%d browsers ended, want 0", n)
	}
}

// A space with no request for Idle closes, its browser ended, and the
// person's next request opens a new one. A request keeps it open for Idle
// from then: with requests half an Idle apart it outlives its first Idle,
// and closes no sooner than Idle after the last one.
func TestSpacesIdle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		idle     time.Duration
		requests int // after the first, half an Idle apart
	}{
		{"no request", 200 * time.Millisecond, 0},
		{"requests keep it open", 400 * time.Millisecond, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true})
			ss := newSpaces(t, src, serve.SpacesOptions{Idle: tc.idle})
			last := time.Now()
			first := space(t, ss, alice)
			fb := src.Next(t)
			stalled := func(d time.Duration) {
				t.Helper()
				if d < tc.idle {
					t.Fatalf("the space closed %v after a request, before its idle of %v", d, tc.idle)
				}
				t.Skipf("the machine stalled for %v, more than the idle of %v, between two requests", d, tc.idle)
			}
			for range tc.requests {
				// A pause spaces the requests; the browser's end is
				// waited on meanwhile.
				select {
				case <-fb.Ended():
					stalled(time.Since(last))
				case <-time.After(tc.idle / 2):
				}
				now := time.Now()
				if space(t, ss, alice) != first {
					stalled(now.Sub(last))
				}
				last = now
			}
			fb.WaitEnded(t)
			if d := time.Since(last); d < tc.idle {
				t.Errorf("the space closed %v after the last request, before its idle of %v", d, tc.idle)
			}
			if n := ss.Count(); n != 0 {
				t.Errorf("Count once closed: %d, want 0", n)
			}
			if space(t, ss, alice) == first {
				t.Error("alice's request after the idle got the closed space's server")
			}
			src.Next(t)
			if n := src.Starts(); n != 2 {
				t.Errorf("%d browsers started, want 2", n)
			}
			if n := ss.Count(); n != 1 {
				t.Errorf("Count once open again: %d, want 1", n)
			}
		})
	}
}

// A space whose browser cannot be started is not opened; the next request
// tries again.
func TestSpacesStartFails(t *testing.T) {
	errNoChrome := errors.New("no Chrome found")
	src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true, Starts: []error{errNoChrome}})
	ss := newSpaces(t, src, serve.SpacesOptions{})
	srv, err := ss.Space(t.Context(), alice)
	if err == nil || srv != nil || !strings.Contains(err.Error(), "could not be opened") || !errors.Is(err, errNoChrome) {
		t.Fatalf("a space whose browser does not start: %p, %v; want an error that says it could not be opened, with the source's", srv, err)
	}
	if n := ss.Count(); n != 0 {
		t.Errorf("Count: %d, want 0", n)
	}
	space(t, ss, alice)
	src.Next(t)
	if n := src.Starts(); n != 2 {
		t.Errorf("%d starts, want 2: the next request tries again", n)
	}
	if n := ss.Count(); n != 1 {
		t.Errorf("Count: %d, want 1", n)
	}
}

// A space whose browser is lost closes; the person's next request opens
// a new one, and the others' spaces go on.
func TestSpacesBrowserLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts cdptest.SourceOptions
		lose func(fb *cdptest.Browser)
	}{
		{"the connection ended", cdptest.SourceOptions{Fresh: true}, (*cdptest.Browser).Lose},
		{"the process exited", cdptest.SourceOptions{Fresh: true, Gone: true, Grace: cdptest.Patience}, func(fb *cdptest.Browser) { fb.Exit() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := cdptest.NewSource(tc.opts)
			ss := newSpaces(t, src, serve.SpacesOptions{})
			first := space(t, ss, alice)
			fa := src.Next(t)
			b := space(t, ss, bob)
			fb := src.Next(t)
			tc.lose(fa)
			fa.WaitEnded(t)
			again := space(t, ss, alice)
			if again == first {
				t.Fatal("alice's request after her browser was lost got the lost space's server")
			}
			src.Next(t)
			if space(t, ss, bob) != b {
				t.Error("bob's space changed when alice's browser was lost")
			}
			select {
			case <-fb.Ended():
				t.Error("bob's browser was ended")
			default:
			}
			if n := src.Starts(); n != 3 {
				t.Errorf("%d browsers started, want 3", n)
			}
			if n := ss.Count(); n != 2 {
				t.Errorf("Count: %d, want 2", n)
			}
		})
	}
}

// Close ends every space's browser; later requests fail.
func TestSpacesClose(t *testing.T) {
	src := cdptest.NewSource(cdptest.SourceOptions{Fresh: true})
	ss := newSpaces(t, src, serve.SpacesOptions{})
	space(t, ss, alice)
	space(t, ss, bob)
	fbs := []*cdptest.Browser{src.Next(t), src.Next(t)}
	ss.Close()
	for _, fb := range fbs {
		select {
		case <-fb.Ended():
		default:
			t.Error("a space's browser was not ended when Close returned")
		}
	}
	if n := src.Ends(); n != 2 {
		t.Errorf("%d browsers ended, want 2", n)
	}
	if n := ss.Count(); n != 0 {
		t.Errorf("Count after Close: %d, want 0", n)
	}
	for _, p := range []mcpserver.Person{alice, carol} {
		if srv, err := ss.Space(t.Context(), p); err == nil || srv != nil {
			t.Errorf("%s's request after Close: %p, %v; want an error", p.Subject, srv, err)
		}
	}
	if n := src.Starts(); n != 2 {
		t.Errorf("%d browsers started, want 2: none after Close", n)
	}
}
