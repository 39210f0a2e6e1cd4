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

// recorder is an Observer that keeps what it hears.
type recorder struct {
	mu      sync.Mutex
	calls   []hub.CallTrace
	regs    []hub.Registration
	refused []core.Reason
}

func (r *recorder) CallDone(_ context.Context, c hub.CallTrace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *recorder) Registered(reg hub.Registration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.regs = append(r.regs, reg)
}

func (r *recorder) Refused(reason core.Reason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = append(r.refused, reason)
}

func (r *recorder) last(t *testing.T) hub.CallTrace {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("the observer heard of no call")
	}
	return r.calls[len(r.calls)-1]
}

func TestObserverHearsCalls(t *testing.T) {
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
			rec := &recorder{}
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
			h := hub.New(b, hub.Options{Observer: rec, CallTimeout: tt.timeout})
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
				t.Errorf("observed %s of %s, want %s of %s", c.Result, c.Tool, tt.want, tt.call)
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

func TestObserverHearsRegistrationsAndRefusals(t *testing.T) {
	rec := &recorder{}
	h := hub.New(&fakeBrowser{}, hub.Options{Observer: rec})
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
	if len(rec.refused) != 2 || !want[rec.refused[0]] || !want[rec.refused[1]] {
		t.Errorf("refusals %v, want duplicate and name", rec.refused)
	}
}

// TestCallWithoutObserverAllocatesAsBefore holds the call path to the
// allocations it had before observers: 5 with no schema and no subscriber
// (BenchmarkCall's "no schema" row without its call record).
func TestCallWithoutObserverAllocatesAsBefore(t *testing.T) {
	h := hub.New(instantBrowser{}, hub.Options{})
	tool := benchTool(0, "v1")
	tool.InputSchema = nil
	h.Update(benchDoc(0, 0), []core.Tool{tool}, nil)
	name := h.Tools()[0].Name
	args := json.RawMessage(`{"query":"milk"}`)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() { h.Call(ctx, name, args) })
	withObserver := hub.New(instantBrowser{}, hub.Options{Observer: nopObserver{}})
	withObserver.Update(benchDoc(0, 0), []core.Tool{tool}, nil)
	observed := testing.AllocsPerRun(200, func() { withObserver.Call(ctx, name, args) })
	if observed > allocs {
		t.Errorf("an observed call makes %.0f allocations, an unobserved one %.0f: the observer's record must not allocate", observed, allocs)
	}
}

type nopObserver struct{}

func (nopObserver) CallDone(context.Context, hub.CallTrace) {}
func (nopObserver) Registered(hub.Registration)             {}
func (nopObserver) Refused(core.Reason)                     {}
