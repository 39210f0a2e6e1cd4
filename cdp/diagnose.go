package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file is CI mode's view of a page: how its main document loaded (the
// HTTP status, a network error, the load event) and the errors it met
// (uncaught exceptions, console errors, failed requests), so that a page
// without tools can be explained. It costs nothing until EnableDiagnosis
// is called: only then does each target's setup enable the Network and Log
// domains, and only tabs opened with OpenPage are followed.

// The bounds of what one tab's diagnosis keeps: pages are untrusted, and a
// page that logs errors in a loop must not grow memory.
const (
	maxProblems    = 50
	maxProblemText = 500
	maxURLText     = 300
	// maxRequests bounds the requests whose URL is kept until they end
	// (Network.loadingFailed names no URL).
	maxRequests = 1024
	// diagnoseWait bounds the question to the page in Diagnose.
	diagnoseWait = 3 * time.Second
)

// diagnoses holds the followed tabs. Its lock is its own, never held while
// calling out.
type diagnoses struct {
	on   atomic.Bool
	mu   sync.Mutex
	tabs map[string]*tabDiag
}

type request struct {
	url  string
	main bool // the main frame's document
}

type tabDiag struct {
	load      core.PageLoad
	navigated bool // the main frame left about:blank
	problems  []core.PageProblem
	dropped   int
	requests  map[network.RequestID]request
	changed   chan struct{} // closed at the next change of load
}

// EnableDiagnosis makes the targets attached from now on report their
// network and log events, for OpenPage, PageLoad and Diagnose. CI mode
// calls it before it opens a page; the other modes never do, and pay
// nothing.
func (b *Browser) EnableDiagnosis() { b.diag.on.Store(true) }

// diagnosisSteps are the extra setup commands of a target when diagnosis is
// on.
func (b *Browser) diagnosisSteps() []string {
	if !b.diag.on.Load() {
		return nil
	}
	return []string{network.CommandEnable, cdplog.CommandEnable}
}

// OpenPage opens url in a new tab after applying setup to it, and follows
// the tab's load and errors (PageLoad, Diagnose) until ForgetPage. Like
// Open, it returns the tab's id with a *LoadError when the page could not
// load. It needs EnableDiagnosis.
func (b *Browser) OpenPage(ctx context.Context, url string, setup core.PageSetup) (string, error) {
	if !b.diag.on.Load() {
		return "", fmt.Errorf("opening %s: OpenPage needs EnableDiagnosis first", url)
	}
	tab, err := b.Open(ctx, "about:blank")
	if err != nil {
		return "", err
	}
	b.diag.mu.Lock()
	if b.diag.tabs == nil {
		b.diag.tabs = make(map[string]*tabDiag)
	}
	td := &tabDiag{requests: make(map[network.RequestID]request), changed: make(chan struct{})}
	b.diag.tabs[tab] = td
	b.diag.mu.Unlock()
	fail := func(err error) (string, error) {
		b.closeNewTab(ctx, tab)
		b.ForgetPage(tab)
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	if err := b.waitTab(ctx, tab); err != nil {
		return fail(err)
	}
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return fail(err)
	}
	if err := applySetup(ctx, s, url, setup); err != nil {
		return fail(err)
	}
	if err := b.Navigate(ctx, tab, url); err != nil {
		if le, ok := errors.AsType[*LoadError](err); ok {
			b.updateLoad(tab, func(l *core.PageLoad) {
				l.Err = le.Text
				if l.URL == "" {
					l.URL = url
				}
			})
			return tab, err
		}
		b.closeNewTab(ctx, tab)
		b.ForgetPage(tab)
		return "", err
	}
	return tab, nil
}

// applySetup sets a tab's viewport, headers and cookies.
func applySetup(ctx context.Context, s *Session, url string, setup core.PageSetup) error {
	if v := setup.Viewport; v != nil && v.Width > 0 && v.Height > 0 {
		if _, err := cdpt.Call(ctx, s, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(v.Width), Height: int64(v.Height), DeviceScaleFactor: v.Scale, Mobile: v.Mobile,
		}); err != nil {
			return fmt.Errorf("setting the viewport: %w", err)
		}
	}
	if len(setup.Headers) > 0 {
		h := make(network.Headers, len(setup.Headers))
		for k, v := range setup.Headers {
			h[k] = v
		}
		if _, err := cdpt.Call(ctx, s, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
			return fmt.Errorf("setting the request headers: %w", err)
		}
	}
	if len(setup.Cookies) > 0 {
		var cs []*network.CookieParam
		for _, c := range setup.Cookies {
			p := &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly}
			if c.Domain == "" {
				p.URL = url
			}
			cs = append(cs, p)
		}
		if _, err := cdpt.Call(ctx, s, network.SetCookies, network.SetCookiesParams{Cookies: cs}); err != nil {
			return fmt.Errorf("setting the cookies: %w", err)
		}
	}
	return nil
}

// ForgetPage stops following a tab opened with OpenPage.
func (b *Browser) ForgetPage(tab string) {
	b.diag.mu.Lock()
	delete(b.diag.tabs, tab)
	b.diag.mu.Unlock()
}

// PageLoad returns how the main document of a tab opened with OpenPage
// loaded so far, and a channel that is closed at its next change (the main
// document answered, failed or fired its load event). ok is false for a
// tab that is not followed.
func (b *Browser) PageLoad(tab string) (load core.PageLoad, changed <-chan struct{}, ok bool) {
	b.diag.mu.Lock()
	defer b.diag.mu.Unlock()
	td := b.diag.tabs[tab]
	if td == nil {
		return core.PageLoad{}, nil, false
	}
	return td.load, td.changed, true
}

// Diagnose returns what a tab opened with OpenPage did: its load, its
// errors, and (asked of the page, bounded by a few seconds) whether its main
// document has a WebMCP API and which declarative tools it has.
func (b *Browser) Diagnose(ctx context.Context, tab string) (core.PageDiagnosis, error) {
	b.diag.mu.Lock()
	td := b.diag.tabs[tab]
	var d core.PageDiagnosis
	if td != nil {
		d.Load = td.load
		d.Problems = append([]core.PageProblem(nil), td.problems...)
		d.Dropped = td.dropped
	}
	b.diag.mu.Unlock()
	if td == nil {
		return d, fmt.Errorf("tab %s was not opened for diagnosis", tab)
	}
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return d, err
	}
	native := false
	b.mu.Lock()
	for _, t := range b.targets {
		if t.sess == s {
			for _, doc := range t.contexts {
				native = native || doc.native
			}
			native = native || len(t.natives) > 0
		}
	}
	b.mu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, diagnoseWait)
	defer cancel()
	res, err := cdpt.Call(qctx, s, runtime.Evaluate, runtime.EvaluateParams{Expression: pageQuestion, ReturnByValue: ptr(true)})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		return d, nil // a page that will not answer still has its load and errors
	}
	var ans struct {
		API   bool            `json:"api"`
		Forms []core.FormTool `json:"forms"`
	}
	if decode(res.Result.Value, &ans) != nil {
		return d, nil
	}
	switch {
	case native:
		d.API = "native"
	case ans.API:
		d.API = "polyfill"
	default:
		d.API = "none"
	}
	for i, f := range ans.Forms {
		if i == maxProblems {
			break
		}
		f.Name = cut(f.Name, 128)
		d.Forms = append(d.Forms, f)
	}
	return d, nil
}

// pageQuestion asks the main document whether it has a WebMCP API and
// which declarative tools (<form toolname>) it has.
const pageQuestion = `(() => {
  const mc = document.modelContext || navigator.modelContext;
  const api = !!mc && typeof mc.registerTool === 'function';
  const forms = [];
  for (const f of document.querySelectorAll('form[toolname]')) {
    if (forms.length >= 50) break;
    forms.push({name: String(f.getAttribute('toolname')).slice(0, 128), autoSubmit: f.hasAttribute('toolautosubmit')});
  }
  return {api, forms};
})()`

// updateLoad changes a followed tab's load and signals the change.
func (b *Browser) updateLoad(tab string, f func(*core.PageLoad)) {
	b.diag.mu.Lock()
	defer b.diag.mu.Unlock()
	td := b.diag.tabs[tab]
	if td == nil {
		return
	}
	f(&td.load)
	close(td.changed)
	td.changed = make(chan struct{})
}

// diagnoseEvent records what a followed tab's target reports; it runs on
// the connection's reader goroutine, so it only decodes and records.
func (b *Browser) diagnoseEvent(t *targetState, msg *cdproto.Message) {
	switch msg.Method {
	case cdproto.EventNetworkRequestWillBeSent, cdproto.EventNetworkResponseReceived,
		cdproto.EventNetworkLoadingFailed, cdproto.EventNetworkLoadingFinished,
		cdproto.EventRuntimeExceptionThrown, cdproto.EventRuntimeConsoleAPICalled,
		cdproto.EventLogEntryAdded, cdproto.EventPageLoadEventFired, cdproto.EventPageFrameNavigated:
	default:
		return
	}
	b.diag.mu.Lock()
	defer b.diag.mu.Unlock()
	td := b.diag.tabs[t.tab]
	if td == nil {
		return
	}
	isMainFrame := func(f cdpt.FrameID) bool { return t.kind == "page" && string(f) == t.targetID }
	changed := false
	switch msg.Method {
	case cdproto.EventNetworkRequestWillBeSent:
		var ev network.EventRequestWillBeSent
		if decode(msg.Params, &ev) != nil || ev.Request == nil {
			return
		}
		if len(td.requests) < maxRequests {
			td.requests[ev.RequestID] = request{url: ev.Request.URL, main: ev.Type == network.ResourceTypeDocument && isMainFrame(ev.FrameID)}
		}
	case cdproto.EventNetworkResponseReceived:
		var ev network.EventResponseReceived
		if decode(msg.Params, &ev) != nil || ev.Response == nil {
			return
		}
		r := ev.Response
		if ev.Type == network.ResourceTypeDocument && isMainFrame(ev.FrameID) {
			td.load.URL, td.load.Status, td.load.StatusText, td.load.Err = cut(r.URL, maxURLText), int(r.Status), cut(r.StatusText, 100), ""
			changed = true
		} else if r.Status >= 400 && !isFavicon(r.URL) {
			td.add(core.PageProblem{Kind: core.ProblemRequest, Text: fmt.Sprintf("HTTP %d %s", r.Status, r.StatusText), URL: r.URL, Status: int(r.Status)})
		}
	case cdproto.EventNetworkLoadingFinished:
		var ev network.EventLoadingFinished
		if decode(msg.Params, &ev) == nil {
			delete(td.requests, ev.RequestID)
		}
	case cdproto.EventNetworkLoadingFailed:
		var ev network.EventLoadingFailed
		if decode(msg.Params, &ev) != nil {
			return
		}
		req := td.requests[ev.RequestID]
		delete(td.requests, ev.RequestID)
		if ev.Canceled {
			return
		}
		if req.main {
			td.load.Err, td.load.URL = cut(ev.ErrorText, maxProblemText), cut(req.url, maxURLText)
			changed = true
			break
		}
		text := ev.ErrorText
		if ev.BlockedReason != "" {
			text += " (blocked: " + string(ev.BlockedReason) + ")"
		}
		td.add(core.PageProblem{Kind: core.ProblemRequest, Text: text, URL: req.url})
	case cdproto.EventRuntimeExceptionThrown:
		var ev runtime.EventExceptionThrown
		if decode(msg.Params, &ev) != nil || ev.ExceptionDetails == nil {
			return
		}
		e := ev.ExceptionDetails
		text := e.Text
		if e.Exception != nil && e.Exception.Description != "" {
			text += " " + firstLine(e.Exception.Description)
		}
		p := core.PageProblem{Kind: core.ProblemException, Text: text, URL: e.URL, Line: int(e.LineNumber) + 1, Column: int(e.ColumnNumber) + 1}
		if st := e.StackTrace; p.URL == "" && st != nil && len(st.CallFrames) > 0 {
			p.URL, p.Line, p.Column = st.CallFrames[0].URL, int(st.CallFrames[0].LineNumber)+1, int(st.CallFrames[0].ColumnNumber)+1
		}
		td.add(p)
	case cdproto.EventRuntimeConsoleAPICalled:
		var ev runtime.EventConsoleAPICalled
		if decode(msg.Params, &ev) != nil || (ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert) {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			var s string
			if a.Type == runtime.RemoteObjectTypeString && decode(a.Value, &s) == nil {
				parts = append(parts, s)
			} else if a.Description != "" {
				parts = append(parts, firstLine(a.Description))
			} else if len(a.Value) > 0 {
				parts = append(parts, string(a.Value))
			}
		}
		p := core.PageProblem{Kind: core.ProblemConsole, Text: "console." + string(ev.Type) + ": " + strings.Join(parts, " ")}
		if st := ev.StackTrace; st != nil && len(st.CallFrames) > 0 {
			p.URL, p.Line, p.Column = st.CallFrames[0].URL, int(st.CallFrames[0].LineNumber)+1, int(st.CallFrames[0].ColumnNumber)+1
		}
		td.add(p)
	case cdproto.EventLogEntryAdded:
		var ev cdplog.EventEntryAdded
		// Network entries repeat what the Network events said.
		if decode(msg.Params, &ev) != nil || ev.Entry == nil || ev.Entry.Level != cdplog.EntryLevelError || ev.Entry.Source == cdplog.EntrySourceNetwork {
			return
		}
		td.add(core.PageProblem{Kind: core.ProblemLog, Text: ev.Entry.Text, URL: ev.Entry.URL, Line: int(ev.Entry.LineNumber)})
	case cdproto.EventPageFrameNavigated:
		var ev page.EventFrameNavigated
		if decode(msg.Params, &ev) != nil || ev.Frame == nil || !isMainFrame(ev.Frame.ID) || ev.Frame.URL == "about:blank" {
			return
		}
		td.navigated, td.load.Loaded = true, false
		changed = true
	case cdproto.EventPageLoadEventFired:
		if t.kind != "page" || !td.navigated {
			return
		}
		td.load.Loaded = true
		changed = true
	}
	if changed {
		close(td.changed)
		td.changed = make(chan struct{})
	}
}

// add keeps a problem, within the bounds.
func (td *tabDiag) add(p core.PageProblem) {
	if len(td.problems) >= maxProblems {
		td.dropped++
		return
	}
	p.Text, p.URL = cut(p.Text, maxProblemText), cut(p.URL, maxURLText)
	td.problems = append(td.problems, p)
}

// cut shortens s to at most n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// isFavicon says a request is the browser's own for /favicon.ico, which
// many sites do not have and no page asked for.
func isFavicon(u string) bool {
	u, _, _ = strings.Cut(u, "?")
	return strings.HasSuffix(u, "/favicon.ico")
}
