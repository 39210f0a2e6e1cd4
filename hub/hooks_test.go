package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// heard keeps what its hooks are told.
type heard struct {
	mu       sync.Mutex
	calls    []hub.CallTrace
	regs     []hub.Registration
	refusals []core.Reason
}

func (r *heard) trace(_ context.Context, c hub.CallTrace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *heard) registered(reg hub.Registration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.regs = append(r.regs, reg)
}

func (r *heard) refused(reason core.Reason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusals = append(r.refusals, reason)
}

// hooks are r's hooks, for Options.Hooks.
func (r *heard) hooks() hub.Hooks {
	return hub.Hooks{Calls: hub.CallHooks{Trace: r.trace}, Registered: r.registered, Refused: r.refused}
}

func (r *heard) last(t *testing.T) hub.CallTrace {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("the Trace hook was told of no call")
	}
	return r.calls[len(r.calls)-1]
}

// TestTraceHook: a Trace hook is told of each call, with how it ended and
// the times of the steps it reached.
func TestTraceHook(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tests := []struct {
		name     string
		call     string
		args     string
		respond  func(ctx context.Context) (core.Result, error)
		timeout  time.Duration
		cancel   bool
		want     hub.CallResult
		invoked  bool // the browser was called (InvokeStart set)
		targeted bool // a page was picked (Tab, Origin set)
	}{
		{name: "ok", call: site + "_search", args: `{"n":1}`, want: hub.ResultOK, invoked: true, targeted: true},
		{name: "page throws", call: site + "_search", args: `{"n":1}`,
			respond: func(context.Context) (core.Result, error) { return core.Result{Err: "boom"}, nil }, want: hub.ResultError, invoked: true, targeted: true},
		{name: "unknown tool", call: "nope_search", args: `{}`, want: hub.ResultRefused},
		{name: "bad arguments", call: site + "_search", args: `{"n":"x"}`, want: hub.ResultRefused, targeted: true},
		{name: "call timeout", call: site + "_search", args: `{"n":1}`, timeout: 20 * time.Millisecond,
			respond: func(ctx context.Context) (core.Result, error) { <-ctx.Done(); return core.Result{}, ctx.Err() }, want: hub.ResultTimeout, invoked: true, targeted: true},
		{name: "client cancels", call: site + "_search", args: `{"n":1}`, cancel: true,
			respond: func(ctx context.Context) (core.Result, error) {
				<-ctx.Done()
				return core.Result{}, errors.New("cancelled")
			}, want: hub.ResultCancelled, invoked: true, targeted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &heard{}
			var cancel context.CancelFunc
			b := &fakeBrowser{}
			if tt.respond != nil {
				b.respond = func(ctx context.Context, _ invocation) (core.Result, error) {
					if cancel != nil {
						cancel()
					}
					return tt.respond(ctx)
				}
			}
			h := hub.New(b, hub.Options{Hooks: rec.hooks(), CallTimeout: tt.timeout})
			tools := mkTools("search")
			tools[0].InputSchema = schema
			h.Update(mkDoc("a", "A", origin), tools, nil)
			ctx := context.Background()
			if tt.cancel {
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			h.Call(ctx, tt.call, json.RawMessage(tt.args))
			c := rec.last(t)
			if c.Result != tt.want || c.Tool != tt.call {
				t.Errorf("traced %s of %s, want %s of %s", c.Result, c.Tool, tt.want, tt.call)
			}
			if c.Start.IsZero() || c.End.Before(c.Start) {
				t.Errorf("call bounds %v..%v", c.Start, c.End)
			}
			if got := !c.InvokeStart.IsZero() && !c.InvokeEnd.Before(c.InvokeStart); got != tt.invoked {
				t.Errorf("invoke times %v..%v, want them set: %v", c.InvokeStart, c.InvokeEnd, tt.invoked)
			}
			if got := c.Tab == 1 && c.Origin == origin && c.PageTool == "search"; got != tt.targeted {
				t.Errorf("target tab %d origin %q tool %q, want it set: %v", c.Tab, c.Origin, c.PageTool, tt.targeted)
			}
			if tt.targeted && (c.ValidateStart.IsZero() || c.ValidateEnd.Before(c.ValidateStart)) {
				t.Errorf("validation times %v..%v", c.ValidateStart, c.ValidateEnd)
			}
			if (tt.want != hub.ResultOK) != (c.Error != "") {
				t.Errorf("error text %q for result %s", c.Error, c.Result)
			}
		})
	}
}

// TestCatalogHooks: the Registered and Refused hooks are told of a
// document's first registration and of each refusal.
func TestCatalogHooks(t *testing.T) {
	rec := &heard{}
	h := hub.New(&fakeBrowser{}, hub.Options{Hooks: rec.hooks()})
	h.TabOpened("A", "https://shop.example/", "Shop")
	h.Update(mkDoc("a", "A", origin), append(mkTools("search", "search"), core.Tool{Name: "bad name!", Description: "x"}), nil)
	h.Update(mkDoc("a", "A", origin), mkTools("search", "cart"), nil) // the same document: no new registration
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.regs) != 1 {
		t.Fatalf("registrations %+v, want one", rec.regs)
	}
	r := rec.regs[0]
	if r.Origin != origin || r.Tab != 1 || r.Tools != 1 || r.Start.IsZero() || r.End.Before(r.Start) {
		t.Errorf("registration %+v", r)
	}
	want := map[core.Reason]bool{core.ReasonDuplicate: true, core.ReasonName: true}
	if len(rec.refusals) != 2 || !want[rec.refusals[0]] || !want[rec.refusals[1]] {
		t.Errorf("refusals %v, want duplicate and name", rec.refusals)
	}
}

// TestHookedCallAllocatesAsBefore holds the call path to the allocations
// it has with no hook (5 with no schema: BenchmarkCall's "no schema" row
// without its call record): a Trace or Record hook must not allocate.
func TestHookedCallAllocatesAsBefore(t *testing.T) {
	tool := benchTool(0, "v1")
	tool.InputSchema = nil
	args := json.RawMessage(`{"query":"milk"}`)
	ctx := context.Background()
	allocs := func(hooks hub.CallHooks) float64 {
		h := hub.New(instantBrowser{}, hub.Options{Hooks: hub.Hooks{Calls: hooks}})
		h.Update(benchDoc(0, 0), []core.Tool{tool}, nil)
		name := h.Tools()[0].Name
		return testing.AllocsPerRun(200, func() { h.Call(ctx, name, args) })
	}
	bare := allocs(hub.CallHooks{})
	for _, tt := range []struct {
		name  string
		hooks hub.CallHooks
	}{
		{"trace", hub.CallHooks{Trace: func(context.Context, hub.CallTrace) {}}},
		{"record", hub.CallHooks{Record: func(hub.CallRecord) {}}},
		{"trace and record", hub.CallHooks{Trace: func(context.Context, hub.CallTrace) {}, Record: func(hub.CallRecord) {}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n := allocs(tt.hooks); n > bare {
				t.Errorf("a hooked call makes %.0f allocations, one without hooks %.0f: the hook must not allocate", n, bare)
			}
		})
	}
}
