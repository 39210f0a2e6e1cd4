package ci

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// step is one thing a scripted page does to the hub, after a delay from
// the step before.
type step struct {
	after time.Duration
	do    func(h *hub.Hub, tab string)
}

// scriptedTabs is a browser whose one tab plays a script into the hub, so
// that a test decides when each change happens. Its CloseTab reports the
// tab gone after closeDelay, or never when closeDelay is negative.
type scriptedTabs struct {
	h          *hub.Hub
	script     []step
	closeDelay time.Duration
	closed     chan struct{} // closed when CloseTab was asked

	// follow makes the tab report its load: not loaded until a script
	// step calls fire.
	follow  bool
	mu      sync.Mutex
	load    core.PageLoad
	changed chan struct{}

	// due is what the page had due and not yet done when a drain came
	// (a timer that ran late): the first Drain plays it into the hub.
	due    func(h *hub.Hub, tab string)
	drains int

	// The script's progress: when it started, how many steps it played,
	// and a channel closed (and made anew) at each step. A Drain waits for
	// the steps due by then, as a page's drain waits for its due timers:
	// on a loaded machine the script's goroutine may run a step late.
	started time.Time
	played  int
	stepped chan struct{}
}

// fire sets the tab's load and signals the change.
func (f *scriptedTabs) fire(l core.PageLoad) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.load = l
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *scriptedTabs) PageLoad(string) (core.PageLoad, <-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.load, f.changed, f.follow
}

func (f *scriptedTabs) Drain(ctx context.Context, _ string) error {
	f.mu.Lock()
	f.drains++
	due := f.due
	f.due = nil
	var at time.Duration
	n := 0
	for _, st := range f.script {
		if at += st.after; at > time.Since(f.started) {
			break
		}
		n++
	}
	for f.played < n {
		stepped := f.stepped
		f.mu.Unlock()
		select {
		case <-stepped:
		case <-ctx.Done():
			return ctx.Err()
		}
		f.mu.Lock()
	}
	f.mu.Unlock()
	if due != nil {
		due(f.h, "T1")
	}
	return nil
}

func (f *scriptedTabs) Diagnose(context.Context, string) (core.PageDiagnosis, error) {
	l, _, _ := f.PageLoad("")
	return core.PageDiagnosis{Load: l, API: "polyfill"}, nil
}

func (f *scriptedTabs) Open(context.Context, string, core.PageSetup) (string, error) {
	f.mu.Lock()
	f.started = time.Now()
	f.mu.Unlock()
	go func() {
		for _, st := range f.script {
			time.Sleep(st.after) // the page taking its time, not a poll
			st.do(f.h, "T1")
			f.mu.Lock()
			f.played++
			close(f.stepped)
			f.stepped = make(chan struct{})
			f.mu.Unlock()
		}
	}()
	return "T1", nil
}

func (f *scriptedTabs) CloseTab(_ context.Context, tab string) error {
	close(f.closed)
	if f.closeDelay >= 0 {
		time.AfterFunc(f.closeDelay, func() { f.h.TabClosed(tab) })
	}
	return nil
}

func (f *scriptedTabs) Invoke(context.Context, string, string, json.RawMessage) (core.Result, error) {
	return core.Result{}, errors.New("not called in these tests")
}

const pageURL = "http://site.test/page"

var pageDoc = core.Source{Key: "T1/doc", Tab: "T1", Frame: "F1", Origin: "http://site.test", URL: pageURL, Backend: "polyfill"}

func opened(h *hub.Hub, tab string) { h.TabOpened(tab, pageURL, "") }

func tools(names ...string) func(h *hub.Hub, tab string) {
	return func(h *hub.Hub, tab string) {
		var ts []core.Tool
		for _, n := range names {
			ts = append(ts, core.Tool{Name: n, Description: "Tool " + n + "."})
		}
		h.Update(pageDoc, ts, nil)
	}
}

// refusedOnly hands the hub a refused tool and nothing else: the hub
// records it without signalling a change.
func refusedOnly(h *hub.Hub, tab string) {
	h.Update(pageDoc, nil, []core.Refusal{{Reason: core.ReasonSize, Tool: "huge", Detail: "its description is too long"}})
}

func newScripted(script []step, closeDelay time.Duration) (*scriptedTabs, *Session) {
	f := &scriptedTabs{script: script, closeDelay: closeDelay, closed: make(chan struct{}), changed: make(chan struct{}), stepped: make(chan struct{})}
	f.h = hub.New(f, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	return f, &Session{Hub: f.h, Tabs: f}
}

// TestSettleWaitsOnChanges: a page settles a quiet period after its last
// change, and the wait reads the hub only when it changed or a quiet
// period ended: a poll every 20 ms would read it dozens of times. The
// quiet period is long beside the script's delays (a second against at
// most 100 ms), so that a loaded machine running the late step late
// cannot land it after the quiet period (it did at 150 ms, in CI beside
// other work); the bounds on the time taken allow that much lateness too.
func TestSettleWaitsOnChanges(t *testing.T) {
	t.Parallel()
	const quiet = time.Second
	const slack = 2 * time.Second // how late the end may come on a busy machine
	tests := []struct {
		name        string
		script      []step
		limit       time.Duration
		wantSettled bool
		wantTools   []string
		lastChange  time.Duration // when the page last changed its tools
		maxReads    int
	}{
		{
			name:        "tools at once",
			script:      []step{{0, opened}, {0, tools("a", "b")}},
			limit:       5 * time.Second,
			wantSettled: true, wantTools: []string{"a", "b"},
			maxReads: 5,
		},
		{
			name:        "a late tool restarts the quiet period",
			script:      []step{{0, opened}, {0, tools("a")}, {100 * time.Millisecond, tools("a", "late")}},
			limit:       5 * time.Second,
			wantSettled: true, wantTools: []string{"a", "late"},
			lastChange: 100 * time.Millisecond,
			maxReads:   7,
		},
		{
			// The hub does not signal a refusal alone; the read at the end
			// of the quiet period sees it.
			name:        "a refusal alone, within the quiet period",
			script:      []step{{0, opened}, {30 * time.Millisecond, refusedOnly}},
			limit:       5 * time.Second,
			wantSettled: true, wantTools: []string{"huge"},
			lastChange: 30 * time.Millisecond,
			maxReads:   6,
		},
		{
			name:        "no tools: the wait ends at the limit",
			script:      []step{{0, opened}},
			limit:       800 * time.Millisecond,
			wantSettled: false, wantTools: nil,
			maxReads: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, s := newScripted(tt.script, 0)
			s.Settle, s.Timeout = quiet, tt.limit
			p, err := s.Open(context.Background(), pageURL, PageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range p.Tools {
				names = append(names, tl.Name)
			}
			if p.Settled != tt.wantSettled || !slices.Equal(names, tt.wantTools) {
				t.Errorf("settled %v with tools %v, want %v with %v", p.Settled, names, tt.wantSettled, tt.wantTools)
			}
			earliest, latest := tt.lastChange+quiet, tt.lastChange+quiet+slack
			if !tt.wantSettled {
				earliest, latest = tt.limit, tt.limit+slack
			}
			if p.Took < earliest || p.Took > latest {
				t.Errorf("took %s, want between %s and %s", p.Took, earliest, latest)
			}
			t.Logf("reads %d, took %s", p.reads, p.Took)
			if p.reads > tt.maxReads {
				t.Errorf("read the hub %d times in %s, want at most %d: it polls", p.reads, p.Took, tt.maxReads)
			}
		})
	}
}

// TestSettleEndsWithTheContext: the wait ends as soon as ctx does, with its
// cause, and the tab is closed.
func TestSettleEndsWithTheContext(t *testing.T) {
	f, s := newScripted([]step{{0, opened}}, 0)
	s.Settle, s.Timeout = time.Second, 10*time.Second
	ctx, cancel := context.WithCancelCause(context.Background())
	// Measured from the cancel itself: on a loaded machine the timer's
	// goroutine may run late (CI saw 1 s), which says nothing of Open.
	var cancelled atomic.Int64
	time.AfterFunc(100*time.Millisecond, func() {
		cancelled.Store(time.Now().UnixNano())
		cancel(errors.New("lost the browser"))
	})
	_, err := s.Open(ctx, pageURL, PageOptions{})
	returned := time.Now()
	if err == nil || err.Error() != "waiting for the tools of "+pageURL+": lost the browser" {
		t.Errorf("Open: %v", err)
	}
	if took := returned.Sub(time.Unix(0, cancelled.Load())); took > time.Second {
		t.Errorf("Open returned %s after the context ended", took)
	}
	select {
	case <-f.closed:
	default:
		t.Error("the tab was not closed")
	}
}

// TestCloseWaitsForTheHub: Close returns once the hub forgets the tab's
// tools (not before), at once for a tab without tools, and when ctx ends.
// The upper bounds are half the session's --timeout, which Close must not
// wait for: wide enough for a loaded machine (at load 28 the first case
// took 1.1 s against 500 ms allowed before).
func TestCloseWaitsForTheHub(t *testing.T) {
	const gone = 200 * time.Millisecond
	const timeout = 4 * time.Second
	const soon = timeout / 2
	tests := []struct {
		name       string
		script     []step
		closeDelay time.Duration // -1: the browser never reports the tab gone
		ctxTimeout time.Duration // 0: none
		wantErr    error
		min, max   time.Duration
	}{
		{name: "tab with tools", script: []step{{0, opened}, {0, tools("a")}}, closeDelay: gone,
			min: gone, max: soon},
		{name: "tab without tools", script: []step{{0, opened}}, closeDelay: -1,
			max: soon},
		{name: "ctx ends first", script: []step{{0, opened}, {0, tools("a")}}, closeDelay: -1, ctxTimeout: gone,
			wantErr: context.DeadlineExceeded, min: gone, max: soon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := newScripted(tt.script, tt.closeDelay)
			s.Settle, s.Timeout = 50*time.Millisecond, timeout
			p, err := s.Open(context.Background(), pageURL, PageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The clock starts before the deadline does, so a Close that
			// waits for ctx takes at least ctxTimeout however late the
			// machine runs the lines between.
			start := time.Now()
			ctx := context.Background()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			err = p.Close(ctx)
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Close: %v, want %v", err, tt.wantErr)
			}
			if took < tt.min || took > tt.max {
				t.Errorf("Close took %s, want between %s and %s", took, tt.min, tt.max)
			}
		})
	}
}

// TestSettleFollowsTheLoad: the quiet period starts at the load event; a
// main document with an HTTP error fails at once; named tools are waited
// for.
func TestSettleFollowsTheLoad(t *testing.T) {
	const quiet = 100 * time.Millisecond
	t.Run("waits for the load event", func(t *testing.T) {
		f, s := newScripted([]step{{0, opened}, {0, tools("a")}}, 0)
		f.follow = true
		s.Settle, s.Timeout = quiet, 5*time.Second
		const loadAt = 300 * time.Millisecond
		time.AfterFunc(loadAt, func() { f.fire(core.PageLoad{URL: pageURL, Status: 200, Loaded: true}) })
		p, err := s.Open(context.Background(), pageURL, PageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Settled || p.Took < loadAt+quiet || p.Diagnosis.API != "polyfill" {
			t.Errorf("settled %v after %s (want at least %s), diagnosis %+v", p.Settled, p.Took, loadAt+quiet, p.Diagnosis)
		}
	})
	t.Run("an HTTP error fails at once", func(t *testing.T) {
		f, s := newScripted([]step{{0, opened}}, 0)
		f.follow = true
		s.Settle, s.Timeout = quiet, 5*time.Second
		time.AfterFunc(50*time.Millisecond, func() {
			f.fire(core.PageLoad{URL: pageURL, Status: 404, StatusText: "Not Found"})
		})
		start := time.Now()
		_, err := s.Open(context.Background(), pageURL, PageOptions{})
		le, ok := errors.AsType[*LoadError](err)
		if !ok || err.Error() != "loading "+pageURL+": HTTP 404 Not Found" || le.Diagnosis.Load.Status != 404 {
			t.Fatalf("Open: %v", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("the load error came after %s: not fast", took)
		}
		select {
		case <-f.closed:
		default:
			t.Error("the tab was not closed")
		}
	})
	late := []step{{0, opened}, {0, tools("a")}, {400 * time.Millisecond, tools("a", "late")}}
	t.Run("a named tool is waited for", func(t *testing.T) {
		_, s := newScripted(late, 0)
		s.Settle, s.Timeout = quiet, 5*time.Second
		p, err := s.Open(context.Background(), pageURL, PageOptions{WaitFor: []string{"late"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Tool("late"); !ok || !p.Settled || len(p.Missing) != 0 {
			t.Errorf("tools %+v, settled %v, missing %v", p.Tools, p.Settled, p.Missing)
		}
	})
	// A timer the page had due when the quiet period ended (late on a busy
	// renderer) registers its tool before the page counts as settled, and
	// the quiet period starts again from it.
	t.Run("the page's due work ends the quiet period", func(t *testing.T) {
		f, s := newScripted([]step{{0, opened}, {0, tools("a")}}, 0)
		f.due = tools("a", "late")
		s.Settle, s.Timeout = quiet, 5*time.Second
		p, err := s.Open(context.Background(), pageURL, PageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Tool("late"); !ok || !p.Settled || f.drains != 2 || p.Took < 2*quiet {
			t.Errorf("tools %+v, settled %v after %s, %d drains; want late, settled after two quiet periods and two drains", p.Tools, p.Settled, p.Took, f.drains)
		}
	})
	t.Run("a named tool that never comes", func(t *testing.T) {
		_, s := newScripted(late, 0)
		s.Settle, s.Timeout = quiet, 700*time.Millisecond
		p, err := s.Open(context.Background(), pageURL, PageOptions{WaitFor: []string{"never"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Settled || !slices.Equal(p.Missing, []string{"never"}) {
			t.Errorf("settled %v, missing %v", p.Settled, p.Missing)
		}
	})
}
