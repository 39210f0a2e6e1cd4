package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// errCallTimeout is the cause of a call's context when --call-timeout ends it.
var errCallTimeout = errors.New("the call timed out")

// errorResult is a tool result that reports a failure to the model.
func errorResult(format string, args ...any) core.Outcome {
	return core.Errorf(format, args...)
}

// broken is errorResult for a call that did not end with the tool's own
// answer: its page went away or timed out under it (core.Outcome.Broken).
func broken(format string, args ...any) core.Outcome {
	o := core.Errorf(format, args...)
	o.Broken = true
	return o
}

// Call runs the routed tool name with the arguments (a JSON object, or empty
// for none). Every failure is a result with IsError set, worded for the model.
func (h *Hub) Call(ctx context.Context, name string, args json.RawMessage) core.Outcome {
	hs := h.callHooks.load()
	if hs == nil {
		var n note
		return h.call(ctx, name, args, &n)
	}
	n := note{timed: hs.traced}
	start := time.Now()
	n.trace.Tool, n.trace.Start = name, start
	res := h.call(ctx, name, args, &n)
	h.tell(ctx, hs, name, args, start, &n, res)
	return res
}

func (h *Hub) call(ctx context.Context, name string, args json.RawMessage, n *note) core.Outcome {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	h.mu.Lock()
	r, ok := h.routes[name]
	var c candidate
	var e cacheEntry
	live := false
	if ok {
		if len(r.cands) > 0 {
			c, live = h.pickLocked(r.cands), true
			n.tabURL = c.tab.url // guarded by h.mu, held here
		} else {
			e = *r.entry
		}
	}
	h.mu.Unlock()
	if !ok {
		n.result(ResultRefused)
		return h.UnknownTool(name)
	}
	var schema *compiled
	tool, url := e.Tool.Name, e.URL
	if live {
		schema, tool, url = c.doc.schemas[c.tool], c.tool, c.doc.URL
		n.target(c)
		n.tabRef, n.schema = c.tab, c.doc.tools[c.tool].InputSchema
	} else {
		n.schema = e.Tool.InputSchema
		schema, _ = h.validator.entry(e.Tool.InputSchema)
		if n.timed {
			n.trace.Origin, n.trace.PageTool, n.trace.Cached = e.Origin, e.Tool.Name, true
		}
	}
	n.tool, n.url = tool, url
	n.trace.ValidateStart = n.now()
	reason := h.validator.check(tool, url, schema, args)
	n.trace.ValidateEnd = n.now()
	if reason != "" {
		n.result(ResultRefused)
		return errorResult("the arguments do not fit the inputSchema of %s, so the page was not called: %s", name, reason)
	}
	if live {
		res, _ := h.invoke(ctx, ctx, name, c, args, n)
		return res
	}
	return h.callCached(ctx, name, e, args, n)
}

// invoke runs a call in the page of c, bounded by the call timeout and by
// budget (the caller's context, or a cached call's overall budget). retry is
// true when the page went away under the call.
func (h *Hub) invoke(ctx, budget context.Context, name string, c candidate, args json.RawMessage, n *note) (res core.Outcome, retry bool) {
	t := c.tab
	n.target(c)
	n.tabRef = t
	h.markUsed(t)
	select {
	case t.inflight <- struct{}{}:
		defer func() { <-t.inflight }()
	default:
		n.result(ResultRefused)
		return errorResult("%s was refused: tab %d already runs %d calls, the limit set by --max-inflight-per-tab; try again when one finishes", name, t.n, cap(t.inflight)), false
	}
	callCtx, cancel := context.WithTimeoutCause(budget, h.opts.CallTimeout, errCallTimeout)
	defer cancel()
	// The debug line costs the clock and its arguments: pay only when it
	// is written.
	debug := h.logger.Enabled(ctx, slog.LevelDebug)
	var start time.Time
	if debug {
		start = time.Now()
	}
	done, err := h.showHints(callCtx, t)
	if err != nil {
		return errorResult("%s was not called: %v", name, err), false
	}
	n.trace.InvokeStart = n.now()
	out, err := h.invokeDoc(callCtx, c.doc, c.tool, args)
	n.trace.InvokeEnd = n.now()
	done()
	if n.timed {
		n.trace.PageTook, n.trace.PageTimed = out.PageTook, out.PageTimed
	}
	if debug {
		h.logger.Debug("tool call", "name", name, "tab", t.n, "took", time.Since(start), "err", err)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
			return errorResult("the call to %s was cancelled by the client", name), false
		case ctx.Err() != nil:
			return errorResult("the client's deadline passed before %s answered", name), false
		case errors.Is(context.Cause(callCtx), errCallTimeout):
			n.result(ResultTimeout)
			return broken("%s did not answer within %s, the limit set by --call-timeout; the page may be busy: try again, reload the tab (webmcp_reload_tab with tab %d), or restart webmcp-cdp with a longer --call-timeout", name, h.opts.CallTimeout, t.n), false
		case errors.Is(err, core.ErrPageCrashed):
			return broken("%s did not finish: the page in tab %d crashed; its tools come back when it is reloaded (webmcp_reload_tab with tab %d)", name, t.n, t.n), false
		}
		switch h.whatHappened(c, errors.Is(err, core.ErrNavigated)) {
		case tabClosed:
			return broken("%s did not finish: its tab was closed; open the page again with webmcp_open_tab (url %s), then call the tool again", name, c.doc.URL), true
		case navigated:
			return broken("%s did not finish: the page navigated away; if the new page registers the tool again it comes back, else webmcp_list_tools finds the tools there are now", name), true
		}
		return errorResult("%s failed: %v", name, err), false
	}
	r, dropped := toOutcome(out, h.opts.MaxResultBytes)
	r = h.checkOutcome(name, c, r, dropped, cutResult(out, h.opts.MaxResultBytes))
	if untrustedHint(c.doc.tools[c.tool]) {
		markUntrusted(&r, c.doc.Origin)
	}
	return r, false
}

// Outcomes of whatHappened.
const (
	stillThere = iota
	navigated
	tabClosed
)

// settleTime is how long a failed call waits for the browser to report
// what happened to its page (a tab closing also destroys its documents, so
// a document that went is only "navigated" once its tab has had this long
// to close).
const settleTime = 300 * time.Millisecond

// goneTime bounds the wait after a call the browser says failed because its
// document went (core.ErrNavigated): that is known at once, but which of
// navigation and a closed tab it was is known when the browser reports the
// document or the tab gone, which on a busy machine can come after
// settleTime. It is navigated if neither comes within goneTime.
const goneTime = 3 * time.Second

// whatHappened tells, after a call into c failed, whether its tab closed,
// its page navigated away (the document is gone, or was replaced), or both
// are still there. gone says the browser failed the call because the
// document went: then it is not "still there", and the wait lasts until
// the browser says which, or goneTime.
func (h *Hub) whatHappened(c candidate, gone bool) int {
	settle := time.NewTimer(settleTime)
	defer settle.Stop()
	var bound <-chan time.Time
	if gone {
		t := time.NewTimer(goneTime)
		defer t.Stop()
		bound = t.C
	}
	for expired := false; ; {
		h.mu.Lock()
		_, open := h.tabs[c.tab.id]
		d := h.docs[c.doc.Key]
		changed := h.changed
		h.mu.Unlock()
		switch {
		case !open:
			return tabClosed
		case !expired:
		case d == nil || d.born != c.doc.born:
			return navigated
		case !gone:
			return stillThere
		}
		select {
		case <-changed:
		case <-settle.C:
			expired = true
		case <-bound:
			return navigated
		}
	}
}

// opening is a cached tool's page being opened; callers of the same tool
// share it. It runs on its own goroutine, bounded by the call timeout, so a
// caller that gives up fails it for no one else.
type opening struct {
	done  chan struct{} // closed once tab and err are set
	tab   string
	err   error
	users int // the calls that wait on it or use its page; guarded by Hub.mu
}

// cachedAttempts is how often a cached call looks for its tool.
const cachedAttempts = 3

// callCached runs a cached tool with no open page: it opens the tool's last
// URL in a new tab, waits for the page to register the tool (longer on each
// of up to three attempts), and calls it; a page that goes away under the
// call is tried again. The whole call is bounded by the call timeout.
func (h *Hub) callCached(ctx context.Context, name string, e cacheEntry, args json.RawMessage, n *note) core.Outcome {
	opener, ok := h.browser.(Opener)
	if !ok {
		return errorResult("%s is cached from %s, but no open page has it and this browser cannot open one", name, e.URL)
	}
	budget, cancel := context.WithTimeoutCause(ctx, h.opts.CallTimeout, errCallTimeout)
	defer cancel()
	id := entryID(e.Origin, e.Tool.Name)

	// Callers that come while others wait on the page or call into it
	// share its opening; the last one to leave forgets it.
	h.mu.Lock()
	op, shared := h.opening[id]
	if !shared {
		op = &opening{done: make(chan struct{})}
		h.opening[id] = op
		go h.openShared(ctx, op, opener, e.URL)
	}
	op.users++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if op.users--; op.users == 0 && h.opening[id] == op {
			delete(h.opening, id)
		}
		h.mu.Unlock()
	}()
	// op.tab and op.err are written before op.done is closed: read them
	// only after it is. A caller whose budget ends first leaves them alone.
	select {
	case <-op.done:
	case <-budget.Done():
	}
	opened, tabID := false, ""
	select {
	case <-op.done: // preferred when both are ready, as for the opener itself
		if op.err != nil && ctx.Err() == nil {
			return errorResult("%s is cached from %s, and opening that page failed: %v", name, e.URL, op.err)
		}
		opened, tabID = op.err == nil, op.tab
	default:
	}
	wait := 2 * time.Second
	for attempt := 0; opened && attempt < cachedAttempts && budget.Err() == nil; attempt++ {
		c, found := h.waitCandidate(budget, id, tabID, wait)
		wait *= 2
		if !found {
			continue
		}
		res, retry := h.invoke(ctx, budget, name, c, args, n)
		if !retry {
			return res
		}
		h.logger.Info("the reopened page of a cached tool went away during the call; trying again", "tool", name, "attempt", attempt+1)
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return errorResult("the call to %s was cancelled by the client", name)
	case ctx.Err() != nil:
		return errorResult("the client's deadline passed before the page of %s (%s) registered it", name, e.URL)
	case !opened:
		if errors.Is(context.Cause(budget), errCallTimeout) {
			n.result(ResultTimeout)
		}
		return errorResult("%s is cached from %s, and that page did not open within %s", name, e.URL, h.opts.CallTimeout)
	}
	if errors.Is(context.Cause(budget), errCallTimeout) {
		n.result(ResultTimeout)
	}
	return errorResult("%s is cached from %s: the page was opened, but it did not register %q within %s; webmcp_list_tabs shows what the page has now",
		name, e.URL, e.Tool.Name, h.opts.CallTimeout)
}

// openShared opens the page of an opening, on a context of its own (the
// first caller's values, not its end) bounded by the call timeout, then
// sets the outcome and closes done.
func (h *Hub) openShared(ctx context.Context, op *opening, opener Opener, url string) {
	openCtx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), h.opts.CallTimeout, errCallTimeout)
	defer cancel()
	op.tab, op.err = h.openPage(openCtx, opener, url)
	close(op.done)
}

// closeTabTimeout bounds the closing of a tab the hub opened and will not
// use.
const closeTabTimeout = 5 * time.Second

// openPage opens url, trying up to three times with backoff. A failed
// attempt that still made a tab gets it closed.
func (h *Hub) openPage(ctx context.Context, opener Opener, url string) (string, error) {
	var err error
	backoff := 250 * time.Millisecond
	for attempt := 0; attempt < cachedAttempts; attempt++ {
		var id string
		if id, err = opener.Open(ctx, url); err == nil {
			h.logger.Info("opened the page of a cached tool", "url", url)
			return id, nil
		}
		h.logger.Info("opening the page of a cached tool failed", "url", url, "attempt", attempt+1, "err", err)
		if id != "" {
			h.closeTab(ctx, id)
		}
		if attempt == cachedAttempts-1 {
			break // no wait after the last attempt
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return "", fmt.Errorf("opening %s: %w", url, err)
		case <-timer.C:
		}
		backoff *= 2
	}
	return "", fmt.Errorf("opening %s: %w", url, err)
}

// closeTab closes a tab the hub opened and will not use, when the browser
// can. It runs on a fresh short context: the call's may have ended, which
// is often why the tab is not used.
func (h *Hub) closeTab(ctx context.Context, tab string) {
	c, ok := h.browser.(TabCloser)
	if !ok {
		h.logger.Info("leaving open a tab whose page did not load: this browser cannot close tabs", "tab", tab)
		return
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTabTimeout)
	defer cancel()
	if err := c.CloseTab(closeCtx, tab); err != nil {
		h.logger.Warn("cannot close a tab whose page did not load", "tab", tab, "err", err)
	}
}

// waitCandidate waits up to d for a live document with the tool of entry
// id, preferring one in tab preferTab.
func (h *Hub) waitCandidate(ctx context.Context, id, preferTab string, d time.Duration) (candidate, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		h.mu.Lock()
		var found candidate
		ok := false
		if r := h.bySite[id]; r != nil && len(r.cands) > 0 {
			found, ok = h.pickLocked(r.cands), true
			for _, c := range r.cands {
				if c.tab.id == preferTab {
					found = c
				}
			}
		}
		changed := h.changed
		h.mu.Unlock()
		if ok {
			return found, true
		}
		select {
		case <-ctx.Done():
			return candidate{}, false
		case <-timer.C:
			return candidate{}, false
		case <-changed:
		}
	}
}
