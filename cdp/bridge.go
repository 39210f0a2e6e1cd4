package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file holds the page bridge: its handover through console.debug,
// its adoption, calls into it, and reading a document's tools.

// onConsole takes the bridge from the first marked console.debug message of
// a document. The page script runs before any script of the page, so the
// first marked message is ours; the nonce keeps a page that ran earlier (in
// attach mode) from handing over a fake. A document that outlived an earlier
// connection with the same Marks hands over its bridge here too: Runtime.enable
// replays its stored hand-off (its copy of the script from this connection
// found the install guard and stopped).
func (b *Browser) onConsole(t *targetState, params jsonv2.Value) {
	var ev runtime.EventConsoleAPICalled
	if decode(params, &ev) != nil || ev.Type != runtime.ConsoleAPICalledTypeDebug || len(ev.Args) != 2 {
		return
	}
	var marker string
	if ev.Args[0].Type != runtime.RemoteObjectTypeString || decode(ev.Args[0].Value, &marker) != nil || marker != polyfill.BridgeMarker+b.nonce {
		return
	}
	b.mu.Lock()
	d := t.contexts[ev.ExecutionContextID]
	if d == nil || d.bridge != "" || ev.Args[1].ObjectID == "" {
		b.mu.Unlock()
		return
	}
	d.bridge = "pending"
	d.adopting = true
	b.mu.Unlock()
	go b.adopt(d, ev.Args[1].ObjectID)
}

// adopt moves the bridge handle out of the console's object group (which
// console.clear() releases) into our own, and reads the document's info
// and its tools. The two commands are sent together and answered in one
// round trip: the page runs them in order, both on the handle the console
// gave us (it lives until the move has happened, and after). The read
// hands over the Permissions Policy verdict first when it needs no CDP.
func (b *Browser) adopt(d *docState, handle runtime.RemoteObjectID) {
	defer func() {
		b.mu.Lock()
		d.adopting = false
		b.progressLocked()
		b.mu.Unlock()
	}()
	ctx := b.life
	l := b.opts.Limits
	move, err := d.t.sess.Send(runtime.CommandCallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(){return this}",
		ObjectID:            handle,
		ObjectGroup:         "webmcp-cdp",
	})
	if err != nil {
		b.logger.Debug("adopting a page bridge failed", "err", err)
		return
	}
	// The Permissions Policy verdict of a top-level document comes from its
	// response headers, known by now: it goes with the read, before the
	// list, so the registrations that waited for it are in the first list
	// (one round trip, not three). A frame's verdict takes CDP calls of its
	// own: it follows (applyPolicy), and the list is read again.
	var verdict any // true, false, or nil (not known yet)
	var v toolsVerdict
	early := d.t.kind == "page" && string(d.frameID) == d.t.targetID
	if early {
		v = b.toolsVerdict(ctx, d)
		verdict = v.allowed
	}
	// info and list are the bridge's JSON strings, joined without calling
	// anything the page could have replaced.
	read, readErr := d.t.sess.Send(runtime.CommandCallFunctionOn, bridgeCall(handle,
		`function(p,a,b,c){if(typeof p==='boolean')this.policy(p);return '{"info":'+this.info()+',"list":'+this.list(a,b,c)+'}'}`,
		verdict, l.MaxTools, l.MaxDescription, l.MaxSchema))
	var moved runtime.CallFunctionOnResult
	if err := move.Wait(ctx, &moved); err != nil || moved.Result == nil || moved.Result.ObjectID == "" {
		b.logger.Debug("adopting a page bridge failed", "err", err)
		if readErr == nil {
			read.Wait(ctx, nil) // its answer, or given up with ctx: never left pending
		}
		return
	}
	var first firstRead
	if readErr == nil {
		readErr = bridgeResult(ctx, read, &first)
	}
	if readErr != nil {
		b.logger.Debug("reading a page's info failed", "err", readErr)
		return
	}
	info := first.Info
	b.mu.Lock()
	d.bridge = moved.Result.ObjectID
	d.native = info.Native
	d.url = info.URL
	alive := d.alive
	if alive && !info.Native {
		// The first list is applied as a refresh would; changes signalled
		// while it was read make the refresh loop read again.
		d.busy = true
	}
	b.mu.Unlock()
	if !alive {
		return
	}
	if b.opts.Backend == polyfill.BackendNative && !info.Native {
		b.mu.Lock()
		d.busy = false
		b.mu.Unlock()
		select {
		case b.fatal <- fmt.Errorf("--backend native: %s has no native document.modelContext; start Chromium 156 or later with --enable-features=WebMCP, or use --backend auto", info.URL):
		default:
		}
		return
	}
	b.logger.Debug("page bridge adopted", "target", d.t.targetID, "url", info.URL, "native", info.Native)
	if info.StartedBefore && !info.Native && d.t.kind == "page" && string(d.frameID) == d.t.targetID {
		b.scriptCameLate(d.t, info.URL)
	}
	b.adoptedPageServers(d)
	switch {
	case info.Native:
	case early:
		// The first list was read after the verdict: it stands.
		b.noteVerdict(d, v)
		b.refreshLoop(d, &first.List)
	case b.applyPolicy(ctx, d, moved.Result.ObjectID):
		// The first list was read before the verdict: it stands when the
		// document may use tools; a denial dropped what the page
		// registered meanwhile, so the list is read again.
		b.refreshLoop(d, &first.List)
	default:
		b.refreshLoop(d, nil)
	}
}

// firstRead is the bridge's answer to adopt's read: the document's info
// and its first list.
type firstRead struct {
	Info struct {
		Native        bool   `json:"native"`
		URL           string `json:"url"`
		StartedBefore bool   `json:"startedBefore"`
	} `json:"info"`
	List toolList `json:"list"`
}

// scriptCameLate notes a tab whose document ran scripts of its own before
// the page script was in: it loaded before we attached, or Chromium did
// not hold it for the setup (a tab that another client opens and
// navigates at once: measured in 1 to 6 of 20 such tabs). What those
// scripts registered through no API of theirs was lost, so the tab is
// reported as one that loaded before we attached: tools appear after a
// reload, which only the person or the agent may ask for.
func (b *Browser) scriptCameLate(t *targetState, url string) {
	b.mu.Lock()
	known := t.loadedBefore
	b.mu.Unlock()
	if known {
		return
	}
	b.logger.Info("this tab ran scripts before the page script was in (it was not held for the setup); tools it registered through no API of its own appear after a reload", "url", url, "target", t.targetID)
	b.markPreexisting(t)
}

// bridgeCall is the Runtime.callFunctionOn of fn on a bridge object with
// args, awaited and returned by value.
func bridgeCall(obj runtime.RemoteObjectID, fn string, args ...any) runtime.CallFunctionOnParams {
	callArgs := make([]*runtime.CallArgument, 0, len(args))
	for _, a := range args {
		v, _ := json.Marshal(a) // numbers and strings
		callArgs = append(callArgs, &runtime.CallArgument{Value: v})
	}
	return runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            obj,
		Arguments:           callArgs,
		AwaitPromise:        ptr(true),
		ReturnByValue:       ptr(true),
		Silent:              ptr(true),
	}
}

// bridgeResult waits for a bridge call and decodes the JSON string it
// returned into out.
func bridgeResult(ctx context.Context, p *Pending, out any) error {
	var res runtime.CallFunctionOnResult
	if err := p.Wait(ctx, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("the page script failed: %s", exceptionText(res.ExceptionDetails))
	}
	var s string
	if res.Result == nil || decode(res.Result.Value, &s) != nil {
		return errors.New("the page script returned no JSON string")
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		return fmt.Errorf("the page script returned bad JSON: %w", err)
	}
	return nil
}

// callBridge calls fn on a bridge object and decodes the JSON string it
// returns into out.
func (b *Browser) callBridge(ctx context.Context, s *Session, obj runtime.RemoteObjectID, fn string, args []any, out any) error {
	p, err := s.Send(runtime.CommandCallFunctionOn, bridgeCall(obj, fn, args...))
	if err != nil {
		return err
	}
	return bridgeResult(ctx, p, out)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func exceptionText(e *runtime.ExceptionDetails) string {
	if e.Exception != nil && e.Exception.Description != "" {
		return e.Exception.Description
	}
	return e.Text
}

type pageTool struct {
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	InputSchema *string `json:"inputSchema"`
	// OutputSchema is the JSON text of an outputSchema the page gave, when
	// the page script hands one over (as inputSchema).
	OutputSchema *string        `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
	Refused      string         `json:"refused"`
	// Script is the number of the operator's userscript that registered
	// the tool (the page script's userscripts.run), and Userscript its
	// @name, filled in by the Browser (userscripts.name).
	Script     *int   `json:"script"`
	Userscript string `json:"-"`
}

// toolList is what the bridge's list returns.
type toolList struct {
	URL      string     `json:"url"`
	Tools    []pageTool `json:"tools"`
	Overflow int        `json:"overflow"`
	// Denied is set for a document the Permissions Policy denies tools:
	// the tools it tried to register.
	Denied *deniedList `json:"denied"`
	// Exposed are the tools the document exposes to other origins, and
	// Path where its window sits in the tab (exposure.go).
	Exposed []exposedTool `json:"exposed"`
	Path    []int         `json:"path"`
	// Bound says the page script holds the runtime binding: every later
	// change of the document pings.
	Bound bool `json:"bound"`
}

// deniedList is what a denied document tried to register: the names the
// page script kept (at most 32) and how many more.
type deniedList struct {
	Names []string `json:"names"`
	More  int      `json:"more"`
}

// refresh reads the tools of a document and hands them to the sink. Calls
// made while a read runs fold into one more read. Its caller counted it in
// d.queued.
func (b *Browser) refresh(d *docState) {
	b.mu.Lock()
	d.queued--
	if d.native {
		b.progressLocked()
		b.mu.Unlock()
		return
	}
	if d.busy || d.bridge == "" || d.bridge == "pending" {
		// A read runs, or the bridge is being adopted (whose first read
		// follows): read once more after it, so no change is lost.
		d.dirty = true
		b.progressLocked()
		b.mu.Unlock()
		return
	}
	d.busy = true
	b.mu.Unlock()
	b.refreshLoop(d, nil)
}

// refreshLoop runs with d.busy set: it hands first (when set) or a fresh
// read to the sink, and reads again while changes came meanwhile.
func (b *Browser) refreshLoop(d *docState, first *toolList) {
	b.mu.Lock()
	bridge := d.bridge
	b.mu.Unlock()
	for {
		var list toolList
		var err error
		l := b.opts.Limits
		if first != nil {
			list, first = *first, nil
		} else {
			err = b.callBridge(b.life, d.t.sess, bridge, "function(a,b,c){return this.list(a,b,c)}",
				[]any{l.MaxTools, l.MaxDescription, l.MaxSchema}, &list)
		}
		b.mu.Lock()
		if !d.alive {
			d.busy = false
			b.progressLocked()
			b.mu.Unlock()
			return
		}
		if err != nil {
			b.logger.Debug("reading a page's tools failed", "url", d.url, "err", err)
		} else {
			d.url = list.URL
			d.bound = list.Bound
			src := b.sourceOf(d)
			for i := range list.Tools {
				list.Tools[i].Userscript = b.us.name(list.Tools[i].Script)
			}
			tools, refused := pageTools(src, list.Tools, list.Overflow, l.MaxTools)
			refused = append(refused, deniedRefusals(src, d.denied, list.Denied, time.Now())...)
			b.logger.Debug("read a page's tools", "target", d.t.targetID, "url", d.url, "tools", len(tools))
			b.sink.Update(src, tools, refused)
			b.noteExposureLocked(d, list.Exposed, list.Path)
		}
		again := d.dirty
		d.dirty = false
		d.busy = again
		if !again {
			b.progressLocked()
		}
		b.mu.Unlock()
		if !again {
			return
		}
	}
}

func (b *Browser) sourceOf(d *docState) core.Source {
	return core.Source{Key: d.key, Tab: d.t.tab, Frame: string(d.frameID), Origin: d.origin, URL: d.url, Backend: core.BackendPolyfill}
}

// pageTools turns the tools the page script listed into the sink's tools.
// The page script has already bounded each one's size (a tool over a bound
// comes with the reason it was left out) and their count (overflow is how
// many more the document has); admission proper is the sink's.
func pageTools(src core.Source, listed []pageTool, overflow, maxTools int) ([]core.Tool, []core.Refusal) {
	tools := make([]core.Tool, 0, len(listed))
	var refused []core.Refusal
	now := time.Now()
	for _, pt := range listed {
		if pt.Refused != "" {
			refused = append(refused, core.Refusal{Reason: core.ReasonSize, Tool: pt.Name, Detail: pt.Refused,
				Origin: src.Origin, URL: src.URL, Tab: src.Tab, At: now})
			continue
		}
		t := core.Tool{Name: pt.Name, Title: pt.Title, Description: pt.Description, Annotations: pt.Annotations, Userscript: pt.Userscript}
		if pt.InputSchema != nil {
			t.InputSchema = json.RawMessage(*pt.InputSchema)
		}
		if pt.OutputSchema != nil {
			t.OutputSchema = json.RawMessage(*pt.OutputSchema)
		}
		tools = append(tools, t)
	}
	if overflow > 0 {
		refused = append(refused, core.Refusal{Reason: core.ReasonTooMany, Tool: "*",
			Detail: fmt.Sprintf("%d tools over the limit of %d per document", overflow, maxTools),
			Origin: src.Origin, URL: src.URL, Tab: src.Tab, At: now})
	}
	return tools, refused
}
