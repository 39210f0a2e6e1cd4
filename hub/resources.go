package hub

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds the resources and prompts of MCP-B page servers: what
// each server listed, bounded, and their routable forms. A resource URI
// becomes webmcp://<site>/<tab>/<original URI>, where <tab> is tab<N> for
// the tab's default server and tab<N>-<server> for another (an iframe's, or
// one on a channel of its own); a prompt name becomes <site>_<tab>_<name>.
// Both are reversed through this catalog, never by trusting the text. With
// --tool-names short, entries may keep their own names (servernames.go).

// Bounds of what one page server may list.
const (
	maxServerResources = 500
	maxServerTemplates = 100
	maxServerPrompts   = 200
	// maxDeclBytes bounds one declaration's JSON.
	maxDeclBytes = 16 << 10
	// MaxOriginalURI bounds a server's own resource URI.
	MaxOriginalURI = 2048
)

// URIScheme is the scheme of routed resource URIs.
const URIScheme = "webmcp"

// serverCatalog is what one page server listed.
type serverCatalog struct {
	src       core.Source
	server    core.PageServer
	seq       uint64 // orders the listings (the latest is the highest)
	tab       int
	prefix    string // webmcp://<site>/<segment>/
	promptPfx string // <site>_<segment>_
	resources []core.Resource
	templates []core.ResourceTemplate
	prompts   []core.Prompt
}

// RoutedResource is a page server's resource as the MCP server lists it.
type RoutedResource struct {
	URI      string
	Resource core.Resource
	Source   core.ServerProvenance
}

// RoutedTemplate is a page server's resource template as listed.
type RoutedTemplate struct {
	URITemplate string
	Template    core.ResourceTemplate
	Source      core.ServerProvenance
}

// RoutedPrompt is a page server's prompt as listed.
type RoutedPrompt struct {
	Name   string
	Prompt core.Prompt
	Source core.ServerProvenance
}

// segmentOf is the tab part of a server's routed names.
func segmentOf(tab int, s core.PageServer) string {
	seg := "tab" + strconv.Itoa(tab)
	if s.Kind == "tab" && s.Channel == "mcp-default" {
		return seg
	}
	return seg + "-" + sanitize(strings.ReplaceAll(s.ID, ":", "-"))
}

// SetServerCatalog sets what a page server lists: its resources, resource
// templates and prompts. Entries over the bounds, or whose declaration is
// too large or whose URI is not absolute, are left out; the reasons are
// returned (and logged as refusals).
func (h *Hub) SetServerCatalog(src core.Source, server core.PageServer, res []core.Resource, tpls []core.ResourceTemplate, prompts []core.Prompt) []string {
	if !h.opts.Origins.Allows(src.Origin) {
		return nil
	}
	var refused []string
	refuse := func(f string, a ...any) { refused = append(refused, fmt.Sprintf(f, a...)) }
	c := &serverCatalog{src: src, server: server, tab: h.TabNumber(src.Tab)}
	site := SiteOf(src.Origin)
	seg := segmentOf(c.tab, server)
	c.prefix = URIScheme + "://" + site + "/" + seg + "/"
	c.promptPfx = site + "_" + seg + "_"
	for _, r := range res {
		switch {
		case len(c.resources) >= maxServerResources:
			refuse("resources over the limit of %d per page server", maxServerResources)
		case len(r.Raw) > maxDeclBytes:
			refuse("resource %q: its declaration is %d bytes, over the limit of %d", trunc(r.URI), len(r.Raw), maxDeclBytes)
		case !absoluteURI(r.URI):
			refuse("resource %q: its URI is not an absolute URI of at most %d bytes", trunc(r.URI), MaxOriginalURI)
		default:
			var dropped []string
			if r.Raw, dropped = stripDeclMeta(r.Raw); dropped != nil {
				refused = append(refused, declDropped("resource", r.URI, dropped))
			}
			c.resources = append(c.resources, r)
		}
	}
	for _, t := range tpls {
		switch {
		case len(c.templates) >= maxServerTemplates:
			refuse("resource templates over the limit of %d per page server", maxServerTemplates)
		case len(t.Raw) > maxDeclBytes || t.URITemplate == "" || len(t.URITemplate) > MaxOriginalURI:
			refuse("resource template %q: empty or over the size limits", trunc(t.URITemplate))
		default:
			var dropped []string
			if t.Raw, dropped = stripDeclMeta(t.Raw); dropped != nil {
				refused = append(refused, declDropped("resource template", t.URITemplate, dropped))
			}
			c.templates = append(c.templates, t)
		}
	}
	seen := map[string]bool{}
	for _, p := range prompts {
		switch {
		case len(c.prompts) >= maxServerPrompts:
			refuse("prompts over the limit of %d per page server", maxServerPrompts)
		case len(p.Raw) > maxDeclBytes:
			refuse("prompt %q: its declaration is %d bytes, over the limit of %d", trunc(p.Name), len(p.Raw), maxDeclBytes)
		case p.Name == "" || len(p.Name) > 128 || seen[p.Name]:
			refuse("prompt %q: its name is empty, over 128 bytes or used twice", trunc(p.Name))
		default:
			seen[p.Name] = true
			var dropped []string
			if p.Raw, dropped = stripDeclMeta(p.Raw); dropped != nil {
				refused = append(refused, declDropped("prompt", p.Name, dropped))
			}
			c.prompts = append(c.prompts, p)
		}
	}
	open := h.openTabSet()
	h.ps.mu.Lock()
	if h.ps.res == nil {
		h.ps.res = make(map[string]*serverCatalog)
	}
	h.ps.seq++
	c.seq = h.ps.seq
	h.ps.res[src.Key] = c
	h.ps.nameLocked(open)
	h.ps.mu.Unlock()
	h.mu.Lock()
	h.wakeLocked() // whoever waits on Changed (CI mode settling a page) sees it now
	h.mu.Unlock()
	for i, r := range refused {
		if i >= 8 {
			break
		}
		h.RefusePageServer(src, r)
	}
	return refused
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func absoluteURI(s string) bool {
	if s == "" || len(s) > MaxOriginalURI {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

func (h *Hub) dropServerCatalog(key string) {
	open := h.openTabSet()
	h.ps.mu.Lock()
	delete(h.ps.res, key)
	h.ps.nameLocked(open)
	h.ps.mu.Unlock()
}

func (c *serverCatalog) provenance(name string) core.ServerProvenance {
	p := core.ServerProvenance{Name: name, Origin: c.src.Origin, URL: c.src.URL, Tab: c.tab, Backend: core.BackendMCPB,
		Channel: c.server.Channel, Kind: c.server.Kind}
	if c.server.Kind == "iframe" {
		p.FrameOrigin = c.server.FrameOrigin
	}
	return p
}

// ServerCatalog returns the routed resources, templates and prompts of all
// page servers, each sorted by routed name. With --tool-names short, an
// entry that keeps its own name is listed under it, for the server that
// listed it last, and under its routed form too for each server when
// several of its origin list it (as tab-level tool names).
func (h *Hub) ServerCatalog() ([]RoutedResource, []RoutedTemplate, []RoutedPrompt) {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	var rs []RoutedResource
	var ts []RoutedTemplate
	var ps []RoutedPrompt
	sh := h.ps.short
	// listedAs returns the names an entry of c is listed under: its own
	// name (while c's origin alone offers it and c listed it last) and its
	// routed form (without short names, or beside another server of its
	// origin). index is the short index's map of the entry's kind.
	listedAs := func(c *serverCatalog, index func(*shortIndex) map[string][]string, own, routed string) []string {
		if sh == nil {
			return []string{routed}
		}
		keys := index(sh)[own]
		if keys == nil {
			return []string{routed}
		}
		var out []string
		if keys[0] == c.src.Key {
			out = append(out, own)
		}
		if len(keys) > 1 {
			out = append(out, routed)
		}
		return out
	}
	resIndex := func(s *shortIndex) map[string][]string { return s.res }
	tplIndex := func(s *shortIndex) map[string][]string { return s.tplKeys }
	promptIndex := func(s *shortIndex) map[string][]string { return s.prompts }
	for _, c := range h.ps.res {
		for _, r := range c.resources {
			for _, uri := range listedAs(c, resIndex, r.URI, c.prefix+r.URI) {
				rs = append(rs, RoutedResource{URI: uri, Resource: r, Source: c.provenance(r.URI)})
			}
		}
		for _, t := range c.templates {
			for _, tpl := range listedAs(c, tplIndex, t.URITemplate, c.prefix+t.URITemplate) {
				ts = append(ts, RoutedTemplate{URITemplate: tpl, Template: t, Source: c.provenance(t.URITemplate)})
			}
		}
		for _, p := range c.prompts {
			for _, name := range listedAs(c, promptIndex, p.Name, RoutedName(c.promptPfx+toolPart(p.Name))) {
				ps = append(ps, RoutedPrompt{Name: name, Prompt: p, Source: c.provenance(p.Name)})
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].URI < rs[j].URI })
	sort.Slice(ts, func(i, j int) bool { return ts[i].URITemplate < ts[j].URITemplate })
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return rs, ts, ps
}

// ResolveURI turns a routed resource URI back into the page server's
// source key and its own URI. It fails, with what to do next, for a URI
// that names no open page server.
func (h *Hub) ResolveURI(uri string) (key, original string, err error) {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	if !strings.HasPrefix(uri, URIScheme+"://") {
		if sh := h.ps.short; sh != nil {
			if key := sh.resKey(uri); key != "" {
				return key, uri, nil
			}
			return "", "", fmt.Errorf("no open page server has %q: the tab may have closed or navigated, or another site offers the same URI; list resources again (resources/list)", trunc(uri))
		}
		return "", "", fmt.Errorf("%q is not a page server's resource: their URIs start with %s:// (see resources/list)", trunc(uri), URIScheme)
	}
	for key, c := range h.ps.res {
		if rest, ok := strings.CutPrefix(uri, c.prefix); ok {
			if rest == "" || len(rest) > MaxOriginalURI {
				return "", "", fmt.Errorf("%q names no resource after %s", trunc(uri), c.prefix)
			}
			return key, rest, nil
		}
	}
	return "", "", fmt.Errorf("no open page server has %q: the tab may have closed or navigated; list resources again (resources/list)", trunc(uri))
}

// RoutedURI returns the routed form of a server's own URI, or "" when the
// server is gone.
func (h *Hub) RoutedURI(key, original string) string {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	if c := h.ps.res[key]; c != nil {
		if sh := h.ps.short; sh != nil && sh.ownURI(key, original) {
			return original
		}
		return c.prefix + original
	}
	return ""
}

// ResolvePrompt turns a routed prompt name back into the page server's
// source key and its own prompt name.
func (h *Hub) ResolvePrompt(name string) (key, original string, err error) {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	if sh := h.ps.short; sh != nil {
		if keys := sh.prompts[name]; keys != nil {
			return keys[0], name, nil
		}
	}
	for key, c := range h.ps.res {
		for _, p := range c.prompts {
			if RoutedName(c.promptPfx+toolPart(p.Name)) == name {
				return key, p.Name, nil
			}
		}
	}
	return "", "", fmt.Errorf("no open page server has the prompt %q: the tab may have closed or navigated; list prompts again (prompts/list)", trunc(name))
}
