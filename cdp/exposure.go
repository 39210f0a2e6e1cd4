package cdp

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strconv"

	"github.com/chromedp/cdproto/runtime"
)

// This file relays WebMCP tools between the documents of one tab that are
// of different origins (registerTool's exposedTo, getTools' fromOrigins,
// toolchange, executeTool and its cancellation). The page script of a
// document cannot reach another origin's registry; Go can, and takes every
// origin from CDP (the execution context's origin), never from a page. A
// document's exposed tools come with its list (bridge.go); Go pushes to
// each document what the others expose to its origin, and runs the calls
// one document asks for in the other (polyfill/exposure.js is the page's
// side).

// exposurePing is the binding payload of a document that queued calls or
// cancels for the relay.
const exposurePing = "xo"

// Bounds of the relay: what a hostile document can make Go hold or send.
const (
	maxExposedTo   = 32   // origins kept per exposed tool
	maxOriginLen   = 512  // characters of an origin kept
	maxRelayDocs   = 64   // documents of one tab taking part
	maxRemoteTools = 1000 // tools pushed to one document
	maxRelayCalls  = 64   // relayed calls in flight per tab
	maxTake        = 64   // messages taken from a document at once
	maxPathLen     = 32   // frame depth of a window's path
)

// exposedTool is a tool a document exposes to other origins, as its page
// script listed it.
type exposedTool struct {
	Name        string          `json:"name"`
	Title       *string         `json:"title"`
	Description string          `json:"description"`
	Schema      *string         `json:"schema,omitempty"`
	Annotations map[string]bool `json:"annotations,omitempty"`
	To          []string        `json:"to,omitempty"`
}

// remoteEntry is what one document is pushed of another: its key, origin
// (CDP's), window path and the tools exposed to the receiver's origin.
type remoteEntry struct {
	Key    string        `json:"key"`
	Origin string        `json:"origin"`
	Path   []int         `json:"path"`
	Tools  []exposedTool `json:"tools"`
}

// exposure is the relay's state, under Browser.mu.
type exposure struct {
	tabs  map[string]*xoTab
	calls map[string]*xoCall // caller doc key + "|" + its call id
}

// xoTab is the relay's state of one tab.
type xoTab struct {
	docs        map[string]*xoDoc // by doc key
	busy, dirty bool              // a push loop runs / must run again
	pushed      map[string]pushed // doc key -> what was last pushed to it
	calls       int               // relayed calls in flight
}

// pushed is what a document was last pushed: the JSON, and the same
// without the windows' paths (a frame moved is no change of tools).
type pushed struct{ json, tools string }

// xoDoc is what a document exposes and where its window is.
type xoDoc struct {
	path  []int
	tools []exposedTool
}

// xoCall is a relayed call in flight.
type xoCall struct {
	target *docState
	callID string
}

func (x *exposure) tab(id string) *xoTab {
	if x.tabs == nil {
		x.tabs = make(map[string]*xoTab)
		x.calls = make(map[string]*xoCall)
	}
	xt := x.tabs[id]
	if xt == nil {
		xt = &xoTab{docs: make(map[string]*xoDoc), pushed: make(map[string]pushed)}
		x.tabs[id] = xt
	}
	return xt
}

// noteExposureLocked records what a polyfilled document exposes, read with
// its tools, and pushes the tab's documents what changed for them.
func (b *Browser) noteExposureLocked(d *docState, tools []exposedTool, path []int) {
	if d.native || len(path) > maxPathLen {
		return
	}
	kept := make([]exposedTool, 0, len(tools))
	for _, t := range tools {
		if len(kept) >= b.opts.Limits.MaxTools {
			break
		}
		if t.Schema != nil && !json.Valid([]byte(*t.Schema)) {
			continue
		}
		var to []string
		for _, o := range t.To {
			if len(to) < maxExposedTo && len(o) <= maxOriginLen {
				to = append(to, o)
			}
		}
		if len(to) > 0 {
			t.To = to
			kept = append(kept, t)
		}
	}
	xt := b.xo.tab(d.t.tab)
	old, known := xt.docs[d.key]
	if !known && len(xt.docs) >= maxRelayDocs {
		kept = nil // over the bound: it still learns what others expose to it
	}
	if known && slices.Equal(old.path, path) && reflect.DeepEqual(old.tools, kept) {
		return // nothing new for the others
	}
	xt.docs[d.key] = &xoDoc{path: path, tools: kept}
	b.pushExposureLocked(d.t.tab, xt)
}

// dropExposureLocked forgets a document that went: the others lose its
// tools, and the calls it made are cancelled in their targets.
func (b *Browser) dropExposureLocked(d *docState) {
	xt := b.xo.tabs[d.t.tab]
	if xt == nil {
		return
	}
	if _, ok := xt.docs[d.key]; ok {
		delete(xt.docs, d.key)
		delete(xt.pushed, d.key)
		b.pushExposureLocked(d.t.tab, xt)
	}
	prefix := d.key + "|"
	for k, c := range b.xo.calls {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			go b.cancelRelayed(c, "the calling document went away")
		}
	}
}

// framesChangedLocked reads again, after a frame of t came or went, the
// documents of its tab that expose tools: their windows may have moved in
// the tab's frames.
func (b *Browser) framesChangedLocked(t *targetState) {
	xt := b.xo.tabs[t.tab]
	if xt == nil {
		return
	}
	for k, xd := range xt.docs {
		if d := b.docs[k]; d != nil && d.alive && !d.native && len(xd.tools) > 0 {
			d.queued++
			go b.refresh(d)
		}
	}
}

// pushExposureLocked starts the tab's push loop, or has the running one go
// round again.
func (b *Browser) pushExposureLocked(tab string, xt *xoTab) {
	if xt.busy {
		xt.dirty = true
		return
	}
	xt.busy = true
	go b.pushExposure(tab, xt)
}

// pushExposure pushes to each document of the tab the tools that documents
// of other origins expose to its origin, where that changed since the last
// push; it goes round again while changes came meanwhile.
func (b *Browser) pushExposure(tab string, xt *xoTab) {
	type push struct {
		d       *docState
		obj     runtime.RemoteObjectID
		now     pushed
		changed bool // the tools changed: toolchange fires
		p       *Pending
	}
	for {
		b.mu.Lock()
		xt.dirty = false
		keys := make([]string, 0, len(xt.docs))
		for k := range xt.docs {
			if d := b.docs[k]; d != nil && d.alive && d.bridge != "" && d.bridge != "pending" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var pushes []*push
		for _, vk := range keys {
			v := b.docs[vk]
			entries := remoteFor(v, keys, b.docs, xt.docs)
			js, _ := json.Marshal(entries)
			for i := range entries {
				entries[i].Path = nil
			}
			tools, _ := json.Marshal(entries)
			now := pushed{json: string(js), tools: string(tools)}
			// The first push goes even when empty: the page's getTools({fromOrigins})
			// waits for it.
			prev, had := xt.pushed[vk]
			if !had || now != prev {
				changed := now.tools != prev.tools && (had || len(entries) > 0)
				pushes = append(pushes, &push{d: v, obj: v.bridge, now: now, changed: changed})
			}
		}
		b.mu.Unlock()
		for _, p := range pushes {
			p.p, _ = p.d.t.sess.Send(runtime.CommandCallFunctionOn, bridgeCall(p.obj, "function(j,c){return this.remote(j,c)}", p.now.json, p.changed))
		}
		for _, p := range pushes {
			if p.p == nil || p.p.Wait(b.life, nil) != nil {
				continue // the document is going: its drop pushes again
			}
			b.mu.Lock()
			if p.d.alive {
				xt.pushed[p.d.key] = p.now
			}
			b.mu.Unlock()
		}
		b.mu.Lock()
		if !xt.dirty {
			xt.busy = false
			if len(xt.docs) == 0 && xt.calls == 0 && b.xo.tabs[tab] == xt {
				delete(b.xo.tabs, tab)
			}
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// remoteFor is what the viewer v is pushed: the tools that the documents
// keys (of v's tab) of another origin expose to v's origin, at most
// maxRemoteTools, in the order of keys. Both origins are CDP's.
func remoteFor(v *docState, keys []string, docs map[string]*docState, exposed map[string]*xoDoc) []remoteEntry {
	entries := []remoteEntry{}
	if !relayOrigin(v.origin) {
		return entries
	}
	n := 0
	for _, k := range keys {
		o, xd := docs[k], exposed[k]
		if o == nil || xd == nil || o.origin == v.origin || !relayOrigin(o.origin) {
			continue // same origin: the page script's own peers
		}
		var tools []exposedTool
		for _, t := range xd.tools {
			if n < maxRemoteTools && slices.Contains(t.To, v.origin) {
				t.To = nil
				tools = append(tools, t)
				n++
			}
		}
		if len(tools) > 0 {
			entries = append(entries, remoteEntry{Key: k, Origin: o.origin, Path: xd.path, Tools: tools})
		}
	}
	return entries
}

// relayOrigin says whether an origin from CDP can take part: an opaque or
// unknown origin never matches an exposedTo.
func relayOrigin(o string) bool {
	return o != "" && o != "null" && o != "://"
}

// relayMsg is one message a document queued for the relay.
type relayMsg struct {
	T      string `json:"t"`
	ID     string `json:"id"`
	Key    string `json:"key"`
	Origin string `json:"origin"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

// pullRelay takes the calls and cancels a document queued, after its "xo"
// ping, and starts each.
func (b *Browser) pullRelay(d *docState) {
	for {
		b.mu.Lock()
		obj, alive := d.bridge, d.alive
		b.mu.Unlock()
		if !alive || obj == "" || obj == "pending" {
			return
		}
		var got struct {
			Msgs []relayMsg `json:"msgs"`
			More bool       `json:"more"`
		}
		if err := b.callBridge(b.life, d.t.sess, obj, "function(n,m){return this.xoTake(n,m)}", []any{maxTake, b.opts.Limits.MaxResult}, &got); err != nil {
			b.logger.Debug("taking a page's relayed calls failed", "url", d.url, "err", err)
			return
		}
		for i, m := range got.Msgs {
			if i >= maxTake {
				break
			}
			switch m.T {
			case "call":
				b.relayCall(d, obj, m)
			case "cancel":
				b.mu.Lock()
				c := b.xo.calls[d.key+"|"+m.ID]
				b.mu.Unlock()
				if c != nil {
					b.cancelRelayed(c, "the caller aborted the call") // (in order, after its call)
				}
			}
		}
		if !got.More {
			return
		}
	}
}

// relayCall runs the tool a caller asked for in the document it names, if
// that document is of the tab, of the origin the caller expects, and
// exposes the tool to the caller's origin (CDP's word on both origins).
func (b *Browser) relayCall(caller *docState, callerObj runtime.RemoteObjectID, m relayMsg) {
	b.mu.Lock()
	target := b.docs[m.Key]
	xt := b.xo.tabs[caller.t.tab]
	why := relayRefusal(caller, target, xt, m)
	var c *xoCall
	key := caller.key + "|" + m.ID
	if why == "" && b.xo.calls[key] == nil {
		xt.calls++
		c = &xoCall{target: target, callID: "xo" + strconv.FormatInt(b.callSeq.Add(1), 10)}
		b.xo.calls[key] = c
	}
	var obj runtime.RemoteObjectID
	if target != nil {
		obj = target.bridge
	}
	callerOrigin := caller.origin
	b.mu.Unlock()
	if why != "" {
		b.relayDone(caller, callerObj, m.ID, failure("executeTool: "+why))
		return
	}
	if c == nil {
		return // a repeated id: the first call answers it
	}
	// Sent before this returns, so that a cancel taken with it (sent after)
	// reaches the page after the call: the tool starts, then is cancelled.
	p, err := target.t.sess.Send(runtime.CommandCallFunctionOn, bridgeCall(obj,
		"function(n,i,c,m,o){return this.xoRun(n,i,c,m,o)}", m.Name, m.Input, c.callID, b.opts.Limits.MaxResult, callerOrigin))
	go func() {
		answer := b.relayAnswer(target, p, err)
		b.mu.Lock()
		delete(b.xo.calls, key)
		xt.calls--
		b.mu.Unlock()
		b.relayDone(caller, callerObj, m.ID, answer)
	}()
}

// relayRefusal says why the caller may not run m in target ("" if it may):
// the target must be a live polyfilled document of the caller's tab, of
// the origin the caller expects and not the caller's, that exposes the
// tool to the caller's origin; and the tab must have a call slot free.
func relayRefusal(caller, target *docState, xt *xoTab, m relayMsg) string {
	switch {
	case target == nil || !target.alive || target.native || target.bridge == "" || target.bridge == "pending" || xt == nil || xt.docs[m.Key] == nil:
		return "the tool's document went away"
	case target.t.tab != caller.t.tab || target.origin != m.Origin || !relayOrigin(caller.origin) || caller.origin == target.origin:
		return "the tool's document is not of tool.origin"
	case !exposes(xt.docs[m.Key], m.Name, caller.origin):
		return "the tool is not exposed to this origin"
	case xt.calls >= maxRelayCalls:
		return "too many calls between the documents of this tab are in flight (" + strconv.Itoa(maxRelayCalls) + ")"
	}
	return ""
}

func exposes(xd *xoDoc, name, origin string) bool {
	for _, t := range xd.tools {
		if t.Name == name {
			return slices.Contains(t.To, origin)
		}
	}
	return false
}

// relayAnswer waits for the target's answer to a relayed call and returns
// its completion as the JSON the caller's page script reads.
func (b *Browser) relayAnswer(target *docState, p *Pending, err error) string {
	var res runtime.CallFunctionOnResult
	if err == nil {
		err = p.Wait(b.life, &res)
	}
	switch {
	case err != nil:
		if errors.Is(b.callError(target, err), ErrNavigated) || errors.Is(err, ErrTargetGone) || errors.Is(err, ErrClosed) {
			return failure("executeTool: the tool's document went away during the call")
		}
		return failure("executeTool: " + err.Error())
	case res.ExceptionDetails != nil:
		return failure("executeTool: the page script failed: " + exceptionText(res.ExceptionDetails))
	case res.Result == nil || !json.Valid(res.Result.Value):
		return failure("executeTool: the tool's document gave no answer")
	}
	return string(res.Result.Value)
}

// cancelRelayed aborts a relayed call in its target: the tool's signal
// aborts and toolcancel fires there.
func (b *Browser) cancelRelayed(c *xoCall, reason string) {
	b.mu.Lock()
	obj := c.target.bridge
	alive := c.target.alive
	b.mu.Unlock()
	if !alive {
		return
	}
	c.target.t.sess.Send(runtime.CommandCallFunctionOn, bridgeCall(obj, "function(c,r){this.cancel(c,r)}", c.callID, reason))
}

// relayDone hands a caller the completion of its relayed call.
func (b *Browser) relayDone(caller *docState, obj runtime.RemoteObjectID, id, answer string) {
	b.mu.Lock()
	alive := caller.alive
	b.mu.Unlock()
	if !alive {
		return
	}
	caller.t.sess.Send(runtime.CommandCallFunctionOn, bridgeCall(obj, "function(i,r){this.xoDone(i,r)}", id, answer))
}

func failure(msg string) string {
	js, _ := json.Marshal(map[string]any{"ok": false, "error": msg})
	return string(js)
}
