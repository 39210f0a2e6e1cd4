package hub

import (
	"sort"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TabOpened records a tab, or updates its URL and title.
func (h *Hub) TabOpened(id, url, title string) {
	h.mu.Lock()
	_, known := h.tabs[id]
	t := h.tabLocked(id)
	if !known || t.url != url || t.title != title {
		if h.opts.Hooks.Registered != nil && t.url != url {
			t.navAt = time.Now()
		}
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
	t := &tab{id: id, n: n, inflight: make(chan struct{}, h.opts.MaxInflightPerTab),
		budget: newRegistrationBudget(h.opts.Limits.RegistrationsPerMinute), known: map[string]bool{}, refused: map[string]bool{}}
	h.tabs[id] = t
	t.touch(h)
	return t
}

// touch records that t was just used: opened, activated, or called. It
// reports whether t took the place of another tab as the one used last
// (the order of TabOrder changed), without a lock: of two touches that
// race, the later one's tab stays the last used.
func (t *tab) touch(h *Hub) bool {
	seq := h.useSeq.Add(1)
	t.used.Store(seq)
	for {
		cur := h.lastUsed.Load()
		if cur == t || (cur != nil && cur.used.Load() > seq) {
			return false
		}
		if h.lastUsed.CompareAndSwap(cur, t) {
			return true
		}
	}
}

// markUsed records a call into t: when another tab was used last, WatchUse's
// subscribers hear that the tabs' order changed.
func (h *Hub) markUsed(t *tab) {
	if t.touch(h) {
		h.mu.Lock()
		signal(h.useWatchers)
		h.mu.Unlock()
	}
}

// TabClosed forgets a tab and every document in it. Its cached tools stay.
func (h *Hub) TabClosed(id string) {
	h.mu.Lock()
	h.closeTabLocked(id)
}

// TabLost forgets a tab whose browser's connection was lost (not closed by
// anyone: it may come back when the browser does). Every tool of its
// documents stays listed as cached, with or without annotations.cache,
// until a page has it again; those without the flag are kept in memory
// only, never in the state file.
func (h *Hub) TabLost(id string) {
	h.mu.Lock()
	now := time.Now()
	for _, d := range h.docs {
		if d.Tab != id || d.Backend == core.BackendMCPB {
			continue
		}
		for name, tl := range d.tools {
			eid := entryID(d.Origin, name)
			if h.cache[eid] == nil && len(h.cache) < maxCachedTools {
				h.cache[eid] = &cacheEntry{Origin: d.Origin, URL: d.URL, Backend: string(d.Backend), Tool: saveTool(tl), Seen: now, lost: true}
			}
		}
	}
	h.closeTabLocked(id)
}

// closeTabLocked is TabClosed with h.mu held; it unlocks.
func (h *Hub) closeTabLocked(id string) {
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
	if !changed {
		h.wakeLocked() // the tabs changed even if the listing did not
	}
	h.finish(changed)
}

// SetTabBrowser records the name of the browser a tab is in, when one hub
// serves several (cdp/multi): webmcp_list_tabs and the status page
// show it.
func (h *Hub) SetTabBrowser(id, browser string) {
	h.mu.Lock()
	if t, ok := h.tabs[id]; ok && t.browser != browser {
		t.browser = browser
		h.wakeLocked()
	}
	h.mu.Unlock()
}

// tabOpenLocked reports whether a tab is open.
func (h *Hub) tabOpenLocked(id string) bool {
	_, ok := h.tabs[id]
	return ok
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
	if t := h.tabs[id]; t != nil {
		t.touch(h)
	}
	signal(h.useWatchers) // the active tab leads TabOrder
	h.finish(h.rebuildLocked(dirty))
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
	// Browser is the name of the browser the tab is in, when one hub
	// serves several.
	Browser string `json:"browser,omitempty"`
	// Active says the tab is the one site-level names go to first.
	Active bool `json:"active,omitempty"`
	// Tools are the routed names that reach this tab.
	Tools []string `json:"tools"`
	// Note says what to know about a tab with no tools: one that loaded
	// before we attached shows its tools only after a reload.
	Note string `json:"note,omitempty"`
}

// NoteReload is TabInfo.Note of a tab that loaded before we attached and
// has no tools we could read.
const NoteReload = "loaded before webmcp-cdp attached: tools appear after a reload (ask the person before reloading: webmcp_reload_tab loses what they typed)"

// TabLoadedBefore records whether a tab shows a document that loaded
// before we attached (cdp.PreexistingSink).
func (h *Hub) TabLoadedBefore(id string, before bool) {
	h.mu.Lock()
	if t, ok := h.tabs[id]; ok && t.loadedBefore != before {
		t.loadedBefore = before
		h.wakeLocked()
	}
	h.mu.Unlock()
}

// Tabs lists the open tabs by number, with the routed names that reach each.
func (h *Hub) Tabs() []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	byID := make(map[string]*TabInfo, len(h.tabs))
	out := make([]*TabInfo, 0, len(h.tabs))
	for _, t := range h.tabs {
		ti := &TabInfo{N: t.n, ID: t.id, URL: t.url, Title: t.title, Browser: t.browser, Active: t.id == h.active, Tools: []string{}}
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
		if len(ti.Tools) == 0 && h.tabs[ti.ID].loadedBefore {
			ti.Note = NoteReload
		}
		res[i] = *ti
	}
	return res
}

// Tab returns the tab numbered n.
func (h *Hub) Tab(n int) (TabInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.tabs {
		if t.n == n {
			return h.tabInfoLocked(t), true
		}
	}
	return TabInfo{}, false
}

// TabOf returns the tab with the browser id id.
func (h *Hub) TabOf(id string) (TabInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.tabs[id]
	if !ok {
		return TabInfo{}, false
	}
	return h.tabInfoLocked(t), true
}

// tabInfoLocked describes one tab as Tabs does, without working out the
// names of every other tab (webmcp_open_tab's wait asks on each change).
func (h *Hub) tabInfoLocked(t *tab) TabInfo {
	ti := TabInfo{N: t.n, ID: t.id, URL: t.url, Title: t.title, Browser: t.browser, Active: t.id == h.active, Tools: []string{}}
	for _, rt := range h.list {
		for _, c := range h.routes[rt.Name].cands {
			if c.tab.id == t.id {
				ti.Tools = append(ti.Tools, rt.Name)
				break
			}
		}
	}
	if len(ti.Tools) == 0 && t.loadedBefore {
		ti.Note = NoteReload
	}
	return ti
}

// TabOrder returns the numbers of the open tabs, the active tab first, then
// the most recently used (opened, activated or called) first. With no tab
// made active, the most recently used one comes first.
func (h *Hub) TabOrder() []int {
	h.mu.Lock()
	tabs := make([]*tab, 0, len(h.tabs))
	for _, t := range h.tabs {
		tabs = append(tabs, t)
	}
	active := h.active
	h.mu.Unlock()
	sort.Slice(tabs, func(i, j int) bool {
		a, b := tabs[i], tabs[j]
		if (a.id == active) != (b.id == active) {
			return a.id == active
		}
		if ua, ub := a.used.Load(), b.used.Load(); ua != ub {
			return ua > ub
		}
		return a.n < b.n
	})
	out := make([]int, len(tabs))
	for i, t := range tabs {
		out[i] = t.n
	}
	return out
}
