// Package hub keeps one catalog of the WebMCP tools that pages register,
// across tabs, frames and sites, names them for MCP clients, and routes each
// call to the document that owns the tool.
//
// The hub knows nothing of CDP. A browser reports into it (Update, DropDoc,
// TabOpened, TabClosed, SetActive) and the hub calls back into the browser
// through the small Browser interface (and Opener, to reopen the page of a
// cached tool), so it is tested with a fake browser.
//
// Beyond naming and routing, the hub applies the policies that treat pages
// as untrusted: per-document limits and a per-tab registration rate
// (Limits), allowed and denied origins (OriginPolicy), validation of call
// arguments against each tool's inputSchema before the page is called, a
// cap on result size, and a bound on the calls in flight per tab. Tools a
// page marks with annotations.cache stay listed after their tab closes, and
// across restarts through a state file written atomically.
package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Browser is what the hub needs from a browser.
type Browser interface {
	// Invoke runs a tool of a document and waits for its result. It returns
	// an error when the call could not run or complete (the page navigated
	// away, the tab closed, ctx ended); a tool that throws is a Result with Err.
	Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error)
}

// Opener is what the hub needs from a browser to call a cached tool whose
// page is not open: open a URL in a new tab and return the tab's id. A
// Browser that does not implement it cannot reopen cached tools.
type Opener interface {
	Open(ctx context.Context, url string) (string, error)
}

// Options configures a Hub. Zero values take the defaults.
type Options struct {
	// CallTimeout bounds one tool call (default 30 s). For a cached tool it
	// bounds the whole call: opening its page, waiting for the tool, and
	// running it.
	CallTimeout time.Duration
	// MaxResultBytes caps the text of a result (default 1 MiB).
	MaxResultBytes int
	// MaxInflightPerTab bounds the calls running in one tab (default 16);
	// a call over the bound is refused at once.
	MaxInflightPerTab int
	// Limits bound what pages put into the catalog.
	Limits Limits
	// Origins decides which origins may put tools into the catalog (nil
	// allows all).
	Origins *OriginPolicy
	// StateDir holds the state file of cached tools; empty keeps cached
	// tools in memory only.
	StateDir string
	// CacheTTL drops cached tools not seen on an open page for this long
	// when the state file is read (default 1 h).
	CacheTTL time.Duration
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
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Limits.defaults()
}

// maxCachedTools bounds the cached tools kept; the longest unseen go first.
const maxCachedTools = 1000

// Hub is the catalog and the router. Its methods are safe for concurrent use.
type Hub struct {
	browser   Browser
	opts      Options
	logger    *slog.Logger
	validator *validator
	store     *stateStore // nil without a state directory

	mu      sync.Mutex
	tabs    map[string]*tab
	docs    map[string]*doc
	routes  map[string]*route
	bySite  map[string]*route // live or cached site-level routes by entryID
	list    []RoutedTool      // sorted by name
	groups  map[string]*groupOut
	holders map[string]map[string]bool // entryID -> keys of the docs that have the tool
	names   *names
	cache   map[string]*cacheEntry // by entryID
	dirty   bool                   // the cache differs from the state file
	saving  chan struct{}          // closed when the running writer ends; nil when none runs
	saveErr error                  // the last write's error
	opening map[string]*opening    // cached tools whose page is being opened
	active  string
	seq     uint64
	version uint64
	changed chan struct{} // closed and replaced on every change
	// watchers and callWatchers are the subscriptions (see Watch).
	watchers     map[*watcher]struct{}
	callWatchers map[*callWatcher]struct{}
	denied       map[string]bool // origins whose denial was logged
	// refusals keeps the last refusals, for the status page and CI mode.
	refusals refusalLog
	// plainFrame is, per tab and tool, the frame that holds the tab-level
	// name without a frame suffix.
	plainFrame map[string]string
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

// tab is an open tab. id, n and inflight never change; the rest is guarded
// by Hub.mu.
type tab struct {
	id       string
	n        int
	inflight chan struct{}

	url, title string
	bucket     bucket          // registrations of new tool names
	known      map[string]bool // entryIDs registered in this tab
	refused    map[string]bool // refusals logged for this tab
}

// doc is a document's tools. A doc never changes once made: Update makes a
// new one, so a call may use a doc after the hub's lock is released.
type doc struct {
	core.Source
	tools   map[string]core.Tool
	updated uint64 // the hub's sequence number of the update that made it
	born    uint64 // the sequence number of the document's first update
}

type candidate struct {
	doc  *doc
	tool string
	tab  *tab
}

// route is where a routed name goes: one of cands (live), else the cached
// entry's page.
type route struct {
	cands []candidate
	entry *cacheEntry
	site  bool
}

// RoutedTool is a tool as the MCP server lists it. Its maps and slices are
// shared with the hub and must not be modified.
type RoutedTool struct {
	// Name is the routed name.
	Name string
	// Tool is the page's own definition.
	Tool core.Tool
	// Source is where calls go: the MCP edge renders it into
	// _meta["webmcp-cdp/source"] and the description's tag.
	Source core.Provenance
}

// New returns a hub that calls tools through b. With Options.StateDir set,
// it reads the cached tools from the state file there.
func New(b Browser, opts Options) *Hub {
	opts.defaults()
	h := &Hub{
		browser:   b,
		opts:      opts,
		logger:    opts.Logger,
		validator: newValidator(opts.Logger),
		tabs:      make(map[string]*tab),
		docs:      make(map[string]*doc),
		routes:    make(map[string]*route),
		bySite:    make(map[string]*route),
		groups:    make(map[string]*groupOut),
		holders:   make(map[string]map[string]bool),
		names:     newNames(),
		cache:     make(map[string]*cacheEntry),
		opening:   make(map[string]*opening),
		changed:   make(chan struct{}),

		watchers:     make(map[*watcher]struct{}),
		callWatchers: make(map[*callWatcher]struct{}),
		denied:       make(map[string]bool),

		plainFrame: make(map[string]string),
	}
	if opts.StateDir != "" {
		h.store = &stateStore{dir: opts.StateDir, logger: opts.Logger}
		for _, e := range h.store.load(opts.CacheTTL, time.Now()) {
			if !opts.Origins.Allows(e.Origin) {
				continue
			}
			if t, _, reason := opts.Limits.checkTool(e.Tool.tool()); reason == "" {
				e.Tool = saveTool(t)
				h.cache[entryID(e.Origin, e.Tool.Name)] = &e
			}
		}
		h.mu.Lock()
		if h.rebuildLocked(nil) {
			h.version++
		}
		h.mu.Unlock()
	}
	return h
}

// Close waits until the state file is up to date and returns the error of
// the last write, if it failed. The hub stays usable.
func (h *Hub) Close() error {
	for {
		h.mu.Lock()
		done, err := h.saving, h.saveErr
		h.mu.Unlock()
		if done == nil {
			return err
		}
		<-done
	}
}

// TabOpened records a tab, or updates its URL and title.
func (h *Hub) TabOpened(id, url, title string) {
	h.mu.Lock()
	_, known := h.tabs[id]
	t := h.tabLocked(id)
	if !known || t.url != url || t.title != title {
		t.url, t.title = url, title
		h.wakeLocked()
	}
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
	t := &tab{id: id, n: n, inflight: make(chan struct{}, h.opts.MaxInflightPerTab), known: map[string]bool{}, refused: map[string]bool{}}
	h.tabs[id] = t
	return t
}

// TabClosed forgets a tab and every document in it. Its cached tools stay.
func (h *Hub) TabClosed(id string) {
	h.mu.Lock()
	if _, ok := h.tabs[id]; !ok {
		h.mu.Unlock()
		return
	}
	delete(h.tabs, id)
	dirty := map[string]bool{}
	for k, d := range h.docs {
		if d.Tab == id {
			h.dropDocLocked(d, dirty, true)
			delete(h.docs, k)
		}
	}
	if h.active == id {
		h.active = ""
	}
	for k := range h.plainFrame {
		if strings.HasPrefix(k, id+"\x00") {
			delete(h.plainFrame, k)
		}
	}
	changed := h.rebuildLocked(dirty)
	h.names.gc(nil, h.tabOpenLocked)
	h.finish(changed)
}

// tabOpenLocked reports whether a tab is open.
func (h *Hub) tabOpenLocked(id string) bool {
	_, ok := h.tabs[id]
	return ok
}

// holdLocked records the tools of a document in the holders index and
// marks their entries dirty.
func (h *Hub) holdLocked(d *doc, dirty map[string]bool) {
	for name := range d.tools {
		id := entryID(d.Origin, name)
		m := h.holders[id]
		if m == nil {
			m = make(map[string]bool)
			h.holders[id] = m
		}
		m[d.Key] = true
		dirty[id] = true
	}
}

// dropDocLocked takes a document out of the holders index and marks its
// entries dirty; when gone is set (the document went away, rather than
// being replaced by an update), it records that its cached tools were last
// seen now. The caller removes it from h.docs.
func (h *Hub) dropDocLocked(d *doc, dirty map[string]bool, gone bool) {
	now := time.Now()
	for name := range d.tools {
		id := entryID(d.Origin, name)
		if m := h.holders[id]; m != nil {
			delete(m, d.Key)
			if len(m) == 0 {
				delete(h.holders, id)
			}
		}
		dirty[id] = true
		if e := h.cache[id]; e != nil && gone {
			e.Seen = now
			h.markDirtyLocked()
		}
	}
}

// tabEntriesLocked marks dirty the entries of the documents in a tab.
func (h *Hub) tabEntriesLocked(tab string, dirty map[string]bool) {
	for _, d := range h.docs {
		if d.Tab == tab {
			for name := range d.tools {
				dirty[entryID(d.Origin, name)] = true
			}
		}
	}
}

// SetActive records which tab the user looks at; site-level names route to
// it first, and the provenance tags say so.
func (h *Hub) SetActive(id string) {
	h.mu.Lock()
	if h.active == id {
		h.mu.Unlock()
		return
	}
	dirty := map[string]bool{}
	h.tabEntriesLocked(h.active, dirty)
	h.tabEntriesLocked(id, dirty)
	h.active = id
	h.finish(h.rebuildLocked(dirty))
}

// Update sets the tools of a document, replacing what it had. Every tool
// goes through admission: tools over the limits, and those the browser
// could not hand over (refused), are recorded as refusals (see Refusals);
// a denied origin's tools are ignored.
func (h *Hub) Update(d core.Source, tools []core.Tool, refused []core.Refusal) {
	h.mu.Lock()
	old := h.docs[d.Key]
	if !h.opts.Origins.Allows(d.Origin) {
		if !h.denied[d.Origin] && len(h.denied) < 1000 && (len(tools) > 0 || len(refused) > 0) {
			h.denied[d.Origin] = true
			h.refusals.add(core.Refusal{Reason: core.ReasonOrigin, Tool: "*", Origin: d.Origin, URL: d.URL, Tab: d.Tab, At: time.Now(),
				Detail: "the origin " + d.Origin + " is denied by the origin policy (--allow-origin/--deny-origin); its tools are ignored"})
			h.logger.Info("ignoring the tools of a denied origin", "origin", d.Origin, "url", d.URL)
		}
		if old != nil {
			dirty := map[string]bool{}
			h.dropDocLocked(old, dirty, true)
			delete(h.docs, d.Key)
			h.finish(h.rebuildLocked(dirty))
			return
		}
		h.mu.Unlock()
		return
	}
	if len(refused) > 0 {
		t := h.tabLocked(d.Tab)
		for _, r := range refused {
			h.refuseLocked(t, d, r.Tool, r.Reason, r.Detail)
		}
	}
	if old == nil && len(tools) == 0 {
		h.mu.Unlock()
		return
	}
	t := h.tabLocked(d.Tab)
	if t.url == "" {
		t.url = d.URL
	}
	admitted := h.admitLocked(t, d, tools)
	dirty := map[string]bool{}
	if old != nil {
		h.dropDocLocked(old, dirty, len(admitted) == 0)
		delete(h.docs, d.Key)
	}
	if len(admitted) == 0 {
		if old == nil {
			h.mu.Unlock()
			return
		}
		h.finish(h.rebuildLocked(dirty))
		return
	}
	// Every update counts as the page updating its tools: site-level names
	// go to the document that updated most recently.
	h.seq++
	nd := &doc{Source: d, tools: make(map[string]core.Tool, len(admitted)), updated: h.seq, born: h.seq}
	if old != nil {
		nd.born = old.born
	}
	for _, tl := range admitted {
		if old != nil {
			if prev, ok := old.tools[tl.Name]; ok && sameTool(prev, tl) {
				tl = prev // keep the maps, so unchanged listings compare fast
			}
		}
		nd.tools[tl.Name] = tl
		h.cacheToolLocked(d, tl, dirty)
		h.validator.prepare(tl.Name, d.URL, tl.InputSchema)
	}
	h.docs[d.Key] = nd
	h.holdLocked(nd, dirty)
	h.finish(h.rebuildLocked(dirty))
}

// admitLocked applies the limits to a document's tools and returns those
// that enter the catalog, in the page's order.
func (h *Hub) admitLocked(t *tab, d core.Source, tools []core.Tool) []core.Tool {
	l := &h.opts.Limits
	out := make([]core.Tool, 0, min(len(tools), l.ToolsPerDocument))
	seen := make(map[string]bool, len(tools))
	over := 0
	for _, tl := range tools {
		if seen[tl.Name] {
			h.refuseLocked(t, d, tl.Name, core.ReasonDuplicate, "another tool of the page has the same name")
			continue
		}
		seen[tl.Name] = true
		if len(out) >= l.ToolsPerDocument {
			over++
			continue
		}
		checked, code, reason := l.checkTool(tl)
		if reason != "" {
			h.refuseLocked(t, d, tl.Name, code, reason)
			continue
		}
		out = append(out, checked)
	}
	if over > 0 {
		h.refuseLocked(t, d, "*", core.ReasonTooMany, strconv.Itoa(over)+" tools over the limit of "+strconv.Itoa(l.ToolsPerDocument)+" per document")
	}
	var fresh []string
	for _, tl := range out {
		if id := entryID(d.Origin, tl.Name); !t.known[id] {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) == 0 {
		return out
	}
	got := t.bucket.take(len(fresh), l.RegistrationsPerMinute, time.Now())
	refused := make(map[string]bool, len(fresh)-got)
	for i, id := range fresh {
		if i < got {
			t.known[id] = true
		} else {
			refused[id] = true
		}
	}
	if len(refused) > 0 {
		h.refuseLocked(t, d, "*", core.ReasonRate, strconv.Itoa(len(refused))+" new tools: the tab registered more than "+
			strconv.Itoa(l.RegistrationsPerMinute)+" new tool names in a minute; they are ignored until the page registers them again")
		kept := out[:0]
		for _, tl := range out {
			if !refused[entryID(d.Origin, tl.Name)] {
				kept = append(kept, tl)
			}
		}
		out = kept
	}
	if len(t.known) > 4*l.RegistrationsPerMinute+l.ToolsPerDocument {
		// Forget old names, keeping those the tab has now.
		clear(t.known)
		for _, dd := range h.docs {
			if dd.Tab == t.id {
				for name := range dd.tools {
					t.known[entryID(dd.Origin, name)] = true
				}
			}
		}
		for _, tl := range out {
			t.known[entryID(d.Origin, tl.Name)] = true
		}
	}
	return out
}

// refuseLocked records a refused tool, once per tab, origin, tool and
// reason, in the refusal log (see Refusals) and the log.
func (h *Hub) refuseLocked(t *tab, d core.Source, name string, code core.Reason, detail string) {
	k := d.Origin + "\x00" + name + "\x00" + detail
	if t.refused[k] || len(t.refused) >= 256 {
		return
	}
	t.refused[k] = true
	h.refusals.add(core.Refusal{Reason: code, Tool: name, Detail: detail, Origin: d.Origin, URL: d.URL, Tab: d.Tab, At: time.Now()})
	h.logger.Warn("refused a tool", "tool", name, "url", d.URL, "tab", t.n, "reason", detail, "code", code)
}

// cacheToolLocked keeps the cached entry of a live tool up to date: a tool
// with annotations.cache gets or refreshes its entry, another loses it.
func (h *Hub) cacheToolLocked(d core.Source, tl core.Tool, dirty map[string]bool) {
	id := entryID(d.Origin, tl.Name)
	e := h.cache[id]
	if !cacheFlag(tl) {
		if e != nil {
			delete(h.cache, id)
			h.markDirtyLocked()
		}
		return
	}
	now := time.Now()
	if e != nil && e.URL == d.URL && e.Backend == string(d.Backend) && sameTool(e.Tool.tool(), tl) {
		if now.Sub(e.Seen) > time.Minute {
			e.Seen = now
			h.markDirtyLocked()
		}
		return
	}
	ne := &cacheEntry{Origin: d.Origin, URL: d.URL, Backend: string(d.Backend), Tool: saveTool(tl), Seen: now}
	if e != nil {
		ne.Name = e.Name
	}
	h.cache[id] = ne
	if len(h.cache) > maxCachedTools {
		var oldest string
		for k, c := range h.cache {
			if oldest == "" || c.Seen.Before(h.cache[oldest].Seen) {
				oldest = k
			}
		}
		delete(h.cache, oldest)
		dirty[oldest] = true
	}
	h.markDirtyLocked()
}

// markDirtyLocked schedules a write of the state file.
func (h *Hub) markDirtyLocked() {
	h.dirty = true
	if h.store == nil || h.saving != nil {
		return
	}
	h.saving = make(chan struct{})
	go h.saveLoop(h.saving)
}

// minSaveGap spaces the writes of the state file under a stream of changes.
const minSaveGap = 50 * time.Millisecond

// saveLoop writes the state file until it is up to date, then closes done.
func (h *Hub) saveLoop(done chan struct{}) {
	for {
		h.mu.Lock()
		if !h.dirty {
			h.saving = nil
			close(done)
			h.mu.Unlock()
			return
		}
		h.dirty = false
		entries := make([]cacheEntry, 0, len(h.cache))
		for _, e := range h.cache {
			entries = append(entries, *e)
		}
		h.mu.Unlock()
		sort.Slice(entries, func(i, j int) bool {
			return entryID(entries[i].Origin, entries[i].Tool.Name) < entryID(entries[j].Origin, entries[j].Tool.Name)
		})
		err := h.store.save(entries)
		if err != nil {
			h.logger.Warn("cannot write the state file; cached tools will not survive a restart", "dir", h.store.dir, "err", err)
		}
		h.mu.Lock()
		h.saveErr = err
		again := h.dirty
		h.mu.Unlock()
		if again {
			time.Sleep(minSaveGap)
		}
	}
}

// DropDoc forgets a document (it navigated away or its frame went away).
func (h *Hub) DropDoc(key string) {
	h.mu.Lock()
	d, ok := h.docs[key]
	if !ok {
		h.mu.Unlock()
		return
	}
	dirty := map[string]bool{}
	h.dropDocLocked(d, dirty, true)
	delete(h.docs, key)
	h.finish(h.rebuildLocked(dirty))
}

// finish unlocks and, when changed, counts the change and tells
// subscribers and waiters (without blocking on any of them).
func (h *Hub) finish(changed bool) {
	if changed {
		h.version++
		h.wakeLocked()
		h.notifyLocked()
	}
	h.mu.Unlock()
}

// Version counts the changes of the catalog.
func (h *Hub) Version() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version
}

// Tools returns the routed tools, sorted by name. The slice is the
// caller's; the maps inside are shared and must not be modified.
func (h *Hub) Tools() []RoutedTool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.list)
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
			if ti := byID[c.tab.id]; ti != nil && (len(ti.Tools) == 0 || ti.Tools[len(ti.Tools)-1] != rt.Name) {
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
