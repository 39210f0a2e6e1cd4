package cdp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file follows targets: auto-attach, the pipelined setup of each new
// session, and the events that create and destroy documents.

// setupTimeout bounds the wait for a target's setup commands.
const setupTimeout = 30 * time.Second

func (b *Browser) onBrowserEvent(msg *cdproto.Message) {
	switch msg.Method {
	case cdproto.EventTargetAttachedToTarget:
		b.onAttached(msg.Params, nil)
	case cdproto.EventTargetDetachedFromTarget:
		b.onDetached(msg.Params)
	case cdproto.EventTargetTargetCrashed:
		var ev target.EventTargetCrashed
		if decode(msg.Params, &ev) == nil {
			b.onCrashed(string(ev.TargetID), ev.Status)
		}
	case cdproto.EventTargetTargetInfoChanged:
		var ev target.EventTargetInfoChanged
		if decode(msg.Params, &ev) != nil || ev.TargetInfo == nil || ev.TargetInfo.Type != "page" {
			return
		}
		b.mu.Lock()
		for _, t := range b.targets {
			if t.kind == "page" && t.targetID == string(ev.TargetInfo.TargetID) {
				// A prerendered page that is activated becomes a tab.
				t.prerender = ev.TargetInfo.Subtype == subtypePrerender
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
	if err := decode(params, &ev); err != nil || ev.TargetInfo == nil {
		return
	}
	kind := ev.TargetInfo.Type
	if why := unwantedTarget(ev.TargetInfo); why != "" {
		b.release(ev.SessionID, ev.WaitingForDebugger, parent, why, ev.TargetInfo)
		return
	}
	if parent == nil && b.leftToOtherContext(&ev) { // (contexts.go)
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
		// A prerendered page runs the page script (its tools are there
		// when it is activated) but is no tab until then.
		prerender: ev.TargetInfo.Subtype == subtypePrerender,
	}
	t.parentFrame = ev.TargetInfo.ParentFrameID
	if parent != nil {
		t.tab = parent.tab
	}
	sess.SetHandler(func(m *cdproto.Message) { b.onTargetEvent(t, m) })
	b.mu.Lock()
	b.targets[ev.SessionID] = t
	if kind == "page" {
		b.reportTabLocked(t, ev.TargetInfo.URL, ev.TargetInfo.Title)
	}
	close(b.attached)
	b.attached = make(chan struct{})
	b.mu.Unlock()
	b.logger.Debug("attached", "type", kind, "url", ev.TargetInfo.URL, "title", ev.TargetInfo.Title, "target", t.targetID, "paused", ev.WaitingForDebugger)
	existing := !ev.WaitingForDebugger && ev.TargetInfo.URL != "" && ev.TargetInfo.URL != "about:blank"
	go b.setup(t, existing)
}

// reportTabLocked tells the sink about a tab once it shows a page: empty
// tabs (the one a launched browser starts with, a popup before its first
// navigation) get no tab number.
func (b *Browser) reportTabLocked(t *targetState, url, title string) {
	if url == "" || url == "about:blank" || t.prerender || internalURL(url) {
		// A tab that went to chrome://settings is no tab of pages any
		// more (it stays followed: it may navigate to a site again).
		if t.shown {
			t.shown = false
			b.sink.TabClosed(t.tab)
		}
		return
	}
	t.shown = true
	b.sink.TabOpened(t.tab, url, title)
}

// setup sends the per-target commands pipelined, in the order that keeps
// every early registration (NOTES-cdp.md): Runtime.enable before the
// binding, Page.enable before the script, the script with runImmediately,
// auto-attach for out-of-process frames, WebMCP, and only then resume.
func (b *Browser) setup(t *targetState, existing bool) {
	start := time.Now()
	defer func() {
		b.mu.Lock()
		close(t.ready)
		b.progressLocked()
		b.mu.Unlock()
		b.logger.Debug("set up a target", "type", t.kind, "url", t.url, "target", t.targetID, "took", time.Since(start).Round(time.Millisecond))
	}()
	if existing && t.kind == "page" && !b.opts.ReloadExisting {
		b.logger.Info("this tab loaded before we attached: its native WebMCP tools and a WebMCP polyfill of its own are read live; tools it gave no API for appear after a reload (--reload-existing reloads such tabs)", "url", t.url, "target", t.targetID)
		b.markPreexisting(t)
	}
	type step struct {
		method string
		params any
	}
	steps := []step{
		{runtime.CommandEnable, nil},
		{runtime.CommandAddBinding, &runtime.AddBindingParams{Name: b.binding}},
		{page.CommandEnable, nil},
		{page.CommandAddScriptToEvaluateOnNewDocument, b.scriptParams},
	}
	us := b.beginUserscripts(t, len(steps)) // after the page API (userscripts_reload.go)
	defer b.endUserscripts(us)
	for _, p := range us.params {
		steps = append(steps, step{page.CommandAddScriptToEvaluateOnNewDocument, p})
	}
	frames := &target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true)}
	frames.Filter = append(frames.Filter, struct {
		Exclude bool   `json:"exclude"`
		Type    string `json:"type,omitempty,omitzero"`
	}{Type: "iframe"})
	steps = append(steps, step{target.CommandSetAutoAttach, frames})
	if b.opts.UserAgent != "" {
		steps = append(steps, step{emulation.CommandSetUserAgentOverride, &emulation.SetUserAgentOverrideParams{UserAgent: b.opts.UserAgent}})
	}
	if b.opts.ViewportWidth > 0 && t.kind == "page" {
		steps = append(steps, step{emulation.CommandSetDeviceMetricsOverride, &emulation.SetDeviceMetricsOverrideParams{Width: int64(b.opts.ViewportWidth), Height: int64(b.opts.ViewportHeight)}})
	}
	if b.opts.Backend != polyfill.BackendPolyfill {
		steps = append(steps, step{webmcp.CommandEnable, nil})
	}
	// Network carries the Permissions-Policy headers of polyfilled
	// documents (permissions.go) and, in CI mode, the load and request
	// failures (diagnose.go): enabled once, keeping no payloads.
	netOn := b.opts.Backend != polyfill.BackendNative
	if netOn {
		steps = append(steps, step{network.CommandEnable, policyNetwork()})
	}
	for _, m := range b.diagnosisSteps() {
		if m == network.CommandEnable {
			if netOn {
				continue
			}
			steps = append(steps, step{m, policyNetwork()})
			continue
		}
		steps = append(steps, step{m, nil})
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
	// A browser that never answers a setup step (seen with Chromium 156)
	// must not hold this goroutine, or the tab's ready channel, for ever.
	wctx, cancel := context.WithTimeout(b.life, setupTimeout)
	defer cancel()
	for i, p := range pending {
		var res any
		var added page.AddScriptToEvaluateOnNewDocumentResult
		if us.holds(i) {
			res = &added
		}
		if err := p.Wait(wctx, res); err != nil {
			level := slog.LevelWarn
			if steps[i].method == webmcp.CommandEnable || errors.Is(err, ErrTargetGone) || errors.Is(err, ErrClosed) {
				level = slog.LevelDebug
			}
			b.logger.Log(b.life, level, "a setup step failed", "url", t.url, "target", t.targetID, "err", err)
		} else if us.holds(i) {
			us.ids = append(us.ids, added.Identifier)
		}
	}
	if existing && t.kind == "page" && !b.opts.ReloadExisting {
		b.mu.Lock()
		b.noteRunsLocked(t, t.url, true) // the open document ran them (runImmediately)
		b.mu.Unlock()
	}
	if existing && t.kind == "page" && b.opts.ReloadExisting {
		b.logger.Info("reloading a tab that loaded before we attached", "url", t.url, "target", t.targetID)
		t.sess.Send(page.CommandReload, &page.ReloadParams{})
	}
}

func (b *Browser) onDetached(params jsonv2.Value) {
	var ev target.EventDetachedFromTarget
	if decode(params, &ev) != nil {
		return
	}
	b.mu.Lock()
	t, ok := b.targets[ev.SessionID]
	if ok {
		delete(b.targets, ev.SessionID)
		b.progressLocked()
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
		b.logger.Debug("detached", "type", t.kind, "url", t.url, "target", t.targetID)
	}
}

// onCrashed handles a target whose renderer died: its documents (and so
// their tools) go, and the calls running in it fail at once with
// core.ErrPageCrashed instead of waiting for their timeout. The target
// stays attached: a reload gives it a new renderer, and the page script
// (registered for every new document) brings its tools back.
func (b *Browser) onCrashed(targetID, status string) {
	b.mu.Lock()
	for _, t := range b.targets {
		if t.targetID != targetID {
			continue
		}
		b.logger.Warn("a page crashed; its tools are gone until it is reloaded (webmcp_reload_tab)", "url", t.url, "status", status)
		for _, d := range t.contexts {
			b.dropDocLocked(d)
		}
		for f, nd := range t.natives {
			delete(t.natives, f)
			b.sink.DropDoc(nd.key)
		}
		for rc := range t.calls {
			rc.cancel(core.ErrPageCrashed)
		}
	}
	b.mu.Unlock()
}

func (b *Browser) dropDocLocked(d *docState) {
	d.alive = false
	b.progressLocked()
	delete(d.t.contexts, d.ctxID)
	delete(b.docs, d.key)
	b.sink.DropDoc(d.key)
	b.endPageServersLocked(d.key)
	b.dropExposureLocked(d)
}

type auxData struct {
	IsDefault bool   `json:"isDefault"`
	FrameID   string `json:"frameId"`
}

func (b *Browser) onTargetEvent(t *targetState, msg *cdproto.Message) {
	if b.diag.on.Load() {
		b.diagnoseEvent(t, msg)
	}
	switch msg.Method {
	case cdproto.EventRuntimeExecutionContextCreated:
		var ev runtime.EventExecutionContextCreated
		if decode(msg.Params, &ev) != nil || ev.Context == nil {
			return
		}
		var aux auxData
		decode(ev.Context.AuxData, &aux)
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
		b.navs.created(d)
	case cdproto.EventRuntimeExecutionContextDestroyed:
		var ev runtime.EventExecutionContextDestroyed
		if decode(msg.Params, &ev) != nil {
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
	case cdproto.EventRuntimeExceptionThrown:
		b.onException(t, msg.Params) // (userscripts.go)
	case cdproto.EventRuntimeBindingCalled:
		var ev runtime.EventBindingCalled
		if decode(msg.Params, &ev) != nil || ev.Name != b.binding {
			return
		}
		b.mu.Lock()
		d := t.contexts[ev.ExecutionContextID]
		if d != nil && ev.Payload != pageServerPing && ev.Payload != exposurePing {
			d.queued++ // before the goroutine runs: settle.go sees the read coming
		}
		b.mu.Unlock()
		if d != nil && ev.Payload == pageServerPing {
			go b.pullPageServers(d)
		} else if d != nil && ev.Payload == exposurePing {
			go b.pullRelay(d)
		} else if d != nil {
			go b.refresh(d)
		}
	case cdproto.EventPageFrameNavigated:
		var ev page.EventFrameNavigated
		if decode(msg.Params, &ev) != nil || ev.Frame == nil {
			return
		}
		b.mu.Lock()
		if ev.Frame.ParentID == "" && t.kind == "page" {
			b.newTopDocumentLocked(t)
		}
		t.frames[ev.Frame.ID] = frameInfo{url: ev.Frame.URL, origin: ev.Frame.SecurityOrigin}
		if ev.Frame.UnreachableURL == "" { // an error page runs no userscript
			b.noteRunsLocked(t, ev.Frame.URL+ev.Frame.URLFragment, ev.Frame.ParentID == "" && t.kind == "page") // (userscripts_reload.go)
		}
		// Native WebMCP sends no toolsRemoved on navigation.
		if nd := t.natives[ev.Frame.ID]; nd != nil {
			delete(t.natives, ev.Frame.ID)
			b.sink.DropDoc(nd.key)
		}
		b.mu.Unlock()
	case cdproto.EventPageFrameAttached:
		b.mu.Lock()
		b.framesChangedLocked(t) // (exposure.go)
		b.mu.Unlock()
	case cdproto.EventPageFrameDetached:
		var ev page.EventFrameDetached
		if decode(msg.Params, &ev) != nil {
			return
		}
		b.mu.Lock()
		b.framesChangedLocked(t)
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
		// parsed and when it has loaded, unless a list said the page
		// script holds the binding (then every change since pinged).
		b.mu.Lock()
		var docs []*docState
		for _, d := range t.contexts {
			if !d.native && !d.bound {
				d.queued++
				docs = append(docs, d)
			}
		}
		b.mu.Unlock()
		for _, d := range docs {
			go b.refresh(d)
		}
	case cdproto.EventNetworkResponseReceived:
		b.onResponse(msg.Params)
	case cdproto.EventPageJavascriptDialogOpening:
		b.onDialog(t, msg.Params)
	case cdproto.EventTargetAttachedToTarget:
		b.onAttached(msg.Params, t)
	case cdproto.EventTargetDetachedFromTarget:
		b.onDetached(msg.Params)
	case cdproto.EventWebMCPToolsAdded, cdproto.EventWebMCPToolsRemoved:
		b.onNativeTools(t, msg)
	case cdproto.EventWebMCPToolInvoked:
		// Only to time native executions (nativeCalls); the event carries
		// the call's input, so it is decoded only then.
		if b.opts.PageTimes {
			at := time.Now()
			var ev webmcp.EventToolInvoked
			if decode(msg.Params, &ev) == nil {
				b.native.invoked(ev.InvocationID, at)
			}
		}
	case cdproto.EventWebMCPToolResponded:
		var ev webmcp.EventToolResponded
		if decode(msg.Params, &ev) == nil {
			b.native.responded(&ev)
		}
	}
}

// ---- a real browser's targets ---------------------------------------------
//
// A person's browser holds targets a fresh one never has: extension pages
// and workers, DevTools windows, chrome:// pages, the PDF viewer (an
// extension frame inside the tab), prerendered pages. None of them is a tab
// of web pages, none may hold up readiness, and one left paused waiting for
// a debugger would hang there (Playwright's connectOverCDP does): each is
// resumed and left at once, or followed without being shown.

// subtypePrerender is TargetInfo.Subtype of a prerendered page.
const subtypePrerender = "prerender"

// unwantedTarget says why a target is left alone at once ("" to follow
// it): it is not a page or frame, it is a DevTools window, or a frame of
// the browser or an extension (the PDF viewer is one): none becomes a web
// page. chrome:// and chrome-extension:// tabs are followed (a new tab
// page, the browser's or an extension's, navigates to sites) but not shown.
func unwantedTarget(info *target.Info) string {
	if info.Type != "page" && info.Type != "iframe" {
		return "a " + string(info.Type) + " target"
	}
	scheme, _, _ := strings.Cut(info.URL, ":")
	if strings.EqualFold(scheme, "devtools") {
		return "a DevTools window"
	}
	if info.Type == "iframe" && internalURL(info.URL) {
		return "a browser-internal or extension frame"
	}
	return ""
}

// internalURL reports a browser page (chrome://settings, the new tab page,
// an error page, view-source:), which is never a tab of web pages.
func internalURL(u string) bool {
	scheme, _, _ := strings.Cut(u, ":")
	switch strings.ToLower(scheme) {
	case "chrome", "chrome-untrusted", "chrome-search", "chrome-error", "chrome-extension",
		"devtools", "edge", "brave", "view-source", "extension":
		return true
	}
	return false
}

// release lets go of a target we do not follow: it resumes it if it waits
// for a debugger (auto-attach paused it for us), then detaches, so the
// target runs exactly as without us. Nothing waits for the answers.
func (b *Browser) release(id target.SessionID, waiting bool, parent *targetState, why string, info *target.Info) {
	b.logger.Debug("leaving a target alone", "why", why, "type", info.Type, "url", info.URL, "paused", waiting)
	sess := b.conn.Attach(id)
	if waiting {
		if _, err := sess.Send(runtime.CommandRunIfWaitingForDebugger, nil); err != nil {
			b.logger.Debug("resuming a paused target failed", "target", info.TargetID, "err", err)
		}
	}
	owner := b.conn.Browser()
	if parent != nil {
		owner = parent.sess
	}
	if _, err := owner.Send(target.CommandDetachFromTarget, &target.DetachFromTargetParams{SessionID: id}); err != nil {
		b.logger.Debug("detaching from a target failed", "target", info.TargetID, "err", err)
	}
}

// PreexistingSink is a Sink that also learns which tabs show a document
// that loaded before we attached (before true), and when such a tab loads
// a new one (before false): tools its document registered through no API
// we can read (no native WebMCP, no polyfill of its own) appear only after
// a reload, which only the person or the agent may ask for. *hub.Hub is
// one. Its method is called like the Sink's, in order, with no lock held.
type PreexistingSink interface {
	TabLoadedBefore(id string, before bool)
}

// markPreexisting tells the sink that a shown tab loaded before we
// attached.
func (b *Browser) markPreexisting(t *targetState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t.loadedBefore = true
	if t.shown {
		b.sink.TabLoadedBefore(t.tab, true)
	}
}

// newTopDocumentLocked notes that a tab's main frame navigated: a tab that
// loaded before we attached now shows a document the page script saw from
// its start.
func (b *Browser) newTopDocumentLocked(t *targetState) {
	if !t.loadedBefore {
		return
	}
	t.loadedBefore = false
	b.sink.TabLoadedBefore(t.tab, false)
}
