package fleet

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/cdptest"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
)

// fleetRun is one fleet started in a test: its supervisors run until the
// test ends.
type fleetRun struct {
	f      *Fleet
	logs   chan logRecord
	cancel context.CancelFunc
}

// start makes a fleet of bs and runs it.
func start(t *testing.T, bs []Browser, opts Options) *fleetRun {
	t.Helper()
	r := &fleetRun{logs: make(chan logRecord, 1024)}
	opts.Logger = slog.New(&logTap{c: r.logs})
	opts.Backoff = multi.Backoff{Min: time.Millisecond, Max: 2 * time.Millisecond}
	f, err := New(bs, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.f = f
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	f.Run(ctx, nopSink{})
	t.Cleanup(func() {
		cancel()
		f.Wait()
	})
	return r
}

// state returns the named member's state and error.
func (r *fleetRun) state(name string) multi.Status {
	for _, st := range r.f.Set().Statuses() {
		if st.Name == name {
			return st
		}
	}
	return multi.Status{}
}

// waitGone waits until every supervisor ended.
func (r *fleetRun) waitGone(t *testing.T) {
	t.Helper()
	select {
	case <-r.f.Gone():
	case <-time.After(patience):
		t.Fatal("the fleet did not give up")
	}
}

var errNoChrome = errors.New("no Chrome found")

func TestFleet(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Browser // Source is src
		src  cdptest.SourceOptions
		opts Options
		run  func(t *testing.T, r *fleetRun, src *cdptest.Source)
	}{
		{
			name: "a launch that cannot start ends the start",
			b:    Browser{StartFails: true},
			src:  cdptest.SourceOptions{Fresh: true, Starts: []error{errNoChrome}},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				err := r.f.Started(t.Context())
				var se *StartError
				if !errors.As(err, &se) || se.Name != "b" || !errors.Is(err, errNoChrome) || err.Error() != errNoChrome.Error() {
					t.Fatalf("Started: %v, want a StartError of b with the source's own error", err)
				}
				r.waitGone(t)
				if st := r.state("b"); st.State != multi.StateStopped || !strings.Contains(st.Error, "not reconnecting: no Chrome found") {
					t.Errorf("status %+v, want stopped for good", st)
				}
				if n := src.Starts(); n != 1 {
					t.Errorf("%d starts, want 1", n)
				}
			},
		},
		{
			name: "a Grid that says no at the start ends it though it restarts",
			b:    Browser{StartFails: true, Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, Starts: []error{errNoChrome}},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				var se *StartError
				if err := r.f.Started(t.Context()); !errors.As(err, &se) {
					t.Fatalf("Started: %v, want a StartError", err)
				}
				r.waitGone(t)
				if n := src.Starts(); n != 1 {
					t.Errorf("%d starts, want 1", n)
				}
				if err := r.f.Err(); !strings.Contains(err.Error(), "every browser is gone: browser b: not reconnecting: no Chrome found") {
					t.Errorf("Err: %v", err)
				}
			},
		},
		{
			name: "an endpoint down at the start is retried",
			b:    Browser{Restart: true},
			src:  cdptest.SourceOptions{Starts: []error{errNoChrome, errNoChrome}},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				if err := r.f.Started(t.Context()); err != nil {
					t.Fatalf("Started: %v, want nil: an endpoint's start does not end the start", err)
				}
				if got := waitLog(t, r.logs, "cannot connect to the browser; will retry with backoff"); !strings.Contains(got, "no Chrome found") {
					t.Errorf("the retry says %q", got)
				}
				src.Next(t).Transport.WaitAsked(t, "Target.setAutoAttach")
				if st := r.state("b"); st.State != multi.StateUp {
					t.Errorf("status %+v, want up", st)
				}
				if n := src.Starts(); n != 3 {
					t.Errorf("%d starts, want 3", n)
				}
			},
		},
		{
			name: "a browser lost is started again",
			b:    Browser{StartFails: true, Restart: true},
			src:  cdptest.SourceOptions{Fresh: true},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				if err := r.f.Started(t.Context()); err != nil {
					t.Fatal(err)
				}
				first := src.Next(t)
				first.Lose()
				if got := waitLog(t, r.logs, "lost the browser; its tools are cached until it is back, the other browsers go on"); !strings.Contains(got, "the connection ended") {
					t.Errorf("lost because %q", got)
				}
				first.WaitEnded(t)
				src.Next(t).Transport.WaitAsked(t, "Target.setAutoAttach")
				waitLog(t, r.logs, "browser reconnected: the tools its tabs register are live again")
				if st := r.state("b"); st.State != multi.StateUp || st.Drops != 1 {
					t.Errorf("status %+v, want up after 1 drop", st)
				}
			},
		},
		{
			name: "a restart that fails once a browser was up is retried",
			b:    Browser{StartFails: true, Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, Starts: []error{nil, errNoChrome}},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				if err := r.f.Started(t.Context()); err != nil {
					t.Fatal(err)
				}
				src.Next(t).Lose()
				if got := waitLog(t, r.logs, "cannot connect to the browser; will retry with backoff"); !strings.Contains(got, "no Chrome found") || strings.Contains(got, "not reconnecting") {
					t.Errorf("the failed restart says %q", got)
				}
				src.Next(t).Transport.WaitAsked(t, "Target.setAutoAttach")
			},
		},
		{
			name: "a browser lost without Restart is given up",
			b:    Browser{StartFails: true},
			src:  cdptest.SourceOptions{Fresh: true},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				if err := r.f.Started(t.Context()); err != nil {
					t.Fatal(err)
				}
				fb := src.Next(t)
				fb.Lose()
				r.waitGone(t)
				fb.WaitEnded(t)
				if err := r.f.Err(); !strings.Contains(err.Error(), "not reconnecting (pass --relaunch to start it again): the connection ended") {
					t.Errorf("Err: %v", err)
				}
			},
		},
		{
			name: "the source's reason within its grace",
			b:    Browser{Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, Gone: true, Grace: patience},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				fb := src.Next(t)
				waitLog(t, r.logs, "browser connected")
				fb.Lose()
				fb.Exit()
				if got := waitLog(t, r.logs, "lost the browser; its tools are cached until it is back, the other browsers go on"); got != "the browser exited: signal: killed" {
					t.Errorf("lost because %q, want the source's reason", got)
				}
			},
		},
		{
			name: "the connection's end once the grace passed",
			b:    Browser{Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, Gone: true, Grace: time.Millisecond},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				fb := src.Next(t)
				waitLog(t, r.logs, "browser connected")
				fb.Lose()
				if got := waitLog(t, r.logs, "lost the browser; its tools are cached until it is back, the other browsers go on"); !strings.HasPrefix(got, "the connection ended") {
					t.Errorf("lost because %q, want the connection's end", got)
				}
			},
		},
		{
			name: "gone while the connection stays",
			b:    Browser{Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, Gone: true},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				fb := src.Next(t)
				waitLog(t, r.logs, "browser connected")
				fb.Exit()
				if got := waitLog(t, r.logs, "lost the browser; its tools are cached until it is back, the other browsers go on"); got != "the browser exited: signal: killed" {
					t.Errorf("lost because %q", got)
				}
				fb.WaitEnded(t)
				src.Next(t)
			},
		},
		{
			name: "a setup that fails ends the browser it started",
			b:    Browser{StartFails: true},
			src:  cdptest.SourceOptions{Fresh: true, Fail: []string{"Security.setIgnoreCertificateErrors"}},
			opts: Options{IgnoreHTTPSErrors: true},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				err := r.f.Started(t.Context())
				if err == nil || !strings.HasPrefix(err.Error(), "--ignore-https-errors: ") {
					t.Fatalf("Started: %v", err)
				}
				src.Next(t).WaitEnded(t)
			},
		},
		{
			name: "ending is bounded when the fleet stops",
			b:    Browser{Restart: true},
			src:  cdptest.SourceOptions{Fresh: true, EndBlocks: true},
			opts: Options{EndTimeout: 50 * time.Millisecond},
			run: func(t *testing.T, r *fleetRun, src *cdptest.Source) {
				fb := src.Next(t)
				fb.Transport.WaitAsked(t, "Target.setAutoAttach")
				r.cancel()
				t0 := time.Now()
				r.f.Wait()
				if err := fb.WaitEnded(t); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("End's context ended with %v, want its deadline", err)
				}
				if d := time.Since(t0); d > patience/2 {
					t.Errorf("Wait took %v with an ending bound of 50ms", d)
				}
				if st := r.state("b"); st.State != multi.StateStopped {
					t.Errorf("status %+v, want stopped", st)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := cdptest.NewSource(tc.src)
			b := tc.b
			b.Name, b.Source = "b", src
			tc.run(t, start(t, []Browser{b}, tc.opts), src)
		})
	}
}

// The start URLs open in the browser they are given to, the options reach
// every connection, OnFirst tells each browser's first start with its start
// pages, and FirstAttempts waits for each browser's first attempt.
func TestFleetStartURLs(t *testing.T) {
	fail := []string{"Target.createTarget"}
	endpoint := cdptest.NewSource(cdptest.SourceOptions{Fail: fail})
	first := cdptest.NewSource(cdptest.SourceOptions{Fresh: true, Fail: fail})
	second := cdptest.NewSource(cdptest.SourceOptions{Fresh: true, Fail: fail})
	var mu sync.Mutex
	firsts := map[string]First{}
	r := start(t, []Browser{
		{Name: "ep", Source: endpoint, Restart: true},
		{Name: "one", Source: first, StartFails: true, URLs: []string{"http://127.0.0.1:1/"}},
		{Name: "two", Source: second, StartFails: true},
	}, Options{IgnoreHTTPSErrors: true, OnFirst: func(f First) {
		mu.Lock()
		defer mu.Unlock()
		firsts[f.Name] = f
	}})
	if err := r.f.Started(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.f.FirstAttempts():
	case <-time.After(patience):
		t.Fatal("the first attempts were not over")
	}
	fbs := map[string]*cdptest.Browser{"ep": endpoint.Next(t), "one": first.Next(t), "two": second.Next(t)}
	if got := waitLog(t, r.logs, "cannot open a start page"); !strings.Contains(got, "Target.createTarget refused") {
		t.Errorf("the start page failed with %q", got)
	}
	for name, fb := range fbs {
		asked := fb.Transport.Drain()
		for _, m := range []string{"Security.setIgnoreCertificateErrors", "Target.setAutoAttach"} {
			if !slices.Contains(asked, m) {
				t.Errorf("browser %s was not asked %s: %v", name, m, asked)
			}
		}
		if got, want := slices.Contains(asked, "Target.createTarget"), name == "one"; got != want {
			t.Errorf("browser %s opened a start page: %v, want %v", name, got, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"ep", "one", "two"} {
		if st := r.state(name); st.State != multi.StateUp {
			t.Errorf("%s: %+v, want up", name, st)
		}
		f, ok := firsts[name]
		switch {
		case !ok || f.Browser == nil:
			t.Errorf("%s: OnFirst was not called with its browser: %+v", name, f)
		case f.Fresh != (name != "ep") || len(f.Pages) != 0:
			t.Errorf("%s: OnFirst got fresh %v and pages %v (the start page got no tab)", name, f.Fresh, f.Pages)
		}
	}
}

func TestFleetNames(t *testing.T) {
	src := cdptest.NewSource(cdptest.SourceOptions{})
	if _, err := New([]Browser{{Name: "a", Source: src}, {Name: "a", Source: src}}, Options{}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("two browsers named a: %v", err)
	}
	if _, err := New([]Browser{{Name: "A", Source: src}}, Options{}); err == nil || !strings.Contains(err.Error(), `browser name "A"`) {
		t.Errorf("a browser named A: %v", err)
	}
}

// A browser served alone (named "") is a fleet of one: its loss is the
// fleet's end, worded as the browser's own.
func TestFleetOfOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     cdptest.SourceOptions
		lose    func(fb *cdptest.Browser)
		wantErr string // Err's text, or its prefix
	}{
		{"the process exited", cdptest.SourceOptions{Fresh: true, Gone: true, Grace: patience},
			func(fb *cdptest.Browser) { fb.Lose(); fb.Exit() }, "lost the browser: the browser exited: signal: killed"},
		{"the connection ended", cdptest.SourceOptions{}, func(fb *cdptest.Browser) { fb.Lose() }, "lost the browser: the connection ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := cdptest.NewSource(tc.src)
			r := start(t, []Browser{{Source: src, StartFails: true}}, Options{})
			if err := r.f.Started(t.Context()); err != nil {
				t.Fatal(err)
			}
			fb := src.Next(t)
			tc.lose(fb)
			r.waitGone(t)
			fb.WaitEnded(t)
			if err := r.f.Err(); !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("Err: %q, want %q", err, tc.wantErr)
			}
			if st := r.state(""); st.State != multi.StateStopped {
				t.Errorf("status %+v, want stopped", st)
			}
			if n := src.Starts(); n != 1 {
				t.Errorf("%d starts, want 1: a browser served alone is not started again", n)
			}
			if r.f.Stopped() {
				t.Error("Stopped after a loss: the caller would take the loss for a stop and exit 0")
			}
		})
	}
}

// TestFleetStopped: a fleet whose Run context ends says it was stopped,
// not lost, as soon as Gone closes, whatever other context its caller
// holds (a sibling of the fleet's may not have been told yet; the signal
// race of TestReliabilitySIGHUP).
func TestFleetStopped(t *testing.T) {
	t.Parallel()
	src := cdptest.NewSource(cdptest.SourceOptions{})
	r := start(t, []Browser{{Source: src, StartFails: true}}, Options{})
	if r.f.Stopped() {
		t.Fatal("Stopped before anything ended")
	}
	if err := r.f.Started(t.Context()); err != nil {
		t.Fatal(err)
	}
	src.Next(t)
	r.cancel()
	r.waitGone(t)
	if !r.f.Stopped() {
		t.Errorf("not Stopped after Run's context ended (Err: %v): a caller would report a lost browser", r.f.Err())
	}
}
