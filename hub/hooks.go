package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Hooks are what the hub tells of its work as it happens, given to New in
// Options.Hooks (hub/telemetry's metrics and traces are one set). A nil
// func is not called and costs nothing: with no call hook at all, the call
// path takes no clock reading and makes no allocation for them.
type Hooks struct {
	// Calls are told of every finished tool call, from the first; more
	// can be added later with HookCalls.
	Calls CallHooks
	// Registered is told of each document whose tools entered the
	// catalog for the first time (a navigation that registers tools),
	// outside the hub's lock.
	Registered func(r Registration)
	// Refused is told of each refused tool registration, once per refusal
	// the refusal log records, with the hub's lock held: it must be quick,
	// must not block, and must not call the hub.
	Refused func(reason core.Reason)
}

// CallHooks are told of a finished tool call, in the call's own goroutine
// and outside the hub's lock, before the result goes back to the caller.
// Each gets what its consumer needs, and the call makes only what its
// hooks ask for. They must be quick and must not call the hub's Call.
type CallHooks struct {
	// Trace gets how the call went and the times of its steps (metrics
	// and traces). Any Trace hook makes every call read the clock at each
	// step; ctx is the call's (it carries what the MCP edge put there,
	// such as the client's trace context), and c is passed by value, so
	// the hook costs the call no allocation.
	Trace func(ctx context.Context, c CallTrace)
	// Record gets the call's record: what, when, where, how long, how it
	// ended (the status page's last calls, WatchCalls).
	Record func(r CallRecord)
	// Detail gets a call that reached a page tool (not one of a name no
	// page has) with what a recorder needs to make it again: a recorder
	// that writes in Detail has the call on disk before the client sees
	// it.
	Detail func(d CallDetail)
}

// CallDetail is a finished call of a page tool with what a recorder needs
// to make it again: where it went, its arguments and its result.
type CallDetail struct {
	CallRecord
	// Page is the page's own name of the tool.
	Page string
	// URL is the URL of the tab the call went to (the document's, for a
	// cached tool whose page did not open).
	URL string
	// Args are the arguments as the client sent them (empty for none).
	Args json.RawMessage
	// Schema is the tool's inputSchema, nil when it has none.
	Schema json.RawMessage
	// Result is the call's result.
	Result core.Outcome
}

// HookCalls adds hooks that are told of every call that finishes from now
// on (one that started before may go untold), and returns the func that
// removes them (a call finishing as they are removed may still tell them).
func (h *Hub) HookCalls(hooks CallHooks) (unhook func()) {
	k := &hooks
	if k.Trace == nil && k.Record == nil && k.Detail == nil {
		return func() {}
	}
	h.callHooks.change(func(l []*CallHooks) []*CallHooks { return append(l, k) })
	return func() {
		h.callHooks.change(func(l []*CallHooks) []*CallHooks {
			return slices.DeleteFunc(l, func(x *CallHooks) bool { return x == k })
		})
	}
}

// callHookSet is the call hooks at one moment, with what they ask of a call.
// It is never modified once made.
type callHookSet struct {
	list []*CallHooks
	// traced: some hook has Trace (the call reads the clock at each step);
	// recorded: some has Record or Detail (the call makes its record);
	// detailed: some has Detail.
	traced, recorded, detailed bool
}

// callHookSets holds the current callHookSet. Calls read it through an
// atomic pointer, so telling the hooks never takes a lock, and never the
// catalog's; adding and removing hooks replace it under a small lock of
// its own.
type callHookSets struct {
	mu  sync.Mutex
	set atomic.Pointer[callHookSet] // nil: no hooks
}

// load returns the current hooks, nil when there are none.
func (c *callHookSets) load() *callHookSet { return c.set.Load() }

// change replaces the hooks by f of a copy of them.
func (c *callHookSets) change(f func([]*CallHooks) []*CallHooks) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var list []*CallHooks
	if s := c.set.Load(); s != nil {
		list = slices.Clone(s.list)
	}
	list = f(list)
	if len(list) == 0 {
		c.set.Store(nil)
		return
	}
	s := &callHookSet{list: list}
	for _, k := range list {
		s.traced = s.traced || k.Trace != nil
		s.detailed = s.detailed || k.Detail != nil
		s.recorded = s.recorded || k.Record != nil || k.Detail != nil
	}
	c.set.Store(s)
}

// CallResult is how a tool call ended, a fixed set for metric labels.
type CallResult string

// The results of a call.
const (
	// ResultOK: the page answered and the result is not an error.
	ResultOK CallResult = "ok"
	// ResultError: the page's tool failed, or the call failed on the way.
	ResultError CallResult = "error"
	// ResultTimeout: --call-timeout, or the client's deadline, passed.
	ResultTimeout CallResult = "timeout"
	// ResultRefused: the hub did not call the page (no such tool,
	// arguments that do not fit the schema, the tab's in-flight bound).
	ResultRefused CallResult = "refused"
	// ResultCancelled: the client cancelled the call.
	ResultCancelled CallResult = "cancelled"
)

// CallTrace is one finished call as a Trace hook sees it: what was called,
// where, how it ended, and the times of its steps. A zero time is a step
// the call did not reach.
type CallTrace struct {
	// Tool is the routed name the client called.
	Tool string
	// PageTool is the page's own name for it; empty when the name is unknown.
	PageTool string
	// Origin is the origin of the page called (or of the cached tool's page).
	Origin string
	// Tab is the number of the tab called, 0 when none was.
	Tab int
	// Browser is the short name of the browser called (several browsers).
	Browser string
	// Cached is set for a call of a cached tool (its page was opened).
	Cached bool
	// Result is how the call ended; Error is the first text of an error
	// result, cut to 200 bytes.
	Result CallResult
	Error  string
	// Start and End bound the call in the hub.
	Start, End time.Time
	// ValidateStart and ValidateEnd bound the check of the arguments.
	ValidateStart, ValidateEnd time.Time
	// InvokeStart and InvokeEnd bound the browser's round trip (CDP, or
	// the page server's session) of the last attempt.
	InvokeStart, InvokeEnd time.Time
	// PageTook is how long the tool's execute took in the page, by the
	// page's clock, when PageTimed says the page reported it.
	PageTook  time.Duration
	PageTimed bool
}

// Registration is a document whose tools entered the catalog for the first
// time, as the Registered hook sees it.
type Registration struct {
	// Origin and URL are the document's; Tab its tab's number and Browser
	// the browser's short name (several browsers).
	Origin, URL string
	Tab         int
	Browser     string
	// Tools is the number of tools admitted.
	Tools int
	// Start is when the tab was seen at the document's URL (its
	// navigation), or End when not known; End is when the tools were
	// admitted.
	Start, End time.Time
}

// note records what a hooked call did (nil fields and zero times are
// free). Every call has one, on the caller's stack; only traced calls
// (timed) read the clock for it.
type note struct {
	tab   int
	timed bool
	trace CallTrace

	// Where the call went, for the Detail hooks (a recorder): the tab itself
	// once known, and its URL when the tool was picked; the page's own name
	// of the tool (empty for a name no page has), its document's URL and
	// its inputSchema.
	tabRef *tab
	tabURL string
	tool   string
	url    string
	schema json.RawMessage
}

// now reads the clock for a traced call, and returns zero otherwise.
func (n *note) now() time.Time {
	if n.timed {
		return time.Now()
	}
	return time.Time{}
}

// result sets how the call ended, when it is known before its outcome.
func (n *note) result(r CallResult) {
	if n.timed {
		n.trace.Result = r
	}
}

// target records the document a call goes to.
func (n *note) target(c candidate) {
	n.tab = c.tab.n
	if n.timed {
		n.trace.Tab, n.trace.Origin, n.trace.Browser, n.trace.PageTool = c.tab.n, c.doc.Origin, c.doc.Browser, c.tool
	}
}

// classify sets the result of a call whose outcome says no more than
// IsError, by the state of its context.
func classify(ctx context.Context, res core.Outcome) CallResult {
	switch {
	case !res.IsError:
		return ResultOK
	case ctx.Err() == nil:
		return ResultError
	case errors.Is(ctx.Err(), context.Canceled):
		return ResultCancelled
	default:
		return ResultTimeout
	}
}

// tell tells the hooks of hs of a finished call: name and args as the
// client sent them, started at start, what its note recorded and its
// result. Each hook gets only what it asked for, and what no hook asked
// for is not made.
func (h *Hub) tell(ctx context.Context, hs *callHookSet, name string, args json.RawMessage, start time.Time, n *note, res core.Outcome) {
	var errText string
	if res.IsError {
		if errText = res.FirstText(); len(errText) > 200 {
			errText = errText[:200]
		}
	}
	end := time.Now()
	if hs.traced {
		t := &n.trace
		t.End, t.Error = end, errText
		if t.Result == "" {
			t.Result = classify(ctx, res)
		}
	}
	var rec CallRecord
	if hs.recorded {
		rec = CallRecord{At: start, Tool: name, Tab: n.tab, Took: end.Sub(start), OK: !res.IsError, Error: errText, Caller: Caller(ctx)}
	}
	detailed := hs.detailed && n.tool != ""
	var d CallDetail
	if detailed {
		d = CallDetail{CallRecord: rec, Page: n.tool, URL: n.tabURL, Args: args, Schema: n.schema, Result: res}
		if d.URL == "" && n.tabRef != nil {
			// A cached tool's page, opened for the call.
			h.mu.Lock()
			d.URL = n.tabRef.url
			h.mu.Unlock()
		}
		if d.URL == "" {
			d.URL = n.url
		}
	}
	for _, k := range hs.list {
		if k.Trace != nil {
			k.Trace(ctx, n.trace)
		}
		if k.Record != nil {
			k.Record(rec)
		}
		if k.Detail != nil && detailed {
			k.Detail(d)
		}
	}
}

// Counts are the sizes of the catalog at one moment.
type Counts struct {
	// LiveTools are the routed tools an open page has; CachedTools those
	// listed from the cache (no open page has them).
	LiveTools, CachedTools int
	// Tabs are the tabs the hub knows.
	Tabs int
}

// Counts returns the sizes of the catalog now (for gauges read at scrape
// time).
func (h *Hub) Counts() Counts {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := Counts{Tabs: len(h.tabs)}
	for _, r := range h.routes {
		if len(r.cands) > 0 {
			c.LiveTools++
		} else {
			c.CachedTools++
		}
	}
	return c
}
