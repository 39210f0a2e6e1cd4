package hub

import (
	"fmt"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// UnknownTool is the outcome of a call to a routed name the catalog does
// not have. It teaches the next step (docs/errors.md): a tool the hub
// refused says its rule and limit; any other says the tab may have gone
// and to search with webmcp_list_tools, with the closest names.
func (h *Hub) UnknownTool(name string) core.Outcome {
	if r, ok := h.refusedAs(name); ok {
		return errorResult("%s was refused when its page (%s) registered it: %s%s. The page's other tools work; webmcp_list_tools lists them",
			name, r.URL, r.Detail, flagOf(r))
	}
	msg := fmt.Sprintf("no open page has a tool named %q: its tab may have closed or navigated away. Call webmcp_list_tools (with a query) to find the tools there are now", name)
	if closest := h.Closest(name, 3); len(closest) > 0 {
		msg += "; closest names: " + strings.Join(closest, ", ")
	}
	return errorResult("%s", msg)
}

// refusedAs finds the latest refusal of a tool that name would have routed
// to: the page's own name, or its site-level name.
func (h *Hub) refusedAs(name string) (core.Refusal, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	recs := h.refusals.recs
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Tool == "" || r.Tool == "*" {
			continue
		}
		if r.Tool == name || naturalName(SiteOf(r.Origin), "", r.Tool) == name {
			return r, true
		}
	}
	return core.Refusal{}, false
}

// flagOf names the flag that sets the limit a refusal broke, as text to
// append to its detail ("" when no flag does).
func flagOf(r core.Refusal) string {
	var flag string
	switch {
	case r.Reason == core.ReasonSize && strings.Contains(r.Detail, "description"):
		flag = "--max-description-bytes"
	case r.Reason == core.ReasonSize && strings.Contains(r.Detail, "inputSchema"):
		flag = "--max-schema-bytes"
	case r.Reason == core.ReasonName && strings.Contains(r.Detail, "over the limit"):
		flag = "--max-name-length"
	case r.Reason == core.ReasonTooMany:
		flag = "--max-tools-per-document"
	case r.Reason == core.ReasonRate:
		flag = "--max-registrations-per-minute"
	}
	if flag == "" {
		return " (rule: " + string(r.Reason) + ")"
	}
	return " (rule: " + string(r.Reason) + "; the limit is set by " + flag + ")"
}
