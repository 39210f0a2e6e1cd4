package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"golang.org/x/time/rate"
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

// TabCloser is what the hub needs from a browser to close a tab it opened
// and will not use (Open failed but made a tab, such as one whose page did
// not load). A Browser that does not implement it leaves such tabs open.
// *cdp.Browser implements it.
type TabCloser interface {
	CloseTab(ctx context.Context, tab string) error
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
	// Names says how page tools, resources and prompts are named (default
	// NamesSite).
	Names NameStyle
	// Logger receives the hub's log (default slog.Default()).
	Logger *slog.Logger
	// Hooks are told of calls, registrations and refusals (metrics,
	// traces; hooks.go); none set is off.
	Hooks Hooks
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
	if o.Names == "" {
		o.Names = NamesSite
	}
	o.Limits.defaults()
}

// Hub is the catalog and the router. Its methods are safe for concurrent use.
type Hub struct {
	browser   Browser
	opts      Options
	logger    *slog.Logger
	validator *validator
	// callHooks are told of every finished call (see HookCalls), outside
	// the catalog's lock.
	callHooks callHookSets
	store     *stateStore // nil without a state directory
	// search is the tool-search index of the latest catalog searched
	// (search.go); useSeq numbers the uses of tabs, for recency, and
	// lastUsed is the tab used last (tabs.go).
	search   atomic.Pointer[searchIndex]
	useSeq   atomic.Uint64
	lastUsed atomic.Pointer[tab]

	mu     sync.Mutex
	tabs   map[string]*tab
	docs   map[string]*doc
	routes map[string]*route
	bySite map[string]*route // live or cached site-level routes by entryID
	list   []RoutedTool      // sorted by name; replaced on a change, never written into
	groups map[string]*groupOut
	// byTool is, with --tool-names short, the entryIDs of the groups
	// listed, by tool name: the origins that offer one tool.
	byTool  map[string]map[string]bool
	holders map[string]map[string]bool // entryID -> keys of the docs that have the tool
	names   *names
	cache   map[string]*cacheEntry // by entryID
	dirty   bool                   // the cache differs from the state file
	saving  chan struct{}          // closed when the running writer ends; nil when none runs
	saveErr error                  // the last write's error
	saveGap time.Duration          // spaces the writes (minSaveGap; tests change it)
	// flushNow, set by Close, has the running writer skip the gap; kick
	// (capacity 1) wakes it from the gap. Both are reset when it ends.
	flushNow bool
	kick     chan struct{}
	opening  map[string]*opening // cached tools whose page is being opened
	active   string
	seq      uint64
	version  uint64
	changed  chan struct{} // closed and replaced on every change
	// watchers are the subscriptions to changes (see Watch), useWatchers
	// those to the tab used last (see WatchUse).
	watchers    map[*watcher]struct{}
	useWatchers map[*watcher]struct{}
	denied      map[string]bool // origins whose denial was logged
	// refusals keeps the last refusals, for the status page and CI mode.
	refusals refusalLog
	// plainFrame is, per tab and tool, the frame that holds the tab-level
	// name without a frame suffix.
	plainFrame map[string]string
	// ps holds the MCP-B page servers (pageservers.go).
	ps pageServers
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
	// Caller is who asked for the call (WithCaller), or "".
	Caller string
}

// tab is an open tab. id, n and inflight never change; the rest is guarded
// by Hub.mu.
type tab struct {
	id       string
	n        int
	inflight chan struct{}
	// used is when the tab was last used (opened, activated, called), in
	// Hub.useSeq's numbers.
	used atomic.Uint64

	url, title string
	browser    string          // SetTabBrowser
	budget     *rate.Limiter   // registrations of new tool names (newRegistrationBudget)
	known      map[string]bool // entryIDs registered in this tab
	refused    map[string]bool // refusals logged for this tab
	hints      hintGate        // the client hints it shows (hints.go)
	// loadedBefore: its document loaded before we attached (TabLoadedBefore).
	loadedBefore bool
	// navAt is when the tab was seen at its URL, with a Registered hook.
	navAt time.Time
}

// doc is a document's tools. A doc never changes once made: Update makes a
// new one, so a call may use a doc after the hub's lock is released.
type doc struct {
	core.Source
	tools   map[string]core.Tool
	schemas map[string]*compiled // the tools' input schemas, by tool name (none for no schema)
	updated uint64               // the hub's sequence number of the update that made it
	born    uint64               // the sequence number of the document's first update
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
		byTool:    make(map[string]map[string]bool),
		holders:   make(map[string]map[string]bool),
		names:     newNames(),
		cache:     make(map[string]*cacheEntry),
		opening:   make(map[string]*opening),
		saveGap:   minSaveGap,
		kick:      make(chan struct{}, 1),
		changed:   make(chan struct{}),

		watchers:    make(map[*watcher]struct{}),
		useWatchers: make(map[*watcher]struct{}),
		denied:      make(map[string]bool),

		plainFrame: make(map[string]string),
	}
	h.HookCalls(opts.Hooks.Calls) // for the hub's life
	if opts.StateDir != "" {
		h.store = &stateStore{dir: opts.StateDir, logger: opts.Logger}
		for _, e := range h.store.load(opts.CacheTTL, time.Now()) {
			if !opts.Origins.Allows(e.Origin) {
				continue
			}
			// Checked as a page's tool is (the file is the user's, but
			// what it holds came from pages).
			if t, _, reason := opts.Limits.checkTool(e.Tool.tool()); reason == "" {
				t, _ = trimCarried(t)
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

// Close has the state file written now, without waiting out the gap that
// spaces writes, waits until it is up to date, and returns the error of the
// last write, if it failed. The hub stays usable.
func (h *Hub) Close() error {
	for {
		h.mu.Lock()
		done, err := h.saving, h.saveErr
		if done != nil {
			h.flushNow = true
			select {
			case h.kick <- struct{}{}:
			default:
			}
		}
		h.mu.Unlock()
		if done == nil {
			return err
		}
		<-done
	}
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

// SharedTools returns the routed tools, sorted by name, without copying
// them: the slice is the hub's and must not be modified (a change of the
// catalog replaces it, and never writes into the one handed out). It is
// for a reader of the whole listing on every change, where Tools would
// copy a thousand tools each time.
func (h *Hub) SharedTools() []RoutedTool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.list
}

// Tool returns the routed tool of that name, without copying the listing.
// Its maps are shared and must not be modified.
func (h *Hub) Tool(name string) (RoutedTool, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.listIndexLocked(name)
	if !ok {
		return RoutedTool{}, false
	}
	return h.list[i], true
}
