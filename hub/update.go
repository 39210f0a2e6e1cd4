package hub

import (
	"strconv"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

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
			if h.opts.Hooks.Refused != nil {
				h.opts.Hooks.Refused(core.ReasonOrigin)
			}
			h.wakeLocked()
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
	nd := &doc{Source: d, tools: make(map[string]core.Tool, len(admitted)), schemas: make(map[string]*compiled), updated: h.seq, born: h.seq}
	if old != nil {
		nd.born = old.born
	}
	for _, tl := range admitted {
		if old != nil {
			if prev, ok := old.tools[tl.Name]; ok && sameDefinition(prev, tl) {
				tl = prev // keep the maps, so unchanged listings compare fast
			}
		}
		nd.tools[tl.Name] = tl
		h.cacheToolLocked(d, tl, dirty)
		if c := h.validator.prepare(tl.Name, d.URL, tl.InputSchema); c != nil {
			nd.schemas[tl.Name] = c
		}
	}
	h.docs[d.Key] = nd
	h.holdLocked(nd, dirty)
	var reg *Registration
	if old == nil && h.opts.Hooks.Registered != nil {
		now := time.Now()
		start := t.navAt
		if start.IsZero() || start.After(now) {
			start = now
		}
		reg = &Registration{Origin: d.Origin, URL: d.URL, Tab: t.n, Browser: d.Browser, Tools: len(admitted), Start: start, End: now}
	}
	h.finish(h.rebuildLocked(dirty))
	if reg != nil {
		h.opts.Hooks.Registered(*reg)
	}
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
		checked, dropped := trimCarried(checked)
		if len(dropped) > 0 {
			h.noteDroppedLocked(t, d, tl.Name, "tool", dropped)
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
	got := takeUpTo(t.budget, len(fresh), time.Now())
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
	if h.opts.Hooks.Refused != nil {
		h.opts.Hooks.Refused(code)
	}
	h.wakeLocked() // whoever waits on Changed for refusals (CI mode) sees it now
	h.logger.Warn("refused a tool", "tool", name, "url", d.URL, "tab", t.n, "reason", detail, "code", code)
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
