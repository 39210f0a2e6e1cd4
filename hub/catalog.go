package hub

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// The catalog is kept per group: one group is every live document of one
// origin that has a tool of one name, plus that tool's cached entry. A
// change (a document's tools, a tab closing, the active tab) recomputes only
// the groups it touches; the listing is then the union of the groups'
// tools, sorted by name.

// group is the candidates for one site-level name.
type group struct {
	id, origin, tool string
	cands            []candidate
	entry            *cacheEntry
}

// groupOut is what one group contributes to the catalog.
type groupOut struct {
	// names are the group's routed names, the site-level name first, then
	// tab-level names. Their tools are in Hub.list, not copied here.
	names  []string
	resIDs []string // the reservations of the names
	site   *route
}

// groupLocked gathers the group of entry id, or returns nil when no
// document has the tool and it is not cached.
func (h *Hub) groupLocked(id string) *group {
	keys := make([]string, 0, len(h.holders[id]))
	for k := range h.holders[id] {
		keys = append(keys, k)
	}
	e := h.cache[id]
	if len(keys) == 0 && e == nil {
		return nil
	}
	sort.Strings(keys)
	g := &group{id: id, entry: e}
	g.origin, g.tool, _ = strings.Cut(id, "\x00")
	for _, k := range keys {
		d := h.docs[k]
		g.cands = append(g.cands, candidate{doc: d, tool: g.tool, tab: h.tabs[d.Tab]})
	}
	g.cands = sameToolOnce(g.cands)
	return g
}

// sameToolOnce drops a page server's candidate when a WebMCP document of
// the same frame has the tool too. A page may offer one registry through
// both faces (MCP-B's @mcp-b/global serves its navigator.modelContext tools
// over a TabServerTransport as well): that is one tool, listed once under
// one name and called the direct way.
func sameToolOnce(cands []candidate) []candidate {
	if !slices.ContainsFunc(cands, func(c candidate) bool { return c.doc.Backend == core.BackendMCPB }) {
		return cands // nothing to drop (and no map made for every rebuild)
	}
	webmcp := map[string]bool{}
	for _, c := range cands {
		if c.doc.Backend != core.BackendMCPB {
			webmcp[c.doc.Tab+"\x00"+frameOf(c.doc)] = true
		}
	}
	if len(webmcp) == 0 || len(webmcp) == len(cands) {
		return cands
	}
	out := make([]candidate, 0, len(cands))
	for _, c := range cands {
		if c.doc.Backend == core.BackendMCPB && webmcp[c.doc.Tab+"\x00"+frameOf(c.doc)] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// rebuildLocked recomputes the groups of the entries in dirty (every group
// when dirty is nil) and reports whether the listing changed.
func (h *Hub) rebuildLocked(dirty map[string]bool) bool {
	if dirty == nil {
		dirty = make(map[string]bool, len(h.holders)+len(h.cache))
		for id := range h.holders {
			dirty[id] = true
		}
		for id := range h.cache {
			dirty[id] = true
		}
		for id := range h.groups {
			dirty[id] = true
		}
	}
	var sole map[string]bool
	if h.opts.Names == NamesShort {
		sole = h.shortDirtyLocked(dirty)
	}
	ids := make([]string, 0, len(dirty))
	for id := range dirty {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	changed := false
	var released []string
	var rebuilt [][]RoutedTool // the tools of each group rebuilt
	for _, id := range ids {
		// The group's tools as listed before: indexes into h.list by name.
		prev := map[string]int{}
		if old := h.groups[id]; old != nil {
			for _, name := range old.names {
				if i, ok := h.listIndexLocked(name); ok {
					prev[name] = i
				}
				delete(h.routes, name)
			}
			for _, r := range old.resIDs {
				h.names.release(r)
			}
			released = append(released, old.resIDs...)
			delete(h.groups, id)
			delete(h.bySite, id)
		}
		g := h.groupLocked(id)
		if sole != nil {
			h.indexToolLocked(id, g != nil)
		}
		if g == nil {
			changed = changed || len(prev) > 0
			continue
		}
		out, tools := h.buildGroupLocked(g, sole)
		for i, rt := range tools {
			if j, ok := prev[rt.Name]; ok && h.list[j].Same(rt) {
				tools[i] = h.list[j]
			} else {
				changed = true
			}
			delete(prev, rt.Name)
		}
		changed = changed || len(prev) > 0
		rebuilt = append(rebuilt, tools)
		h.groups[id] = out
		h.bySite[id] = out.site
	}
	h.names.gc(released, h.tabOpenLocked)
	if changed {
		// The groups not rebuilt keep their tools, found in the listing by
		// name; the rebuilt ones list theirs anew.
		n := 0
		for _, out := range h.groups {
			n += len(out.names)
		}
		list := make([]RoutedTool, 0, n)
		for id, out := range h.groups {
			if dirty[id] {
				continue
			}
			for _, name := range out.names {
				if i, ok := h.listIndexLocked(name); ok {
					list = append(list, h.list[i])
				}
			}
		}
		for _, tools := range rebuilt {
			list = append(list, tools...)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		h.list = list
	}
	return changed
}

// listIndexLocked finds the routed tool of that name in h.list.
func (h *Hub) listIndexLocked(name string) (int, bool) {
	return slices.BinarySearchFunc(h.list, name, func(rt RoutedTool, n string) int { return strings.Compare(rt.Name, n) })
}

// buildGroupLocked names and lists a group, and adds its routes. It
// returns the group and its tools, in the order of its names. sole is nil
// with --tool-names site; with short, it says per tool name whether one
// origin alone offers it.
func (h *Hub) buildGroupLocked(g *group, sole map[string]bool) (*groupOut, []RoutedTool) {
	// The site-level name, then one per document when there are two or
	// more: sized once, since the group is kept until it changes.
	n := 1
	if len(g.cands) > 1 {
		n += len(g.cands)
	}
	out := &groupOut{names: make([]string, 0, n), resIDs: make([]string, 0, n)}
	tools := make([]RoutedTool, 0, n)
	site := SiteOf(g.origin)
	tabIDs := make([]string, 0, len(g.cands))
	for _, c := range g.cands {
		tabIDs = append(tabIDs, c.tab.id)
	}
	prefer := ""
	if g.entry != nil {
		prefer = g.entry.Name
	}
	resID := "s\x00" + g.id
	q := siteNameReq(site, g.tool, prefer, sole)
	q.id, q.tabs, q.cached = resID, tabIDs, g.entry != nil
	name := h.names.take(q)
	if g.entry != nil && g.entry.Name != name {
		g.entry.Name = name
		h.markDirtyLocked()
	}
	out.site = &route{cands: g.cands, entry: g.entry, site: true}
	h.routes[name] = out.site
	out.resIDs = append(out.resIDs, resID)
	out.names = append(out.names, name)
	tools = append(tools, h.siteToolLocked(name, site, g))
	if len(g.cands) < 2 {
		return out, tools
	}
	plainOf := h.plainHoldersLocked(g.id, g.cands)
	browsers := spansBrowsers(g.cands)
	for _, c := range g.cands {
		tid := "t\x00" + c.tab.id + "\x00" + g.id
		if plainOf[c.tab.id] != frameOf(c.doc) {
			tid += "\x00" + frameOf(c.doc)
		}
		seg := "tab" + strconv.Itoa(c.tab.n)
		if browsers {
			// Two browsers serve the site: say which one in the name.
			seg = c.doc.Browser + "_" + seg
		}
		tname := h.names.alloc(tid, naturalName(site, seg, g.tool), "", []string{c.tab.id}, false)
		h.routes[tname] = &route{cands: []candidate{c}}
		out.resIDs = append(out.resIDs, tid)
		out.names = append(out.names, tname)
		tools = append(tools, h.liveToolLocked(tname, site, []candidate{c}))
	}
	return out, tools
}

// siteNameReq is the request for a site-level name: with sole nil
// (--tool-names site) <site>_<tool>; with short, the tool's own name while
// its origin alone offers it, and else <site>_<tool>, taking the name from
// a holder that had the own name. A cached tool's saved name (prefer) is
// kept, but for an own name that the style or a clash rules out.
func siteNameReq(site, tool, prefer string, sole map[string]bool) nameReq {
	natural := naturalName(site, "", tool)
	short := shortName(tool)
	if prefer == short {
		prefer = ""
	}
	q := nameReq{natural: natural, wants: []string{prefer, natural}}
	switch {
	case sole == nil:
	case sole[tool]:
		// The own name first, so that a restart alone with the tool gives
		// it back even when it had clashed before.
		q.wants = []string{short, prefer, natural}
	default:
		q.avoid = short
	}
	return q
}

// shortDirtyLocked, with --tool-names short, adds to dirty the groups of
// other origins with a tool of a dirty group: their names change when a
// second origin comes to offer the tool. It returns, for each tool name of
// the dirty groups, whether exactly one origin offers it now.
func (h *Hub) shortDirtyLocked(dirty map[string]bool) map[string]bool {
	byTool := map[string]map[string]bool{}
	for id := range dirty {
		_, tool, _ := strings.Cut(id, "\x00")
		if byTool[tool] == nil {
			byTool[tool] = map[string]bool{}
		}
		byTool[tool][id] = true
	}
	sole := make(map[string]bool, len(byTool))
	for tool, ids := range byTool {
		for id := range h.byTool[tool] {
			ids[id] = true
			dirty[id] = true
		}
		n := 0
		for id := range ids {
			if len(h.holders[id]) > 0 || h.cache[id] != nil {
				n++
			}
		}
		sole[tool] = n == 1
	}
	return sole
}

// indexToolLocked notes whether the group of entry id is listed, in
// h.byTool.
func (h *Hub) indexToolLocked(id string, listed bool) {
	_, tool, _ := strings.Cut(id, "\x00")
	m := h.byTool[tool]
	switch {
	case listed && m == nil:
		h.byTool[tool] = map[string]bool{id: true}
	case listed:
		m[id] = true
	case m != nil:
		delete(m, id)
		if len(m) == 0 {
			delete(h.byTool, tool)
		}
	}
}

// spansBrowsers reports whether cands are in more than one browser (one
// hub over several, cdp/multi).
func spansBrowsers(cands []candidate) bool {
	for _, c := range cands[1:] {
		if c.doc.Browser != cands[0].doc.Browser {
			return true
		}
	}
	return false
}

// frameOf names a document's frame, or the document when the frame is
// unknown.
func frameOf(d *doc) string {
	if d.Frame != "" {
		return d.Frame
	}
	return "doc:" + d.Key
}

// plainHoldersLocked decides, for each tab among cands, which frame holds
// the tab-level name of the tool of entry id without a frame suffix: the
// frame that held it before, else the tab's main frame (whose id is the
// tab's), else the first. So the name stays with the frame that had it, and
// a reload that gives the frame a new document keeps it.
func (h *Hub) plainHoldersLocked(id string, cands []candidate) map[string]string {
	out := make(map[string]string)
	for _, c := range cands {
		key := c.tab.id + "\x00" + id
		f := frameOf(c.doc)
		cur, decided := out[c.tab.id]
		switch {
		case !decided:
			out[c.tab.id] = f
		case cur == h.plainFrame[key]:
			// The earlier holder is here and keeps it.
		case f == h.plainFrame[key] || f == c.tab.id:
			out[c.tab.id] = f
		}
	}
	for tab, f := range out {
		h.plainFrame[tab+"\x00"+id] = f
	}
	return out
}

// Same reports whether rt and o list the same: the same name, tool and
// provenance (an empty Tabs is the same as none). It compares field by
// field: it runs for every tool of every group rebuilt, and for every
// listed tool on every change, where reflect.DeepEqual allocated two
// copies of each tool it was given.
func (rt RoutedTool) Same(o RoutedTool) bool {
	return rt.Name == o.Name && sameDefinition(rt.Tool, o.Tool) && sameProvenance(rt.Source, o.Source)
}

// sameProvenance reports whether a and b are equal, Tabs compared by
// content. (A field added to core.Provenance must be added here: the
// test TestSameProvenanceSeesEveryField fails until it is.)
func sameProvenance(a, b core.Provenance) bool {
	return a.Tool == b.Tool && a.Origin == b.Origin && a.URL == b.URL && a.Tab == b.Tab &&
		a.Frame == b.Frame && a.Backend == b.Backend && slices.Equal(a.Tabs, b.Tabs) &&
		a.Cached == b.Cached && a.Browser == b.Browser && a.Userscript == b.Userscript && a.Site == b.Site &&
		a.Holders == b.Holders && a.Active == b.Active
}

// siteToolLocked lists a site-level name: its live candidates, else its
// cached entry.
func (h *Hub) siteToolLocked(name, site string, g *group) RoutedTool {
	if len(g.cands) > 0 {
		return h.liveToolLocked(name, site, g.cands)
	}
	e := g.entry
	return RoutedTool{
		Name: name,
		Tool: e.Tool.tool(),
		Source: core.Provenance{
			Tool: e.Tool.Name, Origin: e.Origin, URL: e.URL, Backend: core.Backend(e.Backend), Cached: true, Site: site,
			Userscript: e.Tool.Userscript,
		},
	}
}

// liveToolLocked lists a name that reaches cands, with its provenance: the
// document a call goes to (and the userscript that registered the tool
// there), and the tabs that have the tool when more than one document
// does.
func (h *Hub) liveToolLocked(name, site string, cands []candidate) RoutedTool {
	c := h.pickLocked(cands)
	tool := c.doc.tools[c.tool]
	src := core.Provenance{
		Tool: c.tool, Origin: c.doc.Origin, URL: c.doc.URL, Tab: c.tab.n, Frame: c.doc.Frame, Backend: c.doc.Backend, Browser: c.doc.Browser,
		Userscript: tool.Userscript, Site: site, Holders: len(cands), Active: c.tab.id == h.active,
	}
	if len(cands) > 1 {
		seen := map[int]bool{}
		for _, cc := range cands {
			if !seen[cc.tab.n] {
				seen[cc.tab.n] = true
				src.Tabs = append(src.Tabs, cc.tab.n)
			}
		}
		sort.Ints(src.Tabs)
	}
	return RoutedTool{Name: name, Tool: tool, Source: src}
}

// pickLocked routes a name: the active tab if it has the tool, else the
// document that updated its tools most recently.
func (h *Hub) pickLocked(cands []candidate) candidate {
	best := cands[0]
	for _, c := range cands[1:] {
		ca, ba := c.tab.id == h.active, best.tab.id == h.active
		if ca && !ba || ca == ba && c.doc.updated > best.doc.updated {
			best = c
		}
	}
	return best
}
