package settle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// ev is a thing a start page does, at ms after the wait began: its load,
// a read of its tools, or (cancel) the end of the wait's context.
type ev struct {
	ms     int
	tab    string
	load   bool
	tools  []string
	cancel bool
}

func toolList(names ...string) []core.Tool {
	var out []core.Tool
	for _, n := range names {
		out = append(out, core.Tool{Name: n})
	}
	return out
}

// TestRuleWait: the rule over Registrations, in simulated time (simClock):
// when the wait settles, how often it drains and reads the tabs, and how
// it ends at the bound or with its context.
func TestRuleWait(t *testing.T) {
	for _, tc := range []struct {
		name         string
		quiet, limit int // ms; 0 quiet is quiet 0, 0 limit is 10 s
		tabs         []string
		events       []ev
		drainBrings  int // the first drains each bring a new tool of tab A
		drainTakes   int // ms each drain takes
		wantSettled  bool
		wantErr      string
		wantAt       int   // ms of the look that settled
		wantDrains   []int // ms at which each drain began
	}{
		{name: "loaded at once", quiet: 1500, tabs: []string{"A"},
			events:      []ev{{ms: 0, tab: "A", tools: []string{"x"}}, {ms: 200, tab: "A", load: true}},
			wantSettled: true, wantAt: 1700, wantDrains: []int{1700}},
		{name: "loaded late", quiet: 1500, tabs: []string{"A"},
			events:      []ev{{ms: 0, tab: "A", tools: []string{"x"}}, {ms: 3000, tab: "A", load: true}},
			wantSettled: true, wantAt: 4500, wantDrains: []int{4500}},
		{name: "a change during the quiet period restarts it", quiet: 1500, tabs: []string{"A"},
			events: []ev{{ms: 0, tab: "A", load: true}, {ms: 0, tab: "A", tools: []string{"x"}},
				{ms: 1000, tab: "A", tools: []string{"x", "y"}}},
			wantSettled: true, wantAt: 2500, wantDrains: []int{2500}},
		{name: "a re-read with the same tools does not", quiet: 1500, tabs: []string{"A"},
			events: []ev{{ms: 0, tab: "A", load: true}, {ms: 0, tab: "A", tools: []string{"x"}},
				{ms: 1000, tab: "A", tools: []string{"x"}}},
			wantSettled: true, wantAt: 1500, wantDrains: []int{1500}},
		{name: "a change the drain brought restarts it", quiet: 1500, tabs: []string{"A"},
			events:      []ev{{ms: 0, tab: "A", load: true}, {ms: 0, tab: "A", tools: []string{"x"}}},
			drainBrings: 1,
			wantSettled: true, wantAt: 3000, wantDrains: []int{1500, 3000}},
		{name: "the later of two tabs", quiet: 1500, tabs: []string{"A", "B"},
			events: []ev{{ms: 100, tab: "A", load: true}, {ms: 1400, tab: "B", load: true},
				{ms: 2500, tab: "B", tools: []string{"y"}}},
			wantSettled: true, wantAt: 4000, wantDrains: []int{4000}},
		{name: "another tab's changes do not count", quiet: 1500, tabs: []string{"A"},
			events:      []ev{{ms: 100, tab: "A", load: true}, {ms: 1000, tab: "C", tools: []string{"z"}}},
			wantSettled: true, wantAt: 1600, wantDrains: []int{1600}},
		{name: "quiet 0 drains at the load", quiet: 0, tabs: []string{"A"},
			events:      []ev{{ms: 200, tab: "A", load: true}},
			wantSettled: true, wantAt: 200, wantDrains: []int{200}},
		{name: "a drain the bound cut short still settles", quiet: 1500, limit: 2000, tabs: []string{"A"},
			events:      []ev{{ms: 0, tab: "A", load: true}},
			drainTakes:  1000,
			wantSettled: true, wantAt: 2500, wantDrains: []int{1500}},
		{name: "bound reached: a tab never loads", quiet: 1500, tabs: []string{"A", "B"},
			events: []ev{{ms: 0, tab: "A", load: true}, {ms: 0, tab: "A", tools: []string{"x"}}}},
		{name: "bound reached: the tools keep changing", quiet: 1500, tabs: []string{"A"},
			events: []ev{{ms: 0, tab: "A", load: true}, {ms: 1000, tab: "A", tools: []string{"1"}},
				{ms: 2000, tab: "A", tools: []string{"2"}}, {ms: 3000, tab: "A", tools: []string{"3"}},
				{ms: 4000, tab: "A", tools: []string{"4"}}, {ms: 5000, tab: "A", tools: []string{"5"}},
				{ms: 6000, tab: "A", tools: []string{"6"}}, {ms: 7000, tab: "A", tools: []string{"7"}},
				{ms: 8000, tab: "A", tools: []string{"8"}}, {ms: 9000, tab: "A", tools: []string{"9"}}}},
		{name: "the context ends", quiet: 1500, tabs: []string{"A"},
			events:  []ev{{ms: 0, tab: "A", load: true}, {ms: 800, cancel: true}},
			wantErr: "lost the browser"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
			ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
			clock := newSimClock(t0)
			r := NewRegistrations(clock)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			for _, e := range tc.events {
				clock.at(ms(e.ms), func() bool {
					switch {
					case e.cancel:
						cancel(errors.New("lost the browser"))
						return true
					case e.load:
						r.pageLoaded(e.tab, clock.Now())
						return true
					}
					return r.note(core.Source{Key: e.tab + "/doc", Tab: e.tab}, toolList(e.tools...), nil, clock.Now())
				})
			}
			var drains []int
			drain := func(context.Context) error {
				drains = append(drains, int(clock.Now().Sub(t0)/time.Millisecond))
				clock.now = clock.now.Add(time.Duration(tc.drainTakes) * time.Millisecond)
				if len(drains) <= tc.drainBrings {
					r.note(core.Source{Key: "A/doc", Tab: "A"}, toolList(fmt.Sprint("due", len(drains))), nil, clock.Now())
				}
				return nil
			}
			var looks []time.Time
			look := func(now time.Time) Look {
				looks = append(looks, now)
				return r.look(tc.tabs)
			}
			limit := 10 * time.Second
			if tc.limit > 0 {
				limit = time.Duration(tc.limit) * time.Millisecond
			}
			rule := Rule{Quiet: time.Duration(tc.quiet) * time.Millisecond, Limit: limit, Clock: clock}
			settled, err := rule.Wait(ctx, look, drain)
			if gotErr := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && gotErr != tc.wantErr) {
				t.Fatalf("Wait: %v, want error %q", err, tc.wantErr)
			}
			if settled != tc.wantSettled {
				t.Errorf("settled %v, want %v", settled, tc.wantSettled)
			}
			if at := looks[len(looks)-1].Sub(t0); settled && at != ms(tc.wantAt).Sub(t0) {
				t.Errorf("settled at %s, want %d ms", at, tc.wantAt)
			}
			if !slices.Equal(drains, tc.wantDrains) {
				t.Errorf("drains at %v ms, want %v", drains, tc.wantDrains)
			}
			// Each event, each quiet period's end and each drain wakes
			// the wait at most twice; a poll would read far more often.
			if most := 2*(len(tc.events)+2*len(tc.wantDrains)) + 2; len(looks) > most {
				t.Errorf("read the tabs %d times, want at most %d: it polls", len(looks), most)
			}
		})
	}
}

// TestRuleWaitReady: a wait whose quiet period ended and whose tabs were
// drained settles only once the caller's own conditions hold (CI mode's
// tools waited for), and a look's Err ends it (a page that failed to load).
func TestRuleWaitReady(t *testing.T) {
	errFailed := errors.New("the page failed to load")
	for _, tc := range []struct {
		name        string
		readyAt     int // ms; -1 never
		err         error
		wantSettled bool
		wantErr     error
		wantAt      int
	}{
		{name: "ready after the quiet period", readyAt: 4000, wantSettled: true, wantAt: 5500},
		{name: "never ready: the bound", readyAt: -1},
		{name: "a look's error", readyAt: -1, err: errFailed, wantErr: errFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
			clock := newSimClock(t0)
			since, ready := t0, false
			changed := make(chan struct{}, 1)
			if tc.readyAt >= 0 {
				// Becoming ready is a change (CI mode: a tool came).
				clock.at(t0.Add(time.Duration(tc.readyAt)*time.Millisecond), func() bool {
					since, ready = clock.Now(), true
					changed <- struct{}{}
					return true
				})
			}
			var last time.Time
			look := func(now time.Time) Look {
				last = now
				return Look{Loaded: true, Since: since, Ready: ready, Err: tc.err, Changed: changed}
			}
			drains := 0
			drain := func(context.Context) error { drains++; return nil }
			settled, err := Rule{Quiet: 1500 * time.Millisecond, Limit: 10 * time.Second, Clock: clock}.Wait(context.Background(), look, drain)
			if !errors.Is(err, tc.wantErr) || settled != tc.wantSettled {
				t.Fatalf("Wait: %v, %v; want %v, %v", settled, err, tc.wantSettled, tc.wantErr)
			}
			if at := last.Sub(t0); settled && at != time.Duration(tc.wantAt)*time.Millisecond {
				t.Errorf("settled at %s, want %d ms", at, tc.wantAt)
			}
			if tc.err == nil && drains == 0 {
				t.Error("the quiet period's end drained nothing")
			}
		})
	}
}

// TestRuleWaitDrainError: a drain's error ends the wait with it (attach's
// listing not synced in time).
func TestRuleWaitDrainError(t *testing.T) {
	clock := newSimClock(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	errSync := errors.New("not synced")
	look := func(time.Time) Look { return Look{Loaded: true, Ready: true} }
	settled, err := Rule{Limit: time.Second, Clock: clock}.Wait(context.Background(), look, func(context.Context) error { return errSync })
	if settled || !errors.Is(err, errSync) {
		t.Errorf("Wait: %v, %v; want false, %v", settled, err, errSync)
	}
}
