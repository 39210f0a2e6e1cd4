package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/settle"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Tool is a page's tool as CI mode reports it: the page's own definition
// (without the provenance tag the hub puts in front of descriptions), the
// name MCP clients see, or the reason webmcp-cdp refused it.
type Tool struct {
	// Name is the page's own name for the tool.
	Name string `json:"name"`
	// Routed is the name MCP clients see; empty for a refused tool.
	Routed string `json:"routed,omitempty"`
	// Title is the page's optional title.
	Title string `json:"title,omitempty"`
	// Description is the page's description (unknown for a refused tool).
	Description string `json:"description"`
	// InputSchema is the page's inputSchema, or nil when it gave none.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Annotations are the page's hints.
	Annotations map[string]any `json:"annotations,omitempty"`
	// Backend is "webmcp" for a tool a document registered through the
	// WebMCP API, "mcp-b" for a tool of an MCP-B page server; empty for a
	// refused tool.
	Backend string `json:"backend,omitempty"`
	// URL is the document that registered the tool (a frame's, for a tool of
	// an iframe).
	URL string `json:"url,omitempty"`
	// Frame is the browser's id of that document's frame.
	Frame string `json:"frame,omitempty"`
	// Refused says why webmcp-cdp did not serve the tool; empty when it did.
	Refused string `json:"refused,omitempty"`
	// Reason is the code of the refusal (see core.Reason); empty for a
	// served tool.
	Reason core.Reason `json:"reason,omitempty"`
}

// Tabs opens and closes browser tabs and tells how their pages loaded;
// cmd/webmcp-cdp adapts *cdp.Browser.
type Tabs interface {
	// Open applies setup to a new tab, loads url in it, and returns the
	// tab's id. When the page could not load, it returns the tab's id with
	// the error (PageLoad then says why).
	Open(ctx context.Context, url string, setup core.PageSetup) (string, error)
	// CloseTab closes a tab.
	CloseTab(ctx context.Context, tab string) error
	// PageLoad returns how the tab's main document loaded so far and a
	// channel closed at its next change; ok is false when the browser does
	// not follow the tab's load (the page then counts as loaded).
	PageLoad(tab string) (load core.PageLoad, changed <-chan struct{}, ok bool)
	// Diagnose returns what the tab's page did: its load, its errors,
	// whether it has a WebMCP API, its declarative tools.
	Diagnose(ctx context.Context, tab string) (core.PageDiagnosis, error)
	// Drain returns once what the tab's page had due when it was called
	// (a timer that a busy renderer runs late, and the tools it registers)
	// has reached the hub. The quiet period ends with it, so that task
	// order in the page, not the clock, decides what counts as late.
	Drain(ctx context.Context, tab string) error
}

// CallFunc calls a routed tool as an MCP client would.
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

// Session opens pages one at a time in a browser whose tools reach Hub.
// Set the fields before the first Open; a Session is then used by one
// goroutine at a time.
type Session struct {
	// Hub is the catalog the browser reports into.
	Hub *hub.Hub
	// Tabs opens and closes the tabs.
	Tabs Tabs
	// Call runs a routed tool. When nil, calls go to Hub.Call directly; the
	// commands set it to an MCP client on the server, so that a call takes
	// the same path as a real client's.
	Call CallFunc
	// Settle is how long a page's tools must stay the same, after its load
	// event, to count as settled (default DefaultSettle).
	Settle time.Duration
	// Timeout bounds the wait for a page's tools (default 10 s).
	Timeout time.Duration
}

// DefaultSettle is how long a page's tools must stay unchanged after its
// load event to count as settled: the one default of CI mode (inspect,
// call, test) and of the first tools/list of launch, attach and demo, so
// that a site's CI and an agent see a page the same way. It is long enough
// for a page that registers a tool a second after load (a timer, a fetched
// configuration). --settle changes it.
const DefaultSettle = 1500 * time.Millisecond

// PageOptions say how to open a page.
type PageOptions struct {
	// Setup is set on the tab before the page loads.
	Setup core.PageSetup
	// WaitFor are tools (the page's own names) to wait for: the page is
	// not settled until it serves them all, within the timeout.
	WaitFor []string
}

// Page is a page opened by a Session, with its tools as they settled.
type Page struct {
	// URL is the URL that was opened.
	URL string
	// Tools are the page's tools, served and refused, sorted by name.
	Tools []Tool
	// Resources (and resource templates) and Prompts are what the page's
	// MCP-B page servers list.
	Resources []Resource
	Prompts   []Prompt
	// Settled is false when the wait ended at the timeout: the page
	// registered no tools, its tools kept changing, a tool waited for did
	// not come, or it never fired its load event.
	Settled bool
	// Missing are the tools waited for that the page did not serve.
	Missing []string
	// Took is how long the page took to settle.
	Took time.Duration
	// Diagnosis is what the page did while it loaded (its errors, whether
	// it has a WebMCP API); it is read once the tools settled.
	Diagnosis core.PageDiagnosis

	s   *Session
	tab string
	// reads counts the reads of the hub while the page settled; the tests
	// use it to tell waiting on the hub's changes from polling.
	reads int
}

// LoadError is the error of a page that could not be loaded: a network
// error, or an HTTP status of 400 or more for its main document.
type LoadError struct {
	// URL is the page's.
	URL string
	// Load says how it failed.
	Load core.PageLoad
	// Diagnosis is what the page did (an HTTP error page may log errors).
	Diagnosis core.PageDiagnosis
}

func (e *LoadError) Error() string {
	u := e.Load.URL
	if u == "" {
		u = e.URL
	}
	if e.Load.Status >= 400 {
		return strings.TrimSpace(fmt.Sprintf("loading %s: HTTP %d %s", u, e.Load.Status, e.Load.StatusText))
	}
	return fmt.Sprintf("loading %s: %s", u, e.Load.Err)
}

// Open opens url in a new tab, waits for it to load and for its tools to
// settle. A page that cannot be loaded is a *LoadError, returned as soon
// as the browser knows (its tab is then closed); a page without tools is a
// Page without tools. Other errors are for ctx ending or the browser.
func (s *Session) Open(ctx context.Context, url string, opts PageOptions) (*Page, error) {
	settle, limit := s.Settle, s.Timeout
	if settle <= 0 {
		settle = DefaultSettle
	}
	if limit <= 0 {
		limit = 10 * time.Second
	}
	_, mark := s.Hub.Refusals(0)
	start := time.Now()
	tab, err := s.Tabs.Open(ctx, url, opts.Setup)
	if err != nil {
		if tab == "" {
			return nil, fmt.Errorf("loading %s: %w", url, err)
		}
		load, _, _ := s.Tabs.PageLoad(tab)
		if !load.Failed() {
			load.Err = err.Error()
		}
		return nil, s.loadFailed(ctx, url, tab, load)
	}
	p := &Page{URL: url, s: s, tab: tab}
	failed, err := p.settle(ctx, mark, opts.WaitFor, settle, limit-time.Since(start))
	if failed != nil {
		return nil, s.loadFailed(ctx, url, tab, *failed)
	}
	if err != nil {
		p.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("waiting for the tools of %s: %w", url, err)
	}
	p.Took = time.Since(start)
	if d, err := s.Tabs.Diagnose(ctx, tab); err == nil {
		p.Diagnosis = d
	}
	return p, nil
}

// loadFailed closes the tab of a page that did not load and returns its
// *LoadError.
func (s *Session) loadFailed(ctx context.Context, url, tab string, load core.PageLoad) error {
	le := &LoadError{URL: url, Load: load}
	if d, err := s.Tabs.Diagnose(ctx, tab); err == nil {
		le.Diagnosis = d
	}
	s.Tabs.CloseTab(context.WithoutCancel(ctx), tab)
	return le
}

// settle waits until the page's main document has loaded, the hub knows
// the page's tab, the tab has tools (served or refused) including every
// tool of waitFor, and they stayed the same for quiet and the page ran what
// it had due (settle.Rule); or until limit passes, leaving Settled false.
// It wakes on the hub's changes and on the page's load events (and reads
// the page's tools once more when a quiet period ends, which also catches
// a change the hub does not signal, such as a refusal alone); the quiet
// period restarts on every change of the page's tools and at the load
// event. It returns the load when the page failed to load, and the cause
// when ctx ends.
func (p *Page) settle(ctx context.Context, mark uint64, waitFor []string, quiet, limit time.Duration) (*core.PageLoad, error) {
	var failed *core.PageLoad
	errFailed := errors.New("the page did not load")
	var lastKnown, loaded bool
	since := time.Now()
	look := func(now time.Time) settle.Look {
		changed := p.s.Hub.Changed() // before the read: a change after it is not missed
		load, loadChanged, followed := p.s.Tabs.PageLoad(p.tab)
		if load.Failed() {
			failed = &load
			return settle.Look{Err: errFailed}
		}
		if l := load.Loaded || !followed; l != loaded {
			loaded, since = l, now
		}
		tools, known := p.read(mark)
		res, prompts := p.readServers()
		if known != lastKnown || !reflect.DeepEqual(tools, p.Tools) || !reflect.DeepEqual(res, p.Resources) || !reflect.DeepEqual(prompts, p.Prompts) {
			p.Tools, p.Resources, p.Prompts, lastKnown = tools, res, prompts, known
			since = now
		}
		p.Missing = p.missing(waitFor)
		return settle.Look{
			Loaded:      loaded,
			Since:       since,
			Ready:       known && len(tools)+len(res)+len(prompts) > 0 && len(p.Missing) == 0,
			Changed:     changed,
			LoadChanged: loadChanged,
		}
	}
	// A page that does not answer the drain is judged on what reached the
	// hub (the browser's side logs why).
	drain := func(ctx context.Context) error {
		_ = p.s.Tabs.Drain(ctx, p.tab)
		return nil
	}
	settled, err := settle.Rule{Quiet: quiet, Limit: limit}.Wait(ctx, look, drain)
	if failed != nil {
		return failed, nil
	}
	if err != nil {
		return nil, err
	}
	p.Settled = settled
	return nil, nil
}

// missing returns the tools of want that the page does not serve.
func (p *Page) missing(want []string) []string {
	var out []string
	for _, n := range want {
		if t, ok := p.Tool(n); !ok || t.Refused != "" {
			out = append(out, n)
		}
	}
	return out
}

// read returns the tools of the page's tab, served and refused, and whether
// the hub knows the tab yet.
func (p *Page) read(mark uint64) ([]Tool, bool) {
	p.reads++
	ti, ok := p.s.Hub.TabOf(p.tab)
	var out []Tool
	if ok {
		out = tabTools(p.s.Hub.Tools(), ti.N)
	}
	type key struct {
		tool   string
		reason core.Reason
		detail string
	}
	seen := make(map[key]bool)
	refused, _ := p.s.Hub.Refusals(mark)
	for _, r := range refused {
		if r.Tab != p.tab {
			continue
		}
		if k := (key{r.Tool, r.Reason, r.Detail}); !seen[k] {
			seen[k] = true
			out = append(out, Tool{Name: r.Tool, URL: r.URL, Refused: r.Detail, Reason: r.Reason})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ok
}

// readServers returns the resources and prompts of the page's MCP-B page
// servers.
func (p *Page) readServers() ([]Resource, []Prompt) {
	ti, ok := p.s.Hub.TabOf(p.tab)
	if !ok {
		return nil, nil
	}
	return tabCatalog(p.s.Hub, ti.N)
}

// tabTools picks the tools of tab n out of the routed tools. A tool shared
// by several tabs or frames is listed under the name that reaches this very
// document (<site>_tab<N>_...), else under the site-level name.
func tabTools(routed []hub.RoutedTool, n int) []Tool {
	type key struct{ tool, url, frame string }
	byKey := make(map[key]Tool)
	var order []key
	perTab := fmt.Sprintf("_tab%d_", n)
	for _, rt := range routed {
		src := rt.Source
		if src.Cached || src.Tab != n {
			continue
		}
		name, url := src.Tool, src.URL
		k := key{name, url, src.Frame}
		old, seen := byKey[k]
		if seen && !(strings.Contains(rt.Name, perTab) && !strings.Contains(old.Routed, perTab)) {
			continue
		}
		if !seen {
			order = append(order, k)
		}
		byKey[k] = Tool{
			Name:        name,
			Routed:      rt.Name,
			Title:       rt.Tool.Title,
			Description: rt.Tool.Description,
			InputSchema: rt.Tool.InputSchema,
			Annotations: rt.Tool.Annotations,
			Backend:     backendOf(src.Backend),
			URL:         url,
			Frame:       src.Frame,
		}
	}
	out := make([]Tool, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// Tool returns the page's tool with the page's own name, or, failing that,
// with the routed name. A served tool wins over a refused one.
func (p *Page) Tool(name string) (Tool, bool) {
	var refused *Tool
	for i, t := range p.Tools {
		if t.Name == name {
			if t.Refused == "" {
				return t, true
			}
			refused = &p.Tools[i]
		}
	}
	for _, t := range p.Tools {
		if t.Routed != "" && t.Routed == name {
			return t, true
		}
	}
	if refused != nil {
		return *refused, true
	}
	return Tool{}, false
}

// Names lists the names of the page's served tools.
func (p *Page) Names() []string {
	var out []string
	for _, t := range p.Tools {
		if t.Refused == "" {
			out = append(out, t.Name)
		}
	}
	return out
}

// ErrNoTool is the error (for errors.Is) of a call to a tool the page does
// not serve.
var ErrNoTool = errors.New("no such tool")

// noToolError says which tool is missing and what the page has instead.
type noToolError struct{ msg string }

func (e noToolError) Error() string        { return e.msg }
func (e noToolError) Is(target error) bool { return target == ErrNoTool }

func noTool(format string, args ...any) error {
	return noToolError{msg: fmt.Sprintf(format, args...)}
}

// Call calls the page's tool name (the page's own name, or the routed name)
// with args, a JSON object (empty for none). A tool that fails is a result
// with IsError set; the error is for a call that could not be made.
func (p *Page) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := p.Tool(name)
	switch {
	case !ok:
		have := p.Names()
		if len(have) == 0 {
			return nil, noTool("the page has no tool %q (it has no tools)", name)
		}
		return nil, noTool("the page has no tool %q; it has %s", name, strings.Join(have, ", "))
	case t.Refused != "":
		return nil, noTool("webmcp-cdp refused the page's tool %q: %s", name, t.Refused)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if p.s.Call != nil {
		res, err := p.s.Call(ctx, t.Routed, args)
		if err != nil {
			return nil, fmt.Errorf("calling %s: %w", t.Routed, err)
		}
		return res, nil
	}
	return mcpserver.CallToolResult(p.s.Hub.Call(ctx, t.Routed, args)), nil
}

// forgetWait bounds Close's wait for the hub to let go of a closed tab, in
// case the browser never reports the tab gone.
const forgetWait = 2 * time.Second

// Close closes the page's tab and waits until the hub has let go of its
// tools, so that the next page's tools do not share names with this one's.
// It wakes on the hub's changes, and gives up waiting (without an error)
// after forgetWait.
func (p *Page) Close(ctx context.Context) error {
	if err := p.s.Tabs.CloseTab(ctx, p.tab); err != nil {
		return err
	}
	bound := time.NewTimer(forgetWait)
	defer bound.Stop()
	for {
		changed := p.s.Hub.Changed()
		// A tab the hub still knows but that has no tools holds no names:
		// there is nothing to wait for (and the hub signals no change when
		// such a tab goes).
		if ti, ok := p.s.Hub.TabOf(p.tab); !ok || len(ti.Tools) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-bound.C:
			return nil
		case <-changed:
		}
	}
}

// maxConsoleErrors bounds the page's errors a failed call reports.
const maxConsoleErrors = 10

// consoleErrors are the page's console errors, uncaught exceptions and
// failed requests so far, worded one a line (the last maxConsoleErrors);
// none when the browser cannot tell.
func (p *Page) consoleErrors(ctx context.Context) []string {
	d, err := p.s.Tabs.Diagnose(ctx, p.tab)
	if err != nil {
		return nil
	}
	probs := d.Problems
	if len(probs) > maxConsoleErrors {
		probs = probs[len(probs)-maxConsoleErrors:]
	}
	out := make([]string, len(probs))
	for i, pr := range probs {
		out[i] = problemLine(pr)
	}
	return out
}
