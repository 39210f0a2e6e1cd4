package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// nativeCalls pairs WebMCP.invokeTool calls with their toolResponded events.
// The browser sends the response to invokeTool before the event, but the
// caller registers its wait after reading the response, so an event can come
// first: it is kept (boundedly) until its caller comes for it.
//
// It also times the executions (Options.PageTimes): the page script cannot
// see a native execution (the browser calls the tool's execute itself, and
// nothing in the page ties it to our invocation id), and CDP's WebMCP
// events carry no timestamps, so the time is Go's, from the arrival of
// WebMCP.toolInvoked (the execution starts) to that of toolResponded (it
// ended). Both come from the renderer over the same connection, in order.
type nativeCalls struct {
	mu      sync.Mutex
	waiters map[string]chan *webmcp.EventToolResponded
	early   map[string]*webmcp.EventToolResponded
	order   []string
	// times are the executions being timed, by invocation id.
	times map[string]*nativeTime
}

// nativeTime is the timing of one native execution.
type nativeTime struct {
	start time.Time
	took  time.Duration
	done  bool
}

// maxNativeTimes bounds the executions timed at once; past it the timings
// in flight are dropped (those calls are not timed).
const maxNativeTimes = 256

func (n *nativeCalls) init() {
	n.waiters = make(map[string]chan *webmcp.EventToolResponded)
	n.early = make(map[string]*webmcp.EventToolResponded)
	n.times = make(map[string]*nativeTime)
}

// invoked notes that the execution of invocation id started at at
// (WebMCP.toolInvoked).
func (n *nativeCalls) invoked(id string, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.times) >= maxNativeTimes {
		clear(n.times)
	}
	n.times[id] = &nativeTime{start: at}
}

// took returns how long the execution of invocation id took, once it
// responded and if it was timed, and forgets it.
func (n *nativeCalls) took(id string) (time.Duration, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.times[id]
	delete(n.times, id)
	if t == nil || !t.done {
		return 0, false
	}
	return t.took, true
}

func (n *nativeCalls) responded(ev *webmcp.EventToolResponded) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t := n.times[ev.InvocationID]; t != nil && !t.done {
		t.took, t.done = time.Since(t.start), true
	}
	if ch, ok := n.waiters[ev.InvocationID]; ok {
		delete(n.waiters, ev.InvocationID)
		ch <- ev
		return
	}
	n.early[ev.InvocationID] = ev
	n.order = append(n.order, ev.InvocationID)
	// Keep at most 256 unclaimed events; ids already claimed are skipped.
	for len(n.early) > 256 && len(n.order) > 0 {
		delete(n.early, n.order[0])
		n.order = n.order[1:]
	}
	if len(n.order) > 4*256 {
		kept := n.order[:0]
		for _, id := range n.order {
			if _, ok := n.early[id]; ok {
				kept = append(kept, id)
			}
		}
		n.order = kept
	}
}

func (n *nativeCalls) wait(id string) chan *webmcp.EventToolResponded {
	ch := make(chan *webmcp.EventToolResponded, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if ev, ok := n.early[id]; ok {
		delete(n.early, id)
		ch <- ev
		return ch
	}
	n.waiters[id] = ch
	return ch
}

func (n *nativeCalls) forget(id string) {
	n.mu.Lock()
	delete(n.waiters, id)
	delete(n.times, id)
	n.mu.Unlock()
}

func nativeKey(t *targetState, frame cdpt.FrameID) string {
	return string(t.sess.ID()) + "/native/" + string(frame)
}

// onNativeTools applies WebMCP.toolsAdded and toolsRemoved.
func (b *Browser) onNativeTools(t *targetState, msg *cdproto.Message) {
	type change struct {
		frame cdpt.FrameID
		add   *core.Tool
		id    webmcp.ToolID
		name  string
	}
	var changes []change
	if msg.Method == cdproto.EventWebMCPToolsAdded {
		var ev webmcp.EventToolsAdded
		if decode(msg.Params, &ev) != nil {
			return
		}
		for _, nt := range ev.Tools {
			if nt == nil {
				continue
			}
			// Admission (names, sizes, schema) is the sink's; the domain's
			// annotations map onto WebMCP's hint names. The registration's
			// stack names the userscript that registered the tool, if one
			// did (each runs under a source URL of its own; a page could
			// forge one with a //# sourceURL, and only mislabel its tools).
			tl := core.Tool{Name: nt.Name, Description: nt.Description, InputSchema: json.RawMessage(nt.InputSchema),
				Userscript: b.us.fromStack(nt.StackTrace)}
			if len(nt.OutputSchema) > 0 {
				tl.OutputSchema = json.RawMessage(nt.OutputSchema)
			}
			if a := nt.Annotations; a != nil {
				tl.Annotations = map[string]any{
					"readOnlyHint":         a.ReadOnly,
					"untrustedContentHint": a.UntrustedContent,
					"consequentialHint":    a.Consequential,
					"debugging":            a.Debugging,
				}
			}
			changes = append(changes, change{frame: nt.FrameID, add: &tl, id: nt.ToolID, name: nt.Name})
		}
	} else {
		var ev webmcp.EventToolsRemoved
		if decode(msg.Params, &ev) != nil {
			return
		}
		for _, rt := range ev.Tools {
			if rt != nil {
				changes = append(changes, change{frame: rt.FrameID, id: rt.ToolID, name: rt.Name})
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	touched := map[cdpt.FrameID]bool{}
	for _, c := range changes {
		nd := t.natives[c.frame]
		if nd == nil {
			if c.add == nil {
				continue
			}
			nd = &nativeDoc{key: nativeKey(t, c.frame), tools: map[string]core.Tool{}, ids: map[webmcp.ToolID]string{}}
			t.natives[c.frame] = nd
		}
		if c.add != nil {
			if _, had := nd.tools[c.name]; !had && len(nd.tools) >= b.opts.Limits.MaxTools {
				nd.over++
				touched[c.frame] = true
				continue
			}
			nd.tools[c.name] = *c.add
			nd.ids[c.id] = c.name
		} else if name, ok := nd.ids[c.id]; ok {
			delete(nd.ids, c.id)
			delete(nd.tools, name)
		}
		touched[c.frame] = true
	}
	for frame := range touched {
		nd := t.natives[frame]
		tools := make([]core.Tool, 0, len(nd.tools))
		for _, tl := range nd.tools {
			tools = append(tools, tl)
		}
		origin, url := t.frames[frame].origin, t.frames[frame].url
		for _, d := range t.contexts {
			if d.frameID == frame {
				origin = d.origin
				if d.url != "" {
					url = d.url
				}
			}
		}
		src := core.Source{Key: nd.key, Tab: t.tab, Frame: string(frame), Origin: origin, URL: url, Backend: core.BackendNative}
		var refused []core.Refusal
		if nd.over > 0 {
			refused = append(refused, core.Refusal{Reason: core.ReasonTooMany, Tool: "*",
				Detail: fmt.Sprintf("%d tools over the limit of %d per document", nd.over, b.opts.Limits.MaxTools),
				Origin: origin, URL: url, Tab: t.tab, At: time.Now()})
		}
		b.sink.Update(src, tools, refused)
	}
}

// invokeNative runs a tool through the WebMCP domain.
func (b *Browser) invokeNative(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	var t *targetState
	var frame cdpt.FrameID
	b.mu.Lock()
	for _, ts := range b.targets {
		for f, nd := range ts.natives {
			if nd.key == docKey {
				t, frame = ts, f
			}
		}
	}
	b.mu.Unlock()
	if t == nil {
		return core.Result{}, ErrNavigated
	}
	cctx, end := b.startCall(ctx, t)
	defer end()
	res, err := cdpt.Call(cctx, t.sess, webmcp.InvokeTool, webmcp.InvokeToolParams{FrameID: frame, ToolName: tool, Input: jsonv2.Value(input)})
	if err != nil {
		if crashed(cctx) && ctx.Err() == nil {
			return core.Result{}, core.ErrPageCrashed
		}
		if ctx.Err() != nil {
			return core.Result{}, ctx.Err()
		}
		return core.Result{}, err
	}
	ch := b.native.wait(res.InvocationID)
	select {
	case ev := <-ch:
		r := nativeResult(ev, b.opts.Limits.MaxResult)
		r.PageTook, r.PageTimed = b.native.took(res.InvocationID)
		return r, nil
	case <-t.sess.Closed():
		b.native.forget(res.InvocationID)
		return core.Result{}, ErrTargetGone
	case <-cctx.Done():
		b.native.forget(res.InvocationID)
		if crashed(cctx) && ctx.Err() == nil {
			return core.Result{}, core.ErrPageCrashed
		}
		t.sess.Send(webmcp.CommandCancelInvocation, webmcp.CancelInvocationParams{InvocationID: res.InvocationID})
		return core.Result{}, ctx.Err()
	}
}

// nativeResult maps toolResponded onto a core.Result. Native WebMCP delivers
// the output as the agent would see it: a string (the tool's string, or the
// JSON text of another value).
func nativeResult(ev *webmcp.EventToolResponded, maxBytes int) core.Result {
	if ev.Status != webmcp.InvocationStatusCompleted {
		msg := ev.ErrorText
		if ev.Exception != nil && ev.Exception.Description != "" {
			msg = ev.Exception.Description
		}
		if msg == "" {
			msg = "the tool call ended with status " + string(ev.Status)
		}
		if i := strings.Index(msg, "\n    at "); i > 0 {
			msg = msg[:i] // keep the message, not the page's stack
		}
		return core.Result{Err: msg}
	}
	if len(ev.Output) == 0 {
		return core.Result{Kind: core.KindUndefined}
	}
	r := core.Result{Kind: core.KindJSON, Value: string(ev.Output)}
	var s string
	if json.Unmarshal(ev.Output, &s) == nil {
		r = core.Result{Kind: core.KindString, Value: s}
		var v any
		if t := strings.TrimSpace(s); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &v) == nil {
			r.Kind = core.KindJSON
		}
	}
	if len(r.Value) > maxBytes {
		r.Truncated = len(r.Value)
		cut := maxBytes
		for cut > 0 && !utf8.RuneStart(r.Value[cut]) {
			cut--
		}
		r.Value = r.Value[:cut]
	}
	return r
}
