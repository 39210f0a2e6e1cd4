package mcpserver

import (
	"slices"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// statusUserscript is an operator's userscript (--userscript) as the status
// page shows it: the script in force (its file, patterns, run-at and the
// documents it ran in) with the tools it registered that are listed now and
// the tabs they reach. A script no longer loaded (removed at a reload)
// whose tools are still listed, by a document that ran it before or in the
// cache, is shown with its tools alone.
type statusUserscript struct {
	userscript.Status
	// Loaded says the script is in force; Gone that it is not (the page
	// knows the scripts in force).
	Loaded, Gone bool
	Tools        []string
	Tabs         []int
}

// userscripts lists the userscripts in force (HTTPOptions.Userscripts), in
// their order, then those no longer loaded whose tools are listed, by
// name; each with its tools, from the tools' provenance (the hub's
// catalog).
func (h *statusHandler) userscripts() []statusUserscript {
	var out []statusUserscript
	at := map[string]int{}
	if h.scripts != nil {
		for _, st := range h.scripts(h.s) {
			at[st.Name] = len(out)
			out = append(out, statusUserscript{Status: st, Loaded: true})
		}
	}
	loaded := len(out)
	for _, rt := range h.s.hub.Tools() {
		name := rt.Source.Userscript
		if name == "" {
			continue
		}
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, statusUserscript{Status: userscript.Status{Name: name}, Gone: h.scripts != nil})
		}
		u := &out[i]
		u.Tools = append(u.Tools, rt.Name)
		tabs := rt.Source.Tabs
		if len(tabs) == 0 && rt.Source.Tab > 0 {
			tabs = []int{rt.Source.Tab}
		}
		for _, n := range tabs {
			if !slices.Contains(u.Tabs, n) {
				u.Tabs = append(u.Tabs, n)
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Tabs)
	}
	slices.SortFunc(out[loaded:], func(a, b statusUserscript) int { return strings.Compare(a.Name, b.Name) })
	return out
}
