package hub

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Observer hears what the hub does, for metrics and traces
// (hub/telemetry is one). It is told after the fact, with the times
// the hub took, so it can build spans and histograms without the hub
// knowing either. Its methods run on the call path and, for Refused, with
// the hub's lock held: they must be quick, must not block, and must not call
// the hub. Options.Observer nil is off: the call path then takes no clock
// reading and makes no allocation for it.
type Observer interface {
	// CallDone is told of each finished tool call. ctx is the call's (it
	// carries what the MCP edge put there, such as the client's trace
	// context). c is passed by value, so observing costs no allocation.
	CallDone(ctx context.Context, c CallTrace)
	// Registered is told of each document whose tools entered the
	// catalog for the first time (a navigation that registers tools).
	Registered(r Registration)
	// Refused is told of each refused tool registration, once per refusal
	// the refusal log records.
	Refused(reason core.Reason)
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

// CallTrace is one finished call as an Observer sees it: what was called,
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
// time, as an Observer sees it.
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

// note records what an observed call did (nil fields and zero times are
// free). Every call has one, on the caller's stack; only observed calls
// (timed) read the clock for it.
type note struct {
	tab   int
	timed bool
	trace CallTrace

	// Where the call went, for ObserveCalls (a recorder): the tab itself
	// once known, and its URL when the tool was picked; the page's own name
	// of the tool (empty for a name no page has), its document's URL and
	// its inputSchema.
	tabRef *tab
	tabURL string
	tool   string
	url    string
	schema json.RawMessage
}

// now reads the clock for an observed call, and returns zero otherwise.
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

// observeCall reports a finished call to the observer.
func (h *Hub) observeCall(ctx context.Context, n *note, res core.Outcome) {
	t := &n.trace
	t.End = time.Now()
	if t.Result == "" {
		t.Result = classify(ctx, res)
	}
	if res.IsError {
		t.Error = res.FirstText()
		if len(t.Error) > 200 {
			t.Error = t.Error[:200]
		}
	}
	h.opts.Observer.CallDone(ctx, *t)
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
