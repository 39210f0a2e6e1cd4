// Package hub keeps one catalog of the WebMCP tools that pages register,
// across tabs, frames and sites, names them for MCP clients, and routes each
// call to the document that owns the tool.
//
// The hub knows nothing of CDP. A browser reports into it (Update, DropDoc,
// TabOpened, TabClosed, SetActive) and the hub calls back into the browser
// through the small Browser interface, so it is tested with a fake browser.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is a tool as a page declared it.
type Tool struct {
	// Name is the page's own name for the tool.
	Name string
	// Title is the optional human-readable title.
	Title string
	// Description is the page's description.
	Description string
	// InputSchema is the JSON Schema of the input, or nil when the page gave
	// none.
	InputSchema json.RawMessage
	// Annotations holds the page's hints (readOnlyHint, consequentialHint,
	// untrustedContentHint, ...).
	Annotations map[string]any
}

// Doc is one document that holds tools: the current page of a frame.
type Doc struct {
	// Key identifies the document for the browser; the hub passes it back to
	// Browser.Invoke.
	Key string
	// Tab identifies the tab (top-level target) the document is in.
	Tab string
	// Frame is the frame id of the document.
	Frame string
	// Origin and URL are the document's, as the browser reports them.
	Origin, URL string
	// Backend is "native" or "polyfill".
	Backend string
}

// Result is what a page's tool call produced.
type Result struct {
	// Kind is "string" (Value is the string), "json" (Value is JSON text) or
	// "undefined".
	Kind string
	// Value is the returned value, see Kind.
	Value string
	// Truncated is the length of the value before the browser cut it, or 0.
	Truncated int
	// Err is the page's error message when the tool threw or was cancelled.
	Err string
}

// Browser is what the hub needs from a browser.
type Browser interface {
	// Invoke runs a tool of a document and waits for its result. It returns
	// an error when the call could not run or complete (the page navigated
	// away, the tab closed, ctx ended); a tool that throws is a Result with Err.
	Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (Result, error)
}

// Options configures a Hub. Zero values take the defaults.
type Options struct {
	// CallTimeout bounds one tool call (default 30 s).
	CallTimeout time.Duration
	// MaxResultBytes caps the text of a result (default 1 MiB).
	MaxResultBytes int
	// MaxInflightPerTab bounds the calls running in one tab (default 16).
	MaxInflightPerTab int
	// Logger receives the hub's log (default slog.Default()).
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 1 << 20
	}
	if o.MaxInflightPerTab <= 0 {
		o.MaxInflightPerTab = 16
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Hub is the catalog and the router. Its methods are safe for concurrent use.
type Hub struct {
	browser Browser
	opts    Options

	mu      sync.Mutex
	tabs    map[string]*tab
	docs    map[string]*doc
	routes  map[string]*route
	list    []RoutedTool
	active  string
	seq     uint64
	version uint64
	subs    []func()
	onCall  []func(CallRecord)
}

// CallRecord describes a finished tool call.
type CallRecord struct {
	// At is when the call started.
	At time.Time
	// Tool is the routed name.
	Tool string
	// Tab is the number of the tab the call went to (0 when none).
	Tab int
	// Took is how long the call took.
	Took time.Duration
	// OK is false when the result is an error.
	OK bool
	// Error is the error text, cut to 200 bytes.
	Error string
}

// OnCall registers f to be called after every tool call. f must not block.
func (h *Hub) OnCall(f func(CallRecord)) {
	h.mu.Lock()
	h.onCall = append(h.onCall, f)
	h.mu.Unlock()
}

type tab struct {
	id       string
	n        int
	url      string
	title    string
	inflight chan struct{}
}

type doc struct {
	Doc
	tools   map[string]Tool
	updated uint64
}

type candidate struct {
	doc  *doc
	tool string
}

type route struct {
	// cands holds more than one entry for a site-level name shared by tabs.
	cands []candidate
}

// RoutedTool is a tool as the MCP server lists it.
type RoutedTool struct {
	// Name is the routed name.
	Name string
	// Tool is the page's definition, with the provenance tag in front of the
	// description.
	Tool Tool
	// Source is the provenance, as put in _meta["webmcp-cdp/source"].
	Source map[string]any
}

// New returns a hub that calls tools through b.
func New(b Browser, opts Options) *Hub {
	opts.defaults()
	return &Hub{
		browser: b,
		opts:    opts,
		tabs:    make(map[string]*tab),
		docs:    make(map[string]*doc),
		routes:  make(map[string]*route),
	}
}

// OnChange registers f to be called after every change of the catalog. f
// runs on the goroutine that made the change, outside the hub's lock; it must
// not block.
func (h *Hub) OnChange(f func()) {
	h.mu.Lock()
	h.subs = append(h.subs, f)
	h.mu.Unlock()
}

// TabOpened records a tab, or updates its URL and title.
func (h *Hub) TabOpened(id, url, title string) {
	h.mu.Lock()
	t := h.tabLocked(id)
	t.url, t.title = url, title
	h.mu.Unlock()
}

func (h *Hub) tabLocked(id string) *tab {
	if t, ok := h.tabs[id]; ok {
		return t
	}
	used := make(map[int]bool, len(h.tabs))
	for _, t := range h.tabs {
		used[t.n] = true
	}
	n := 1
	for used[n] {
		n++
	}
	t := &tab{id: id, n: n, inflight: make(chan struct{}, h.opts.MaxInflightPerTab)}
	h.tabs[id] = t
	return t
}

// TabClosed forgets a tab and every document in it.
func (h *Hub) TabClosed(id string) {
	h.mu.Lock()
	if _, ok := h.tabs[id]; !ok {
		h.mu.Unlock()
		return
	}
	delete(h.tabs, id)
	changed := false
	for k, d := range h.docs {
		if d.Tab == id {
			delete(h.docs, k)
			changed = changed || len(d.tools) > 0
		}
	}
	if h.active == id {
		h.active = ""
	}
	h.finish(changed)
}

// SetActive records which tab the user looks at; site-level names route to
// it first.
func (h *Hub) SetActive(id string) {
	h.mu.Lock()
	h.active = id
	h.mu.Unlock()
}

// Update sets the tools of a document, replacing what it had.
func (h *Hub) Update(d Doc, tools []Tool) {
	h.mu.Lock()
	t := h.tabLocked(d.Tab)
	if t.url == "" {
		t.url = d.URL
	}
	cur, ok := h.docs[d.Key]
	if !ok {
		if len(tools) == 0 {
			h.mu.Unlock()
			return
		}
		cur = &doc{}
		h.docs[d.Key] = cur
	}
	cur.Doc = d
	h.seq++
	cur.updated = h.seq
	cur.tools = make(map[string]Tool, len(tools))
	for _, tl := range tools {
		cur.tools[tl.Name] = tl
	}
	h.finish(true)
}

// DropDoc forgets a document (it navigated away or its frame went away).
func (h *Hub) DropDoc(key string) {
	h.mu.Lock()
	d, ok := h.docs[key]
	if ok {
		delete(h.docs, key)
	}
	h.finish(ok && len(d.tools) > 0)
}

// finish rebuilds the routes when changed, unlocks, and tells subscribers.
func (h *Hub) finish(changed bool) {
	if !changed {
		h.mu.Unlock()
		return
	}
	h.rebuildLocked()
	h.version++
	subs := h.subs
	h.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

// Version counts the changes of the catalog.
func (h *Hub) Version() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version
}

// Tools returns the routed tools, sorted by name.
func (h *Hub) Tools() []RoutedTool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.list
}

// rebuildLocked recomputes every routed name from the documents. Names only
// depend on the site, the tool and the tab's number, so they stay the same
// for a tab's life.
func (h *Hub) rebuildLocked() {
	type key struct{ site, tool string }
	groups := make(map[key][]candidate)
	for _, d := range h.docs {
		site := SiteOf(d.Origin)
		for name := range d.tools {
			k := key{site, toolPart(name)}
			groups[k] = append(groups[k], candidate{doc: d, tool: name})
		}
	}
	routes := make(map[string]*route, len(groups))
	list := make([]RoutedTool, 0, len(groups))
	for k, cands := range groups {
		sort.Slice(cands, func(i, j int) bool { return cands[i].doc.Key < cands[j].doc.Key })
		site := RoutedName(k.site, k.tool)
		routes[site] = &route{cands: cands}
		list = append(list, h.routedLocked(site, cands, len(cands) > 1))
		if len(cands) < 2 {
			continue
		}
		perTab := make(map[string]int)
		for _, c := range cands {
			perTab[c.doc.Tab]++
		}
		for _, c := range cands {
			tabPart := "tab" + strconv.Itoa(h.tabs[c.doc.Tab].n)
			if perTab[c.doc.Tab] > 1 {
				// Two frames of one tab, same site, same tool: tell them apart.
				tabPart += "_" + shortHash(c.doc.Key)[:4]
			}
			name := RoutedName(k.site, tabPart, k.tool)
			routes[name] = &route{cands: []candidate{c}}
			list = append(list, h.routedLocked(name, []candidate{c}, false))
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	h.routes, h.list = routes, list
}

func (h *Hub) routedLocked(name string, cands []candidate, shared bool) RoutedTool {
	c := h.pickLocked(cands)
	t := c.doc.tools[c.tool]
	n := h.tabs[c.doc.Tab].n
	site := SiteOf(c.doc.Origin)
	tag := fmt.Sprintf("[%s · tab %d] ", site, n)
	if shared {
		tag = fmt.Sprintf("[%s · %d tabs: goes to the active tab, else the latest] ", site, len(cands))
	}
	t.Description = tag + t.Description
	return RoutedTool{
		Name: name,
		Tool: t,
		Source: map[string]any{
			"tool": c.tool, "origin": c.doc.Origin, "url": c.doc.URL,
			"tab": n, "frame": c.doc.Frame, "backend": c.doc.Backend,
		},
	}
}

// pickLocked routes a name: the active tab if it has the tool, else the
// document that updated its tools most recently.
func (h *Hub) pickLocked(cands []candidate) candidate {
	best := cands[0]
	for _, c := range cands {
		if c.doc.Tab == h.active && best.doc.Tab != h.active {
			best = c
			continue
		}
		if (c.doc.Tab == h.active) == (best.doc.Tab == h.active) && c.doc.updated > best.doc.updated {
			best = c
		}
	}
	return best
}

// errorResult is a tool result that reports a failure to the model.
func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// Call runs the routed tool name with the arguments (a JSON object, or empty
// for none). Every failure is a result with IsError set, worded for the model.
func (h *Hub) Call(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	start := time.Now()
	tabN := 0
	res := h.call(ctx, name, args, &tabN)
	h.mu.Lock()
	obs := h.onCall
	h.mu.Unlock()
	if len(obs) > 0 {
		rec := CallRecord{At: start, Tool: name, Tab: tabN, Took: time.Since(start), OK: !res.IsError}
		if res.IsError && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				rec.Error = tc.Text
				if len(rec.Error) > 200 {
					rec.Error = rec.Error[:200]
				}
			}
		}
		for _, f := range obs {
			f(rec)
		}
	}
	return res
}

func (h *Hub) call(ctx context.Context, name string, args json.RawMessage, tabN *int) *mcp.CallToolResult {
	h.mu.Lock()
	r, ok := h.routes[name]
	var c candidate
	var t *tab
	if ok {
		c = h.pickLocked(r.cands)
		t = h.tabs[c.doc.Tab]
	}
	h.mu.Unlock()
	if !ok {
		return errorResult("no open page has a tool named %q: its tab may have closed or navigated away; list the tools again", name)
	}
	*tabN = t.n
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	select {
	case t.inflight <- struct{}{}:
		defer func() { <-t.inflight }()
	default:
		return errorResult("tab %d already runs %d calls; try again when one finishes", t.n, cap(t.inflight))
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	res, err := h.browser.Invoke(ctx, c.doc.Key, c.tool, args)
	h.opts.Logger.Debug("tool call", "name", name, "tab", t.n, "took", time.Since(start), "err", err)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return errorResult("%s did not answer within %s", name, h.opts.CallTimeout)
		}
		return errorResult("%s failed: %v", name, err)
	}
	return ToCallToolResult(res, h.opts.MaxResultBytes)
}

// TabInfo describes an open tab.
type TabInfo struct {
	// N is the tab's number, stable for its life (the smallest free one).
	N int `json:"tab"`
	// ID is the browser's id for the tab.
	ID string `json:"-"`
	// URL and Title are the tab's.
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
	// Active says the tab is the one site-level names go to first.
	Active bool `json:"active,omitempty"`
	// Tools are the routed names that reach this tab.
	Tools []string `json:"tools"`
}

// Tabs lists the open tabs by number, with the routed names that reach each.
func (h *Hub) Tabs() []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	byID := make(map[string]*TabInfo, len(h.tabs))
	out := make([]*TabInfo, 0, len(h.tabs))
	for _, t := range h.tabs {
		ti := &TabInfo{N: t.n, ID: t.id, URL: t.url, Title: t.title, Active: t.id == h.active, Tools: []string{}}
		byID[t.id] = ti
		out = append(out, ti)
	}
	for _, rt := range h.list {
		for _, c := range h.routes[rt.Name].cands {
			if ti := byID[c.doc.Tab]; ti != nil {
				ti.Tools = append(ti.Tools, rt.Name)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	res := make([]TabInfo, len(out))
	for i, ti := range out {
		res[i] = *ti
	}
	return res
}

// Tab returns the tab numbered n.
func (h *Hub) Tab(n int) (TabInfo, bool) {
	for _, ti := range h.Tabs() {
		if ti.N == n {
			return ti, true
		}
	}
	return TabInfo{}, false
}

// TabOf returns the tab with the browser id id.
func (h *Hub) TabOf(id string) (TabInfo, bool) {
	for _, ti := range h.Tabs() {
		if ti.ID == id {
			return ti, true
		}
	}
	return TabInfo{}, false
}
