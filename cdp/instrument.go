package cdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// ErrNavigated is the error of a call whose document went away: the page
// navigated, reloaded, or its frame was removed.
var ErrNavigated = errors.New("the page navigated away")

// Sink receives what the browser learns about tabs and tools. *hub.Hub is
// one. Its methods are called with the browser's lock held, so that the
// events of a document reach the sink in order; they must not call back into
// the Browser.
type Sink interface {
	Update(d hub.Doc, tools []hub.Tool)
	DropDoc(key string)
	TabOpened(id, url, title string)
	TabClosed(id string)
}

// Limits bound what a page can hand to Go.
type Limits struct {
	// MaxTools is the most tools read from one document (default 200).
	MaxTools int
	// MaxDescription is the longest description, in characters (default 16 KiB).
	MaxDescription int
	// MaxSchema is the longest inputSchema, in characters of JSON (default 64 KiB).
	MaxSchema int
	// MaxResult is the longest result the page sends back (default 1 MiB).
	MaxResult int
}

func (l *Limits) defaults() {
	if l.MaxTools <= 0 {
		l.MaxTools = 200
	}
	if l.MaxDescription <= 0 {
		l.MaxDescription = 16 << 10
	}
	if l.MaxSchema <= 0 {
		l.MaxSchema = 64 << 10
	}
	if l.MaxResult <= 0 {
		l.MaxResult = 1 << 20
	}
}

// Options configures Instrument.
type Options struct {
	// Backend picks the WebMCP implementation (default auto).
	Backend polyfill.Backend
	// Limits bound what pages send.
	Limits Limits
	// ReloadExisting reloads the tabs that had loaded before we attached.
	ReloadExisting bool
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
}

// Browser follows every target of a browser, keeps the page script in each
// document, reports tools to a Sink, and runs tools. It implements
// hub.Browser.
type Browser struct {
	conn    *Conn
	sink    Sink
	opts    Options
	logger  *slog.Logger
	script  string
	nonce   string
	binding string
	callSeq atomic.Int64
	fatal   chan error

	mu      sync.Mutex
	targets map[target.SessionID]*targetState
	docs    map[string]*docState
	native  nativeCalls
	// inflight holds the contexts of the calls running in each tab.
	inflight map[string][]*context.Context
}

type targetState struct {
	sess     *Session
	targetID string
	tab      string // the top-level tab's target id
	kind     string // "page" or "iframe"
	contexts map[runtime.ExecutionContextID]*docState
	frames   map[cdpt.FrameID]frameInfo
	natives  map[cdpt.FrameID]*nativeDoc
	ready    chan struct{} // closed when setup is done
	url      string        // the URL when attached
}

type frameInfo struct{ url, origin string }

type docState struct {
	key      string
	t        *targetState
	ctxID    runtime.ExecutionContextID
	uniqueID string
	frameID  cdpt.FrameID
	origin   string
	url      string
	bridge   runtime.RemoteObjectID
	native   bool
	alive    bool
	busy     bool // a refresh loop runs
	dirty    bool // another refresh is needed
	refused  map[string]bool
}

type nativeDoc struct {
	key   string
	tools map[string]hub.Tool
	ids   map[webmcp.ToolID]string
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewBrowser returns a Browser over conn; Start begins following targets.
func NewBrowser(conn *Conn, opts Options) (*Browser, error) {
	if opts.Backend == "" {
		opts.Backend = polyfill.BackendAuto
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Limits.defaults()
	b := &Browser{
		conn:    conn,
		opts:    opts,
		logger:  opts.Logger,
		nonce:   randomHex(16),
		binding: "__webmcpCdp_" + randomHex(6),
		fatal:   make(chan error, 1),
		targets: make(map[target.SessionID]*targetState),
		docs:    make(map[string]*docState),
	}
	b.native.init()
	script, err := polyfill.Script(polyfill.Options{Nonce: b.nonce, Binding: b.binding, Backend: opts.Backend})
	if err != nil {
		return nil, err
	}
	b.script = script
	return b, nil
}

// Start sets up auto-attach and starts reporting to sink. Tabs that exist
// already are attached too; new ones are paused until the page script is in
// place.
func (b *Browser) Start(ctx context.Context, sink Sink) error {
	b.sink = sink
	bs := b.conn.Browser()
	bs.SetHandler(b.onBrowserEvent)
	if err := bs.Call(ctx, target.CommandSetDiscoverTargets, &target.SetDiscoverTargetsParams{Discover: true}, nil); err != nil {
		return fmt.Errorf("turning on target discovery: %w", err)
	}
	params := &target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true)}
	params.Filter = append(params.Filter, struct {
		Exclude bool   `json:"exclude"`
		Type    string `json:"type,omitempty,omitzero"`
	}{Type: "page"})
	if err := bs.Call(ctx, target.CommandSetAutoAttach, params, nil); err != nil {
		return fmt.Errorf("turning on auto-attach: %w", err)
	}
	return nil
}

// Fatal delivers an error that makes going on pointless (such as --backend
// native on a browser without WebMCP).
func (b *Browser) Fatal() <-chan error { return b.fatal }

func ptr[T any](v T) *T { return &v }

func (b *Browser) onBrowserEvent(msg *cdproto.Message) {
	switch msg.Method {
	case cdproto.EventTargetAttachedToTarget:
		b.onAttached(msg.Params, nil)
	case cdproto.EventTargetDetachedFromTarget:
		b.onDetached(msg.Params)
	case cdproto.EventTargetTargetInfoChanged:
		var ev target.EventTargetInfoChanged
		if jsonv2.Unmarshal(msg.Params, &ev) != nil || ev.TargetInfo == nil || ev.TargetInfo.Type != "page" {
			return
		}
		b.mu.Lock()
		for _, t := range b.targets {
			if t.kind == "page" && t.targetID == string(ev.TargetInfo.TargetID) {
				b.reportTabLocked(t, ev.TargetInfo.URL, ev.TargetInfo.Title)
			}
		}
		b.mu.Unlock()
	}
}

// onAttached registers a new session (on the reader goroutine, before any of
// its messages is read) and runs its setup.
func (b *Browser) onAttached(params jsonv2.Value, parent *targetState) {
	var ev target.EventAttachedToTarget
	if err := jsonv2.Unmarshal(params, &ev); err != nil || ev.TargetInfo == nil {
		return
	}
	kind := ev.TargetInfo.Type
	if kind != "page" && kind != "iframe" {
		return
	}
	sess := b.conn.Attach(ev.SessionID)
	t := &targetState{
		sess:     sess,
		targetID: string(ev.TargetInfo.TargetID),
		tab:      string(ev.TargetInfo.TargetID),
		kind:     kind,
		contexts: make(map[runtime.ExecutionContextID]*docState),
		frames:   make(map[cdpt.FrameID]frameInfo),
		natives:  make(map[cdpt.FrameID]*nativeDoc),
		ready:    make(chan struct{}),
		url:      ev.TargetInfo.URL,
	}
	if parent != nil {
		t.tab = parent.tab
	}
	sess.SetHandler(func(m *cdproto.Message) { b.onTargetEvent(t, m) })
	b.mu.Lock()
	b.targets[ev.SessionID] = t
	if kind == "page" {
		b.reportTabLocked(t, ev.TargetInfo.URL, ev.TargetInfo.Title)
	}
	b.mu.Unlock()
	b.logger.Debug("attached", "type", kind, "target", t.targetID, "url", ev.TargetInfo.URL, "paused", ev.WaitingForDebugger)
	existing := !ev.WaitingForDebugger && ev.TargetInfo.URL != "" && ev.TargetInfo.URL != "about:blank"
	go b.setup(t, existing)
}

// reportTabLocked tells the sink about a tab once it shows a page: empty
// tabs (the one a launched browser starts with, a popup before its first
// navigation) get no tab number.
func (b *Browser) reportTabLocked(t *targetState, url, title string) {
	if url == "" || url == "about:blank" {
		return
	}
	b.sink.TabOpened(t.tab, url, title)
}

// setup sends the per-target commands pipelined, in the order that keeps
// every early registration (NOTES-cdp.md): Runtime.enable before the
// binding, Page.enable before the script, the script with runImmediately,
// auto-attach for out-of-process frames, WebMCP, and only then resume.
func (b *Browser) setup(t *targetState, existing bool) {
	defer close(t.ready)
	type step struct {
		method string
		params any
	}
	steps := []step{
		{runtime.CommandEnable, nil},
		{runtime.CommandAddBinding, &runtime.AddBindingParams{Name: b.binding}},
		{page.CommandEnable, nil},
		{page.CommandAddScriptToEvaluateOnNewDocument, &page.AddScriptToEvaluateOnNewDocumentParams{Source: b.script, RunImmediately: ptr(true)}},
	}
	frames := &target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true)}
	frames.Filter = append(frames.Filter, struct {
		Exclude bool   `json:"exclude"`
		Type    string `json:"type,omitempty,omitzero"`
	}{Type: "iframe"})
	steps = append(steps, step{target.CommandSetAutoAttach, frames})
	if b.opts.Backend != polyfill.BackendPolyfill {
		steps = append(steps, step{webmcp.CommandEnable, nil})
	}
	steps = append(steps, step{runtime.CommandRunIfWaitingForDebugger, nil})
	pending := make([]*Pending, 0, len(steps))
	for _, s := range steps {
		p, err := t.sess.Send(s.method, s.params)
		if err != nil {
			b.logger.Debug("setting up a target failed", "target", t.targetID, "method", s.method, "err", err)
			return
		}
		pending = append(pending, p)
	}
	for i, p := range pending {
		if err := p.Wait(context.Background(), nil); err != nil {
			level := slog.LevelWarn
			if steps[i].method == webmcp.CommandEnable || errors.Is(err, ErrTargetGone) {
				level = slog.LevelDebug
			}
			b.logger.Log(context.Background(), level, "a setup step failed", "target", t.targetID, "err", err)
		}
	}
	if existing && t.kind == "page" {
		if b.opts.ReloadExisting {
			b.logger.Info("reloading a tab that loaded before we attached", "target", t.targetID)
			t.sess.Send(page.CommandReload, &page.ReloadParams{})
		} else {
			b.logger.Warn("this tab loaded before we attached: tools it registered before now are unseen until it reloads (use --reload-existing)", "target", t.targetID)
		}
	}
}

func (b *Browser) onDetached(params jsonv2.Value) {
	var ev target.EventDetachedFromTarget
	if jsonv2.Unmarshal(params, &ev) != nil {
		return
	}
	b.mu.Lock()
	t, ok := b.targets[ev.SessionID]
	if ok {
		delete(b.targets, ev.SessionID)
		for _, d := range t.contexts {
			b.dropDocLocked(d)
		}
		for _, nd := range t.natives {
			b.sink.DropDoc(nd.key)
		}
		if t.kind == "page" {
			b.sink.TabClosed(t.tab)
		}
	}
	b.mu.Unlock()
	b.conn.detach(ev.SessionID)
	if ok {
		b.logger.Debug("detached", "type", t.kind, "target", t.targetID)
	}
}

func (b *Browser) dropDocLocked(d *docState) {
	d.alive = false
	delete(d.t.contexts, d.ctxID)
	delete(b.docs, d.key)
	b.sink.DropDoc(d.key)
}

type auxData struct {
	IsDefault bool   `json:"isDefault"`
	FrameID   string `json:"frameId"`
}

func (b *Browser) onTargetEvent(t *targetState, msg *cdproto.Message) {
	switch msg.Method {
	case cdproto.EventRuntimeExecutionContextCreated:
		var ev runtime.EventExecutionContextCreated
		if jsonv2.Unmarshal(msg.Params, &ev) != nil || ev.Context == nil {
			return
		}
		var aux auxData
		jsonv2.Unmarshal(ev.Context.AuxData, &aux)
		if !aux.IsDefault {
			return
		}
		d := &docState{
			key:      string(t.sess.ID()) + "/" + ev.Context.UniqueID,
			t:        t,
			ctxID:    ev.Context.ID,
			uniqueID: ev.Context.UniqueID,
			frameID:  cdpt.FrameID(aux.FrameID),
			origin:   ev.Context.Origin,
			alive:    true,
		}
		b.mu.Lock()
		t.contexts[d.ctxID] = d
		b.docs[d.key] = d
		b.mu.Unlock()
	case cdproto.EventRuntimeExecutionContextDestroyed:
		var ev runtime.EventExecutionContextDestroyed
		if jsonv2.Unmarshal(msg.Params, &ev) != nil {
			return
		}
		b.mu.Lock()
		for _, d := range t.contexts {
			if d.uniqueID == ev.ExecutionContextUniqueID {
				b.dropDocLocked(d)
			}
		}
		b.mu.Unlock()
	case cdproto.EventRuntimeExecutionContextsCleared:
		b.mu.Lock()
		for _, d := range t.contexts {
			b.dropDocLocked(d)
		}
		b.mu.Unlock()
	case cdproto.EventRuntimeConsoleAPICalled:
		b.onConsole(t, msg.Params)
	case cdproto.EventRuntimeBindingCalled:
		var ev runtime.EventBindingCalled
		if jsonv2.Unmarshal(msg.Params, &ev) != nil || ev.Name != b.binding {
			return
		}
		b.mu.Lock()
		d := t.contexts[ev.ExecutionContextID]
		b.mu.Unlock()
		if d != nil {
			go b.refresh(d)
		}
	case cdproto.EventPageFrameNavigated:
		var ev page.EventFrameNavigated
		if jsonv2.Unmarshal(msg.Params, &ev) != nil || ev.Frame == nil {
			return
		}
		b.mu.Lock()
		t.frames[ev.Frame.ID] = frameInfo{url: ev.Frame.URL, origin: ev.Frame.SecurityOrigin}
		// Native WebMCP sends no toolsRemoved on navigation.
		if nd := t.natives[ev.Frame.ID]; nd != nil {
			delete(t.natives, ev.Frame.ID)
			b.sink.DropDoc(nd.key)
		}
		b.mu.Unlock()
	case cdproto.EventPageFrameDetached:
		var ev page.EventFrameDetached
		if jsonv2.Unmarshal(msg.Params, &ev) != nil {
			return
		}
		b.mu.Lock()
		delete(t.frames, ev.FrameID)
		if nd := t.natives[ev.FrameID]; nd != nil {
			delete(t.natives, ev.FrameID)
			b.sink.DropDoc(nd.key)
		}
		b.mu.Unlock()
	case cdproto.EventPageDomContentEventFired, cdproto.EventPageLoadEventFired:
		// A safety net for a lost "changed" ping: in a new document the
		// binding can arrive after the page script ran (seen in about one
		// new tab in fifty), so read the tools again when the page has
		// parsed and when it has loaded.
		b.mu.Lock()
		var docs []*docState
		for _, d := range t.contexts {
			if !d.native {
				docs = append(docs, d)
			}
		}
		b.mu.Unlock()
		for _, d := range docs {
			go b.refresh(d)
		}
	case cdproto.EventPageJavascriptDialogOpening:
		b.onDialog(t, msg.Params)
	case cdproto.EventTargetAttachedToTarget:
		b.onAttached(msg.Params, t)
	case cdproto.EventTargetDetachedFromTarget:
		b.onDetached(msg.Params)
	case cdproto.EventWebMCPToolsAdded, cdproto.EventWebMCPToolsRemoved:
		b.onNativeTools(t, msg)
	case cdproto.EventWebMCPToolResponded:
		var ev webmcp.EventToolResponded
		if jsonv2.Unmarshal(msg.Params, &ev) == nil {
			b.native.responded(&ev)
		}
	}
}

// onConsole takes the bridge from the first marked console.debug message of
// a document. The page script runs before any script of the page, so the
// first marked message is ours; the nonce keeps a page that ran earlier (in
// attach mode) from handing over a fake.
func (b *Browser) onConsole(t *targetState, params jsonv2.Value) {
	var ev runtime.EventConsoleAPICalled
	if jsonv2.Unmarshal(params, &ev) != nil || ev.Type != runtime.ConsoleAPICalledTypeDebug || len(ev.Args) != 2 {
		return
	}
	var marker string
	if ev.Args[0].Type != runtime.RemoteObjectTypeString || jsonv2.Unmarshal(ev.Args[0].Value, &marker) != nil || marker != polyfill.BridgeMarker+b.nonce {
		return
	}
	b.mu.Lock()
	d := t.contexts[ev.ExecutionContextID]
	if d == nil || d.bridge != "" || ev.Args[1].ObjectID == "" {
		b.mu.Unlock()
		return
	}
	d.bridge = "pending"
	b.mu.Unlock()
	go b.adopt(d, ev.Args[1].ObjectID)
}

// adopt moves the bridge handle out of the console's object group (which
// console.clear() releases) into our own, reads the document's info, and
// reads its tools.
func (b *Browser) adopt(d *docState, handle runtime.RemoteObjectID) {
	ctx := context.Background()
	res, err := cdpt.Call(ctx, d.t.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(){return this}",
		ObjectID:            handle,
		ObjectGroup:         "webmcp-cdp",
	})
	if err != nil || res.Result == nil || res.Result.ObjectID == "" {
		b.logger.Debug("adopting a page bridge failed", "err", err)
		return
	}
	var info struct {
		Native bool   `json:"native"`
		URL    string `json:"url"`
	}
	if err := b.callBridge(ctx, d.t.sess, res.Result.ObjectID, "function(){return this.info()}", nil, &info); err != nil {
		b.logger.Debug("reading a page's info failed", "err", err)
		return
	}
	b.mu.Lock()
	d.bridge = res.Result.ObjectID
	d.native = info.Native
	d.url = info.URL
	alive := d.alive
	b.mu.Unlock()
	if !alive {
		return
	}
	if b.opts.Backend == polyfill.BackendNative && !info.Native {
		select {
		case b.fatal <- fmt.Errorf("--backend native: %s has no native document.modelContext; start Chromium 156 or later with --enable-features=WebMCP, or use --backend auto", info.URL):
		default:
		}
		return
	}
	b.logger.Debug("page bridge adopted", "target", d.t.targetID, "url", info.URL, "native", info.Native)
	if !info.Native {
		b.refresh(d)
	}
}

// callBridge calls fn on a bridge object and decodes the JSON string it
// returns into out.
func (b *Browser) callBridge(ctx context.Context, s *Session, obj runtime.RemoteObjectID, fn string, args []any, out any) error {
	callArgs := make([]*runtime.CallArgument, 0, len(args))
	for _, a := range args {
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: v})
	}
	res, err := cdpt.Call(ctx, s, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            obj,
		Arguments:           callArgs,
		AwaitPromise:        ptr(true),
		ReturnByValue:       ptr(true),
		Silent:              ptr(true),
	})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("the page script failed: %s", exceptionText(res.ExceptionDetails))
	}
	var s2 string
	if res.Result == nil || jsonv2.Unmarshal(res.Result.Value, &s2) != nil {
		return errors.New("the page script returned no JSON string")
	}
	if err := json.Unmarshal([]byte(s2), out); err != nil {
		return fmt.Errorf("the page script returned bad JSON: %w", err)
	}
	return nil
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
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	InputSchema *string        `json:"inputSchema"`
	Annotations map[string]any `json:"annotations"`
	Refused     string         `json:"refused"`
}

// refresh reads the tools of a document and hands them to the sink. Calls
// made while a read runs fold into one more read.
func (b *Browser) refresh(d *docState) {
	b.mu.Lock()
	if d.native {
		b.mu.Unlock()
		return
	}
	if d.busy || d.bridge == "" || d.bridge == "pending" {
		// A read runs, or the bridge is being adopted (whose first read
		// follows): read once more after it, so no change is lost.
		d.dirty = true
		b.mu.Unlock()
		return
	}
	d.busy = true
	b.mu.Unlock()
	for {
		var list struct {
			URL      string     `json:"url"`
			Tools    []pageTool `json:"tools"`
			Overflow int        `json:"overflow"`
		}
		l := b.opts.Limits
		err := b.callBridge(context.Background(), d.t.sess, d.bridge, "function(a,b,c){return this.list(a,b,c)}",
			[]any{l.MaxTools, l.MaxDescription, l.MaxSchema}, &list)
		b.mu.Lock()
		if !d.alive {
			d.busy = false
			b.mu.Unlock()
			return
		}
		if err != nil {
			b.logger.Debug("reading a page's tools failed", "url", d.url, "err", err)
		} else {
			d.url = list.URL
			if list.Overflow > 0 {
				b.refuseLocked(d, "*", fmt.Sprintf("%d tools over the limit of %d per document", list.Overflow, l.MaxTools))
			}
			tools := make([]hub.Tool, 0, len(list.Tools))
			for _, pt := range list.Tools {
				tl, reason := b.checkTool(pt)
				if reason != "" {
					b.refuseLocked(d, pt.Name, reason)
					continue
				}
				tools = append(tools, tl)
			}
			b.logger.Debug("read a page's tools", "target", d.t.targetID, "url", d.url, "tools", len(tools))
			b.sink.Update(b.docOf(d), tools)
		}
		again := d.dirty
		d.dirty = false
		d.busy = again
		b.mu.Unlock()
		if !again {
			return
		}
	}
}

func (b *Browser) docOf(d *docState) hub.Doc {
	return hub.Doc{Key: d.key, Tab: d.t.tab, Frame: string(d.frameID), Origin: d.origin, URL: d.url, Backend: "polyfill"}
}

// refuseLocked logs a refused tool once per document.
func (b *Browser) refuseLocked(d *docState, name, reason string) {
	if d.refused == nil {
		d.refused = make(map[string]bool)
	}
	k := name + "\x00" + reason
	if d.refused[k] || len(d.refused) > 100 {
		return
	}
	d.refused[k] = true
	b.logger.Warn("refused a tool", "tool", name, "url", d.url, "reason", reason)
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// checkTool validates a tool as read from a page, and returns it for the
// hub, or the reason it is refused.
func (b *Browser) checkTool(pt pageTool) (hub.Tool, string) {
	if pt.Refused != "" {
		return hub.Tool{}, pt.Refused
	}
	if !toolNameRE.MatchString(pt.Name) {
		return hub.Tool{}, "its name is not 1-128 characters of A-Z a-z 0-9 _ . -"
	}
	if pt.Description == "" {
		return hub.Tool{}, "its description is empty"
	}
	if len(pt.Description) > b.opts.Limits.MaxDescription*4 || len(pt.Title) > 1024 {
		return hub.Tool{}, "its description or title is too long"
	}
	var schema json.RawMessage
	if pt.InputSchema != nil {
		s, reason := objectSchema([]byte(*pt.InputSchema))
		if reason != "" {
			return hub.Tool{}, reason
		}
		schema = s
	}
	ann := make(map[string]any, len(pt.Annotations))
	for k, v := range pt.Annotations {
		if len(ann) >= 16 || len(k) > 64 {
			break
		}
		if s, ok := v.(string); ok && len(s) > 256 {
			continue
		}
		ann[k] = v
	}
	return hub.Tool{Name: pt.Name, Title: pt.Title, Description: pt.Description, InputSchema: schema, Annotations: ann}, ""
}

// objectSchema checks that an inputSchema is a JSON object whose type is
// "object" (MCP requires it), adding the type when the page left it out.
func objectSchema(raw []byte) (json.RawMessage, string) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, "its inputSchema is not a JSON object"
	}
	switch ty := m["type"].(type) {
	case nil:
		m["type"] = "object"
		out, _ := json.Marshal(m)
		return out, ""
	case string:
		if ty == "object" {
			return raw, ""
		}
	}
	return nil, fmt.Sprintf("its inputSchema has type %v; MCP tools take an object", m["type"])
}

// Invoke runs a tool in a document. It implements hub.Browser.
func (b *Browser) Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (hub.Result, error) {
	if strings.Contains(docKey, "/native/") {
		return b.invokeNative(ctx, docKey, tool, input)
	}
	b.mu.Lock()
	d := b.docs[docKey]
	var bridge runtime.RemoteObjectID
	if d != nil {
		bridge = d.bridge
	}
	b.mu.Unlock()
	if d == nil || !d.alive {
		return hub.Result{}, ErrNavigated
	}
	defer b.track(ctx, d.t.tab)()
	callID := strconv.FormatInt(b.callSeq.Add(1), 10)
	var out struct {
		OK        bool   `json:"ok"`
		Kind      string `json:"kind"`
		Value     string `json:"value"`
		Truncated int    `json:"truncated"`
		Error     string `json:"error"`
	}
	err := b.callBridge(ctx, d.t.sess, bridge, "function(n,i,c,m){return this.call(n,i,c,m)}",
		[]any{tool, string(input), callID, b.opts.Limits.MaxResult}, &out)
	if err != nil {
		if ctx.Err() != nil {
			// Abort the page's call so it frees its slot; nobody waits for it.
			d.t.sess.Send(runtime.CommandCallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: "function(c,r){this.cancel(c,r)}",
				ObjectID:            bridge,
				Arguments:           []*runtime.CallArgument{{Value: jsonString(callID)}, {Value: jsonString(context.Cause(ctx).Error())}},
			})
			return hub.Result{}, ctx.Err()
		}
		return hub.Result{}, b.callError(d, err)
	}
	if !out.OK {
		return hub.Result{Err: out.Error}, nil
	}
	return hub.Result{Kind: out.Kind, Value: out.Value, Truncated: out.Truncated}, nil
}

func jsonString(s string) jsonv2.Value {
	b, _ := json.Marshal(s)
	return b
}

// callError words the failure of a call whose document may have gone.
func (b *Browser) callError(d *docState, err error) error {
	if errors.Is(err, ErrTargetGone) || errors.Is(err, ErrClosed) {
		return err
	}
	b.mu.Lock()
	alive := d.alive
	b.mu.Unlock()
	msg := err.Error()
	if !alive || strings.Contains(msg, "context was destroyed") || strings.Contains(msg, "Cannot find context") || strings.Contains(msg, "Could not find object") {
		return ErrNavigated
	}
	return err
}
