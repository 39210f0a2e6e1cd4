package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds what MCP Apps need from the catalog: the routed URI of
// the view a page server's tool names (its own resource, never another
// page's), and the routed name of a page server's tool that a view calls
// by its server's own name. What a tool's _meta says is read at the MCP
// edge (hub/mcpserver/apps.go); the hub only resolves.

// ViewMIMEType is the MIME type of an MCP App's view: a tool's view must be
// a resource of this type (or of none declared).
const ViewMIMEType = "text/html;profile=mcp-app"

// ErrNoOwnTool is OwnToolName's error when no open page server has a tool
// of that own name.
var ErrNoOwnTool = errors.New("no open page server has a tool of that name")

// ViewResource returns the URI under which the page server that the routed
// tool name reaches lists its own resource uri (webmcp://<site>/<tab>/uri,
// or uri itself where --tool-names short keeps it). It fails, naming the
// page, when that server lists no such resource (a view is never pointed
// at another page's resource), or lists it with a MIME type other than
// ViewMIMEType, or when the name reaches no open page.
func (h *Hub) ViewResource(name, uri string) (string, error) {
	h.mu.Lock()
	var key, url string
	if r := h.routes[name]; r != nil && len(r.cands) > 0 {
		c := h.pickLocked(r.cands)
		key, url = c.doc.Key, c.doc.URL
	}
	h.mu.Unlock()
	if key == "" {
		return "", fmt.Errorf("the tool %s is not served by an open page now, so its view %q cannot be read", name, trunc(uri))
	}
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	c := h.ps.res[key]
	if c == nil {
		return "", fmt.Errorf("the page server of %s (%s) lists no resources, so not its view %q", name, url, trunc(uri))
	}
	for _, r := range c.resources {
		if r.URI != uri {
			continue
		}
		var decl struct {
			MIMEType string `json:"mimeType"`
		}
		if json.Unmarshal(r.Raw, &decl) == nil && decl.MIMEType != "" && !strings.EqualFold(decl.MIMEType, ViewMIMEType) {
			return "", fmt.Errorf("the page server of %s (%s) lists %q as %s, not %s: it is not a view", name, url, trunc(uri), trunc(decl.MIMEType), ViewMIMEType)
		}
		if sh := h.ps.short; sh != nil && sh.ownURI(key, uri) {
			return uri, nil
		}
		return c.prefix + uri, nil
	}
	return "", fmt.Errorf("the page server of %s (%s) lists no resource %q (a tool's view must be a resource of its own server)", name, url, trunc(uri))
}

// OwnToolName resolves the name a page server gave one of its tools (as a
// view calls it) to the routed name that reaches it: when exactly one open
// page server has a tool of that name. When several have, the error lists
// the routed names that reach each of them; when none has, it is
// ErrNoOwnTool. WebMCP tools are not counted: a view comes from a page
// server, and calls its own server's tools.
func (h *Hub) OwnToolName(own string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := map[string]bool{}
	var best string
	var each []string // names that reach one document
	for _, rt := range h.list {
		src := rt.Source
		if src.Cached || src.Backend != core.BackendMCPB || src.Tool != own {
			continue
		}
		r := h.routes[rt.Name]
		if r == nil {
			continue
		}
		for _, c := range r.cands {
			keys[c.doc.Key] = true
		}
		if len(r.cands) == 1 {
			each = append(each, rt.Name)
		}
		if best == "" || len(rt.Name) < len(best) {
			best = rt.Name
		}
	}
	switch {
	case len(keys) == 0:
		return "", ErrNoOwnTool
	case len(keys) == 1:
		return best, nil
	}
	sort.Strings(each)
	return "", fmt.Errorf("%d page servers have a tool named %q, so a call by that name could reach the wrong page; call one by its routed name: %s",
		len(keys), trunc(own), strings.Join(each, ", "))
}
